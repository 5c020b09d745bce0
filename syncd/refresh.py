"""Revalidation: one stored entry, or a sweep of stale entries (oldest ``validated_at`` first) in budget.

Used by the daemon's scheduled job and by ``syncd cache refresh``. Each stored kind's ``refetch`` hook
(:class:`syncd.kinds.Kind`, from :data:`syncd.registry.KINDS`) asks upstream again. Stale Crossref
works that carry an ``indexed`` stamp are confirmed in groups through one list request each
(:mod:`syncd.batch`) when there are at least :data:`BATCH_MIN` of them; everything else is
revalidated one by one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from syncd import policy
from syncd.batch import GROUP, BatchReport, confirmed, eligible, fetch_stamps, filter_safe, halves
from syncd.budget import Budget
from syncd.errors import (
    BudgetExhausted,
    MalformedResponse,
    SyncdError,
    UpstreamError,
    UpstreamOffline,
    UpstreamRejected,
    UpstreamUnavailable,
)
from syncd.policy import Outcome, Result, Tally
from syncd.registry import KINDS
from syncd.services import Services
from syncd.store.repo import StoredEntry
from syncd.upstream.http import Deadline

__all__ = [
    "BATCH_MIN",
    "STOP_REASONS",
    "UPSTREAM_REASONS",
    "SweepReport",
    "revalidate",
    "revalidate_crossref",
    "sweep",
]

log = logging.getLogger("syncd.refresh")


def revalidate(svc: Services, entry: StoredEntry, deadline: Deadline | None = None) -> Outcome:
    """Revalidate one stored entry against upstream now (through its kind's ``refetch`` hook).

    A failure is recorded beside the entry and never touches its body.
    """
    deadline = deadline or Deadline(max(svc.settings.deadline_s, 10.0))
    kind = KINDS.get(entry.kind)
    refetch = kind.refetch if kind is not None else None
    if refetch is None:
        return policy.failed("unsupported_kind")
    try:
        stored = refetch(svc, entry, deadline)
    except (UpstreamError, BudgetExhausted) as exc:
        svc.store.mark_error(entry.id, exc.reason)
        return policy.failed(exc.reason)
    except SyncdError:
        raise  # the store failed: the sweep ends (daemon: _sweep_pass)
    except Exception:  # a bug on one entry never ends the sweep: it fails alone, logged with its traceback
        log.exception("event=revalidate_failed kind=%s key=%s reason=internal_error", entry.kind, entry.key)
        return policy.failed("internal_error")
    return policy.outcome_of(entry, stored)


def _splittable(exc: SyncdError) -> bool:
    """Whether a failed list request may be the batch's fault (split it) rather than upstream's (stop).

    HTTP 400 (a DOI Crossref's filter parser refused), a 5xx answer, or a body that is not a work
    list: yes. A 429, a spent budget, an open breaker or a timeout: no, the rest waits.
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


def revalidate_crossref(
    svc: Services,
    entries: Sequence[StoredEntry],
    *,
    group: int = GROUP,
    deadline_s: float = 60.0,
    on_entry: Callable[[StoredEntry, Outcome], None] | None = None,
) -> BatchReport:
    """Revalidate stored Crossref works in groups of ``group`` (see :mod:`syncd.batch`).

    DOIs that cannot go into a ``doi:`` filter (:func:`syncd.batch.filter_safe`) are revalidated
    alone. A list request upstream rejects (400, 5xx, unreadable body) is split in halves, down to
    single lookups (``GET /works/{doi}``): the good works are confirmed, the bad one is revalidated
    alone or counted failed with its reason, so every sweep makes progress. Stops early
    (``stopped``) when the budget is spent, a pool is rate limited or the list pool is offline; the
    rest waits for the next sweep.
    """
    report = BatchReport()
    todo = [e for e in entries if eligible(e)]
    alone = [e for e in todo if not filter_safe(e.doi or e.key)]
    for entry in alone:
        log.info("event=batch_single doi=%s reason=filter_unsafe", entry.doi or entry.key)
    pending: list[Sequence[StoredEntry]] = [[e] for e in alone]
    safe = [e for e in todo if filter_safe(e.doi or e.key)]
    pending += [safe[i : i + group] for i in range(0, len(safe), group)]
    while pending and not report.stopped:
        chunk = pending.pop(0)
        if len(chunk) == 1:
            _single(svc, chunk[0], report, deadline_s, on_entry)
            continue
        report.list_requests += 1
        try:
            stamps = fetch_stamps(svc.upstreams.crossref, chunk, Deadline(deadline_s))
        except (UpstreamError, BudgetExhausted) as exc:
            if isinstance(exc, UpstreamError) and _splittable(exc):
                log.info("event=batch_split size=%d reason=%s", len(chunk), exc.reason)
                pending[:0] = halves(chunk)
                continue
            report.stopped = exc.reason
            log.info("event=batch_stopped reason=%s", exc.reason)
            break
        for entry in chunk:
            if confirmed(entry, stamps):
                svc.store.mark_validated(entry.id)
                _count(report, entry, policy.UNCHANGED, on_entry)
            elif _single(svc, entry, report, deadline_s, on_entry):
                break
    log.info(
        "event=batch_revalidate checked=%d unchanged=%d changed=%d failed=%d list_requests=%d "
        "single_requests=%d stopped=%s",
        report.checked, report.unchanged, report.changed, report.failed, report.list_requests,
        report.single_requests, report.stopped or "-",
    )  # fmt: skip
    return report


def _count(
    report: BatchReport,
    entry: StoredEntry,
    outcome: Outcome,
    on_entry: Callable[[StoredEntry, Outcome], None] | None,
) -> None:
    report.add(outcome)
    if on_entry is not None:
        on_entry(entry, outcome)


def _single(
    svc: Services,
    entry: StoredEntry,
    report: BatchReport,
    deadline_s: float,
    on_entry: Callable[[StoredEntry, Outcome], None] | None,
) -> bool:
    """Revalidate ``entry`` alone (``GET /works/{doi}``), count it; True when that ends the batch (429)."""
    outcome = revalidate(svc, entry, Deadline(deadline_s))
    report.single_requests += 1
    _count(report, entry, outcome, on_entry)
    if outcome.result is Result.FAILED and outcome.reason == "rate_limited":
        report.stopped = "rate_limited"
        return True
    if outcome.result is Result.FAILED:
        log.info("event=batch_failed doi=%s reason=%s", entry.doi or entry.key, outcome.reason)
    return False


@dataclass
class SweepReport(Tally):
    """Counts of one sweep: entries ``checked`` and how each ended; ``stopped`` names why it ended early."""

    stopped: str | None = None
    elapsed_s: float = 0.0
    requests: int = 0

    def as_dict(self) -> dict[str, object]:
        """Plain dict (for ``--json`` and logs)."""
        return asdict(self)


STOP_REASONS = {"rate_limited", "upstream_unavailable"}
UPSTREAM_REASONS = frozenset(
    {"rate_limited", "upstream_unavailable", "request_timeout", "malformed_response", "internal_error"}
)
"""Failure reasons that make a sweep's ``event=sweep`` line a WARNING (``journalctl -p warning``): upstream
could not be used, or an entry failed on a bug."""
BATCH_MIN = 3
"""Fewest stale Crossref works worth one list request instead of single revalidations."""


def sweep(
    svc: Services,
    limit: int,
    now: float | None = None,
    *,
    entries: Sequence[StoredEntry] | None = None,
    on_entry: Callable[[StoredEntry, Outcome], None] | None = None,
) -> SweepReport:
    """Revalidate up to ``limit`` stale entries (or exactly ``entries``), oldest first; one log line.

    Stops early when the budget is spent or the kind's pool goes offline (the rest wait for the
    next sweep), so a sweep never turns into a retry loop against a failing upstream.
    """
    started = time.monotonic()
    report = SweepReport()
    now = time.time() if now is None else now
    if entries is not None:
        todo = list(entries)
    else:
        ttls = policy.ttls(svc.settings.ttl, KINDS.values(), background=True)
        todo = svc.store.stale(ttls, now, limit, ahead_s=policy.CLOCK_SKEW_S)
    batchable = [e for e in todo if eligible(e)]
    if len(batchable) >= BATCH_MIN:
        batch = revalidate_crossref(svc, batchable, on_entry=on_entry)
        report.merge(batch)
        report.requests += batch.requests
        if batch.stopped:
            report.stopped = batch.stopped
        done = {e.id for e in batchable}
        todo = [e for e in todo if e.id not in done]
    for entry in todo if report.stopped != "rate_limited" else []:
        outcome = revalidate(svc, entry)
        report.requests += 1
        if on_entry is not None:
            on_entry(entry, outcome)
        report.add(outcome)
        if outcome.result is Result.FAILED and stops(svc.budget, entry.kind, outcome.reason):
            report.stopped = outcome.reason
            break
    report.elapsed_s = round(time.monotonic() - started, 3)
    upstream_failed = bool(UPSTREAM_REASONS & set(report.failures)) or report.stopped in UPSTREAM_REASONS
    log.log(
        logging.WARNING if upstream_failed else logging.INFO,
        "event=sweep checked=%d unchanged=%d changed=%d failed=%d failures=%s requests=%d stopped=%s "
        "elapsed_s=%.3f",
        report.checked,
        report.unchanged,
        report.changed,
        report.failed,
        ",".join(f"{reason}:{n}" for reason, n in sorted(report.failures.items())) or "-",
        report.requests,
        report.stopped or "-",
        report.elapsed_s,
    )
    return report


def stops(budget: Budget, kind: str, reason: str | None) -> bool:
    """Whether a failed revalidation of a ``kind`` entry ends the sweep: a 429, or the kind's pool is offline.

    The pool is the kind's own (:data:`syncd.registry.KINDS`): a journal consults ``crossref_single``,
    a ``doi_ra`` entry ``doi``, a Zenodo search page ``zenodo_search``.
    """
    if reason == "rate_limited":
        return True
    return reason in STOP_REASONS and kind in KINDS and budget.offline(KINDS[kind].pool)
