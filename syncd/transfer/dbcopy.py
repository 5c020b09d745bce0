"""``syncd db copy``: move a whole store between databases (SQLite <-> PostgreSQL, or same backend).

What is copied, in this order (foreign keys first): ``body_dictionaries`` (the zstd dictionaries
the bodies name), ``entries`` (ids kept; bodies copied as stored, still compressed), ``entry_lines``,
``validations``, ``previous_bodies`` (ids kept), ``concepts``, ``watches`` (ids kept), ``sync_state``
and ``blobs``; rows are read from the source in primary-key order, ``batch`` at a time, and written to the
destination with
``INSERT ... ON CONFLICT DO NOTHING``. The search index is rebuilt by the destination itself (FTS5
triggers on SQLite, the generated ``search_tsv`` column on PostgreSQL). The shared budget
(``budget_pools``, ``budget_leases``) is runtime state and is not copied: the destination starts
with full buckets.

Resumable: each batch is committed together with a progress row ``dbcopy:<table>`` in the
destination's ``sync_state`` (the last primary key copied), so a copy that was interrupted continues
after the last committed batch when run again with the same source. At the end the row counts of
source and destination are compared table by table, PostgreSQL serial sequences are moved past the
copied ids, and the progress rows are removed. A copy run again after it completed (or was killed
after its last commit, the removal of the progress rows) finds every table of the destination holding
the source's rows (same count and same last primary key, table by table) and ends at once, reported
``complete`` with nothing copied.

Stop the daemons writing to the source first: rows written during the copy may be missed, which
the final count check then reports.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Engine, Table, and_, delete, func, or_, select, text
from sqlalchemy.exc import SQLAlchemyError

from syncd.errors import InvalidInput, StoreError
from syncd.store.dialect import insert_many_ignore, is_postgresql, normalize_url, reset_sequences, upsert
from syncd.store.engine import current_revision, head_revision, make_engine, upgrade_to_head
from syncd.store.models import (
    Blob,
    BodyDictionary,
    Change,
    Concept,
    Entry,
    EntryLine,
    PreviousBody,
    RetractionDataset,
    RetractionRow,
    SyncState,
    Validation,
    Watch,
    WorkReference,
)

__all__ = ["COPY_TABLES", "PROGRESS_PREFIX", "CopyReport", "copy_store", "redact"]

COPY_TABLES: list[Table] = [
    BodyDictionary.__table__,  # type: ignore[list-item]
    Entry.__table__,  # type: ignore[list-item]
    EntryLine.__table__,  # type: ignore[list-item]
    Validation.__table__,  # type: ignore[list-item]
    WorkReference.__table__,  # type: ignore[list-item]
    PreviousBody.__table__,  # type: ignore[list-item]
    Change.__table__,  # type: ignore[list-item]  # the change feed, ids kept: the alerts cursor holds
    Concept.__table__,  # type: ignore[list-item]
    Watch.__table__,  # type: ignore[list-item]
    SyncState.__table__,  # type: ignore[list-item]
    RetractionDataset.__table__,  # type: ignore[list-item]
    RetractionRow.__table__,  # type: ignore[list-item]
    Blob.__table__,  # type: ignore[list-item]
]
"""Tables copied, parents before children."""
PROGRESS_PREFIX = "dbcopy:"
"""``sync_state.name`` prefix of the copy's progress rows in the destination (never copied)."""
SERIAL_COLUMNS = [
    ("entries", "id"),
    ("previous_bodies", "id"),
    ("changes", "id"),
    ("watches", "id"),
    ("retraction_datasets", "id"),
]

Progress = Callable[[str, int, int], None]
"""``progress(table, rows_copied_now, rows_in_source_table)``, called after every batch."""


@dataclass
class CopyReport:
    """Outcome of :func:`copy_store`: rows per table in source and destination, and what this run did."""

    source: str
    destination: str
    resumed: bool = False
    complete: bool = False
    """True when the destination already held every row of the source (a copy run again after it ended)."""
    tables: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (``tables``: ``{name: {"source", "destination", "copied"}}``)."""
        return {
            "source": self.source,
            "destination": self.destination,
            "resumed": self.resumed,
            "complete": self.complete,
            "tables": self.tables,
            "seconds": round(self.seconds, 3),
        }


def redact(url: str) -> str:
    """``url`` with its password hidden (for messages and reports).

    Raises:
        InvalidInput: ``url`` is not an SQLAlchemy URL.
    """
    try:
        return normalize_url(url).render_as_string(hide_password=True)
    except (SQLAlchemyError, ValueError) as exc:
        raise InvalidInput(f"not a database URL: {exc}", reason="invalid_parameter") from exc


def _own_rows(table: Table) -> Any:
    """Clause leaving out the copy's own progress rows (only ``sync_state`` holds any)."""
    if table.name == SyncState.__tablename__:
        return ~SyncState.name.startswith(PROGRESS_PREFIX)
    return None


