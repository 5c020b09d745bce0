"""Retraction Watch changes in the change feed: for stored works, and for watched DOIs not stored yet.

A row added or changed between two versions becomes one ``changes`` row (types ``retraction``,
``expression_of_concern``, ``correction``, ``reinstatement`` or ``retraction_watch_updated``), and a row
the new version no longer holds one of type :data:`REMOVED` (a retraction withdrawn from the data is
news too: it alerts like a new retraction), on
the entry of its original DOI: the Crossref work stored under that DOI, else any entry whose
``doi`` is it (a DataCite or Zenodo record, for a watched DOI). The daemon's alert pass
(:mod:`syncd.daemon.alerts`) reads these like any other change, so a new retraction of a watched work is
an ``event=alert``.

A change row belongs to an entry (``changes.entry_id``), so a watched DOI with no entry at all
(its watch not walked yet) cannot have one when the version is imported: its changes are kept
pending in the ``sync_state`` row :data:`PENDING` and written to the feed by :func:`flush_pending`
(each import, and the daemon's hourly Retraction Watch job) once the DOI's entry exists, with
``pending_since`` (epoch s) in the summary. A pending change whose DOI is no longer watched is
dropped; one older than :data:`PENDING_KEEP_S` is dropped and logged; at most :data:`PENDING_MAX`
are kept (the oldest dropped first, logged).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection, insert, select

from syncd.crossref.names import CROSSREF_WORK
from syncd.retractions.csvfile import RetractionWatchRow
from syncd.store.dialect import upsert
from syncd.store.models import Change, Entry, SyncState, Watch
from syncd.store.repo import Store

__all__ = [
    "CHANGE_FIELDS",
    "PENDING",
    "PENDING_KEEP_S",
    "PENDING_MAX",
    "REMOVED",
    "flush_pending",
    "pending_changes",
    "record_changes",
]

log = logging.getLogger("syncd.retractions")

CHANGE_FIELDS = ("nature", "notice_doi", "notice_date", "original_doi", "original_pmid", "title", "reasons")
"""Fields a change-feed item names when a row changed between versions."""
REMOVED = "retraction_watch_removed"
"""Change type of a row the new version no longer holds (its item names the row as it was)."""
PENDING = "retractions:pending"
"""``sync_state`` row of the changes of watched DOIs not stored yet (``checkpoint = {"items": [...]}``)."""
PENDING_KEEP_S = 30 * 86400.0
"""Seconds a pending change waits for its DOI's entry before it is dropped (logged)."""
PENDING_MAX = 5000
"""Most pending changes kept (the oldest dropped first, logged)."""
DOI_WATCH_KIND = "doi"
"""``watches.kind`` of a DOI watch (as :mod:`syncd.daemon.alerts` reads the list)."""
_CHUNK = 500


def _chunks(values: Sequence[str]) -> Iterable[list[str]]:
    for i in range(0, len(values), _CHUNK):
        yield list(values[i : i + _CHUNK])


def _summary(
    row: RetractionWatchRow, old: RetractionWatchRow | None, dataset: str
) -> tuple[str, dict[str, Any]]:
    """The change type and feed summary (no title yet) of an added (``old`` None) or changed row."""
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
    return kind, {"types": [kind], "items": [item], "doi": row.original_doi}


def _removal(old: RetractionWatchRow, dataset: str) -> tuple[str, dict[str, Any]]:
    """The change type and feed summary of a row the version ``dataset`` no longer holds."""
    item = {
        "type": REMOVED,
        "nature": old.nature,
        "doi": old.notice_doi,
        "source": "retraction-watch",
        "record_id": old.record_id,
        "updated": old.notice_date,
        "dataset": dataset,
    }
    return REMOVED, {"types": [REMOVED], "items": [item], "doi": old.original_doi}


def _watched(conn: Connection) -> set[str]:
    """The DOIs on the watch list (lower-cased)."""
    out = set()
    for (spec,) in conn.execute(select(Watch.spec).where(Watch.kind == DOI_WATCH_KIND)):
        try:
            doi = json.loads(spec).get("doi")
        except (ValueError, AttributeError):
            continue
        if isinstance(doi, str) and doi:
            out.add(doi.lower())
    return out


Held = dict[str, tuple[int, str, str, str | None]]
"""DOI -> (entry id, kind, key, title) of the entry a change of that DOI is recorded on."""


def _held(conn: Connection, dois: Sequence[str], any_kind: Sequence[str] = ()) -> Held:
    """The entries of ``dois`` (the Crossref work by key) and of ``any_kind`` (else any entry of the DOI)."""
    held: Held = {}
    for chunk in _chunks(sorted(set(dois))):
        query = select(Entry.id, Entry.kind, Entry.key, Entry.title).where(
            Entry.kind == CROSSREF_WORK, Entry.key.in_(chunk)
        )
        held.update({r.key: (r.id, r.kind, r.key, r.title) for r in conn.execute(query)})
    others = sorted(set(any_kind) - set(held))
    for chunk in _chunks(others):
        by_doi = select(Entry.id, Entry.kind, Entry.key, Entry.title, Entry.doi).where(Entry.doi.in_(chunk))
        for r in conn.execute(by_doi.order_by(Entry.id)):
            held.setdefault(str(r.doi).lower(), (r.id, r.kind, r.key, r.title))
    return held


