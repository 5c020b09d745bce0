"""Repository functions over the store: read entries, write new content, record revalidations.

Writes follow DESIGN.md's "nothing lost" rule: a body is replaced only by a newer valid body from
upstream (:meth:`Store.put_content`); a revalidation that finds the same content writes the
``validations`` row only (:meth:`Store.mark_validated`), so the entry row and its FTS index rows stay
untouched; an upstream failure is recorded beside the entry (:meth:`Store.mark_error`) and never
touches the body.

Both backends (SQLite, PostgreSQL) run the same code; the search methods have one named branch per
backend (FTS5 ``MATCH`` + ``bm25`` vs ``tsvector @@ websearch_to_tsquery`` + ``ts_rank``) with the same
results shape. Concurrent writers of the same entry (two lab workstations fetching one DOI) are
serialized by a row lock (``SELECT ... FOR UPDATE``) and an ``INSERT ... ON CONFLICT DO NOTHING``, so
neither fails on the unique ``(kind, key)`` constraint.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, and_, bindparam, delete, func, insert, or_, select, update
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from syncd.errors import InvalidInput, MalformedResponse, StoreError
from syncd.store import guard, search
from syncd.store.changelog import record_arrival, record_replacement
from syncd.store.codec import BodyCodec, decode_body, load_dictionaries, train_dictionary
from syncd.store.dialect import (
    database_size,
    insert_ignore,
    is_postgresql,
    normalize_url,
    upsert,
)
from syncd.store.engine import (
    BUSY_TIMEOUT_MS,
    is_read_only,
    make_engine,
    point_reader,
    reader,
    upgrade_to_head,
)
from syncd.store.models import Concept, Entry, PreviousBody, Validation
from syncd.store.rules import PLAIN, Side, StoreRules
from syncd.store.search import SEARCH_COUNT_CAP
from syncd.store.staleness import Staleness

__all__ = [
    "KEEP_PREVIOUS_S",
    "SEARCH_MAX_CHARS",
    "SEARCH_MAX_TERMS",
    "SEARCH_TIMEOUT_S",
    "UNWRITABLE_RECHECK_S",
    "EntryContent",
    "Store",
    "StoredEntry",
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
"""Seconds the running call may still wait for the write lock (set by :meth:`Store.waits_within`)."""


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


@dataclass(frozen=True)
class StoredEntry:
    """One stored entry joined with its freshness row (times in epoch seconds, UTC)."""

    id: int
    kind: str
    key: str
    status: str
    body: str | None
    content_hash: str | None
    upstream_version: str | None
    doi: str | None
    concept_key: str | None
    title: str | None
    fetched_at: float
    validated_at: float
    etag: str | None
    last_modified: str | None
    checks: int
    changes: int
    last_error: str | None
    last_error_at: float | None
    volatile: str | None


@dataclass(frozen=True)
class EntryContent:
    """What upstream answered for one object, ready to store.

    ``body`` is the upstream JSON text exactly as received (for ``gone``: the tombstone JSON;
    ``None`` for ``not_found``). ``content_hash`` is the hash of the normalized content with the
    volatile parts left out; it alone decides whether the stored body changes. ``rules`` are the
    kind's store rules (hollow-body guard, change summary, search band), put on by the kind that built
    the content (:attr:`syncd.kinds.Kind.rules`); the store itself knows no kind.
    """

    kind: str
    key: str
    status: str
    body: str | None
    content_hash: str | None
    upstream_version: str | None = None
    doi: str | None = None
    concept_key: str | None = None
    title: str | None = None
    search_text: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    volatile: str | None = None
    rules: StoreRules = field(default=PLAIN, compare=False, repr=False)


_COLUMNS = (
    Entry.id,
    Entry.kind,
    Entry.key,
    Entry.status,
    Entry.body,
    Entry.content_hash,
    Entry.upstream_version,
    Entry.doi,
    Entry.concept_key,
    Entry.title,
    Entry.fetched_at,
    Validation.validated_at,
    Validation.etag,
    Validation.last_modified,
    Validation.checks,
    Validation.changes,
    Validation.last_error,
    Validation.last_error_at,
    Validation.volatile,
)


def _row_to_entry(row: Any) -> StoredEntry:
    """The entry of a row of :data:`_COLUMNS`, its body decoded (:func:`syncd.store.codec.decode_body`)."""
    return StoredEntry(**{**row._mapping, "body": decode_body(row.body)})


def _select_entries() -> Any:
    return select(*_COLUMNS).join(Validation, Validation.entry_id == Entry.id)


_GET = _select_entries().where(Entry.kind == bindparam("kind"), Entry.key == bindparam("key"))
_GET_BY_ID = _select_entries().where(Entry.id == bindparam("entry_id"))
_LOCKED = (
    _select_entries()
    .where(Entry.kind == bindparam("kind"), Entry.key == bindparam("key"))
    .with_for_update(of=Entry)
)
_ID_OF = select(Entry.id).where(Entry.kind == bindparam("kind"), Entry.key == bindparam("key"))
_INSERT_VALIDATION = Validation.__table__.insert()
"""Point reads built once (the warm path runs them on every tool call)."""
_BY_IDS = _select_entries().where(Entry.id.in_(bindparam("ids", expanding=True)))
_BY_IDS_OF_KIND = _BY_IDS.where(Entry.kind == bindparam("kind"))
"""A search page's entries (and of one kind), built once (the offline search runs them on every call)."""