def _count(conn: Connection, table: Table) -> int:
    q = select(func.count()).select_from(table)
    own = _own_rows(table)
    if own is not None:
        q = q.where(own)
    return int(conn.execute(q).scalar_one())


def _last_key(conn: Connection, table: Table) -> tuple[Any, ...] | None:
    """The greatest primary key of ``table`` (its copy's own progress rows left out), None when empty."""
    pk = list(table.primary_key.columns)
    q = select(*pk).order_by(*(c.desc() for c in pk)).limit(1)
    own = _own_rows(table)
    if own is not None:
        q = q.where(own)
    row = conn.execute(q).first()
    return None if row is None else tuple(row)


def _holds_the_source(src: Engine, dst: Engine) -> dict[str, int] | None:
    """Row counts per table when ``dst`` holds the rows of ``src`` already (a completed copy), else None.

    Same row count and same greatest primary key in every copied table: what a copy leaves behind
    (ids are kept), which a store filled otherwise does not match.
    """
    with src.connect() as sconn, dst.connect() as dconn:
        counts: dict[str, int] = {}
        for table in COPY_TABLES:
            count = _count(sconn, table)
            if count != _count(dconn, table) or _last_key(sconn, table) != _last_key(dconn, table):
                return None
            counts[table.name] = count
    return counts


def _after(table: Table, last: list[Any] | None) -> Any:
    """Keyset clause: primary key strictly after ``last`` (lexicographic over the key columns)."""
    cols = list(table.primary_key.columns)
    if last is None:
        return None
    ors = []
    for i, col in enumerate(cols):
        eqs = [cols[j] == last[j] for j in range(i)]
        ors.append(and_(*eqs, col > last[i]))
    return or_(*ors)


def _as_stored(row: dict[str, Any]) -> dict[str, Any]:
    """A row to write as read, except a plain-text body (SQLite, before compression) as UTF-8 bytes.

    Bodies are copied as stored (:mod:`syncd.store.codec`), never decoded; a PostgreSQL ``bytea``
    column takes bytes only, and the codec reads UTF-8 bytes as the text they are.
    """
    body = row.get("body")
    if isinstance(body, str):
        row["body"] = body.encode("utf-8", "surrogatepass")
    return row


def _progress_rows(conn: Connection) -> dict[str, dict[str, Any]]:
    rows = conn.execute(
        select(SyncState.name, SyncState.cursor).where(SyncState.name.startswith(PROGRESS_PREFIX))
    ).all()
    return {name[len(PROGRESS_PREFIX) :]: json.loads(cur or "{}") for name, cur in rows}


def _save_progress(conn: Connection, table: str, source: str, last: list[Any], now: float) -> None:
    cursor = json.dumps({"source": source, "after": last})
    values = {"name": PROGRESS_PREFIX + table, "cursor": cursor, "status": "copying", "updated_at": now}
    upsert(conn, SyncState.__table__, values, ["name"])


def _open(url: str) -> Engine:
    try:
        return make_engine(url)
    except (SQLAlchemyError, ImportError) as exc:
        message = f"cannot use database URL {redact(url)}: {exc}"
        raise InvalidInput(message, reason="invalid_parameter") from exc


