"""Batch revalidation of stored DataCite works (the ``datacite_work`` kind's ``revalidate_many`` hook).

DataCite sends no validators (no ``Last-Modified``, no 304, no ETag since June 2026), so every
refresh is a full answer. ``GET /dois?query=doi:("a" OR "b" ...)&page[size]=N`` answers up to
:data:`~syncd.datacite.client.BATCH_MAX` (50) whole records in one request of the ``datacite`` pool:
each returned record is stored through the store's content-hash check (unchanged: only
``validated_at`` bumped; changed: the new body stored with its change summary). A DOI the answer
leaves out (no longer public, another agency's copy, a miss) is revalidated singly, which asks
doi.org why. With ``k`` such DOIs out of ``n`` this costs ``ceil(n / 50) + k`` requests instead of
``n``. A list request that fails (5xx, an unreadable body) is split in halves
(:func:`syncd.road.batch.halves`)
down to single lookups, so one poison DOI never stalls the others (the loop is
:func:`syncd.road.batch.run_batches`, shared with the Crossref works).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from syncd.datacite.client import BATCH_MAX
from syncd.datacite.lookups_content import is_partial, work_content
from syncd.datacite.names import DATACITE_WORK
from syncd.errors import MalformedResponse
from syncd.kinds import OnEntry, RevalidateMany, RevalidateOne
from syncd.road import policy
from syncd.road.batch import BatchReport, Settled, run_batches
from syncd.road.policy import Outcome
from syncd.road.services import Services
from syncd.store.repo import StoredEntry
from syncd.upstream.http import Deadline

__all__ = ["REVALIDATE_MANY", "eligible", "revalidate_works"]


def eligible(entry: StoredEntry) -> bool:
    """Whether ``entry`` is a stored DataCite record a list answer can revalidate (a whole one)."""
    return entry.kind == DATACITE_WORK and entry.status == "ok" and not is_partial(entry)


def _settle(svc: Services, chunk: Sequence[StoredEntry], deadline: Deadline) -> Settled:
    """Ask for ``chunk`` in one request and store each record answered (:data:`syncd.road.batch.Settle`).

    Returns the entries stored with their outcome (changed or unchanged) and those left unanswered.

    Raises:
        UpstreamError, BudgetExhausted: the list request failed.
    """
    found = svc.upstreams.datacite.get_works([e.key for e in chunk], deadline)
    settled: list[tuple[StoredEntry, Outcome]] = []
    left: list[StoredEntry] = []
    for entry in chunk:
        body = found.get(entry.key)
        if body is None:
            left.append(entry)
            continue
        try:
            _, changed = svc.store.put_content(work_content(entry.key, body))
        except MalformedResponse:
            left.append(entry)
            continue
        settled.append((entry, policy.CHANGED if changed else policy.UNCHANGED))
    return settled, left


def revalidate_works(
    svc: Services,
    entries: Sequence[StoredEntry],
    single: RevalidateOne,
    on_entry: OnEntry | None = None,
    *,
    group: int = BATCH_MAX,
    deadline_s: float = 60.0,
) -> BatchReport:
    """Revalidate stored DataCite works in groups of ``group`` (see the module docstring).

    ``single``: the one-entry revalidation (:func:`syncd.passes.refresh.revalidate`); ``on_entry``: told each
    entry's outcome; ``deadline_s``: seconds each request may take. Stops early (``stopped``) when the
    budget is spent, the pool is rate limited or offline; the rest waits for the next sweep.
    """
    todo = [e for e in entries if eligible(e)]
    pending: list[Sequence[StoredEntry]] = [todo[i : i + group] for i in range(0, len(todo), group)]
    return run_batches(
        svc, pending, partial(_settle, svc), single, on_entry, kind=DATACITE_WORK, deadline_s=deadline_s
    )


REVALIDATE_MANY = RevalidateMany(eligible=eligible, run=revalidate_works)
"""The ``revalidate_many`` hook of ``datacite_work`` (:data:`syncd.datacite.kinds.KINDS`)."""
