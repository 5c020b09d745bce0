"""Revalidation sweeps: stale entries, oldest ``validated_at`` first, inside the budget.

Used by the daemon's scheduled job and by ``syncd cache refresh``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field

import syncd.lookups  # noqa: F401  (registers the refetcher of every stored kind)
from syncd.cache import Cache

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

    def as_dict(self) -> dict[str, object]:
        """Plain dict (for ``--json`` and logs)."""
        return asdict(self)


STOP_REASONS = {"rate_limited", "upstream_unavailable"}


def sweep(cache: Cache, limit: int, now: float | None = None) -> SweepReport:
    """Revalidate up to ``limit`` stale entries, oldest first; one log line with the counts.

    Stops early when the budget is spent or the pool goes offline (the rest wait for the next
    sweep), so a sweep never turns into a retry loop against a failing upstream.
    """
    started = time.monotonic()
    report = SweepReport()
    now = time.time() if now is None else now
    for entry in cache.store.stale(cache.ttls(), now, limit):
        outcome = cache.revalidate(entry)
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
        "event=sweep checked=%d unchanged=%d changed=%d failed=%d stopped=%s elapsed_s=%.3f",
        report.checked,
        report.unchanged,
        report.changed,
        report.failed,
        report.stopped or "-",
        report.elapsed_s,
    )
    return report


def _pool(kind: str) -> str:
    return "crossref_single" if kind == "crossref_work" else "zenodo_general"
