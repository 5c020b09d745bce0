"""What a kind's batch revalidation shares (no kind is named here): its report, splitting, counting.

A kind may revalidate many stored entries at once (its ``revalidate_many`` hook,
:class:`syncd.kinds.RevalidateMany`; Crossref works: :mod:`syncd.crossref.lookups_revalidate`). The
sweep (:func:`syncd.passes.refresh.sweep`) hands each such kind its stale eligible entries when there are at
least :data:`syncd.passes.refresh.BATCH_MIN` of them. Entries a batch cannot settle are revalidated singly
(:func:`revalidate_alone`). A group upstream rejects (:func:`splittable`) is split in halves
(:func:`halves`), down to single revalidations, so one poison entry never stalls the others.

:func:`run_batches` is that loop, once for every kind: the kind hands it its groups and a
:data:`Settle` (its one list request for a group: which entries it settled, with their outcomes,
and which are left for a single revalidation).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from syncd.errors import (
    BudgetExhausted,
    MalformedResponse,
    SyncdError,
    UpstreamError,
    UpstreamOffline,
    UpstreamRejected,
    UpstreamUnavailable,
)
from syncd.kinds import OnEntry, RevalidateOne
from syncd.road.policy import Outcome, Result, Tally
from syncd.store.repo import StoredEntry
from syncd.upstream.http import Deadline

__all__ = [
    "BatchReport",
    "Settle",
    "Settled",
    "count_outcome",
    "halves",
    "revalidate_alone",
    "run_batches",
    "splittable",
]

log = logging.getLogger("syncd.refresh")  # the batch lines keep the logger name they always had


@dataclass
class BatchReport(Tally):
    """``list_requests`` + ``single_requests`` sent for ``checked`` entries; outcome counts.

    ``stopped``: the reason the batch ended early (upstream could not be used any more).
    """

    list_requests: int = 0
    single_requests: int = 0
    stopped: str | None = None

    @property
    def requests(self) -> int:
        """Every upstream request sent."""
        return self.list_requests + self.single_requests

    def as_dict(self) -> dict[str, object]:
        """Plain dict, ``requests`` included."""
        return {**asdict(self), "requests": self.requests}


def halves(chunk: Sequence[StoredEntry]) -> list[Sequence[StoredEntry]]:
    """``chunk`` split in two (the first half the smaller one); a rejected batch is retried as these."""
    mid = len(chunk) // 2
    return [chunk[:mid], chunk[mid:]]


def splittable(exc: SyncdError) -> bool:
    """Whether a failed list request may be the batch's fault (split it) rather than upstream's (stop).

    HTTP 400 (an item upstream's filter parser refused), a 5xx answer, or a body that is not the
    expected list: yes. A 429, a spent budget, an open breaker or a timeout: no, the rest waits.
    """
    if isinstance(exc, UpstreamRejected | MalformedResponse):
        return True
    status = exc.data.get("status")
    return (
        isinstance(exc, UpstreamUnavailable)
        and not isinstance(exc, UpstreamOffline)
        and isinstance(status, int)
        and status >= 500
    )


def count_outcome(
    report: BatchReport, entry: StoredEntry, outcome: Outcome, on_entry: OnEntry | None
) -> None:
    """Count ``outcome`` of ``entry`` in ``report`` and tell ``on_entry``."""
    report.add(outcome)
    if on_entry is not None:
        on_entry(entry, outcome)


def revalidate_alone(
    svc: object,
    entry: StoredEntry,
    report: BatchReport,
    single: RevalidateOne,
    deadline_s: float,
    on_entry: OnEntry | None,
) -> bool:
    """Revalidate ``entry`` alone through ``single`` (one request), count it; True when that ends the batch.

    A ``rate_limited`` failure ends it (``report.stopped`` set); another failure is logged and counted.
    """
    outcome = single(svc, entry, Deadline(deadline_s))
    report.single_requests += 1
    count_outcome(report, entry, outcome, on_entry)
    if outcome.result is Result.FAILED and outcome.reason == "rate_limited":
        report.stopped = "rate_limited"
        return True
    if outcome.result is Result.FAILED:
        log.info("event=batch_failed doi=%s reason=%s", entry.doi or entry.key, outcome.reason)
    return False


Settled = tuple[list[tuple[StoredEntry, Outcome]], list[StoredEntry]]
"""What one list request settled: ``(entries settled with their outcomes, entries left)``."""
Settle = Callable[[Sequence[StoredEntry], Deadline], Settled]
"""``settle(chunk, deadline)``: one list request for ``chunk`` (what it stores is stored): the entries
it settled with their outcomes, and those left for a single revalidation. Raises
:class:`~syncd.errors.UpstreamError` / :class:`~syncd.errors.BudgetExhausted` when the request failed."""


def run_batches(
    svc: object,
    pending: list[Sequence[StoredEntry]],
    settle: Settle,
    single: RevalidateOne,
    on_entry: OnEntry | None,
    *,
    kind: str,
    deadline_s: float,
) -> BatchReport:
    """Revalidate the groups ``pending`` (in order) of one ``kind``: each by ``settle``, the rest singly.

    A one-entry group goes to ``single`` directly. A list request that fails :func:`splittable` is
    retried as its :func:`halves`; any other failure (a 429, a spent budget, an open breaker, a
    timeout) stops the batch (``report.stopped``), the rest waiting for the next sweep. Each request
    may take ``deadline_s`` seconds. Logs one ``event=batch_revalidate`` line with the counts.
    """
    report = BatchReport()
    while pending and not report.stopped:
        chunk = pending.pop(0)
        if len(chunk) == 1:
            revalidate_alone(svc, chunk[0], report, single, deadline_s, on_entry)
            continue
        report.list_requests += 1
        try:
            settled, left = settle(chunk, Deadline(deadline_s))
        except (UpstreamError, BudgetExhausted) as exc:
            if isinstance(exc, UpstreamError) and splittable(exc):
                log.info("event=batch_split size=%d reason=%s", len(chunk), exc.reason)
                pending[:0] = halves(chunk)
                continue
            report.stopped = exc.reason
            log.info("event=batch_stopped reason=%s", exc.reason)
            break
        for entry, outcome in settled:
            count_outcome(report, entry, outcome, on_entry)
        for entry in left:
            if revalidate_alone(svc, entry, report, single, deadline_s, on_entry):
                break
    log.info(
        "event=batch_revalidate kind=%s checked=%d unchanged=%d changed=%d failed=%d "
        "list_requests=%d single_requests=%d stopped=%s",
        kind, report.checked, report.unchanged, report.changed, report.failed, report.list_requests,
        report.single_requests, report.stopped or "-",
    )  # fmt: skip
    return report
