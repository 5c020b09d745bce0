"""The store's session and health part: engine, transactions, write lock, "can we write?", body encoding.

As requests-cache's ``SQLiteDict`` holds the connection and its locking beneath ``SQLiteCache``, this
module holds what every store operation stands on and knows nothing of entries:
:class:`StoreSession` opens (and upgrades) the database, hands out read and write transactions (the
write lock queued per process and bounded by the call's deadline, :meth:`StoreSession.waits_within`),
groups writes (:meth:`StoreSession.batch`), remembers a full disk or read-only file
(:meth:`StoreSession.write_problem`) and encodes bodies with the store's zstd dictionary.
:mod:`syncd.store.entries` (entries and their history) and :mod:`syncd.store.searching` build on it;
:class:`syncd.store.repo.Store` is the facade callers use.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Self

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from syncd.errors import StoreError
from syncd.store.codec import BodyCodec, load_dictionaries, train_dictionary
from syncd.store.dialect import database_size, normalize_url
from syncd.store.engine import (
    BUSY_TIMEOUT_MS,
    is_read_only,
    make_engine,
    point_reader,
    reader,
    upgrade_to_head,
)
from syncd.store.reach import CONNECT_TIMEOUT_S, reach_of

__all__ = [
    "KEEP_PREVIOUS_S",
    "MIN_FREE_BYTES",
    "SEARCH_MAX_CHARS",
    "SEARCH_MAX_TERMS",
    "SEARCH_TIMEOUT_S",
    "UNWRITABLE_RECHECK_S",
    "WRITE_WAIT_FLOOR_S",
    "StoreSession",
    "wait_left",
    "write_cause",
]

log = logging.getLogger("syncd.store")

UNWRITABLE_RECHECK_S = 30.0
"""After a write failed on a full disk or a read-only file, writes are skipped this long (seconds)."""

MIN_FREE_BYTES = 256 * 1024
"""Free space under which the database's filesystem counts as full (bytes)."""

WRITE_WAIT_FLOOR_S = 0.5
"""Shortest lock wait of a bounded write (seconds): a call near its deadline still waits out another
writer's short transaction (the bookkeeping of a request already made) instead of failing at once."""

_WAIT_LEFT: ContextVar[Callable[[], float] | None] = ContextVar("syncd_store_wait_left", default=None)
"""Seconds the running call may still wait for the write lock (set by :meth:`StoreSession.waits_within`)."""


def _expected_but_missing(database_url: str) -> str | None:
    """The companion file name proving an SQLite database was expected at ``database_url``, or None.

    None when the URL is not a file-backed SQLite URL or the file exists or none of its ``-wal``,
    ``-shm``, ``.daemon.lock`` files exists (first use).
    """
    try:
        url = normalize_url(database_url)
    except ArgumentError:  # make_engine reports a bad URL with its own message
        return None
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    path = Path(url.database).expanduser()
    if path.exists():
        return None
    for suffix in ("-wal", "-shm", ".daemon.lock"):
        companion = path.with_name(path.name + suffix)
        if companion.exists():
            return companion.name
    return None


def write_cause(exc: BaseException) -> str:
    """The named cause of a failed write: ``disk_full``, ``read_only``, ``locked`` or ``error``.

    From SQLite's messages (``database or disk is full``, ``attempt to write a readonly database``,
    ``database is locked``) and the OS errors ENOSPC / EROFS.
    """
    text_ = str(exc).lower()
    if "disk is full" in text_ or "no space left" in text_:
        return "disk_full"
    if "readonly" in text_ or "read-only" in text_ or "read only" in text_:
        return "read_only"
    if "locked" in text_ or "busy" in text_:
        return "locked"
    return "error"


KEEP_PREVIOUS_S = 30 * 86400.0
"""Default retention of a replaced body (seconds; setting ``store.keep_previous_s``)."""
SEARCH_MAX_CHARS = 2000
"""Default longest local search query in characters (setting ``store.search_max_chars``)."""
SEARCH_MAX_TERMS = 256
"""Default most distinct terms of a local search query (setting ``store.search_max_terms``)."""
SEARCH_TIMEOUT_S = 5.0
"""Default longest local search in seconds (the daemon and CLI pass ``deadline_s``)."""


