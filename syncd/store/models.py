"""SQLAlchemy 2 Core tables of the store (no ORM mapping). Alembic (``migrations/``) owns the schema.

These mirror it.

Tables:
    entries       one row per stored upstream object (Crossref work, Zenodo record, their misses):
                  the raw upstream body as received and the keys to find it. Rewritten only when
                  upstream content really changed.
    validations   freshness of each entry: when it was last confirmed against upstream, the
                  validators upstream sent (ETag, Last-Modified), counters and the last error.
                  Revalidation that finds no change writes here only.
    concepts      Zenodo concept record id -> latest version record id.
    budget_pools  the shared request budget: one token bucket per pool, 429 block and breaker state
                  (one row per pool, created by migration 0003), the limit upstream last announced in
                  its headers (migration 0010), the requests sent and the 429s answered (migration 0011).
    budget_leases in-flight requests per pool (expiring leases naming their process and host, so a
                  crashed holder frees its slot).
    budget_sends  when each granted request left, per pool (sliding window of an announced limit;
                  migration 0010).
    watches       what the daemon keeps mirrored: DOIs, Crossref queries/filters, Zenodo
                  communities and queries (``spec`` is JSON).
    sync_state    durable progress of a sync walk: volatile ``cursor`` within a run, monotonic
                  ``checkpoint`` advanced only on success; ``watermark``, ``seen``, ``total``
                  how far the walk got (migration 0009).
    blobs         bounded binary payloads kept for offline use (Zenodo file previews), LRU by
                  ``accessed_at``.
    previous_bodies bodies set aside: the body an entry had before a replacement (``role`` previous,
                  kept ``store.keep_previous_s``) and a suspicious new body awaiting confirmation
                  (``role`` suspect); migration 0004.
    changes       the change feed: one row per replaced body of a work, record or registration-agency
                  entry (what changed, summarized from the normalized views); migration 0007.
    body_dictionaries zstd dictionaries the bodies are compressed with (:mod:`syncd.store.codec`),
                  kept forever, keyed by zstd's dictionary id; migration 0008.
    retraction_datasets the Retraction Watch data files imported (migration 0012): one row per dataset
                  version (file SHA-256, rows, source, commit, when imported, what changed).
    retraction_rows the rows of the newest imported Retraction Watch version (migration 0012), keyed by
                  record id, found by original DOI (lower-cased) and original PubMed id.
    entry_lines   the list line of each entry that has one (migration 0015): the fields a search line
                  shows, derived from the body by its kind and written with it.
    work_references the reference index (migration 0012): one row per (stored entry, DOI its reference
                  list cites), kept in step with the entry's body by every write.
    entries_fts   FTS5 index over ``entries.title`` and ``entries.search_text`` (migration 0006: its
                  rowid carries the entry's kind and status band, :mod:`syncd.store.search`; kept in
                  sync by triggers on ``entries``; not mapped here).
    entries_fts_paused SQLite only (migration 0014), not mapped: holds a row only inside a bulk write's own
                  transaction, while the insert trigger leaves the index to that write
                  (:func:`syncd.store.search.paused_index`).
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.sql.elements import ColumnClause
from sqlalchemy.types import TypeEngine

__all__ = [
    "Base",
    "Blob",
    "BodyDictionary",
    "BudgetLease",
    "BudgetPool",
    "Change",
    "Concept",
    "Entry",
    "EntryLine",
    "PreviousBody",
    "RetractionDataset",
    "RetractionRow",
    "SyncState",
    "Validation",
    "Watch",
    "WorkReference",
]

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


BODY = LargeBinary().with_variant(Text(), "sqlite")
"""Type of the body columns: ``bytea`` on PostgreSQL; on SQLite the ``TEXT`` column of migration 0001
holds the encoded ``BLOB`` as it is (SQLite keeps a blob's bytes in any column), so no table rebuild."""


T = TypeVar("T")


def col(type_: TypeEngine[T] | type[TypeEngine[T]], *args: Any, **kwargs: Any) -> ColumnClause[T]:
    """A column of a :class:`Base` table, unnamed until its class names it (SQLAlchemy's :class:`Column`).

    Typed as the column expression it is in statements (``Entry.key == doi``), not as the ``Column``
    descriptor SQLAlchemy 2.1 reserves for its own declarative classes.
    """
    return Column(type_, *args, **kwargs)


class Base:
    """A table of the store as a class: its columns as class attributes (``Entry.key``), its table.

    The table is ``__table__``, every table is in ``metadata`` (with a naming convention: named
    constraints for Alembic batch mode).

    SQLAlchemy Core, no ORM mapping: the store reads and writes through Core statements on a
    ``Connection`` (``select(Entry.key)``, ``delete(Entry)``, ``Entry.__table__.insert()``), so the
    ORM (``sqlalchemy.orm``, ~0.15 s of every command's start, issue 28 item 1) is never imported. A
    subclass names its table (``__tablename__``), may add constraints and indexes (``__table_args__``)
    and declares each column with :func:`col` (a :class:`~sqlalchemy.schema.Column` without a name: its
    attribute's name is given to it, as SQLAlchemy allows before the column joins its table). The class
    stands for its table wherever a statement takes one (``__clause_element__``, SQLAlchemy's protocol
    for objects that stand for a SQL element).
    """

    metadata: ClassVar[MetaData] = MetaData(naming_convention=NAMING)
    __tablename__: ClassVar[str]
    __table_args__: ClassVar[tuple[Any, ...]] = ()
    __table__: ClassVar[Table]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Build the subclass's :class:`~sqlalchemy.schema.Table` from its columns, in declaration order."""
        super().__init_subclass__(**kwargs)
        columns = []
        for name, value in vars(cls).items():
            if isinstance(value, Column):
                if not value.name:
                    value.name = name
                columns.append(value)
        cls.__table__ = Table(cls.__tablename__, Base.metadata, *columns, *cls.__table_args__)

    @classmethod
    def __clause_element__(cls) -> Table:
        """The class's table (what a statement given the class uses)."""
        return cls.__table__


class Entry(Base):
    """One stored upstream object.

    ``kind`` is ``crossref_work`` (``key`` = ASCII-lowercased DOI) or ``zenodo_record``
    (``key`` = record id). ``status`` is ``ok`` (``body`` holds the upstream JSON text exactly as
    received), ``not_found`` (upstream 404), ``gone`` (Zenodo 410; ``body`` holds the tombstone
    JSON) or ``restricted`` (Zenodo 403). Times are Unix epoch seconds (UTC).
    """

    __tablename__ = "entries"
    __table_args__ = (
        UniqueConstraint("kind", "key", name="uq_entries_kind_key"),
        Index("ix_entries_kind_doi", "kind", "doi"),
        Index("ix_entries_kind_concept_key", "kind", "concept_key"),
    )

    id = col(Integer, primary_key=True)
    kind = col(String(32), nullable=False)
    key = col(String(1024), nullable=False)
    status = col(String(16), nullable=False)
    body = col(BODY, nullable=True)
    """The body as stored (:mod:`syncd.store.codec`); the store decodes it, nothing else reads it."""
    content_hash = col(String(64), nullable=True)
    upstream_version = col(String(64), nullable=True)
    doi = col(String(1024), nullable=True)
    concept_key = col(String(64), nullable=True)
    title = col(Text, nullable=True)
    search_text = col(Text, nullable=True)
    fetched_at = col(Float, nullable=False)
    created_at = col(Float, nullable=False)


class EntryLine(Base):
    """The list line of one stored entry (migration 0015): the fields a list line of it shows.

    JSON text the kind derives from the body (:func:`syncd.crossref.views_lines.list_line` for a
    Crossref work), written with the body by every write and gone with it (``ON DELETE CASCADE``; a
    body replaced by one without a line, a tombstone or a miss drops it). Kept out of the ``entries``
    row, whose body spills to overflow pages: a search page reads each hit's line from one small row of
    its own instead of walking the body's pages. No row: the entry has no line (readers parse the body).
    """

    __tablename__ = "entry_lines"

    entry_id = col(
        Integer, ForeignKey("entries.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    line = col(Text, nullable=False)


class Validation(Base):
    """Freshness state of one entry (one row per entry).

    ``validated_at`` is the last time upstream confirmed the stored content (epoch seconds);
    ``etag``/``last_modified`` are upstream's validators as sent, replayed as
    ``If-None-Match``/``If-Modified-Since``. ``volatile`` is a JSON object of the upstream fields
    that move without the content changing (Crossref ``is-referenced-by-count``, ``indexed``; Zenodo
    ``stats``), refreshed in place on every revalidation and laid over the stored body when read.
    ``failures`` counts the failed revalidations in a row with the reason ``last_error`` names, and
    ``retry_at`` (epoch seconds, None: none) is when a sweep may ask the entry again (migration 0016,
    :meth:`syncd.store.entries.EntryStore.mark_error`).
    """

    __tablename__ = "validations"

    entry_id = col(Integer, ForeignKey("entries.id", ondelete="CASCADE"), primary_key=True)
    validated_at = col(Float, index=True, nullable=False)
    etag = col(String(256), nullable=True)
    last_modified = col(String(64), nullable=True)
    checks = col(Integer, default=0, nullable=False)
    changes = col(Integer, default=0, nullable=False)
    last_error = col(String(64), nullable=True)
    last_error_at = col(Float, nullable=True)
    volatile = col(Text, nullable=True)
    failures = col(Integer, default=0, server_default="0", nullable=False)
    retry_at = col(Float, nullable=True)


class Concept(Base):
    """Zenodo concept record id -> the latest version's record id, as last seen upstream."""

    __tablename__ = "concepts"

    concept_recid = col(String(64), primary_key=True)
    latest_recid = col(String(64), nullable=False)
    validated_at = col(Float, nullable=False)


class BudgetPool(Base):
    """Token bucket of one pool, shared by every process through the database.

    ``tokens`` at ``updated_at`` (epoch seconds), refilled at the pool's rate (requests/second) up
    to its burst. ``blocked_until``: a 429 blocks the pool for everyone until then. ``failures``
    counts consecutive connection failures; ``offline_until`` is the open breaker's end.
    """

    __tablename__ = "budget_pools"

    pool = col(String(32), primary_key=True)
    tokens = col(Float, nullable=False)
    updated_at = col(Float, nullable=False)
    blocked_until = col(Float, default=0.0, nullable=False)
    failures = col(Integer, default=0, nullable=False)
    offline_until = col(Float, default=0.0, nullable=False)
    block_reason = col(String(16), nullable=True)
    """Why ``blocked_until`` is set: ``429`` (upstream refused) or ``remaining`` (upstream said its
    window is nearly spent: a pause until its reset)."""
    announced_at = col(Float, nullable=True)
    """When (epoch s) an answer of this pool last carried rate-limit headers; the columns below are
    what it said (``announced_limit`` requests per ``announced_interval_s`` seconds,
    ``announced_in_flight`` concurrent requests, the ``x-api-pool`` name, Zenodo's remaining count and
    window reset, epoch s) and ``announced_headers`` the headers as received."""
    announced_limit = col(Integer, nullable=True)
    announced_interval_s = col(Float, nullable=True)
    announced_in_flight = col(Integer, nullable=True)
    announced_pool = col(String(64), nullable=True)
    announced_remaining = col(Integer, nullable=True)
    announced_reset_at = col(Float, nullable=True)
    announced_headers = col(String(512), nullable=True)
    requests_total = col(BigInteger, default=0, server_default="0", nullable=False)
    """Requests of this pool that reached upstream (answered, failed or timed out), every process
    together (migration 0011)."""
    rate_limited_total = col(BigInteger, default=0, server_default="0", nullable=False)
    """Of those, the ones upstream answered 429 (migration 0011)."""


class BudgetLease(Base):
    """One in-flight upstream request of a pool, held by one process (``pid`` on ``host``).

    Freed when its holder releases it, when ``expires_at`` (the holder's deadline plus a margin,
    epoch seconds) has passed, or, on the same host, as soon as process ``pid`` is gone.
    """

    __tablename__ = "budget_leases"

    id = col(String(36), primary_key=True)
    pool = col(String(32), index=True, nullable=False)
    expires_at = col(Float, nullable=False)
    pid = col(Integer, nullable=True)
    host = col(String(255), nullable=True)


class BudgetSend(Base):
    """One granted upstream request of a pool (``id`` = its lease id), sent at ``at`` (epoch seconds).

    Kept for the sliding window of an announced limit (at most ``announced_limit`` sends in any
    ``announced_interval_s`` plus ``budget.pace_margin_s``); pruned by the takes.
    """

    __tablename__ = "budget_sends"
    __table_args__ = (Index("ix_budget_sends_pool_at", "pool", "at"),)

    id = col(String(36), primary_key=True)
    pool = col(String(32), nullable=False)
    at = col(Float, nullable=False)


class Watch(Base):
    """One watched item the daemon keeps mirrored.

    ``kind`` is ``doi``, ``crossref_query``, ``zenodo_community`` or ``zenodo_query``; ``spec`` its
    JSON description (e.g. ``{"filter": {"orcid": "..."}}``).
    """

    __tablename__ = "watches"
    __table_args__ = (UniqueConstraint("kind", "spec", name="uq_watches_kind_spec"),)

    id = col(Integer, primary_key=True)
    kind = col(String(32), nullable=False)
    spec = col(Text, nullable=False)
    label = col(Text, nullable=True)
    created_at = col(Float, nullable=False)


class SyncState(Base):
    """Progress of one named sync walk (e.g. ``watch:3``), so a restart resumes where it stopped."""

    __tablename__ = "sync_state"

    name = col(String(128), primary_key=True)
    cursor = col(Text, nullable=True)
    checkpoint = col(Text, nullable=True)
    status = col(String(32), nullable=True)
    started_at = col(Float, nullable=True)
    updated_at = col(Float, nullable=False)
    last_success_at = col(Float, nullable=True)
    pid = col(Integer, nullable=True)
    """Process id of the walker (set when a walk starts; migration 0005)."""
    host = col(String(255), nullable=True)
    """Host name of the walker."""
    heartbeat_at = col(Float, nullable=True)
    """When the walker last finished a page (epoch seconds)."""
    stop_requested = col(Boolean, default=False, server_default=false(), nullable=False)
    """Set by ``syncd watch stop``: the walk stops at its next page boundary."""
    watermark = col(String(40), nullable=True)
    """``indexed`` time (ISO 8601 UTC, ms) of the last work a Crossref walk stored (migration 0009)."""
    seen = col(BigInteger, nullable=True)
    """Works the current (or last) walk has seen."""
    total = col(BigInteger, nullable=True)
    """``total-results`` upstream answered for the current (or last) walk."""


class Blob(Base):
    """A bounded binary payload kept for offline use (``size`` bytes), keyed by ``(kind, key)``."""

    __tablename__ = "blobs"

    kind = col(String(32), primary_key=True)
    key = col(String(1024), primary_key=True)
    data = col(LargeBinary, nullable=False)
    size = col(Integer, nullable=False)
    content_type = col(String(128), nullable=True)
    fetched_at = col(Float, nullable=False)
    accessed_at = col(Float, index=True, nullable=False)


class PreviousBody(Base):
    """A body set aside beside entry ``entry_id`` (migration 0004; times epoch seconds).

    ``role`` ``previous``: the body the entry held before a replacement (``status``, ``body``,
    ``content_hash`` and ``fetched_at`` as they were), kept until ``kept_at`` + ``store.keep_previous_s``.
    ``role`` ``suspect``: a new upstream body that dropped most of the stored one (``reason``
    ``suspicious_shrink``), stored only when a later answer with the same ``content_hash`` confirms it.
    """

    __tablename__ = "previous_bodies"

    id = col(Integer, primary_key=True)
    entry_id = col(Integer, ForeignKey("entries.id", ondelete="CASCADE"), index=True, nullable=False)
    role = col(String(16), nullable=False)
    status = col(String(16), nullable=False)
    body = col(BODY, nullable=True)
    """Encoded like ``entries.body`` (:mod:`syncd.store.codec`)."""
    content_hash = col(String(64), nullable=True)
    fetched_at = col(Float, nullable=False)
    kept_at = col(Float, index=True, nullable=False)
    reason = col(String(64), nullable=True)


class Change(Base):
    """One change found in a stored entry (migration 0007; ``detected_at`` epoch seconds).

    Written by the store in the transaction that replaced the entry's body (or stored a new Zenodo
    version of a series it holds); goes with its entry (``ON DELETE CASCADE``) or after
    ``changes.keep_s``. ``types`` is the comma-separated change types, ``summary`` the JSON of
    :class:`syncd.normalize.changes.ChangeSummary`; ``doi`` (lower-cased) and ``series`` (Zenodo
    concept record id) match the entry against the DOI watch list.
    """

    __tablename__ = "changes"

    id = col(Integer, primary_key=True)
    entry_id = col(Integer, ForeignKey("entries.id", ondelete="CASCADE"), index=True, nullable=False)
    kind = col(String(32), nullable=False)
    key = col(String(1024), nullable=False)
    doi = col(String(1024), nullable=True, index=True)
    series = col(String(64), nullable=True)
    detected_at = col(Float, index=True, nullable=False)
    types = col(String(512), nullable=False)
    summary = col(Text, nullable=False)


class BodyDictionary(Base):
    """A zstd dictionary trained on the store's own bodies (migration 0008; :mod:`syncd.store.codec`).

    ``id`` is zstd's dictionary id (written in the header of every body compressed with it); ``data``
    the dictionary; ``samples`` bodies of ``sample_bytes`` bytes in all trained it at ``created_at``
    (epoch seconds). Never deleted: bodies compressed with it stay readable after a newer one.
    """

    __tablename__ = "body_dictionaries"

    id = col(BigInteger, primary_key=True, autoincrement=False)
    data = col(LargeBinary, nullable=False)
    samples = col(Integer, nullable=False)
    sample_bytes = col(BigInteger, nullable=False)
    created_at = col(Float, nullable=False)


class RetractionDataset(Base):
    """One imported version of the Retraction Watch data (migration 0012; times epoch seconds).

    ``sha256`` is the file's own hash (hex), ``row_count`` its data rows, ``source`` the path or URL it
    was read from, ``git_commit`` the git commit of the checkout it came from (None: not a git checkout),
    ``imported_at`` when this version was stored; ``added``, ``changed``, ``removed`` count the rows
    that differ from the version before (all ``added`` for the first one); ``skipped`` rows unreadable.
    """

    __tablename__ = "retraction_datasets"

    id = col(Integer, primary_key=True)
    sha256 = col(String(64), index=True, nullable=False)
    row_count = col(Integer, nullable=False)
    source = col(Text, nullable=False)
    git_commit = col(String(64), nullable=True)
    imported_at = col(Float, nullable=False)
    added = col(Integer, default=0, nullable=False)
    changed = col(Integer, default=0, nullable=False)
    removed = col(Integer, default=0, nullable=False)
    skipped = col(Integer, default=0, nullable=False)


class RetractionRow(Base):
    """One row of the newest Retraction Watch version (migration 0012), by its ``record_id``.

    ``original_doi``/``notice_doi`` lower-cased (None for a blank or ``unavailable`` DOI),
    ``original_pmid``/``notice_pmid`` PubMed ids (None for ``0``); ``nature`` normalized
    (``retraction``, ``expression_of_concern``, ``correction``, ``reinstatement``, ...); dates ISO
    8601 (``YYYY-MM-DD``); ``fields`` the JSON of every other column as parsed
    (:class:`syncd.retractions.csvfile.RetractionWatchRow`); ``row_hash`` the SHA-256 of the row's
    raw cells (:func:`syncd.retractions.csvfile.cells_hash`: an unchanged row is not parsed again);
    ``dataset_id`` the version that last added or changed it.
    """

    __tablename__ = "retraction_rows"
    __table_args__ = (
        Index("ix_retraction_rows_original_doi", "original_doi"),
        Index("ix_retraction_rows_original_pmid", "original_pmid"),
    )

    record_id = col(String(32), primary_key=True)
    original_doi = col(String(1024), nullable=True)
    original_pmid = col(String(16), nullable=True)
    notice_doi = col(String(1024), nullable=True)
    notice_pmid = col(String(16), nullable=True)
    nature = col(String(64), nullable=False)
    notice_date = col(String(10), nullable=True)
    original_date = col(String(10), nullable=True)
    title = col(Text, nullable=True)
    fields = col(Text, nullable=False)
    row_hash = col(String(64), nullable=False)
    dataset_id = col(Integer, nullable=False)


class WorkReference(Base):
    """One DOI cited by a stored entry's reference list (migration 0012): the reference index.

    Written with the entry's body (:mod:`syncd.store.references`): replaced when the body is, gone with
    the entry (``ON DELETE CASCADE``); ``cited_doi`` lower-cased, indexed for "who cites X".
    """

    __tablename__ = "work_references"

    entry_id = col(
        Integer, ForeignKey("entries.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    cited_doi = col(String(1024), primary_key=True, index=True)
