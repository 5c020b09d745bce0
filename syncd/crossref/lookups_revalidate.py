"""Batch revalidation of stored Crossref works through list queries (the works' ``revalidate_many`` hook).

Crossref sends no validators, so revalidating a work one by one costs a full ``/works/{doi}`` each.
``/works?filter=doi:A,doi:B,...&select=DOI,indexed&rows=N`` answers the ``indexed`` stamp of up to
``N`` works in one request of the list pool. A work whose stamp equals the stored one
(``upstream_version``) is confirmed: only ``validated_at`` is bumped, for the whole group in one
write transaction (:meth:`~syncd.store.entries.EntryStore.mark_validated_many`). Works whose stamp
moved, or that the list did not return, are revalidated singly (the ``single`` revalidation the
sweep hands over, :func:`syncd.passes.refresh.revalidate`), which stores the new body only when its content
hash changed.
With ``k`` changed works out of ``n`` this costs ``ceil(n / GROUP) + k`` requests instead of ``n``.

A DOI that cannot be written into a ``doi:`` filter
(:func:`~syncd.crossref.params_filter.filter_safe`: a comma, which Crossref's filter parser splits
on, or any character outside the suffix set Crossref recommends) never goes into one: it is
revalidated singly. A rejected list request (HTTP 400, 5xx, an unreadable body) is split in halves
(:func:`syncd.road.batch.halves`), down to single lookups, so one poison DOI never stalls the others.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from syncd.crossref.client import CrossrefClient
from syncd.crossref.names import CROSSREF_WORK
from syncd.crossref.params_filter import GROUP, batch_params, filter_safe
from syncd.errors import InvalidInput
from syncd.kinds import OnEntry, RevalidateMany, RevalidateOne
from syncd.normalize.doi import parse_doi
from syncd.road import policy
from syncd.road.batch import BatchReport, Settled, run_batches
from syncd.road.services import Services
from syncd.store.repo import StoredEntry
from syncd.upstream.http import Deadline

__all__ = ["REVALIDATE_MANY", "confirmed", "eligible", "fetch_stamps", "revalidate_works"]

log = logging.getLogger("syncd.refresh")  # the batch lines keep the logger name they always had


def eligible(entry: StoredEntry) -> bool:
    """Whether ``entry`` can be confirmed by its ``indexed`` stamp (a stored Crossref work that has one)."""
    return entry.kind == CROSSREF_WORK and entry.status == "ok" and bool(entry.upstream_version)


def fetch_stamps(
    crossref: CrossrefClient, chunk: Sequence[StoredEntry], deadline: Deadline
) -> dict[str, str]:
    """The ``indexed`` stamps (DOI key -> ``date-time``) of the works of ``chunk``, in one list request.

    A work whose stamp equals its stored ``upstream_version`` is confirmed (:func:`confirmed`); the
    others (stamp moved, or not returned) need a single revalidation.

    Raises:
        UpstreamError, BudgetExhausted: the list request failed.
    """
    message = crossref.list_works(batch_params([e.doi or e.key for e in chunk]), deadline)
    stamps: dict[str, str] = {}
    for item in message["items"]:
        try:
            key = parse_doi(str(item.get("DOI", ""))).key
        except InvalidInput:
            continue
        stamp = (item.get("indexed") or {}).get("date-time")
        if isinstance(stamp, str):
            stamps[key] = stamp
    return stamps


def confirmed(entry: StoredEntry, stamps: dict[str, str]) -> bool:
    """Whether the list answered ``entry``'s stored ``indexed`` stamp unchanged."""
    return stamps.get(entry.key) == entry.upstream_version


def revalidate_works(
    svc: Services,
    entries: Sequence[StoredEntry],
    single: RevalidateOne,
    on_entry: OnEntry | None = None,
    *,
    group: int = GROUP,
    deadline_s: float = 60.0,
) -> BatchReport:
    """Revalidate stored Crossref works in groups of ``group`` (see the module docstring).

    ``single``: the one-entry revalidation (``GET /works/{doi}``; :func:`syncd.passes.refresh.revalidate`);
    ``on_entry``: told each entry's outcome; ``deadline_s``: seconds each request may take.
    DOIs that cannot go into a ``doi:`` filter (:func:`~syncd.crossref.params_filter.filter_safe`) are
    revalidated alone. A list request upstream rejects (400, 5xx, unreadable body) is split in halves,
    down to single lookups: the good works are confirmed, the bad one is revalidated alone or counted
    failed with its reason, so every sweep makes progress. Stops early (``stopped``) when the budget
    is spent, a pool is rate limited or the list pool is offline; the rest waits for the next sweep.
    """
    todo = [e for e in entries if eligible(e)]
    alone = [e for e in todo if not filter_safe(e.doi or e.key)]
    for entry in alone:
        log.info("event=batch_single doi=%s reason=filter_unsafe", entry.doi or entry.key)
    pending: list[Sequence[StoredEntry]] = [[e] for e in alone]
    safe = [e for e in todo if filter_safe(e.doi or e.key)]
    pending += [safe[i : i + group] for i in range(0, len(safe), group)]

    def settle(chunk: Sequence[StoredEntry], deadline: Deadline) -> Settled:
        stamps = fetch_stamps(svc.upstreams.crossref, chunk, deadline)
        same: list[StoredEntry] = []
        moved: list[StoredEntry] = []
        for entry in chunk:
            (same if confirmed(entry, stamps) else moved).append(entry)
        svc.store.mark_validated_many([e.id for e in same])  # one write transaction for the group
        return [(e, policy.UNCHANGED) for e in same], moved

    return run_batches(svc, pending, settle, single, on_entry, kind=CROSSREF_WORK, deadline_s=deadline_s)


REVALIDATE_MANY = RevalidateMany(eligible=eligible, run=revalidate_works)
"""The ``revalidate_many`` hook of ``crossref_work`` (:data:`syncd.crossref.kinds.WORK`)."""