def wait_left() -> Callable[[], float] | None:
    """The running call's "seconds left to wait" set by :meth:`StoreSession.waits_within`, or None."""
    return _WAIT_LEFT.get()


class StoreSession:
    """The store's session part: one database (SQLite by default) shared by every syncd process.

    Args:
        engine: an engine from :func:`syncd.store.engine.make_engine`.
        keep_previous_s: how long a replaced body is kept in ``previous_bodies`` (seconds).
        search_max_chars, search_max_terms: the longest local search query (characters) and the
            most distinct terms; above them a search is refused (``invalid_parameter``).
        search_timeout_s: a local search is interrupted after this many seconds, or sooner at the
            deadline given by :meth:`waits_within` (the call's deadline).
        monotonic: the clock a search's deadline is kept on, in seconds (default ``time.monotonic``,
            read when the search starts and every 10,000 SQLite VM steps; tests inject one).

    All methods raise :class:`~syncd.errors.StoreError` when the database fails.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        keep_previous_s: float = KEEP_PREVIOUS_S,
        search_max_chars: int = SEARCH_MAX_CHARS,
        search_max_terms: int = SEARCH_MAX_TERMS,
        search_timeout_s: float = SEARCH_TIMEOUT_S,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.engine = engine
        self._monotonic = monotonic
        self.keep_previous_s = keep_previous_s
        self.search_max_chars = search_max_chars
        self.search_max_terms = search_max_terms
        self.search_timeout_s = search_timeout_s
        self._unwritable: tuple[str, float] | None = None
        self._stopped: str | None = None
        self._writers = threading.RLock()
        self._warned: set[str] = set()
        self._reader = reader(engine)
        self._point = point_reader(engine)
        self._local = threading.local()
        self.codec = BodyCodec(engine)
        """Encoder of the bodies this store writes (:mod:`syncd.store.codec`)."""
        self.changes_recorded = 0
        """Change-feed rows this object wrote (a cheap "anything new?" for the MCP server's notifications)."""
        self._codes: dict[str, int] | None = None

    @classmethod
    def open(cls, database_url: str, *, upgrade: bool = True, **limits: Any) -> Self:
        """Open (and by default upgrade to the newest schema) the store at ``database_url``.

        ``limits``: the keyword arguments of the store class (``keep_previous_s``, the search bounds).
        An SQLite file that does not exist is created (first use), except where its own companion
        files (``-wal``, ``-shm``, ``.daemon.lock``) show that a database was expected there: it was
        deleted or moved, maybe under a running daemon, and a new empty file would silently take
        its place. ``syncd db upgrade`` creates it on purpose. ``limits`` may also hold
        ``connect_timeout_s`` (PostgreSQL: the longest wait for a connection, seconds). A PostgreSQL
        server that cannot be reached is not an error here: the store opens unreachable
        (:meth:`unreachable`; the schema is checked at the next start).

        Raises:
            StoreError: the database cannot be opened or migrated, or is missing where expected.
        """
        missing_since = _expected_but_missing(database_url)
        if missing_since is not None:
            raise StoreError(
                f"the database file is missing although {missing_since} beside it shows one was there "
                "(deleted or moved?); restore it, or run `syncd db upgrade` to create a new empty one",
                hint="Restore the database file, or create a new one with `syncd db upgrade`.",
            )
        connect_timeout_s = float(limits.pop("connect_timeout_s", CONNECT_TIMEOUT_S))
        engine = make_engine(database_url, connect_timeout_s=connect_timeout_s)
        if upgrade:
            try:
                upgrade_to_head(engine)
            except StoreError:
                reach = reach_of(engine)
                if reach is None or not reach.was_unreachable():
                    raise
                log.warning("event=schema_unchecked cause=lab_db_unreachable server=%s", reach.where)
        return cls(engine, **limits)

    def close(self) -> None:
        """Release every pooled connection."""
        self.engine.dispose()

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A write transaction (``BEGIN IMMEDIATE`` on SQLite), committed on success.

        Inside :meth:`batch` on this thread, the batch's transaction is reused (committed with it).
        On SQLite the writers of this process queue on one lock first (SQLite's busy handler polls,
        so many threads waiting on it starve each other), then wait for other processes through
        ``busy_timeout``; both waits are bounded by :meth:`waits_within` when set.

        Raises:
            StoreError: the write failed, or the lock was not had within the bound (``locked``).
        """
        if self._stopped is not None:
            raise StoreError(f"store writes stopped: {self._stopped}", reason="store_unavailable")
        active = getattr(self._local, "conn", None)
        if active is not None:
            yield active
            return
        left = _WAIT_LEFT.get()
        wait_s = max(left(), WRITE_WAIT_FLOOR_S) if left is not None else BUSY_TIMEOUT_MS / 1000
        sqlite = self.engine.dialect.name == "sqlite"
        if sqlite and not self._writers.acquire(timeout=wait_s):
            locked = StoreError("store write failed: database is locked (by this process's other writers)")
            self._failed(locked)
            raise locked
        try:
            with self.engine.connect() as conn:
                bounded = left is not None and sqlite
                if bounded and left is not None:  # what is left after queueing behind this process
                    busy_s = max(left(), WRITE_WAIT_FLOOR_S)
                    self._busy_timeout(conn, min(BUSY_TIMEOUT_MS, int(busy_s * 1000)))
                try:
                    with conn.begin():
                        yield conn
                finally:
                    if bounded:
                        self._busy_timeout(conn, BUSY_TIMEOUT_MS)
        except SQLAlchemyError as exc:
            self._failed(exc)
            raise StoreError(f"store write failed: {exc.__class__.__name__}: {exc}") from exc
        finally:
            if sqlite:
                self._writers.release()

    @staticmethod
    def _busy_timeout(conn: Connection, ms: int) -> None:
        """Set SQLite's lock wait of ``conn`` (milliseconds) on the driver connection (no transaction)."""
        conn.connection.driver_connection.execute(f"PRAGMA busy_timeout={max(0, ms)}")  # type: ignore[union-attr]

    def _failed(self, exc: BaseException) -> None:
        """Remember a full disk or read-only file (writes skipped a while); one warning per cause."""
        cause = write_cause(exc)
        if cause in ("disk_full", "read_only"):
            self._unwritable = (cause, time.monotonic() + UNWRITABLE_RECHECK_S)
        if cause not in self._warned and not is_read_only(self.engine):  # read-only: the engine warned
            self._warned.add(cause)
            log.warning(
                "event=store_not_written cause=%s detail=%r answers='stored entries are still served'",
                cause,
                f"{exc.__class__.__name__}: {str(exc).splitlines()[0][:200]}",
            )

    @contextmanager
    def waits_within(self, left: Callable[[], float]) -> Iterator[None]:
        """Bound every wait for the write lock in this context by ``left()`` seconds (the call's deadline).

        SQLite only (``busy_timeout`` set per connection for each write, restored after it); never
        below :data:`WRITE_WAIT_FLOOR_S`, so a wait ends within the deadline plus that margin.
        """
        token = _WAIT_LEFT.set(left)
        try:
            yield
        finally:
            _WAIT_LEFT.reset(token)

    def unreachable(self) -> str | None:
        """Why the lab database (PostgreSQL) cannot be reached now, or None (:mod:`syncd.store.reach`).

        While it says so, reads of entries answer nothing stored and writes of upstream content raise
        :class:`~syncd.errors.StoreUnreachable`; SQLite is never unreachable.
        """
        reach = reach_of(self.engine)
        return reach.unreachable() if reach is not None else None

    def stop_writing(self, cause: str) -> None:
        """Refuse every later write of this store (the database file was swapped: ``cause``)."""
        self._stopped = cause

    def write_problem(self) -> str | None:
        """Why the store cannot be written now (``disk_full``, ``read_only``, ``unreachable``), or None.

        A full disk or read-only file met by a write in the last :data:`UNWRITABLE_RECHECK_S` seconds
        (no write is tried meanwhile), a read-only SQLite engine, or under :data:`MIN_FREE_BYTES`
        free on the database's filesystem (``statvfs``).
        """
        if self._stopped is not None:
            return self._stopped
        if self.unreachable() is not None:
            return "unreachable"
        if self._unwritable is not None:
            cause, until = self._unwritable
            if time.monotonic() < until:
                return cause
            self._unwritable = None
        if self.engine.dialect.name != "sqlite" or not self.engine.url.database:
            return None
        if is_read_only(self.engine):
            return "read_only"
        try:
            fs = os.statvfs(os.path.dirname(os.path.abspath(self.engine.url.database)))
        except OSError:
            return None
        if fs.f_bavail * fs.f_frsize < MIN_FREE_BYTES:
            return "disk_full"
        return None

    def can_write(self, wait_s: float) -> str | None:
        """Probe the write lock: None when taken within ``wait_s`` seconds (then released), else the cause.

        The cause is :meth:`write_problem`'s, or ``locked`` when another connection holds the write
        lock past ``wait_s`` (SQLite ``BEGIN IMMEDIATE`` with a bounded ``busy_timeout``).
        """
        problem = self.write_problem()
        if problem is not None or self.engine.dialect.name != "sqlite":
            return problem
        try:
            with self.waits_within(lambda: wait_s), self.write():
                pass
        except StoreError as exc:
            return write_cause(exc)
        return None

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Group every write of this thread into one transaction (bulk imports: one commit per batch).

        All or nothing: an exception rolls the whole batch back. Reads through :meth:`get` do not see
        the batch's uncommitted rows; :meth:`put_content` does (it reads inside the transaction).
        """
        if getattr(self._local, "conn", None) is not None:
            yield
            return
        with self.write() as conn:
            self._local.conn = conn
            try:
                yield
            finally:
                self._local.conn = None

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read-only transaction (no write lock)."""
        try:
            with self._reader.begin() as conn:
                yield conn
        except SQLAlchemyError as exc:
            raise StoreError(f"store read failed: {exc.__class__.__name__}: {exc}") from exc

    def size_bytes(self) -> int | None:
        """Database size in bytes (SQLite: page_count x page_size; PostgreSQL: ``pg_database_size``)."""
        if self.engine.dialect.name not in ("sqlite", "postgresql"):
            return None
        with self.read() as conn:
            return database_size(conn)

    def train_dictionary_when_due(self) -> int | None:
        """Train the store's first body dictionary once it holds enough bodies; returns the id now used.

        Cheap unless :attr:`syncd.store.codec.BodyCodec.due` (many bodies written without a dictionary):
        then takes the one another process trained meanwhile, or trains one on the stored bodies
        (:func:`syncd.store.codec.train_dictionary`, a second or two) for every later write. Bodies
        written before stay as they are until ``syncd cache vacuum``. Called by :meth:`put_content`;
        bulk writers call it after a batch. A failure is logged and retried later.
        """
        if not self.codec.due:
            return None
        self.codec.looked()
        try:
            with self.write() as conn:
                dict_id = load_dictionaries(conn) or train_dictionary(conn)
        except StoreError as exc:
            log.warning("event=body_dictionary_not_trained detail=%r", str(exc).splitlines()[0][:200])
            return None
        if dict_id:
            self.codec.use(dict_id)
            log.info("event=body_dictionary dictionary=%s", dict_id)
        return dict_id

    def encode_body(
        self, text: str | None, conn: Connection | None = None, *, bulk: bool = False
    ) -> bytes | None:
        """The stored form of the body ``text`` (None stays None); the one encoder of every body write.

        zstd with the store's newest dictionary (:meth:`syncd.store.codec.BodyCodec.encode`); ``conn``,
        the transaction being written, is used to look the dictionary up on the first call. Bulk writers
        store what this returns in ``entries.body`` (``bulk``: at the faster level of bulk imports,
        :data:`~syncd.store.codec.BULK_LEVEL`); the store's reads decode it.
        """
        return self.codec.encode(text, conn, bulk=bulk)
