"""What a kind's batch revalidation shares (no kind is named here): its report, splitting, counting.

A kind may revalidate many stored entries at once (its ``revalidate_many`` hook,
:class:`syncd.kinds.RevalidateMany`; Crossref works: :mod:`syncd.crossref.lookups_revalidate`). The
sweep (:func:`syncd.refresh.sweep`) hands each such kind its stale eligible entries when there are at
least :data:`syncd.refresh.BATCH_MIN` of them. Entries a batch cannot settle are revalidated singly
(:func:`revalidate_alone`). A group upstream rejects (:func:`splittable`) is split in halves
(:func:`halves`), down to single revalidations, so one poison entry never stalls the others.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from syncd.errors import MalformedResponse, SyncdError, UpstreamOffline, UpstreamRejected, UpstreamUnavailable
from syncd.kinds import OnEntry, RevalidateOne
from syncd.policy import Outcome, Result, Tally
from syncd.store.repo import StoredEntry
from syncd.upstream.http import Deadline

__all__ = ["BatchReport", "count_outcome", "halves", "revalidate_alone", "splittable"]

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