def copy_store(
    source_url: str,
    destination_url: str,
    *,
    batch: int = 500,
    progress: Progress | None = None,
) -> CopyReport:
    """Copy every stored row from ``source_url`` to ``destination_url`` (SQLAlchemy URLs).

    The destination is created/upgraded to the newest schema; it must hold no entries, watches or
    blobs unless it holds an interrupted copy from the same source, which is then resumed.

    Args:
        source_url: the store to read (must be at the newest schema revision; it is not modified).
        destination_url: the store to write.
        batch: rows per transaction (>= 1).
        progress: called after every committed batch.

    Returns:
        A :class:`CopyReport` with per-table counts (``source``, ``destination``, ``copied`` this run).

    Raises:
        InvalidInput: same URL twice, a bad URL, a source not at head, a destination not empty.
        StoreError: a database failed, or the final counts differ (rows changed during the copy).
    """
    if batch < 1:
        raise InvalidInput("batch must be at least 1")
    src_name, dst_name = redact(source_url), redact(destination_url)
    if normalize_url(source_url) == normalize_url(destination_url):
        raise InvalidInput("--from and --to name the same database", reason="invalid_parameter")
    started = time.monotonic()
    report = CopyReport(source=src_name, destination=dst_name)
    src, dst = _open(source_url), _open(destination_url)
    try:
        try:
            revision, head = current_revision(src), head_revision()
        except SQLAlchemyError as exc:
            raise StoreError(f"cannot read the source {src_name}: {exc}") from exc
        if revision is None:
            raise InvalidInput(f"the source {src_name} holds no syncd store", reason="invalid_parameter")
        if revision != head:
            raise InvalidInput(
                f"the source {src_name} is at schema revision {revision}, this syncd at {head}: "
                "run `syncd db upgrade` on the source first",
                reason="invalid_parameter",
            )
        upgrade_to_head(dst)
        _copy(src, dst, report, batch, progress)
    except SQLAlchemyError as exc:
        raise StoreError(f"copy failed: {exc.__class__.__name__}: {exc}") from exc
    finally:
        src.dispose()
        dst.dispose()
    report.seconds = time.monotonic() - started
    return report


def _copy(src: Engine, dst: Engine, report: CopyReport, batch: int, progress: Progress | None) -> None:
    with dst.begin() as conn:
        done = _progress_rows(conn)
        busy = {t.name: _count(conn, t) for t in COPY_TABLES}
    foreign = {p.get("source") for p in done.values()} - {report.source}
    if foreign:
        raise InvalidInput(
            f"the destination holds an interrupted copy from another source ({', '.join(sorted(foreign))})",
            reason="invalid_parameter",
        )
    report.resumed = bool(done)
    if not done and any(busy[t] for t in ("entries", "watches", "blobs", "concepts")):
        held = _holds_the_source(src, dst)
        if held is not None:  # run again after it completed, or killed after its last commit
            report.complete = True
            report.tables = {name: {"source": n, "destination": n, "copied": 0} for name, n in held.items()}
            with dst.begin() as conn:
                reset_sequences(conn, SERIAL_COLUMNS)  # idempotent: the killed run may not have reached it
            return
        raise InvalidInput(
            f"the destination {report.destination} already holds a store "
            f"({busy['entries']} entries, {busy['watches']} watches): copy into an empty database",
            reason="invalid_parameter",
        )
    with src.connect() as conn:
        totals = {t.name: _count(conn, t) for t in COPY_TABLES}
    for table in COPY_TABLES:
        last = done.get(table.name, {}).get("after")
        copied = 0
        pk = list(table.primary_key.columns)
        while True:
            q = select(table).order_by(*pk).limit(batch)
            own = _own_rows(table)
            if own is not None:
                q = q.where(own)
            after = _after(table, last)
            if after is not None:
                q = q.where(after)
            with src.connect() as sconn:
                rows = [_as_stored(dict(r._mapping)) for r in sconn.execute(q)]
            if not rows:
                break
            last = [rows[-1][c.name] for c in pk]
            with dst.begin() as dconn:
                insert_many_ignore(dconn, table, rows)
                _save_progress(dconn, table.name, report.source, last, time.time())
            copied += len(rows)
            if progress is not None:
                progress(table.name, len(rows), totals[table.name])
        report.tables[table.name] = {"source": totals[table.name], "copied": copied}
    with dst.begin() as conn:
        reset_sequences(conn, SERIAL_COLUMNS)
        counts = {t.name: _count(conn, t) for t in COPY_TABLES}
    with src.connect() as conn:
        now_src = {t.name: _count(conn, t) for t in COPY_TABLES}
    wrong = []
    for name, entry in report.tables.items():
        entry["source"] = now_src[name]
        entry["destination"] = counts[name]
        if counts[name] != now_src[name]:
            wrong.append(f"{name}: {now_src[name]} in the source, {counts[name]} in the destination")
    if wrong:
        raise StoreError(
            "row counts differ after the copy (was the source written meanwhile? stop its daemons and "
            "run the copy again into a fresh database): " + "; ".join(wrong)
        )
    with dst.begin() as conn:
        conn.execute(delete(SyncState).where(SyncState.name.startswith(PROGRESS_PREFIX)))
        if is_postgresql(conn):
            conn.execute(text("ANALYZE"))