def _indexable(value: str | None) -> str | None:
    """A title or search text as stored: NUL characters dropped (PostgreSQL text cannot hold them)."""
    return value.replace("\x00", "") if value else value


class Store:
    """The local store: one database (SQLite by default) shared by every syncd process.

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
    def open(cls, database_url: str, *, upgrade: bool = True, **limits: Any) -> Store:
        """Open (and by default upgrade to the newest schema) the store at ``database_url``.

        ``limits``: the keyword arguments of :class:`Store` (``keep_previous_s``, the search bounds).
        An SQLite file that does not exist is created (first use), except where its own companion
        files (``-wal``, ``-shm``, ``.daemon.lock``) show that a database was expected there: it was
        deleted or moved, maybe under a running daemon, and a new empty file would silently take
        its place. ``syncd db upgrade`` creates it on purpose.

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
        engine = make_engine(database_url)
        if upgrade:
            upgrade_to_head(engine)
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

    def stop_writing(self, cause: str) -> None:
        """Refuse every later write of this store (the database file was swapped: ``cause``)."""
        self._stopped = cause

    def write_problem(self) -> str | None:
        """Why the store cannot be written now (``disk_full``, ``read_only``), or None when it may be.

        A full disk or read-only file met by a write in the last :data:`UNWRITABLE_RECHECK_S` seconds
        (no write is tried meanwhile), a read-only SQLite engine, or under :data:`MIN_FREE_BYTES`
        free on the database's filesystem (``statvfs``).
        """
        if self._stopped is not None:
            return self._stopped
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

    # --- reads -----------------------------------------------------------------------------------

    def _point_read(self, statement: Any, params: dict[str, Any]) -> StoredEntry | None:
        try:
            with self._point.connect() as conn:
                row = conn.execute(statement, params).first()
        except SQLAlchemyError as exc:
            raise StoreError(f"store read failed: {exc.__class__.__name__}: {exc}") from exc
        return _row_to_entry(row) if row else None

    def get(self, kind: str, key: str) -> StoredEntry | None:
        """The entry of ``kind`` with ``key`` (a lowercased DOI or a Zenodo record id), or None."""
        return self._point_read(_GET, {"kind": kind, "key": key})

    def get_by_id(self, entry_id: int) -> StoredEntry | None:
        """The entry with primary key ``entry_id``, or None."""
        return self._point_read(_GET_BY_ID, {"entry_id": entry_id})

    def find_by_doi(self, kind: str, doi_key: str) -> StoredEntry | None:
        """The entry of ``kind`` whose DOI (lowercased) is ``doi_key``; the newest record first."""
        with self.read() as conn:
            row = conn.execute(
                _select_entries().where(Entry.kind == kind, Entry.doi == doi_key).order_by(Entry.id.desc())
            ).first()
        return _row_to_entry(row) if row else None

    def concept_latest(self, concept_recid: str) -> tuple[str, float] | None:
        """Latest version record id of a Zenodo concept and when that was last seen, or None."""
        with self.read() as conn:
            row = conn.execute(
                select(Concept.latest_recid, Concept.validated_at).where(
                    Concept.concept_recid == concept_recid
                )
            ).first()
        return (row[0], row[1]) if row else None

    def stale(self, staleness: Staleness, limit: int) -> list[StoredEntry]:
        """Entries past their lifetime at the bounds' moment, oldest ``validated_at`` first.

        Args:
            staleness: the bounds of the policy's one staleness rule (:func:`syncd.policy.staleness`):
                per ``(kind, status)`` the lifetime's start, and the clock-skew bound after which an
                entry (validated "in the future" by a clock that ran ahead) is stale too; those last.
            limit: most entries returned.
        """
        if not staleness.before:
            return []
        query = _select_entries().where(staleness.clause()).order_by(Validation.validated_at).limit(limit)
        with self.read() as conn:
            return [_row_to_entry(r) for r in conn.execute(query)]

    def counts(self, staleness: Staleness) -> list[dict[str, Any]]:
        """Per ``(kind, status)``: number of entries and how many are stale under ``staleness``.

        ``staleness``: the policy's bounds (:func:`syncd.policy.staleness`); pairs it does not list
        count no stale entry.
        """
        result: list[dict[str, Any]] = []
        with self.read() as conn:
            rows = conn.execute(
                select(Entry.kind, Entry.status, func.count())
                .join(Validation, Validation.entry_id == Entry.id)
                .group_by(Entry.kind, Entry.status)
                .order_by(Entry.kind, Entry.status)
            ).all()
            for kind, status, count in rows:
                stale = 0
                if (kind, status) in staleness.before:
                    stale = conn.execute(
                        select(func.count())
                        .select_from(Entry)
                        .join(Validation, Validation.entry_id == Entry.id)
                        .where(
                            Entry.kind == kind, Entry.status == status, staleness.pair_clause(kind, status)
                        )
                    ).scalar_one()
                result.append(
                    {"kind": kind, "status": status, "entries": count, "stale": stale, "fresh": count - stale}
                )
        return result

    def size_bytes(self) -> int | None:
        """Database size in bytes (SQLite: page_count x page_size; PostgreSQL: ``pg_database_size``)."""
        if self.engine.dialect.name not in ("sqlite", "postgresql"):
            return None
        with self.read() as conn:
            return database_size(conn)

    def search(self, query: str, kind: str | None = None, limit: int = 20) -> list[StoredEntry]:
        """Full-text search over stored titles and text: entries matching ALL terms of ``query``, best first.

        Terms are split on whitespace and each is quoted, so search syntax in user input is inert on
        both backends (a term is a phrase of its tokens). SQLite: FTS5 ``MATCH`` ranked by ``bm25``;
        PostgreSQL: ``websearch_to_tsquery`` over the ``search_tsv`` column ranked by ``ts_rank``
        (stemmed with the ``english`` configuration, whose stop words are ignored). Returns at most
        ``limit`` entries of any status, optionally of one ``kind``; above
        :data:`~syncd.store.search.RANK_BOUND` matches the most recently stored ones are ranked.
        """
        quoted = self._bounded_terms(query)
        if not quoted:
            return []
        return self._search_entries(" ".join(quoted), kind, False, 0, limit, count=False)[0]

    def search_page(
        self, terms: list[str], kind: str, offset: int = 0, limit: int = 20
    ) -> tuple[list[StoredEntry], int]:
        """Full-text page of the ``ok`` entries of ``kind`` matching any of ``terms``.

        Entries of ``kind`` with status ``ok`` matching ANY of ``terms`` (over title and search text),
        best first (FTS5 ``bm25`` on SQLite, ``ts_rank`` on PostgreSQL), paged by ``offset``/``limit``;
        returns ``(page, total_matches)``. The total is counted in the index up to
        :data:`SEARCH_COUNT_CAP`; above :data:`~syncd.store.search.RANK_BOUND` matches the ranking is
        bounded: the entries matching ALL terms first, then the others, each ranked among the
        ``RANK_BOUND`` most recently stored (:func:`syncd.store.search.all_terms_first`). Kind and
        status are filtered inside the index (:mod:`syncd.store.search`). Each term is quoted, so search
        syntax in user input is inert.
        """
        quoted = self._bounded_terms(" ".join(terms))
        if not quoted:
            return [], 0
        every = (" AND " if self.engine.dialect.name == "sqlite" else " ").join(quoted)
        return self._search_entries(" OR ".join(quoted), kind, True, offset, limit, count=True, every=every)

    def _search_entries(
        self,
        match: str,
        kind: str | None,
        ok_only: bool,
        offset: int,
        limit: int,
        *,
        count: bool,
        every: str | None = None,
    ) -> tuple[list[StoredEntry], int]:
        """Ranked entries of ``match`` (quoted terms joined by ``OR`` or blanks) and their capped count.

        The count (0 unless ``count``) and the ranking come from the index; only the page's entries are
        read. Ranking is bounded (:func:`syncd.store.search.ranked_ids_sqlite`) when the count passed
        ``RANK_BOUND`` or was not taken (when fewer match, the bounded ranking is the full one). A kind
        without its own index band (:func:`syncd.store.search.kind_codes`) shares it with the other
        such kinds on SQLite: its page is over-fetched and filtered here, its count is the band's.
        ``every``: the query of all the terms, whose matches come first in a bounded ranking.
        """
        with self._search_read() as conn:
            pg = is_postgresql(conn)
            codes = {} if pg else self._kind_codes(conn)
            shared = kind is not None and kind not in codes
            code = None if kind is None else codes.get(kind, 0)
            if pg:
                shared = False
                total = search.count_postgresql(conn, match, kind, ok_only, SEARCH_COUNT_CAP) if count else 0
                start, want = offset, limit
            else:
                total = search.count_sqlite(conn, match, code, ok_only, SEARCH_COUNT_CAP) if count else 0
                start, want = (0, (offset + limit) * 4) if shared else (offset, limit)
            bounded = total > search.RANK_BOUND or not count

            def rank(m: str, off: int, lim: int) -> list[int]:
                if pg:
                    return search.ranked_ids_postgresql(conn, m, kind, ok_only, off, lim, bounded=bounded)
                return search.ranked_ids_sqlite(conn, m, code, ok_only, off, lim, bounded=bounded)

            if bounded and every is not None:
                ids = search.all_terms_first(rank, match, every, start, want)
            else:
                ids = rank(match, start, want)
            if not ids:
                return [], total
            rows = conn.execute(_BY_IDS_OF_KIND if shared else _BY_IDS, {"ids": ids, "kind": kind})
            by_id = {r.id: _row_to_entry(r) for r in rows}
        found = [by_id[i] for i in ids if i in by_id]
        return (found[offset : offset + limit] if shared else found), total

    def _kind_codes(self, conn: Connection) -> dict[str, int]:
        """The index's kind codes (:func:`syncd.store.search.kind_codes`), read once per store."""
        if self._codes is None:
            self._codes = search.kind_codes(conn)
        return self._codes

    def _bounded_terms(self, query: str) -> list[str]:
        """The distinct quoted terms of ``query`` (:func:`_terms`) within the search bounds.

        Raises:
            InvalidInput: reason ``invalid_parameter`` (declared by every search tool), the query is
                longer than ``search_max_chars``
                or has more than ``search_max_terms`` distinct terms.
        """
        if len(query) > self.search_max_chars:
            raise InvalidInput(
                f"search query of {len(query)} characters; at most {self.search_max_chars} are searched",
                reason="invalid_parameter",
                hint="Shorten the query (setting store.search_max_chars).",
            )
        terms = search.terms(query)
        if len(terms) > self.search_max_terms:
            raise InvalidInput(
                f"search query of {len(terms)} distinct terms; at most {self.search_max_terms} are searched",
                reason="invalid_parameter",
                hint="Use fewer search terms (setting store.search_max_terms).",
            )
        return terms

    @contextmanager
    def _search_read(self) -> Iterator[Connection]:
        """A read transaction interrupted at the call's deadline (SQLite progress handler).

        The limit is the time left of :meth:`waits_within` when set, else ``search_timeout_s``.

        Raises:
            StoreError: reason ``request_timeout`` when interrupted; ``store_unavailable`` otherwise.
        """
        left = _WAIT_LEFT.get()
        end = self._monotonic() + (min(left(), self.search_timeout_s) if left else self.search_timeout_s)
        stopped: list[bool] = []

        def past_deadline() -> int:
            if self._monotonic() > end:
                stopped.append(True)
                return 1
            return 0

        try:
            with self.read() as conn:
                sqlite = self.engine.dialect.name == "sqlite"
                if sqlite:
                    conn.connection.driver_connection.set_progress_handler(past_deadline, 10_000)  # type: ignore[union-attr]
                try:
                    yield conn
                finally:
                    if sqlite:
                        conn.connection.driver_connection.set_progress_handler(None, 0)  # type: ignore[union-attr]
        except StoreError as exc:
            if stopped:
                raise StoreError(
                    "local search stopped at the call's deadline",
                    reason="request_timeout",
                    hint="Use fewer or more specific search terms.",
                ) from exc
            raise

    # --- writes ----------------------------------------------------------------------------------

    def put_content(self, content: EntryContent, now: float | None = None) -> tuple[StoredEntry, bool]:
        """Store what upstream answered, in one transaction. Returns ``(entry, changed)``.

        When an entry with the same ``(kind, key)``, status and ``content_hash`` exists, only its
        validation row is bumped (``validated_at``, validators, ``checks``): the entry row, its body
        and its index rows are not rewritten and ``changed`` is False. Otherwise the body and its
        search columns are written together and ``changed`` is True.

        A ``not_found`` answer never replaces a stored ``ok`` body (index lag, BC-09): the entry keeps
        its body and gets ``last_error = "not_found"`` instead; ``changed`` is False.

        Nothing lost (:mod:`syncd.store.guard`): a record body lacking what every real answer of its
        kind carries is refused before any write; a valid body that drops most of the stored one is
        set aside (``previous_bodies`` role ``suspect``) and only stored when a later answer with the
        same content hash confirms it; whatever replaces a body, the previous one is kept for
        ``keep_previous_s`` seconds.

        Change feed (:mod:`syncd.store.changelog`): a replaced work, record or agency body, and a new
        Zenodo version of a series already held, write one ``changes`` row in the same transaction.

        Raises:
            MalformedResponse: reason ``malformed_response`` (hollow body, nothing written) or
                ``suspicious_shrink`` (the suspect was set aside and ``last_error`` recorded; the
                stored body is untouched).
            StoreError: the database failed.
        """
        now = time.time() if now is None else now
        lacking = guard.missing(content.rules, content.status, content.body)
        if lacking:
            raise MalformedResponse(
                f"{content.kind} {content.key}: upstream answered a body without {', '.join(lacking)}; "
                "the stored copy is kept",
                missing=lacking,
            )
        held_back: str | None = None
        with self.write() as conn:
            existing = self._locked(conn, content.kind, content.key)
            if existing is None:
                inserted = insert_ignore(
                    conn,
                    Entry.__table__,
                    {
                        "kind": content.kind,
                        "key": content.key,
                        "status": content.status,
                        "body": self.encode_body(content.body, conn),
                        "content_hash": content.content_hash,
                        "upstream_version": content.upstream_version,
                        "doi": content.doi,
                        "concept_key": content.concept_key,
                        "title": _indexable(content.title),
                        "search_text": _indexable(content.search_text),
                        "fetched_at": now,
                        "created_at": now,
                    },
                )
                if inserted:
                    entry_id = conn.execute(_ID_OF, {"kind": content.kind, "key": content.key}).scalar_one()
                    conn.execute(
                        _INSERT_VALIDATION,
                        {
                            "entry_id": entry_id,
                            "validated_at": now,
                            "etag": content.etag,
                            "last_modified": content.last_modified,
                            "checks": 1,
                            "changes": 1,
                            "volatile": content.volatile,
                            "last_error": None,
                            "last_error_at": None,
                        },
                    )
                    changed = True
                    if record_arrival(
                        conn,
                        content.rules,
                        entry_id,
                        content.kind,
                        content.key,
                        content.concept_key,
                        content.body,
                        now,
                    ):
                        self.changes_recorded += 1
                else:  # another process stored it meanwhile (PostgreSQL): update what it wrote
                    existing = self._locked(conn, content.kind, content.key)
                    if existing is None:
                        raise StoreError(f"entry {content.kind}:{content.key} vanished while being stored")
            if existing is not None:
                old = _row_to_entry(existing)
                entry_id = old.id
                held_back = self._held_back(conn, old, content, now)
                changed = False if held_back else self._apply(conn, old, content, now)
            row = conn.execute(_GET_BY_ID, {"entry_id": entry_id}).one()
        if self.codec.due:
            self.train_dictionary_when_due()
        if held_back:
            raise MalformedResponse(
                f"{content.kind} {content.key}: upstream answered a body that drops most of the stored "
                "one; it is stored only if the next revalidation confirms it",
                reason=held_back,
                hint="The stored copy is answered meanwhile; a later revalidation decides.",
            )
        return _row_to_entry(row), changed

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

    def encode_body(self, text: str | None, conn: Connection | None = None) -> bytes | None:
        """The stored form of the body ``text`` (None stays None); the one encoder of every body write.

        zstd with the store's newest dictionary (:meth:`syncd.store.codec.BodyCodec.encode`); ``conn``,
        the transaction being written, is used to look the dictionary up on the first call. Bulk writers
        store what this returns in ``entries.body``; the store's reads decode it.
        """
        return self.codec.encode(text, conn)

    def _held_back(self, conn: Connection, old: StoredEntry, content: EntryContent, now: float) -> str | None:
        """The suspicion that holds ``content`` back from replacing ``old`` (recorded), or None.

        A suspicious body (:func:`syncd.store.guard.shrink`) seen for the first time is set aside as
        the entry's ``suspect`` and the suspicion recorded as ``last_error``; the same body again
        (same content hash) is the confirmation: the suspect row goes and the body is stored.
        """
        if old.status != "ok" or content.status != "ok" or old.content_hash == content.content_hash:
            return None
        suspicion = guard.shrink(content.rules, old.body, content.body)
        if suspicion is None:
            return None
        suspects = PreviousBody.__table__
        confirmed = conn.execute(
            select(func.count())
            .select_from(suspects)
            .where(
                suspects.c.entry_id == old.id,
                suspects.c.role == "suspect",
                suspects.c.content_hash == content.content_hash,
            )
        ).scalar_one()
        conn.execute(delete(suspects).where(suspects.c.entry_id == old.id, suspects.c.role == "suspect"))
        if confirmed:
            return None
        conn.execute(
            insert(suspects).values(
                entry_id=old.id,
                role="suspect",
                status=content.status,
                body=self.encode_body(content.body, conn),
                content_hash=content.content_hash,
                fetched_at=now,
                kept_at=now,
                reason=suspicion,
            )
        )
        conn.execute(
            update(Validation)
            .where(Validation.entry_id == old.id)
            .values(last_error=suspicion, last_error_at=now)
        )
        return suspicion

    def _keep_previous(self, conn: Connection, old: StoredEntry, now: float) -> None:
        """Set ``old``'s body aside (role ``previous``); drop its suspect and the ones past retention."""
        table = PreviousBody.__table__
        if old.body is not None:
            conn.execute(
                insert(table).values(
                    entry_id=old.id,
                    role="previous",
                    status=old.status,
                    body=self.encode_body(old.body, conn),
                    content_hash=old.content_hash,
                    fetched_at=old.fetched_at,
                    kept_at=now,
                    reason=None,
                )
            )
        conn.execute(
            delete(table).where(
                table.c.entry_id == old.id,
                or_(
                    table.c.role == "suspect",
                    and_(table.c.role == "previous", table.c.kept_at < now - self.keep_previous_s),
                ),
            )
        )

    def previous_bodies(self, entry_id: int) -> list[dict[str, Any]]:
        """Bodies set aside beside entry ``entry_id``, newest first.

        Each: ``role`` (``previous`` or ``suspect``), ``status``, ``body``, ``content_hash``,
        ``fetched_at`` and ``kept_at`` (epoch seconds), ``reason``.
        """
        table = PreviousBody.__table__
        with self.read() as conn:
            rows = conn.execute(
                select(table)
                .where(table.c.entry_id == entry_id)
                .order_by(table.c.kept_at.desc(), table.c.id.desc())
            ).all()
        return [
            {
                k: decode_body(v) if k == "body" else v
                for k, v in r._mapping.items()
                if k not in ("id", "entry_id")
            }
            for r in rows
        ]

    def prune_previous(self, now: float | None = None) -> int:
        """Drop every replaced body kept longer than ``keep_previous_s``; returns how many went."""
        now = time.time() if now is None else now
        table = PreviousBody.__table__
        with self.write() as conn:
            result = conn.execute(
                delete(table).where(table.c.role == "previous", table.c.kept_at < now - self.keep_previous_s)
            )
        return int(result.rowcount or 0)

    @staticmethod
    def _locked(conn: Connection, kind: str, key: str) -> Any:
        """The entry row ``(kind, key)`` joined with its validation, row-locked (FOR UPDATE), or None.

        On PostgreSQL the lock makes a concurrent writer of the same entry wait for this transaction;
        on SQLite the clause is left out (``BEGIN IMMEDIATE`` already holds the write lock).
        """
        return conn.execute(_LOCKED, {"kind": kind, "key": key}).first()

    def _apply(self, conn: Connection, old: StoredEntry, content: EntryContent, now: float) -> bool:
        """Apply a new upstream answer to the stored entry ``old``; True when its content changed."""
        if content.status == "not_found" and old.status == "ok":
            conn.execute(
                update(Validation)
                .where(Validation.entry_id == old.id)
                .values(last_error="not_found", last_error_at=now)
            )
            return False
        if old.status == content.status and old.content_hash == content.content_hash:
            self._bump(conn, old.id, now, content.etag, content.last_modified, content.volatile)
            if content.upstream_version != old.upstream_version:
                conn.execute(
                    update(Entry).where(Entry.id == old.id).values(upstream_version=content.upstream_version)
                )
            return False
        self._keep_previous(conn, old, now)
        conn.execute(
            update(Entry)
            .where(Entry.id == old.id)
            .values(
                status=content.status,
                body=self.encode_body(content.body, conn),
                content_hash=content.content_hash,
                upstream_version=content.upstream_version,
                doi=content.doi,
                concept_key=content.concept_key,
                title=_indexable(content.title),
                search_text=_indexable(content.search_text),
                fetched_at=now,
            )
        )
        conn.execute(
            update(Validation)
            .where(Validation.entry_id == old.id)
            .values(
                validated_at=now,
                etag=content.etag,
                last_modified=content.last_modified,
                checks=Validation.checks + 1,
                changes=Validation.changes + 1,
                last_error=None,
                last_error_at=None,
                volatile=content.volatile,
            )
        )
        before, after = Side(old.status, old.body), Side(content.status, content.body)
        if record_replacement(conn, content.rules, old.id, old.kind, old.key, before, after, now):
            self.changes_recorded += 1
        return True

    @staticmethod
    def _bump(
        conn: Connection,
        entry_id: int,
        now: float,
        etag: str | None,
        last_modified: str | None,
        volatile: str | None = None,
    ) -> None:
        values: dict[str, Any] = {
            "validated_at": now,
            "checks": Validation.checks + 1,
            "last_error": None,
            "last_error_at": None,
        }
        if etag is not None:
            values["etag"] = etag
        if last_modified is not None:
            values["last_modified"] = last_modified
        if volatile is not None:
            values["volatile"] = volatile
        conn.execute(update(Validation).where(Validation.entry_id == entry_id).values(**values))

    def mark_validated(
        self,
        entry_id: int,
        now: float | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
    ) -> None:
        """Record that upstream confirmed the stored content (a 304, or an unchanged 200).

        Writes the ``validations`` row only.
        """
        now = time.time() if now is None else now
        with self.write() as conn:
            self._bump(conn, entry_id, now, etag, last_modified)

    def mark_error(self, entry_id: int, reason: str, now: float | None = None) -> None:
        """Record a failed revalidation (``reason`` code) beside the entry; the body is untouched."""
        now = time.time() if now is None else now
        with self.write() as conn:
            conn.execute(
                update(Validation)
                .where(Validation.entry_id == entry_id)
                .values(last_error=reason, last_error_at=now)
            )

    def set_concept(self, concept_recid: str, latest_recid: str, now: float | None = None) -> None:
        """Remember that the latest version of Zenodo concept ``concept_recid`` is ``latest_recid``."""
        now = time.time() if now is None else now
        with self.write() as conn:
            upsert(
                conn,
                Concept.__table__,
                {"concept_recid": concept_recid, "latest_recid": latest_recid, "validated_at": now},
                ["concept_recid"],
            )
