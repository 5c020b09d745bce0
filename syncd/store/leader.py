"""Electing the one refreshing daemon of a shared store (PostgreSQL advisory lock).

A lab points several workstations at one PostgreSQL database and may run ``syncd daemon`` on more
than one of them. Every daemon serves the MCP tools, but only the holder of the session-level
advisory lock :data:`DAEMON_LOCK_KEY` runs the revalidation sweep and the watch-list walks. The lock
lives on a dedicated connection: when the holding process dies its connection closes and the server
frees the lock at once; when its machine or network dies, the server notices through TCP keepalives
(:data:`LOCK_SESSION_OPTIONS`, about 25 s). The other daemons try to take the lock every
:data:`POLL_S` seconds, so one of them takes over within a minute. A holder that loses its
connection learns it on its next poll, steps down and tries again like the others.

On SQLite (one workstation, one file) the lock is an exclusive ``flock`` on ``<database>.daemon.lock``
beside the database file, holding ``syncd-daemon HOST PID``: the kernel frees it when the holder dies,
so a second daemon on the same file serves MCP only (``role=standby``) and takes over at its next poll.
An in-memory database has nobody to share with: :meth:`DaemonLock.poll` answers True.

The lock file is the one file the daemon itself writes at start besides the database. A full disk,
a read-only filesystem or a directory this user cannot write never stop the daemon: a lock taken whose
holder name cannot be written is kept (its holder reads as unknown, ``event=leader_lock_unnamed``); a
lock file that cannot be opened leaves the daemon serving only (standby), with one warning per cause
(``event=leader_lock_unavailable``, cause ``disk_full``, ``read_only`` or ``permission_denied``) and
the lock tried again at every poll.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import socket
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import NullPool

from syncd.store.dialect import advisory_key, is_postgresql

__all__ = [
    "DAEMON_LOCK_KEY",
    "LOCK_SESSION_OPTIONS",
    "POLL_S",
    "DaemonLock",
    "lock_holder",
    "os_cause",
    "sqlite_lock_path",
]

log = logging.getLogger("syncd.leader")

DAEMON_LOCK_KEY = advisory_key("syncd:daemon")
"""The advisory-lock key (signed 64-bit) the refreshing daemon holds."""
POLL_S = 5.0
"""Seconds between two tries of a standby daemon (and two liveness checks of the holder)."""
LOCK_SESSION_OPTIONS = "-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3"
"""Server-side keepalives of the lock's session: a vanished holder machine frees the lock in ~25 s."""


def os_cause(exc: OSError) -> str:
    """The named cause of a failed file operation.

    ``disk_full`` (ENOSPC, EDQUOT), ``read_only`` (EROFS), ``permission_denied`` (EACCES, EPERM), else
    the errno's symbol (``EIO``) or ``error``.
    """
    code = exc.errno
    if code in (errno.ENOSPC, errno.EDQUOT):
        return "disk_full"
    if code == errno.EROFS:
        return "read_only"
    if code in (errno.EACCES, errno.EPERM):
        return "permission_denied"
    return errno.errorcode.get(code, "error") if code is not None else "error"


def _key_parts(key: int) -> tuple[int, int]:
    """``pg_locks`` (classid, objid) of a bigint advisory key."""
    unsigned = key & 0xFFFFFFFFFFFFFFFF
    return unsigned >> 32, unsigned & 0xFFFFFFFF


def sqlite_lock_path(engine: Engine) -> Path | None:
    """The daemon lock file of a SQLite store (``<database>.daemon.lock``); None in memory or elsewhere."""
    if is_postgresql(engine) or engine.url.get_backend_name() != "sqlite":
        return None
    database = engine.url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database).expanduser().with_name(Path(database).name + ".daemon.lock")