def _change_row(
    entry: tuple[int, str, str, str | None], doi: str, kind: str, summary: dict[str, Any], now: float
) -> dict[str, Any]:
    entry_id, entry_kind, key, title = entry
    if title:
        summary = {**summary, "title": title}
    return {
        "entry_id": entry_id,
        "kind": entry_kind,
        "key": key,
        "doi": doi,
        "series": None,
        "detected_at": now,
        "types": kind,
        "summary": json.dumps(summary, ensure_ascii=False, separators=(",", ":")),
    }


def _read_pending(conn: Connection) -> list[dict[str, Any]]:
    text = conn.execute(select(SyncState.checkpoint).where(SyncState.name == PENDING)).scalar()
    try:
        items = (json.loads(text) or {}).get("items") if text else None
    except (ValueError, AttributeError):
        log.warning("event=retractions_pending_unreadable: dropped")
        return []
    return [i for i in items or [] if isinstance(i, dict) and isinstance(i.get("doi"), str)]


def _write_pending(conn: Connection, items: list[dict[str, Any]], now: float) -> None:
    if len(items) > PENDING_MAX:
        log.warning("event=retractions_pending_dropped count=%d reason=over_max", len(items) - PENDING_MAX)
        items = items[-PENDING_MAX:]
    checkpoint = json.dumps({"items": items}, ensure_ascii=False, sort_keys=True)
    upsert(
        conn,
        SyncState.__table__,
        {"name": PENDING, "checkpoint": checkpoint, "updated_at": now},
        ["name"],
    )


def record_changes(
    conn: Connection,
    changed: Sequence[tuple[RetractionWatchRow, RetractionWatchRow | None]],
    sha: str,
    now: float,
    *,
    removed: Sequence[RetractionWatchRow] = (),
) -> tuple[int, int]:
    """Feed rows for the added, changed and ``removed`` rows of version ``sha``.

    ``changed`` holds ``(row, old)`` pairs (``old`` None when added); ``removed`` the rows as the version
    before held them. Written in ``conn``'s transaction (the import's). Returns ``(recorded, pending)``:
    change rows written, and changes of watched DOIs without an entry kept pending (module docstring).
    """
    summaries = [(row.original_doi, *_summary(row, old, sha[:12])) for row, old in changed]
    summaries += [(old.original_doi, *_removal(old, sha[:12])) for old in removed]
    dois = sorted({doi for doi, _, _ in summaries if doi})
    held = _held(conn, dois)
    unheld = [d for d in dois if d not in held]
    watched = _watched(conn) if unheld else set()
    held.update(_held(conn, [], [d for d in unheld if d in watched]))
    rows, pending = [], []
    for doi, kind, summary in summaries:
        if doi is None:
            continue
        if doi in held:
            rows.append(_change_row(held[doi], doi, kind, summary, now))
        elif doi in watched:
            pending.append({"doi": doi, "types": kind, "summary": summary, "pending_since": now})
    if rows:
        conn.execute(insert(Change), rows)
    if pending:
        _write_pending(conn, _read_pending(conn) + pending, now)
        log.info("event=retractions_pending added=%d", len(pending))
    return len(rows), len(pending)


def flush_pending(store: Store, now: float) -> int:
    """Write the pending changes whose DOI now has an entry; returns how many were written.

    Drops those whose DOI is no longer watched, and those older than :data:`PENDING_KEEP_S` (logged).

    Raises:
        StoreError: the store cannot be read or written (nothing changed).
    """
    with store.read() as conn:
        if conn.execute(select(SyncState.name).where(SyncState.name == PENDING)).first() is None:
            return 0
    with store.write() as conn:
        items = _read_pending(conn)
        if not items:
            return 0
        watched = _watched(conn)
        dois = sorted({i["doi"] for i in items if i["doi"] in watched})
        held = _held(conn, dois, dois)
        rows, kept, expired = [], [], 0
        for item in items:
            doi = item["doi"]
            if doi not in watched:
                continue
            if doi in held:
                summary = {**item.get("summary", {}), "pending_since": item.get("pending_since")}
                rows.append(_change_row(held[doi], doi, str(item.get("types")), summary, now))
            elif now - float(item.get("pending_since") or now) > PENDING_KEEP_S:
                expired += 1
            else:
                kept.append(item)
        if rows:
            conn.execute(insert(Change), rows)
        if expired:
            log.warning("event=retractions_pending_dropped count=%d reason=expired", expired)
        _write_pending(conn, kept, now)
    if rows:
        log.info("event=retractions_pending_recorded count=%d", len(rows))
    return len(rows)


def pending_changes(store: Store) -> list[dict[str, Any]]:
    """The pending changes (``doi``, ``types``, ``summary``, ``pending_since``), oldest first."""
    with store.read() as conn:
        return _read_pending(conn)
