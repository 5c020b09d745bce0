"""The Retraction Watch tables: the newest version's rows and the history of versions (SQL only).

:func:`apply_version` writes a parsed file as the new version in one transaction: rows added,
changed and removed against the version before, the ``retraction_datasets`` row, and one
change-feed row (``changes``) per added, changed or removed row whose original DOI names a work held
in the store or a watched DOI (:mod:`syncd.retractions.feed`), so the daemon's alerts
(:mod:`syncd.daemon.alerts`) see a new retraction of a watched work like any other, and a retraction
withdrawn from the data too. The first version is
the baseline: it records no change (as the alerts' first pass does not alert the history).

A row whose raw cells hash to the stored ``row_hash`` (:func:`~syncd.retractions.csvfile.cells_hash`)
was not even parsed; one whose hash differs is changed when its parsed fields differ from the
stored ones, else only its hash is rewritten (a re-quoted row, a reordered header, or a row stored
when ``row_hash`` was the hash of the parsed fields).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, bindparam, delete, func, insert, select, update

from syncd.retractions.csvfile import ParsedFile, RetractionWatchRow
from syncd.retractions.facts import Dataset
from syncd.retractions.feed import record_changes
from syncd.store.models import RetractionDataset, RetractionRow
from syncd.store.repo import Store

__all__ = [
    "CHUNK",
    "Dataset",
    "StoredRow",
    "apply_version",
    "datasets",
    "latest_dataset",
    "rows_for",
    "stored_hashes",
]

CHUNK = 500
"""Keys per ``IN (...)`` of a lookup or delete (below SQLite's and PostgreSQL's parameter limits)."""


@dataclass(frozen=True)
class StoredRow:
    """A stored row: the parsed row and the version (:class:`Dataset` id) that last wrote it."""

    row: RetractionWatchRow
    dataset_id: int


def _dataset(r: Any) -> Dataset:
    return Dataset(
        id=r.id,
        sha256=r.sha256,
        rows=r.row_count,
        source=r.source,
        commit=r.git_commit,
        imported_at=r.imported_at,
        added=r.added,
        changed=r.changed,
        removed=r.removed,
        skipped=r.skipped,
    )


def datasets(store: Store, limit: int = 10) -> list[Dataset]:
    """The imported versions, newest first (at most ``limit``)."""
    table = RetractionDataset.__table__
    with store.read() as conn:
        rows = conn.execute(select(table).order_by(table.c.id.desc()).limit(limit)).all()
    return [_dataset(r) for r in rows]


def latest_dataset(store: Store) -> Dataset | None:
    """The newest imported version, None before the first import."""
    found = datasets(store, 1)
    return found[0] if found else None


def _chunks(values: Sequence[str]) -> Iterable[list[str]]:
    for i in range(0, len(values), CHUNK):
        yield list(values[i : i + CHUNK])


def rows_for(store: Store, dois: Sequence[str] = (), pmids: Sequence[str] = ()) -> list[StoredRow]:
    """The stored rows whose original DOI (lower-cased) is in ``dois`` or original PubMed id in ``pmids``.

    Ordered by notice date, then record id; a row matching both is returned once.
    """
    table = RetractionRow.__table__
    found: dict[str, StoredRow] = {}
    with store.read() as conn:
        for column, values in (
            (table.c.original_doi, [d.lower() for d in dois]),
            (table.c.original_pmid, list(pmids)),
        ):
            for chunk in _chunks(sorted(set(values))):
                for r in conn.execute(
                    select(table.c.record_id, table.c.fields, table.c.dataset_id).where(column.in_(chunk))
                ):
                    found.setdefault(
                        r.record_id, StoredRow(RetractionWatchRow.from_json(r.fields), r.dataset_id)
                    )
    return sorted(found.values(), key=lambda s: (s.row.notice_date or "", s.row.record_id))


def stored_hashes(store: Store) -> tuple[int | None, dict[str, str]]:
    """The newest version's id (None before the first import) and record id -> its stored ``row_hash``.

    Read in one transaction: :func:`apply_version` writes only when that version is still the newest.
    """
    table = RetractionRow.__table__
    with store.read() as conn:
        newest = conn.execute(select(func.max(RetractionDataset.__table__.c.id))).scalar()
        known = {r.record_id: r.row_hash for r in conn.execute(select(table.c.record_id, table.c.row_hash))}
    return newest, known


def _values(row: RetractionWatchRow, digest: str, dataset_id: int) -> dict[str, Any]:
    return {
        "record_id": row.record_id,
        "original_doi": row.original_doi,
        "original_pmid": row.original_pmid,
        "notice_doi": row.notice_doi,
        "notice_pmid": row.notice_pmid,
        "nature": row.nature,
        "notice_date": row.notice_date,
        "original_date": row.original_date,
        "title": row.title,
        "fields": row.fields_json(),
        "row_hash": digest,
        "dataset_id": dataset_id,
    }


def _stored_fields(conn: Connection, record_ids: Sequence[str]) -> dict[str, str]:
    table = RetractionRow.__table__
    out: dict[str, str] = {}
    for chunk in _chunks(record_ids):
        query = select(table.c.record_id, table.c.fields).where(table.c.record_id.in_(chunk))
        out.update({r.record_id: r.fields for r in conn.execute(query)})
    return out


def apply_version(
    store: Store,
    parsed: ParsedFile,
    *,
    based_on: int | None,
    known: Mapping[str, str],
    sha256: str,
    source: str,
    commit: str | None,
    now: float,
) -> tuple[Dataset, int, int] | None:
    """Store ``parsed`` as the newest version; returns it, the change-feed rows recorded and pending.

    ``parsed`` was read with ``known`` (:func:`stored_hashes`, when version ``based_on`` was the
    newest). One transaction: rows the file no longer holds are deleted, changed ones rewritten,
    new ones inserted, re-hashed ones updated, the version row added, and the change feed written
    (see the module docstring). Returns None, writing nothing, when another import stored a version
    after ``based_on`` (read again and retry).

    Raises:
        StoreError: the database failed (nothing written).
    """
    table = RetractionRow.__table__
    versions = RetractionDataset.__table__
    with store.write() as conn:
        if conn.execute(select(func.max(versions.c.id))).scalar() != based_on:
            return None
        present = set(parsed.unchanged) | {r.record_id for r in parsed.rows}
        removed = sorted(set(known) - present)
        added = [r for r in parsed.rows if r.record_id not in known]
        stored = _stored_fields(conn, [r.record_id for r in parsed.rows if r.record_id in known])
        gone = _stored_fields(conn, removed) if based_on is not None else {}
        changed = [r for r in parsed.rows if r.record_id in stored and stored[r.record_id] != r.fields_json()]
        rehashed = [
            r for r in parsed.rows if r.record_id in stored and stored[r.record_id] == r.fields_json()
        ]
        dataset_id = conn.execute(
            insert(versions)
            .values(
                sha256=sha256,
                row_count=parsed.total,
                source=source,
                git_commit=commit,
                imported_at=now,
                added=len(added),
                changed=len(changed),
                removed=len(removed),
                skipped=parsed.skipped,
            )
            .returning(versions.c.id)
        ).scalar_one()
        for chunk in _chunks(removed + [r.record_id for r in changed]):
            conn.execute(delete(table).where(table.c.record_id.in_(chunk)))
        fresh = [_values(r, parsed.hashes[r.record_id], dataset_id) for r in (*added, *changed)]
        for i in range(0, len(fresh), 5000):
            conn.execute(insert(table), fresh[i : i + 5000])
        if rehashed:
            conn.execute(
                update(table)
                .where(table.c.record_id == bindparam("rid"))
                .values(row_hash=bindparam("digest")),
                [{"rid": r.record_id, "digest": parsed.hashes[r.record_id]} for r in rehashed],
            )
        recorded = pending = 0
        if based_on is not None:
            pairs = [(r, None) for r in added] + [
                (r, RetractionWatchRow.from_json(stored[r.record_id])) for r in changed
            ]
            removals = [RetractionWatchRow.from_json(gone[rid]) for rid in removed if rid in gone]
            recorded, pending = record_changes(conn, pairs, sha256, now, removed=removals)
        row = conn.execute(select(versions).where(versions.c.id == dataset_id)).one()
    return _dataset(row), recorded, pending
