"""Batch revalidation of stored DataCite works (the ``datacite_work`` kind's ``revalidate_many`` hook).

DataCite sends no validators (no ``Last-Modified``, no 304, no ETag since June 2026), so every
refresh is a full answer. ``GET /dois?query=doi:("a" OR "b" ...)&page[size]=N`` answers up to
:data:`~syncd.datacite.client.BATCH_MAX` (50) whole records in one request of the ``datacite`` pool:
each returned record is stored through the store's content-hash check (unchanged: only
``validated_at`` bumped; changed: the new body stored with its change summary). A DOI the answer
leaves out (no longer public, another agency's copy, a miss) is revalidated singly, which asks
doi.org why. With ``k`` such DOIs out of ``n`` this costs ``ceil(n / 50) + k`` requests instead of
``n``. A list request that fails (5xx, an unreadable body) is split in halves (:func:`syncd.batch.halves`)
down to single lookups, so one poison DOI never stalls the others.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from syncd import policy
from syncd.batch import BatchReport, count_outcome, halves, revalidate_alone, splittable
from syncd.datacite.client import BATCH_MAX
from syncd.datacite.lookups_content import is_partial, work_content
from syncd.datacite.names import DATACITE_WORK
from syncd.errors import BudgetExhausted, MalformedResponse, UpstreamError
from syncd.kinds import OnEntry, RevalidateMany, RevalidateOne
from syncd.services import Services
from syncd.store.repo import StoredEntry
from syncd.upstream.http import Deadline

__all__ = ["REVALIDATE_MANY", "eligible", "revalidate_works"]

log = logging.getLogger("syncd.refresh")  # the batch lines share the refresh logger


def eligible(entry: StoredEntry) -> bool:
    """Whether ``entry`` is a stored DataCite record a list answer can revalidate (a whole one)."""
    return entry.kind == DATACITE_WORK and entry.status == "ok" and not is_partial(entry)


def _store_chunk(
    svc: Services,
    chunk: Sequence[StoredEntry],
    deadline_s: float,
    report: BatchReport,
    on_entry: OnEntry | None,
) -> list[StoredEntry]:
    """Ask for ``chunk`` in one request and store each record answered; the entries left unanswered.

    Raises:
        UpstreamError, BudgetExhausted: the list request failed.
    """
    found = svc.upstreams.datacite.get_works([e.key for e in chunk], Deadline(deadline_s))
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
        count_outcome(report, entry, policy.CHANGED if changed else policy.UNCHANGED, on_entry)
    return left


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

    ``single``: the one-entry revalidation (:func:`syncd.refresh.revalidate`); ``on_entry``: told each
    entry's outcome; ``deadline_s``: seconds each request may take. Stops early (``stopped``) when the
    budget is spent, the pool is rate limited or offline; the rest waits for the next sweep.
    """
    report = BatchReport()
    todo = [e for e in entries if eligible(e)]
    pending: list[Sequence[StoredEntry]] = [todo[i : i + group] for i in range(0, len(todo), group)]
    while pending and not report.stopped:
        chunk = pending.pop(0)
        if len(chunk) == 1:
            revalidate_alone(svc, chunk[0], report, single, deadline_s, on_entry)
            continue
        report.list_requests += 1
        try:
            left = _store_chunk(svc, chunk, deadline_s, report, on_entry)
        except (UpstreamError, BudgetExhausted) as exc:
            if isinstance(exc, UpstreamError) and splittable(exc):
                log.info("event=batch_split size=%d reason=%s", len(chunk), exc.reason)
                pending[:0] = halves(chunk)
                continue
            report.stopped = exc.reason
            log.info("event=batch_stopped reason=%s", exc.reason)
            break
        for entry in left:
            if revalidate_alone(svc, entry, report, single, deadline_s, on_entry):
                break
    log.info(
        "event=batch_revalidate kind=datacite_work checked=%d unchanged=%d changed=%d failed=%d "
        "list_requests=%d single_requests=%d stopped=%s",
        report.checked, report.unchanged, report.changed, report.failed, report.list_requests,
        report.single_requests, report.stopped or "-",
    )  # fmt: skip
    return report


REVALIDATE_MANY = RevalidateMany(eligible=eligible, run=revalidate_works)
"""The ``revalidate_many`` hook of ``datacite_work`` (:data:`syncd.datacite.kinds.KINDS`)."""
