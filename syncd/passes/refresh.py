"""Revalidation: one stored entry, or a sweep of stale entries (oldest ``validated_at`` first) in budget.

Used by the daemon's scheduled job and by ``syncd cache refresh`` (whose identifiers not stored yet are
fetched first, :func:`named_entries`). Each stored kind's ``refetch`` hook
(:class:`syncd.kinds.Kind`, from :data:`syncd.registry.KINDS`) asks upstream again. A kind that
supplies the ``revalidate_many`` hook (Crossref works: their ``indexed`` stamps confirmed in groups
through one list request each) gets its stale entries that hook accepts when there are at least
:data:`BATCH_MIN` of them (:mod:`syncd.road.batch`); everything else is revalidated one by one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from syncd.budget.buckets import Budget
from syncd.errors import BudgetExhausted, NotFound, SyncdError, UpstreamError
from syncd.registry import KINDS, hooks_of, record_answer
from syncd.road import policy
from syncd.road.local_first import facts_of
from syncd.road.policy import Outcome, Result, Tally
from syncd.road.records import RecordSource
from syncd.road.services import Services
from syncd.store.repo import StoredEntry
from syncd.store.staleness import Staleness
from syncd.upstream.http import Deadline

__all__ = [
    "BATCH_MIN",
    "STOP_REASONS",
    "UPSTREAM_REASONS",
    "Named",
    "SweepReport",
    "named_entries",
    "revalidate",
    "sweep",
]

log = logging.getLogger("syncd.refresh")


def revalidate(svc: Services, entry: StoredEntry, deadline: Deadline | None = None) -> Outcome:
    """Revalidate one stored entry against upstream now (through its kind's ``refetch`` hook).

    A failure is recorded beside the entry and never touches its body.
    """
    deadline = deadline or Deadline(max(svc.settings.deadline_s, 10.0))
    kind = KINDS.get(entry.kind)
    refetch = hooks_of(kind).refetch if kind is not None else None
    if refetch is None:
        return policy.failed("unsupported_kind")
    try:
        stored = refetch(svc, entry, deadline)
    except (UpstreamError, BudgetExhausted) as exc:
        svc.store.mark_error(entry.id, exc.reason)
        return policy.failed(exc.reason)
    except SyncdError:
        raise  # the store failed: the sweep ends (daemon: sweep_pass)
    except Exception:  # a bug on one entry never ends the sweep: it fails alone, logged with its traceback
        log.exception("event=revalidate_failed kind=%s key=%s reason=internal_error", entry.kind, entry.key)
        return policy.failed("internal_error")
    return policy.outcome_of(facts_of(entry), facts_of(stored))


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
"""Fewest stale entries of a kind worth its ``revalidate_many`` hook (e.g. one Crossref list request)
instead of single revalidations."""


def sweep(
    svc: Services,
    limit: int,
    now: float | None = None,
    *,
    entries: Sequence[StoredEntry] | None = None,
    on_entry: Callable[[StoredEntry, Outcome], None] | None = None,
) -> SweepReport:
    """Revalidate up to ``limit`` stale entries (or exactly ``entries``), oldest first; one log line.

    The stale entries are read and revalidated :data:`SWEEP_PAGE` at a time (keyset pages of
    ``Store.stale``), so a sweep holds one page of entries whatever ``limit`` and the store's size.
    Stops early when the budget is spent or the kind's pool goes offline (the rest wait for the
    next sweep), so a sweep never turns into a retry loop against a failing upstream. An entry whose
    revalidation keeps failing for the same reason backs off (``retry_at``,
    :meth:`syncd.store.entries.EntryStore.mark_error`: 600 s, then doubled, at most a day): the
    stale pages leave it out until then. ``entries`` (a manual refresh) are asked whatever their
    backoff, which they forget.
    """
    started = time.monotonic()
    report = SweepReport()
    now = time.time() if now is None else now
    if entries is not None:  # a manual refresh: asked now, their backoff forgotten
        svc.store.clear_backoff([e.id for e in entries])
        pages: Iterator[list[StoredEntry]] = iter([list(entries)])
    else:
        ttls = policy.ttls(svc.settings.ttl, KINDS.values(), background=True)
        pages = _stale_pages(svc, policy.staleness(ttls, now), limit, now)
    for page in pages:
        _sweep_page(svc, page, report, on_entry)
        if report.stopped:
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


SWEEP_PAGE = 100
"""Stale entries a sweep reads and revalidates at a time (its memory: one page of entries)."""


def _stale_pages(svc: Services, staleness: Staleness, limit: int, now: float) -> Iterator[list[StoredEntry]]:
    """Up to ``limit`` stale entries, oldest first, in pages of :data:`SWEEP_PAGE` (each read when asked).

    An entry revalidated by this sweep that is still stale at the bounds' moment (a sweep run "later",
    ``now`` ahead of the clock) sorts after the page it came in and is read again: it is left out
    (each entry is checked once per sweep).
    """
    after: tuple[float, int] | None = None
    seen: set[int] = set()
    left = limit
    while left > 0:
        page = svc.store.stale(staleness, min(SWEEP_PAGE, left), after, now=now)
        if not page:
            return
        after = (page[-1].validated_at, page[-1].id)
        fresh = [e for e in page if e.id not in seen]
        seen.update(e.id for e in fresh)
        left -= len(fresh)
        if fresh:
            yield fresh


def _sweep_page(
    svc: Services,
    page: list[StoredEntry],
    report: SweepReport,
    on_entry: Callable[[StoredEntry, Outcome], None] | None,
) -> None:
    """Revalidate one page of stale entries (in batches where a kind can, then singly) into ``report``."""
    todo = _in_batches(svc, page, report, on_entry)
    for entry in todo if report.stopped != "rate_limited" else []:
        outcome = revalidate(svc, entry)
        report.requests += 1
        if on_entry is not None:
            on_entry(entry, outcome)
        report.add(outcome)
        if outcome.result is Result.FAILED and stops(svc.budget, entry.kind, outcome.reason):
            report.stopped = outcome.reason
            break


def _in_batches(
    svc: Services,
    todo: list[StoredEntry],
    report: SweepReport,
    on_entry: Callable[[StoredEntry, Outcome], None] | None,
) -> list[StoredEntry]:
    """Revalidate the entries of ``todo`` each kind's ``revalidate_many`` hook accepts; returns the rest.

    A kind's hook runs when it accepts at least :data:`BATCH_MIN` entries; its counts go to ``report``
    (and its ``stopped``, which ends the batches); the entries left are revalidated singly.
    """
    for kind in KINDS.values():
        many = hooks_of(kind).revalidate_many
        if many is None or report.stopped:
            continue
        batchable = [e for e in todo if e.kind == kind.name and many.eligible(e)]
        if len(batchable) < BATCH_MIN:
            continue
        batch = many.run(svc, batchable, revalidate, on_entry)
        report.merge(batch)
        report.requests += batch.requests
        if batch.stopped:
            report.stopped = batch.stopped
        done = {e.id for e in batchable}
        todo = [e for e in todo if e.id not in done]
    return todo


def stops(budget: Budget, kind: str, reason: str | None) -> bool:
    """Whether a failed revalidation of a ``kind`` entry ends the sweep: a 429, or the kind's pool is offline.

    The pool is the kind's own (:data:`syncd.registry.KINDS`): a journal consults ``crossref_single``,
    a ``doi_ra`` entry ``doi``, a Zenodo search page ``zenodo_search``.
    """
    if reason == "rate_limited":
        return True
    return reason in STOP_REASONS and kind in KINDS and budget.offline(KINDS[kind].pool)


@dataclass
class Named:
    """What the identifiers given to ``syncd cache refresh`` name.

    ``entries``: the stored entries to revalidate, in the identifiers' order; ``fetched``: how many
    identifiers were not stored and were fetched now; ``not_found``: the identifiers upstream knows
    no record of (as given).
    """

    entries: list[StoredEntry] = field(default_factory=list)
    fetched: int = 0
    not_found: list[str] = field(default_factory=list)


def named_entries(svc: Services, named: Sequence[tuple[str, RecordSource[Any], Any]]) -> Named:
    """The stored entries of ``named`` (``(identifier, its record source, its reference)``); fetch if missing.

    An identifier whose record is not stored is fetched now as ``syncd cache get --refresh`` would
    (its source's ``fetch``, forced; counted in ``fetched``, not revalidated again); one upstream does
    not know is listed in ``not_found``.

    Raises:
        UpstreamError, BudgetExhausted: a missing record could not be fetched (upstream unusable).
    """
    out = Named()
    for ident, source, ref in named:
        entry = source.stored(svc.store, ref)
        if entry is not None:
            out.entries.append(entry)
            continue
        try:
            record_answer(source).fetch(svc, ref, True)
        except NotFound:
            out.not_found.append(ident)
        else:
            out.fetched += 1
    return out
