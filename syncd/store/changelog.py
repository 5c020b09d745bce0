"""Writing the change feed inside the store's write transaction (no reads of the feed here).

:class:`~syncd.store.repo.Store` calls :func:`record_replacement` in the transaction that replaces
an entry's body and :func:`record_arrival` in the one that stores a new entry, so a change row is
committed with the body it describes or not at all. What changed is computed by the pure
:func:`syncd.normalize.changes.summarize` from the normalized views; a summary that cannot be
computed never fails the write (it is logged and the row says ``metadata``). Reading the feed:
:mod:`syncd.store.changes`.
"""

from __future__ import annotations

import json
import logging

from sqlalchemy import Connection, insert, select

from syncd.kinds import ZENODO_RECORD
from syncd.normalize.changes import RECORDED_KINDS, ChangeSummary, Side, new_version, summarize
from syncd.store.models import Change, Entry

__all__ = ["record_arrival", "record_replacement"]

log = logging.getLogger("syncd.store")


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
    conn: Connection, entry_id: int, kind: str, key: str, old: Side, new: Side, now: float
) -> bool:
    """Record what changed when entry ``entry_id`` (``kind``, ``key``) goes from ``old`` to ``new``.

    Only the kinds of :data:`syncd.normalize.changes.RECORDED_KINDS`. Returns True when a row was
    written (in ``conn``'s transaction).
    """
    if kind not in RECORDED_KINDS:
        return False
    try:
        summary = summarize(kind, old, new)
    except Exception as exc:  # a view that cannot read a body must never fail the store write
        log.warning("event=change_summary_failed kind=%s key=%s error=%s", kind, key, exc.__class__.__name__)
        summary = ChangeSummary(("metadata",), ({"type": "metadata", "fields": []},))
    if summary is None:
        return False
    _insert(conn, entry_id, kind, key, summary, now)
    return True


def record_arrival(
    conn: Connection, entry_id: int, kind: str, key: str, series: str | None, body: str | None, now: float
) -> bool:
    """Record a new Zenodo version: entry ``entry_id`` joins series ``series`` already held in the store.

    Only for ``zenodo_record`` entries with a concept record id, when another stored version of the
    series exists and the new one reads as the latest and was created after the store first held the
    series (:func:`syncd.normalize.changes.new_version`). Returns True when a row was written.
    """
    if kind != ZENODO_RECORD or not series:
        return False
    rows = conn.execute(
        select(Entry.key, Entry.created_at)
        .where(
            Entry.kind == ZENODO_RECORD,
            Entry.concept_key == series,
            Entry.id != entry_id,
            Entry.status == "ok",
        )
        .limit(50)
    ).all()
    if not rows:
        return False
    try:
        summary = new_version(body, [r[0] for r in rows], min(r[1] for r in rows))
    except Exception as exc:  # never fail the store write over the feed
        log.warning("event=change_summary_failed kind=%s key=%s error=%s", kind, key, exc.__class__.__name__)
        return False
    if summary is None:
        return False
    _insert(conn, entry_id, kind, key, summary, now)
    return True
