"""The Retraction Watch tables: the newest version's rows and the history of versions (SQL only).

:func:`apply_version` writes a parsed file as the new version in one transaction: rows added,
changed (their :meth:`~syncd.retractions.csvfile.RetractionWatchRow.row_hash` differs) and removed
against the version before, the ``retraction_datasets`` row, and one change-feed row (``changes``)
per added or changed row whose original DOI names a work held in the store, so the daemon's alerts
(:mod:`syncd.alerts`) see a new retraction of a watched work like any other. The first version is
the baseline: it records no change (as the alerts' first pass does not alert the history).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, insert, select

from syncd.crossref.names import CROSSREF_WORK
from syncd.retractions.csvfile import RetractionWatchRow
from syncd.retractions.facts import Dataset
from syncd.store.models import Change, Entry, RetractionDataset, RetractionRow
from syncd.store.repo import Store

__all__ = [
    "CHANGE_FIELDS",
    "CHUNK",
    "Dataset",
    "StoredRow",
    "apply_version",
    "datasets",
    "latest_dataset",
    "rows_for",
]

CHUNK = 500
"""Keys per ``IN (...)`` of a lookup or delete (below SQLite's and PostgreSQL's parameter limits)."""
CHANGE_FIELDS = ("nature", "notice_doi", "notice_date", "original_doi", "original_pmid", "title", "reasons")
"""Fields a change-feed item names when a row changed between versions."""


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


def _summary(
    row: RetractionWatchRow, old: RetractionWatchRow | None, dataset: str, title: str | None
) -> tuple[str, dict[str, Any]]:
    """The change type and feed summary of an added (``old`` None) or changed row."""
    item: dict[str, Any] = {
        "type": row.nature,
        "doi": row.notice_doi,
        "source": "retraction-watch",
        "record_id": row.record_id,
        "updated": row.notice_date,
        "dataset": dataset,
    }
    kind = row.nature
    if old is not None:
        changed = [f for f in CHANGE_FIELDS if getattr(old, f) != getattr(row, f)] or ["other"]
        item["fields"] = changed
        if old.nature == row.nature:
            kind = "retraction_watch_updated"
            item = {**item, "type": kind, "nature": row.nature}
    summary: dict[str, Any] = {"types": [kind], "items": [item], "doi": row.original_doi}
    if title:
        summary["title"] = title
    return kind, summary


def _record_changes(
    conn: Connection,
    changed: list[tuple[RetractionWatchRow, RetractionWatchRow | None]],
    sha: str,
    now: float,
) -> int:
    """One ``changes`` row per added/changed row naming a stored Crossref work; returns how many."""
    dois = sorted({r.original_doi for r, _ in changed if r.original_doi})
    held: dict[str, tuple[int, str | None]] = {}
    for chunk in _chunks(dois):
        query = select(Entry.id, Entry.key, Entry.title).where(
            Entry.kind == CROSSREF_WORK, Entry.key.in_(chunk)
        )
        held.update({r.key: (r.id, r.title) for r in conn.execute(query)})
    rows = []
    for row, old in changed:
        if row.original_doi not in held:
            continue
        entry_id, title = held[row.original_doi]
        kind, summary = _summary(row, old, sha[:12], title)
        rows.append(
            {
                "entry_id": entry_id,
                "kind": CROSSREF_WORK,
                "key": row.original_doi,
                "doi": row.original_doi,
                "series": None,
                "detected_at": now,
                "types": kind,
                "summary": json.dumps(summary, ensure_ascii=False, separators=(",", ":")),
            }
        )
    if rows:
        conn.execute(insert(Change), rows)
    return len(rows)


def apply_version(
    store: Store,
    rows: Sequence[RetractionWatchRow],
    *,
    sha256: str,
    source: str,
    commit: str | None,
    skipped: int,
    now: float,
) -> tuple[Dataset, int]:
    """Store ``rows`` (record ids unique) as the newest version; returns it and the changes recorded.

    One transaction: rows not in ``rows`` are deleted, changed ones rewritten, new ones inserted,
    the version row added, and the change feed written (see the module docstring).

    Raises:
        StoreError: the database failed (nothing written).
    """
    table = RetractionRow.__table__
    versions = RetractionDataset.__table__
    digests = {r.record_id: r.row_hash() for r in rows}
    with store.write() as conn:
        first = conn.execute(select(versions.c.id).limit(1)).first() is None
        before = {r.record_id: r.row_hash for r in conn.execute(select(table.c.record_id, table.c.row_hash))}
        added = [r for r in rows if r.record_id not in before]
        changed = [r for r in rows if r.record_id in before and before[r.record_id] != digests[r.record_id]]
        removed = sorted(set(before) - set(digests))
        dataset_id = conn.execute(
            insert(versions)
            .values(
                sha256=sha256,
                row_count=len(rows),
                source=source,
                git_commit=commit,
                imported_at=now,
                added=len(added),
                changed=len(changed),
                removed=len(removed),
                skipped=skipped,
            )
            .returning(versions.c.id)
        ).scalar_one()
        old_rows: dict[str, RetractionWatchRow] = {}
        for chunk in _chunks([r.record_id for r in changed]):
            query = select(table.c.record_id, table.c.fields).where(table.c.record_id.in_(chunk))
            old_rows.update(
                {r.record_id: RetractionWatchRow.from_json(r.fields) for r in conn.execute(query)}
            )
        for chunk in _chunks(removed + [r.record_id for r in changed]):
            conn.execute(delete(table).where(table.c.record_id.in_(chunk)))
        fresh = [_values(r, digests[r.record_id], dataset_id) for r in (*added, *changed)]
        for i in range(0, len(fresh), 5000):
            conn.execute(insert(table), fresh[i : i + 5000])
        recorded = 0
        if not first:
            pairs = [(r, None) for r in added] + [(r, old_rows.get(r.record_id)) for r in changed]
            recorded = _record_changes(conn, pairs, sha256, now)
        row = conn.execute(select(versions).where(versions.c.id == dataset_id)).one()
    return _dataset(row), recorded
