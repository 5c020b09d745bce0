"""Guarding an SQLite store whose database file is replaced or deleted under the running processes.

SQLite keeps a WAL database's newest commits in ``<db>-wal`` (indexed by ``<db>-shm``) beside the
file, found by name and never checked against the file: a backup restored over a running store
(``cp backup.db syncd.db`` writes into the same inode; ``mv``/``os.replace`` puts a new inode at the
path) sits beside the old database's WAL, which every connection then reads over it and the next
checkpoint writes into it: the restored entries are gone and the integrity check says ok. A deleted
file keeps being written through the open connections, into an inode nobody will open again.

:class:`FileGuard` (one per SQLite file engine, from :func:`syncd.store.engine.make_engine`) notices
all three from ``os.stat`` of the file (device, inode, size, mtime, ctime: one ``stat`` per look)
before every write transaction, before every new connection, at most every :data:`READ_CHECK_S`
seconds before a read, and from the daemon's timer, and then:

* **replaced** (another inode at the path): once the new file has stopped changing for
  :data:`SETTLE_S` seconds and passes ``PRAGMA quick_check``, the old database's WAL is checkpointed
  into the old inode through the guard's own connection (a file moved away stays whole), the old
  ``-wal``/``-shm`` are removed from the path (a WAL that checkpoint could not empty is kept aside as
  ``<db>-wal.replaced-<time>``), the engine's pool is disposed, and the store reopens on the new file,
  migrated to head (an older backup is upgraded). ``event=store_replaced how=renamed`` (WARNING).
* **deleted**: the open database is copied (SQLite's backup API, every commit included) into a new
  file that takes the path, then the store reopens on it: nothing is lost.
  ``event=store_deleted action=rehomed`` (WARNING).
* **overwritten in place** (same inode, other content): in WAL mode SQLite writes the file only
  while checkpointing, and a checkpoint first raises ``nBackfillAttempted`` in the WAL index (the
  ``-shm`` file's documented layout, :func:`~syncd.store.walfile.checkpoint_marks`). A file that
  changed while the marks did not (no checkpoint started, none running) was written by another.
  Once it has stopped changing and passes ``quick_check`` (read with ``immutable=1``: the file
  alone, no WAL), its content is written into the live store through SQLite's backup API, i.e.
  through the WAL, so every process sees the restored database and the old WAL's pages never reach
  it. The store is then marked with ``PRAGMA user_version`` =
  :func:`~syncd.store.walfile.restore_tag` of the file (other syncd processes noticing the same
  restore see it done; the file stays as copied until the next checkpoint). The store as it was is
  first copied to ``<db>.before-restore-<time>``: a change that was not a restore after all (the
  file touched) loses nothing. ``event=store_replaced how=overwritten`` (WARNING).

A new connection that would open another file than the one guarded is refused (``StoreError``,
``store_unavailable``) until the guard has switched; connections opened on the old file and checked
out meanwhile are invalidated at their next checkout. A file that cannot be taken (not a database,
a copy still changing, a failed rehome) answers ``store_unavailable`` with the cause to writes and
new connections, and is looked at again after :data:`RETRY_S` seconds.

The guard never opens the database or ``-shm`` file itself (:mod:`syncd.store.walfile`; without
``/proc`` an in-place overwrite is not told from a checkpoint, the other two cases are unaffected).

Limits: a restore made while another process checkpoints, or before this process opened the file,
is not recognized; a process that opened the new file before the guard switched may have joined the
old WAL (SQLite shares it by name). Restoring through SQLite (``sqlite3 syncd.db ".restore
backup.db"``) is always safe.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, event

from syncd.errors import StoreError
from syncd.store.walfile import (
    CheckpointMarks,
    FileState,
    checkpoint_marks,
    identity,
    immutable,
    quick_check,
    restore_tag,
    sqlite_descriptor,
)

__all__ = [
    "READ_CHECK_S",
    "RETRY_S",
    "SETTLE_S",
    "FileGuard",
    "attach_guard",
    "file_guard",
]

log = logging.getLogger("syncd.store")

READ_CHECK_S = 1.0
"""Most seconds between two looks at the file before reads (writes and new connections always look)."""
SETTLE_S = 1.0
"""Seconds a file found overwritten or replaced must stay unchanged before it is taken (a copy ends)."""
SETTLE_MAX_S = 60.0
"""Longest wait for a changing file to settle (seconds); then it answers ``store_unavailable``."""
RETRY_S = 30.0
"""Seconds before a file that could not be taken (not a database, a failed rehome) is looked at again."""
BUSY_TIMEOUT_MS = 10_000
"""Lock wait of the guard's own connection (milliseconds; the engine's ``busy_timeout``)."""
_GUARDS: weakref.WeakKeyDictionary[Engine, FileGuard] = weakref.WeakKeyDictionary()
_LIVE: weakref.WeakSet[FileGuard] = weakref.WeakSet()


class FileGuard:
    """The guard of one SQLite engine's database file (see the module docstring).

    Args:
        engine: the engine (file-backed, writable SQLite); held weakly (it holds the guard).
        path: its database file.
        after_reopen: run on the engine once it is on a new file or restored content (migrations);
            raises :class:`~syncd.errors.StoreError` when that file cannot be used.
    """

    def __init__(self, engine: Engine, path: Path, after_reopen: Callable[[Engine], object]) -> None:
        self._engine = weakref.ref(engine)
        self.path = path
        self.after_reopen = after_reopen
        self.state: FileState | None = None
        self.identity: tuple[int, int] | None = None
        self.marks: CheckpointMarks | None = None
        self.problem: str | None = None
        """Why the store cannot be used now (None: it can)."""
        self.reopened = 0
        """How many times the guard switched the engine to another file or content."""
        self.checkpoints_seen = 0
        """How many times the file was found changed by a checkpoint (and adopted as it is)."""
        self._companions: dict[str, tuple[int, int]] = {}
        self._shm: tuple[int, tuple[int, int]] | None = None  # SQLite's -shm descriptor, its identity
        self._next_shm_scan = 0.0
        self._sentinel: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._inside = threading.local()
        self._next_read_check = 0.0
        self._retry_at = 0.0
        self._listeners: list[weakref.WeakMethod[Callable[[], None]]] = []

    @property
    def engine(self) -> Engine:
        """The guarded engine (raises StoreError when it was garbage-collected)."""
        engine = self._engine()
        if engine is None:
            raise StoreError("the store's engine is gone")
        return engine

    @property
    def busy(self) -> bool:
        """True in the thread switching files (its own connections are not looked at again)."""
        return bool(getattr(self._inside, "busy", False))

    # --- the cheap look ---------------------------------------------------------------------------

    def check(self, *, reading: bool = False, deep: bool = False) -> None:
        """Look at the file; switch to the file or content now there when it changed (module docstring).

        ``reading``: before a read: looked at every :data:`READ_CHECK_S` seconds at most, and a file
        that cannot be taken does not raise (the open connections still read). ``deep``: the daemon's
        timer: the checkpoint marks are read even when the file did not change.

        Raises:
            StoreError: ``store_unavailable``: the file now there cannot be used (the cause is named).
        """
        if self.busy:
            return
        now = time.monotonic()
        if reading and now < self._next_read_check:
            return
        self._next_read_check = now + READ_CHECK_S
        try:
            state = FileState.of(self.path)
        except OSError:
            return  # the directory cannot be inspected now: nothing is known to have changed
        if state != self.state or self.problem is not None or deep:
            with self._lock:
                self._inside.busy = True
                try:
                    self._look()
                except OSError as exc:
                    self._fail(f"the database file {self.path} cannot be inspected ({exc})")
                finally:
                    self._inside.busy = False
        if self.problem is not None and not reading:
            raise StoreError(f"the store cannot be used: {self.problem}", reason="store_unavailable")

    def note(self) -> None:
        """After a transaction (a connection checked in): keep the marks current while the file is unchanged.

        The transaction may have restarted the WAL (new salts) without writing the file: marks kept
        from before it would make a later restore look like that restart.
        """
        if self.busy or self.state is None:
            return
        marks = self._marks()  # before the stat: a checkpoint starting after it shows at the next look
        try:
            state = FileState.of(self.path)
        except OSError:
            return
        if marks is not None and state == self.state:
            self.marks = marks

    def add_listener(self, listener: Callable[[], None]) -> None:
        """Call the bound method ``listener()`` after each switch to another file or content.

        Held weakly (its object, e.g. a body codec caching the old file's dictionary id, may go first).
        """
        self._listeners.append(weakref.WeakMethod(listener))  # type: ignore[arg-type]

    def close(self) -> None:
        """A last look, then close the guard's own connection (engine disposed, or the process ends)."""
        with contextlib.suppress(StoreError):
            self.check()
        with self._lock:
            if self._sentinel is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._sentinel.close()
                self._sentinel = None

    # --- connection events ------------------------------------------------------------------------

    def refuse_foreign(self, dbapi_conn: Any, record: Any) -> None:
        """A new connection: tag it with its file; refuse one opened on another file than the guarded one.

        Raises:
            StoreError: ``store_unavailable``: the file at the path changed since the last look.
        """
        opened = identity(self.path)
        record.info["syncd_file"] = opened
        if self.busy or opened == self.identity:
            return
        if self.identity is None:  # the first connection created the file
            with self._lock:
                if self.identity is None:
                    self._adopt()
            return
        dbapi_conn.close()
        raise StoreError("the database file changed while a connection was opened; retry")

    def stale(self, conn: Any) -> bool:
        """True when a checked-out connection was opened on a file the guard has left."""
        opened = conn.info.get("syncd_file")
        return opened is not None and self.identity is not None and opened != self.identity

    def ensure_sentinel(self) -> None:
        """Open the guard's own connection once the file exists (at a checkout)."""
        if self._sentinel is None and self.identity is not None and not self.busy:
            with self._lock, contextlib.suppress(sqlite3.Error, StoreError):
                self._open_sentinel()
                if self.marks is None:
                    self._adopt()

    # --- what changed -----------------------------------------------------------------------------

    def _look(self) -> None:
        state = FileState.of(self.path)
        if self.problem is not None and time.monotonic() < self._retry_at and state == self.state:
            return
        if self.state is None:  # the first look, or the file is not created yet
            if state is not None:
                self._adopt()
            return
        if state is None:
            self._rehome()
        elif state.identity != self.state.identity:
            self._replaced(state)
        elif state != self.state or self.problem is not None:
            self._changed(state)
        else:  # the daemon's timer: keep the marks current
            self._adopt()

    def _marks(self) -> CheckpointMarks | None:
        """The checkpoint marks, through SQLite's ``-shm`` descriptor (kept while it is the same file)."""
        if self._shm is not None:
            fd, ident = self._shm
            with contextlib.suppress(OSError):
                st = os.fstat(fd)
                if (st.st_dev, st.st_ino) == ident:  # still SQLite's -shm (not closed and reused)
                    return checkpoint_marks(self.path, fd)
            self._shm = None
        now = time.monotonic()
        if now < self._next_shm_scan:
            return None
        fd = sqlite_descriptor(Path(f"{self.path}-shm"))
        if fd is None:
            self._next_shm_scan = now + READ_CHECK_S  # no -shm open yet: not scanned again at once
            return None
        with contextlib.suppress(OSError):
            st = os.fstat(fd)
            self._shm = (fd, (st.st_dev, st.st_ino))
        return checkpoint_marks(self.path, fd)

    def _adopt(self) -> None:
        """Take the file now at the path as the guarded one: its marks first, then its state."""
        self.marks = self._marks()
        self.state = FileState.of(self.path)
        self.identity = None if self.state is None else self.state.identity
        for suffix in ("-wal", "-shm"):
            ident = identity(Path(f"{self.path}{suffix}"))
            if ident is not None:
                self._companions[suffix] = ident
        self.problem = None

    def _changed(self, state: FileState) -> None:
        """Same inode, changed: a checkpoint is adopted; another writer's content is restored."""
        marks = self._marks()  # read after the stat that changed: a checkpoint behind it shows here
        if self.marks is None or marks is None or self.marks.explains(marks):
            self.checkpoints_seen += 1
            self._adopt()
            return
        log.warning(
            "event=store_overwritten path=%s what=%r",
            self.path,
            "the file changed while no checkpoint ran: another writer; restoring its content once it settles",
        )
        settled = self._settle(state)
        if settled is None:
            return
        if self._live_tag() in (restore_tag(state), restore_tag(settled)):
            log.info("event=store_restore_seen path=%s how='restored by another process'", self.path)
            self._adopt()
            self._notify()
            return
        after = self._marks()
        if after is not None and after != marks:  # a checkpoint ran meanwhile: the file is not the copy
            log.error(
                "event=store_overwritten path=%s action=%r",
                self.path,
                "not restored: a checkpoint wrote into the file while it settled; restore it again",
            )
            self._adopt()
            return
        self._restore_in_place(settled)

    def _settle(self, state: FileState) -> FileState | None:
        """Wait until the file stays unchanged :data:`SETTLE_S` seconds; None (problem set) if it does not."""
        deadline = time.monotonic() + SETTLE_MAX_S
        while True:
            time.sleep(SETTLE_S)
            now = FileState.of(self.path)
            if now == state:
                return now
            if now is None or now.identity != state.identity or time.monotonic() > deadline:
                self._fail(f"the database file {self.path} is still changing")
                return None
            state = now

    def _live_tag(self) -> int | None:
        """``user_version`` of the live store (read through the WAL), None when it cannot be read."""
        try:
            return int(self._open_sentinel().execute("PRAGMA user_version").fetchone()[0])
        except (sqlite3.Error, StoreError):
            return None

    # --- the three switches -----------------------------------------------------------------------

    def _replaced(self, state: FileState) -> None:
        """Another inode at the path: checkpoint the old one, clear its WAL from the path, reopen."""
        settled = self._settle(state)
        if settled is None:
            return
        problem = quick_check(self.path)
        if problem is not None:
            self._fail(f"the file now at {self.path} is not a usable database ({problem})")
            return
        sentinel = self._sentinel
        checkpointed = False
        if sentinel is not None:  # still on the old inode: its WAL goes into it, wherever it is now
            try:
                busy, _frames, _done = sentinel.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                checkpointed = busy == 0
            except sqlite3.Error as exc:
                log.info("event=store_replaced_checkpoint_failed error=%r", str(exc))
        old_wal = self._clear_companions(checkpointed)
        self._switch(sentinel)
        log.warning(
            "event=store_replaced how=renamed path=%s old_wal=%r action=%r",
            self.path,
            old_wal,
            "reopened on the file now at the path; the old WAL was not applied to it",
        )

    def _rehome(self) -> None:
        """The file was deleted: copy the open database into a new file at the path, then reopen on it."""
        sentinel = self._sentinel
        if sentinel is None:
            self._fail(f"the database file {self.path} was deleted and no connection to it is open")
            return
        tmp = self.path.with_name(f".{self.path.name}.rehome-{os.getpid()}")
        try:
            with contextlib.closing(sqlite3.connect(tmp)) as target:
                sentinel.backup(target)
            if self.state is not None:
                os.chmod(tmp, self.state.mode & 0o777)
        except (sqlite3.Error, OSError) as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            self._fail(f"the database file {self.path} was deleted and could not be rehomed ({exc})")
            return
        self._clear_companions(True)  # the copy holds every commit of the old WAL
        try:
            os.link(tmp, self.path)  # only when nobody created a file there meanwhile
        except FileExistsError:
            kept = self.path.with_name(f"{self.path.name}.rescued-{int(time.time())}")
            os.replace(tmp, kept)
            log.warning("event=store_deleted action=rescued path=%s copy=%s", self.path, kept)
            state = FileState.of(self.path)
            if state is not None:
                self._replaced(state)
            return
        except OSError as exc:
            os.unlink(tmp)
            self._fail(f"the database file {self.path} was deleted and could not be rehomed ({exc})")
            return
        os.unlink(tmp)
        self._switch(sentinel)
        log.warning(
            "event=store_deleted action=rehomed path=%s bytes=%d what=%r",
            self.path,
            0 if self.state is None else self.state.size,
            "the deleted database, every commit included, copied into a new file at its path",
        )

    def _restore_in_place(self, state: FileState) -> None:
        """Another writer's content in the same inode: write it into the live store through the WAL."""
        problem = quick_check(self.path)
        if problem is not None:
            self._fail(f"the database file {self.path} was overwritten with an unusable database ({problem})")
            return
        kept = self._keep_live()
        try:
            sentinel = self._open_sentinel()
            with contextlib.closing(immutable(self.path)) as restored:
                restored.backup(sentinel)
            sentinel.execute(f"PRAGMA user_version={restore_tag(state)}")
        except (sqlite3.Error, StoreError) as exc:
            self._fail(f"the database file {self.path} was overwritten and could not be restored ({exc})")
            return
        self._adopt()
        self._reopened()
        log.warning(
            "event=store_replaced how=overwritten path=%s action=%r before=%s",
            self.path,
            "the file's new content written into the store through the WAL; the old WAL was not applied",
            kept,
        )

    # --- helpers ----------------------------------------------------------------------------------

    def _keep_live(self) -> str:
        """Copy the store as it is (the old WAL over the file) beside it before a restore; its name.

        Nothing is lost should the file's change not have been a restore after all. ``"none"`` when
        the copy cannot be made (a full disk): the restore goes on, as asked by whoever wrote the file.
        """
        kept = self.path.with_name(f"{self.path.name}.before-restore-{int(time.time())}")
        try:
            with contextlib.closing(sqlite3.connect(kept)) as target:
                self._open_sentinel().backup(target)
        except (sqlite3.Error, StoreError, OSError) as exc:
            with contextlib.suppress(OSError):
                os.unlink(kept)
            log.warning("event=store_restore_unkept path=%s error=%r", self.path, str(exc))
            return "none"
        return str(kept)

    def _clear_companions(self, checkpointed: bool) -> str:
        """Remove the old database's ``-wal``/``-shm`` from the path (a non-empty WAL is kept aside)."""
        what = "none at the path"
        for suffix in ("-wal", "-shm"):
            companion = Path(f"{self.path}{suffix}")
            ident = identity(companion)
            if ident is None or ident != self._companions.get(suffix):
                continue  # not the old database's (gone, or the new file's own)
            try:
                if suffix == "-wal" and not checkpointed and companion.stat().st_size > 0:
                    aside = companion.with_name(f"{companion.name}.replaced-{int(time.time())}")
                    os.replace(companion, aside)
                    what = f"kept aside as {aside.name}"
                else:
                    os.unlink(companion)
                    if suffix == "-wal":
                        what = "checkpointed into the old file and removed" if checkpointed else "removed"
            except OSError as exc:
                what = f"left in place ({exc})"
        self._companions = {}
        return what

    def _switch(self, sentinel: sqlite3.Connection | None) -> None:
        """Leave the old file: dispose the pool, close the old connection, adopt the new file, migrate."""
        self.engine.dispose()
        if sentinel is not None:
            with contextlib.suppress(sqlite3.Error):
                sentinel.close()
        self._sentinel = None
        self.marks, self._shm, self._next_shm_scan = None, None, 0.0
        self._adopt()
        self._reopened()

    def _reopened(self) -> None:
        self.reopened += 1
        try:
            self.after_reopen(self.engine)
            self._open_sentinel()
        except (StoreError, sqlite3.Error) as exc:
            self._fail(getattr(exc, "message", str(exc)))
            return
        if self.marks is None:
            self.marks = self._marks()
        self._notify()

    def _notify(self) -> None:
        for ref in self._listeners:
            listener = ref()
            if listener is not None:
                listener()

    def _open_sentinel(self) -> sqlite3.Connection:
        """The guard's own connection to the guarded file (opened once; kept for the switches).

        Raises:
            StoreError: the file at the path is not the guarded one (it changed meanwhile).
        """
        if self._sentinel is None:
            conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA wal_autocheckpoint=0")  # it checkpoints only when told (a file left)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            if identity(self.path) != self.identity:
                conn.close()
                raise StoreError("the database file changed while the guard's connection was opened")
            self._sentinel = conn
            self._next_shm_scan = 0.0  # its -shm is open now
        return self._sentinel

    def _fail(self, problem: str) -> None:
        if problem != self.problem:
            log.error("event=store_unusable path=%s problem=%r retry_s=%g", self.path, problem, RETRY_S)
        self.problem = problem
        self._retry_at = time.monotonic() + RETRY_S


def file_guard(engine: Engine) -> FileGuard | None:
    """The guard of ``engine`` (None: not a file-backed, writable SQLite engine)."""
    return _GUARDS.get(engine)


def attach_guard(engine: Engine, path: Path, after_reopen: Callable[[Engine], object]) -> FileGuard:
    """Guard ``engine``'s database file ``path``: the events that look at it (see the module docstring).

    Call it before the engine's own ``connect`` listeners, so a connection to a foreign file is refused
    before it reads that file's WAL.
    """
    guard = FileGuard(engine, Path(os.path.abspath(path)), after_reopen)  # as SQLite names it
    _GUARDS[engine] = guard
    _LIVE.add(guard)

    @event.listens_for(engine, "do_connect")
    def _before_connect(*_args: Any) -> None:
        guard.check()  # a deleted file is rehomed before sqlite3.connect would create an empty one

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, record: Any) -> None:
        guard.refuse_foreign(dbapi_conn, record)

    @event.listens_for(engine, "engine_connect")
    def _on_checkout(conn: Any) -> None:
        reading = conn.get_execution_options().get("sqlite_begin", "IMMEDIATE") != "IMMEDIATE"
        try:
            guard.check(reading=reading)
        except StoreError:
            conn.close()
            raise
        if guard.stale(conn):
            conn.invalidate()  # opened on the file the guard left: the next use takes a new one
        elif not reading:
            conn.info["syncd_wrote"] = True  # its check-in keeps the marks current
        guard.ensure_sentinel()

    @event.listens_for(engine, "checkin")
    def _on_checkin(_dbapi_conn: Any, record: Any) -> None:
        if record.info.pop("syncd_wrote", False):  # a write may have restarted the WAL
            guard.note()

    @event.listens_for(engine, "engine_disposed")
    def _on_disposed(_engine: Any) -> None:
        if not guard.busy:
            guard.close()

    return guard


@atexit.register
def _close_all() -> None:
    """A last look by every guard before the interpreter closes its connections (and checkpoints)."""
    for guard in list(_LIVE):
        if guard._sentinel is not None:  # in use (a closed store's guard does not look again)
            with contextlib.suppress(Exception):
                guard.close()
