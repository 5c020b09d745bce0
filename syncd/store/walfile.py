"""What an SQLite WAL database's files say, read without disturbing SQLite's locks.

Pieces of :mod:`syncd.store.fileguard`: the database file's state (``os.stat``), the WAL index's
checkpoint marks (read through SQLite's own ``-shm`` descriptor, since closing any descriptor of a
file drops every POSIX lock this process holds on it, SQLite's included), and checks of a file alone
(``immutable=1``: no WAL, no lock).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import struct
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "SHM_BYTES",
    "CheckpointMarks",
    "FileState",
    "checkpoint_marks",
    "identity",
    "immutable",
    "quick_check",
    "restore_tag",
    "sqlite_descriptor",
]

SHM_BYTES = 136
"""The WAL index header and checkpoint info at the start of ``-shm`` (two 48-byte headers, then info)."""


@dataclass(frozen=True)
class FileState:
    """What ``os.stat`` says of a database file: identity (device, inode) and last content change.

    The status change time is not part of it (a ``chmod`` does not change the content), nor the
    mode, kept for a rehomed copy.
    """

    dev: int
    ino: int
    size: int
    mtime_ns: int
    mode: int = field(compare=False)

    @property
    def identity(self) -> tuple[int, int]:
        """``(st_dev, st_ino)``."""
        return self.dev, self.ino

    @classmethod
    def of(cls, path: Path) -> FileState | None:
        """The state of ``path``, None when there is no file there.

        Raises:
            OSError: the path cannot be inspected (a permission error, an I/O error).
        """
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode)


@dataclass(frozen=True)
class CheckpointMarks:
    """The WAL index's checkpoint bookkeeping (``-shm``: header salts, ``nBackfill``, ``nBackfillAttempted``).

    ``salts`` change when the WAL restarts; ``backfilled`` is the last frame a finished checkpoint
    copied into the file; ``attempted`` is raised before a checkpoint writes any page.
    """

    salts: tuple[int, int]
    backfilled: int
    attempted: int

    @property
    def running(self) -> bool:
        """True while a checkpoint has started and not finished (or was cut short)."""
        return self.attempted > self.backfilled

    def explains(self, later: CheckpointMarks) -> bool:
        """True when a checkpoint ran between these marks and ``later`` (or was running at these)."""
        return self.running or later != self


def identity(path: Path) -> tuple[int, int] | None:
    """``(st_dev, st_ino)`` of the file at ``path``, None when it cannot be inspected."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def sqlite_descriptor(path: Path) -> int | None:
    """A descriptor this process holds open on the file at ``path`` (SQLite's), found by identity.

    Linux: the entries of ``/proc/self/fd`` are compared by device and inode (``fstat``), never
    opened. None without ``/proc`` or when no descriptor of this process is on that file.
    """
    want = identity(path)
    if want is None:
        return None
    try:
        entries = os.listdir("/proc/self/fd")
    except OSError:
        return None
    for entry in entries:
        try:
            fd = int(entry)
            st = os.fstat(fd)
        except (OSError, ValueError):
            continue
        if (st.st_dev, st.st_ino) == want:
            return fd
    return None


def checkpoint_marks(db: Path, fd: int | None = None) -> CheckpointMarks | None:
    """The checkpoint marks of ``db``'s WAL index, read through SQLite's own ``-shm`` descriptor ``fd``.

    ``fd``: found in ``/proc/self/fd`` when not given. None when this process has no ``-shm`` open
    (not WAL mode, no connection) or it cannot be read. Layout (native byte order): salts at bytes
    32-39 of the first header, ``nBackfill`` at 96, ``nBackfillAttempted`` at 128
    (https://sqlite.org/walformat.html).
    """
    fd = sqlite_descriptor(Path(f"{db}-shm")) if fd is None else fd
    if fd is None:
        return None
    try:
        head = os.pread(fd, SHM_BYTES, 0)
    except OSError:
        return None
    if len(head) < SHM_BYTES:
        return None
    salt1, salt2 = struct.unpack_from("=II", head, 32)
    (backfilled,) = struct.unpack_from("=I", head, 96)
    (attempted,) = struct.unpack_from("=I", head, 128)
    return CheckpointMarks((salt1, salt2), backfilled, attempted)


def restore_tag(state: FileState) -> int:
    """The ``user_version`` marking a store restored from the file in ``state`` (31 bits)."""
    key = f"{state.dev}:{state.ino}:{state.size}:{state.mtime_ns}".encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=4).digest(), "big") & 0x7FFFFFFF


def immutable(path: Path) -> sqlite3.Connection:
    """A connection reading the file alone (``immutable=1``: no WAL, no lock)."""
    return sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True, check_same_thread=False)


def quick_check(path: Path) -> str | None:
    """None when the file alone is a sound SQLite database (``PRAGMA quick_check``), else the problem."""
    try:
        with contextlib.closing(immutable(path)) as conn:
            rows = conn.execute("PRAGMA quick_check").fetchall()
    except sqlite3.Error as exc:
        return str(exc)
    return None if rows == [("ok",)] else "; ".join(str(r[0]) for r in rows[:3])
