"""Revalidation sweeps: stale entries, oldest ``validated_at`` first, inside the budget.

Used by the daemon's scheduled job and by ``syncd cache refresh``. Stale Crossref works that carry an
``indexed`` stamp are confirmed in groups through one list request each (:mod:`syncd.batch`) when
there are at least :data:`BATCH_MIN` of them; everything else is revalidated one by one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import syncd.lookups  # noqa: F401  (registers the refetcher of every stored kind)
from syncd.batch import eligible, revalidate_crossref
from syncd.cache import Cache
from syncd.store.repo import StoredEntry

__all__ = ["SweepReport", "sweep"]

log = logging.getLogger("syncd.refresh")


@dataclass
class SweepReport:
    """Counts of one sweep: entries ``checked`` and how each ended; ``stopped`` names why it ended early."""

    checked: int = 0
    unchanged: int = 0
    changed: int = 0
    failed: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    stopped: str | None = None
    elapsed_s: float = 0.0
    requests: int = 0

    def as_dict(self) -> dict[str, object]:
        """Plain dict (for ``--json`` and logs)."""
        return asdict(self)


STOP_REASONS = {"rate_limited", "upstream_unavailable"}
BATCH_MIN = 3
"""Fewest stale Crossref works worth one list request instead of single revalidations."""


def sweep(
    cache: Cache,
    limit: int,
    now: float | None = None,
    *,
    entries: Sequence[StoredEntry] | None = None,
    on_entry: Callable[[StoredEntry, str], None] | None = None,
) -> SweepReport:
    """Revalidate up to ``limit`` stale entries (or exactly ``entries``), oldest first; one log line.

    Stops early when the budget is spent or the pool goes offline (the rest wait for the next
    sweep), so a sweep never turns into a retry loop against a failing upstream.
    """
    started = time.monotonic()
    report = SweepReport()
    now = time.time() if now is None else now
    if entries is not None:
        todo = list(entries)
    else:
        todo = cache.store.stale(cache.ttls(background=True), now, limit)
    batchable = [e for e in todo if eligible(e)]
    if len(batchable) >= BATCH_MIN:
        batch = revalidate_crossref(cache, batchable, on_entry=on_entry)
        report.checked += batch.checked
        report.unchanged += batch.unchanged
        report.changed += batch.changed
        report.failed += batch.failed
        report.requests += batch.requests
        for reason, n in batch.failures.items():
            report.failures[reason] = report.failures.get(reason, 0) + n
        if batch.stopped:
            report.stopped = batch.stopped
        done = {e.id for e in batchable}
        todo = [e for e in todo if e.id not in done]
    for entry in todo if report.stopped != "rate_limited" else []:
        outcome = cache.revalidate(entry)
        report.requests += 1
        if on_entry is not None:
            on_entry(entry, outcome)
        report.checked += 1
        if outcome == "unchanged":
            report.unchanged += 1
        elif outcome == "changed":
            report.changed += 1
        else:
            report.failed += 1
            reason = outcome.partition(":")[2]
            report.failures[reason] = report.failures.get(reason, 0) + 1
            if reason == "rate_limited" or (
                reason in STOP_REASONS and cache.budget.offline(_pool(entry.kind))
            ):
                report.stopped = reason
                break
    report.elapsed_s = round(time.monotonic() - started, 3)
    log.info(
        "event=sweep checked=%d unchanged=%d changed=%d failed=%d requests=%d stopped=%s elapsed_s=%.3f",
        report.checked,
        report.unchanged,
        report.changed,
        report.failed,
        report.requests,
        report.stopped or "-",
        report.elapsed_s,
    )
    return report


def _pool(kind: str) -> str:
    return "crossref_single" if kind == "crossref_work" else "zenodo_general"
