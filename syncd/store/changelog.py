"""Writing the change feed inside the store's write transaction (no reads of the feed here).

:class:`~syncd.store.repo.Store` calls :func:`record_replacement` in the transaction that replaces
an entry's body and :func:`record_arrival` in the one that stores a new entry, so a change row is
committed with the body it describes or not at all. What changed is computed by the kind's own
summary functions (:attr:`syncd.store.rules.StoreRules.summarize` / ``arrival``, supplied by the kind
with the content); a summary that cannot be computed never fails the write (it is logged and the row
says ``metadata``). Reading the feed: :mod:`syncd.store.changes`.
"""

from __future__ import annotations

import json
import logging

from sqlalchemy import Connection, insert, select

from syncd.store.models import Change, Entry
from syncd.store.rules import ChangeSummary, Side, StoreRules

__all__ = ["record_arrival", "record_replacement"]

log = logging.getLogger("syncd.store")

SERIES_PEERS = 50
"""Other stored entries of a series read to decide whether an arrival is a new version."""


def _insert(conn: Connection, entry_id: int, kind: str, key: str, summary: ChangeSummary, now: float) -> None:
    conn.execute(
        insert(Change).values(
            entry_id=entry_id,
            kind=kind,
            key=key,
            doi=summary.doi.lower() if summary.doi else None,
            series=summary.series,
            detected_at=now,
            types=",".join(summary.types),
            summary=json.dumps(summary.as_dict(), ensure_ascii=False, separators=(",", ":")),
        )
    )


def record_replacement(
    conn: Connection, rules: StoreRules, entry_id: int, kind: str, key: str, old: Side, new: Side, now: float
) -> bool:
    """Record what changed when entry ``entry_id`` (``kind``, ``key``) goes from ``old`` to ``new``.

    Only for kinds whose ``rules`` supply ``summarize``. Returns True when a row was written (in
    ``conn``'s transaction).
    """
    if rules.summarize is None:
        return False
    try:
        summary = rules.summarize(old, new)
    except Exception as exc:  # a view that cannot read a body must never fail the store write
        log.warning("event=change_summary_failed kind=%s key=%s error=%s", kind, key, exc.__class__.__name__)
        summary = ChangeSummary(("metadata",), ({"type": "metadata", "fields": []},))
    if summary is None:
        return False
    _insert(conn, entry_id, kind, key, summary, now)
    return True


def record_arrival(
    conn: Connection,
    rules: StoreRules,
    entry_id: int,
    kind: str,
    key: str,
    series: str | None,
    body: str | None,
    now: float,
) -> bool:
    """Record a new entry ``entry_id`` joining series ``series`` already held in the store.

    Only for kinds whose ``rules`` supply ``arrival`` (Zenodo records: a new version), when another
    stored ``ok`` entry of the same kind and series exists; ``arrival`` decides from the new body,
    the other entries' keys and when the store first held the series. Returns True when a row was
    written.
    """
    if rules.arrival is None or not series:
        return False
    rows = conn.execute(
        select(Entry.key, Entry.created_at)
        .where(Entry.kind == kind, Entry.concept_key == series, Entry.id != entry_id, Entry.status == "ok")
        .limit(SERIES_PEERS)
    ).all()
    if not rows:
        return False
    try:
        summary = rules.arrival(body, [r[0] for r in rows], min(r[1] for r in rows))
    except Exception as exc:  # never fail the store write over the feed
        log.warning("event=change_summary_failed kind=%s key=%s error=%s", kind, key, exc.__class__.__name__)
        return False
    if summary is None:
        return False
    _insert(conn, entry_id, kind, key, summary, now)
    return True