def _sqlite_holder(path: Path) -> str | None:
    """Name written by the process holding the lock file at ``path``, or None when nobody holds it."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return os.pread(fd, 256, 0).decode("utf-8", "replace").strip()
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def lock_holder(engine: Engine, key: int = DAEMON_LOCK_KEY) -> str | None:
    """Who holds the daemon lock (``syncd-daemon HOST PID``), else None.

    PostgreSQL: ``application_name`` of the session holding advisory lock ``key``; reading another
    role's session needs the same role (or ``pg_read_all_stats``), otherwise the name reads as an empty
    string. SQLite: the name in the held lock file (:func:`sqlite_lock_path`).
    """
    if not is_postgresql(engine):
        path = sqlite_lock_path(engine)
        return None if path is None else _sqlite_holder(path)
    classid, objid = _key_parts(key)
    with engine.connect() as conn:
        row = conn.execute(
            text(
                "SELECT coalesce(a.application_name, '') FROM pg_locks l "
                "LEFT JOIN pg_stat_activity a ON a.pid = l.pid "
                "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
                "AND l.classid::bigint = :c AND l.objid::bigint = :o"
            ),
            {"c": classid, "o": objid},
        ).first()
    return None if row is None else str(row[0])


class DaemonLock:
    """The refreshing daemon's lock over ``engine``'s database.

    Args:
        engine: the store's engine (its URL is reused for one dedicated, unpooled connection).
        key: the advisory-lock key (default :data:`DAEMON_LOCK_KEY`).
        name: ``application_name`` of the lock's session (default ``syncd-daemon HOST PID``).

    :meth:`poll` and :meth:`release` never raise: a database failure reads as "not the holder".
    """

    def __init__(self, engine: Engine, key: int = DAEMON_LOCK_KEY, name: str | None = None) -> None:
        self.key = key
        self.name = (name or f"syncd-daemon {socket.gethostname()} {os.getpid()}")[:63]
        self._postgresql = is_postgresql(engine)
        self._engine: Engine | None = None
        if self._postgresql:
            connect_args: dict[str, Any] = {
                "application_name": self.name,
                "connect_timeout": 10,
                "options": LOCK_SESSION_OPTIONS,
                "keepalives": 1,
                "keepalives_idle": 10,
                "keepalives_interval": 5,
                "keepalives_count": 3,
            }
            self._engine = create_engine(
                engine.url, poolclass=NullPool, isolation_level="AUTOCOMMIT", connect_args=connect_args
            )
        self._conn: Connection | None = None
        self._file = None if self._postgresql else sqlite_lock_path(engine)
        self._fd: int | None = None
        self._warned: set[str] = set()
        self.held = not self._postgresql and self._file is None

    def poll(self) -> bool:
        """Check the lock is still held, or try to take it; returns whether this process holds it now."""
        if self._file is not None:
            return self._poll_file(self._file)
        if not self._postgresql or self._engine is None:
            return True
        if self._conn is not None:
            try:
                self._conn.execute(text("SELECT 1"))
                return True
            except SQLAlchemyError as exc:
                log.warning("event=leader_lost error=%s", exc.__class__.__name__)
                self._drop()
        try:
            conn = self._engine.connect()
        except SQLAlchemyError as exc:
            log.warning("event=leader_poll_failed error=%s", exc.__class__.__name__)
            return False
        try:
            got = bool(conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": self.key}).scalar())
        except SQLAlchemyError as exc:
            log.warning("event=leader_poll_failed error=%s", exc.__class__.__name__)
            got = False
        if got:
            self._conn = conn
            self.held = True
        else:
            conn.close()
        return got

    def _poll_file(self, path: Path) -> bool:
        """Take (or keep) the exclusive ``flock`` on the SQLite store's lock file; never raises."""
        if self._fd is not None:
            return True
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o660)
        except OSError as exc:
            self._warn_once(
                "event=leader_lock_unavailable cause=%s path=%s detail=%r action=%r",
                os_cause(exc),
                path,
                str(exc),
                "serving only (standby): no sweep or watch walk until the lock file can be created",
            )
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):  # held by another daemon: standby
                self._warn_once(
                    "event=leader_lock_unavailable cause=%s path=%s detail=%r action=%r",
                    os_cause(exc),
                    path,
                    str(exc),
                    "serving only (standby)",
                )
            return False
        name = f"{self.name}\n".encode()
        try:
            os.pwrite(fd, name, 0)
            os.ftruncate(fd, len(name))
        except OSError as exc:  # a full disk: the lock is held all the same, its holder reads as unknown
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            self._warn_once(
                "event=leader_lock_unnamed cause=%s path=%s detail=%r action=%r",
                os_cause(exc),
                path,
                str(exc),
                "lock held; its holder name could not be written",
            )
        self._fd = fd
        self.held = True
        return True

    def _warn_once(self, message: str, cause: str, *args: object) -> None:
        """Log ``message`` at WARNING once per cause (the lock is polled every :data:`POLL_S` seconds)."""
        key = message.split(" ", 1)[0] + cause
        if key in self._warned:
            return
        self._warned.add(key)
        log.warning(message, cause, *args)

    def release(self) -> None:
        """Give the lock up (closing its session frees it) so a standby takes over at its next poll."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
            self.held = False
        if self._conn is not None:
            with contextlib.suppress(SQLAlchemyError):
                self._conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": self.key})
        self._drop()
        if self._engine is not None:
            self._engine.dispose()

    def _drop(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(SQLAlchemyError):
                self._conn.close()
        self._conn = None
        self.held = not self._postgresql and self._file is None
