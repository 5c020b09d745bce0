"""What this daemon's jobs did: sweeps, walks, alert passes and tool answers, counted as they happen.

One :class:`Activity` per daemon. Its Prometheus instruments live in the activity's own
:class:`prometheus_client.CollectorRegistry` (never the library's global one, so two daemons in one
test process do not mix), beside the collector that reads the store at scrape time
(:class:`syncd.daemon.ops.metrics.StoreCollector`). Everything is safe to call from the scheduler's worker
threads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.types import CallToolResult
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from syncd.passes.refresh import SweepReport
from syncd.passes.sync import SyncReport

__all__ = [
    "DURATION_BUCKETS_S",
    "SCHEDULER_BEAT_S",
    "Activity",
    "SweepRecord",
    "sweep_outcome",
    "walk_outcome",
]

DURATION_BUCKETS_S = (0.1, 0.5, 1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 3600.0, float("inf"))
"""Histogram buckets of sweep and walk durations (seconds)."""
SCHEDULER_BEAT_S = 5.0
"""Seconds between two beats of the scheduler's heartbeat job (:meth:`Activity.beat`)."""


def sweep_outcome(report: SweepReport) -> str:
    """The ``outcome`` label of one sweep.

    ``store_unwritable`` (skipped or ended by a store that cannot be written), ``stopped`` (ended early:
    a 429, an offline pool), ``failures`` (ran through, some entries failed), ``ok``.
    """
    if report.stopped and report.stopped.startswith("store:"):
        return "store_unwritable"
    if report.stopped:
        return "stopped"
    if report.failed:
        return "failures"
    return "ok"


def walk_outcome(report: SyncReport) -> str:
    """The ``outcome`` label of one walk.

    ``failed``, ``not_run``, ``stopped``, ``incomplete``, else ``complete`` or ``partial``.
    """
    if report.error:
        return "failed"
    if report.not_run:
        return "not_run"
    if report.stopped:
        return "stopped"
    if report.short:
        return "incomplete"
    return "complete" if report.complete else "partial"


@dataclass(frozen=True)
class SweepRecord:
    """One finished sweep: its report, its ``outcome`` label, when it ended (epoch s)."""

    report: SweepReport
    outcome: str
    finished_at: float


class Activity:
    """The daemon's record of its own work, and the registry ``/metrics`` renders.

    Args:
        clock: wall clock, epoch seconds (tests inject one).

    Attributes:
        registry: the Prometheus registry of this daemon (instruments below plus the store collector).
        started_at: when the daemon started (epoch s).
        role: ``active`` (this daemon refreshes) or ``standby`` (another daemon of a shared store does).
        scheduler_running: reports whether the scheduler runs (set by the daemon; None: no scheduler).
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.started_at = clock()
        self.role = "active"
        self.scheduler_running: Callable[[], bool] | None = None
        self._lock = threading.Lock()
        self._beat_at: float | None = None
        self._last_sweep: SweepRecord | None = None
        self._sweep_started: float | None = None
        self._last_sync_at: float | None = None
        self.registry = CollectorRegistry()
        r = self.registry
        self.sweeps = Counter(
            "syncd_sweeps", "Revalidation sweeps run by this daemon, by outcome.", ["outcome"], registry=r
        )
        self.sweep_seconds = Histogram(
            "syncd_sweep_duration_seconds",
            "Wall time of one revalidation sweep.",
            buckets=DURATION_BUCKETS_S,
            registry=r,
        )
        self.sweep_entries = Counter(
            "syncd_sweep_entries",
            "Entries revalidated by this daemon's sweeps, by result.",
            ["result"],
            registry=r,
        )
        self.sweep_failures = Counter(
            "syncd_sweep_entry_failures",
            "Entries a sweep could not revalidate, by reason code.",
            ["reason"],
            registry=r,
        )
        self.walks = Counter(
            "syncd_walks",
            "Watch-list walks run by this daemon, by watch kind and outcome.",
            ["kind", "outcome"],
            registry=r,
        )
        self.walk_seconds = Histogram(
            "syncd_walk_duration_seconds",
            "Wall time of one watch-list walk, by watch kind.",
            ["kind"],
            buckets=DURATION_BUCKETS_S,
            registry=r,
        )
        self.walk_items = Counter(
            "syncd_walk_items", "Items stored by this daemon's walks, by watch kind.", ["kind"], registry=r
        )
        self.answers = Counter(
            "syncd_answers",
            "Tool answers of this daemon's /mcp by where they came from (cache.source; error: failed call).",
            ["source"],
            registry=r,
        )
        self.alerts = Counter(
            "syncd_alerts", "Alert lines this daemon raised (retractions, deletions ...).", registry=r
        )
        self.last_sweep_ts = Gauge(
            "syncd_last_sweep_timestamp_seconds", "When this daemon's last sweep ended (epoch s).", registry=r
        )
        self.up_since = Gauge("syncd_start_time_seconds", "When this daemon started (epoch s).", registry=r)
        self.up_since.set(self.started_at)

    # --- the scheduler ---------------------------------------------------------------------------

    def beat(self) -> None:
        """The scheduler's heartbeat job ran (every :data:`SCHEDULER_BEAT_S` seconds)."""
        with self._lock:
            self._beat_at = self.clock()

    def beat_age_s(self) -> float | None:
        """Seconds since the scheduler's last heartbeat, None before the first."""
        with self._lock:
            return None if self._beat_at is None else max(0.0, self.clock() - self._beat_at)

    # --- sweeps and walks ------------------------------------------------------------------------

    def sweep_started(self) -> None:
        """A sweep begins (``/healthz`` does not call a running sweep overdue)."""
        with self._lock:
            self._sweep_started = self.clock()

    def sweep_running_since(self) -> float | None:
        """When the sweep running now began (epoch s), None when none runs."""
        with self._lock:
            return self._sweep_started

    def record_sweep(self, report: SweepReport) -> SweepRecord:
        """Count one finished sweep (outcome, duration, entries by result, failure reasons)."""
        outcome = sweep_outcome(report)
        now = self.clock()
        self.sweeps.labels(outcome=outcome).inc()
        self.sweep_seconds.observe(report.elapsed_s)
        for result, n in (
            ("unchanged", report.unchanged),
            ("changed", report.changed),
            ("failed", report.failed),
        ):
            if n:
                self.sweep_entries.labels(result=result).inc(n)
        for reason, n in report.failures.items():
            self.sweep_failures.labels(reason=reason).inc(n)
        self.last_sweep_ts.set(now)
        record = SweepRecord(report, outcome, now)
        with self._lock:
            self._last_sweep = record
            self._sweep_started = None
        return record

    def sweep_ended_without_report(self) -> None:
        """A sweep raised (a bug): counted as ``error``; the next sweep runs as planned."""
        self.sweeps.labels(outcome="error").inc()
        with self._lock:
            self._sweep_started = None

    @property
    def last_sweep(self) -> SweepRecord | None:
        """The last finished sweep, None before the first."""
        with self._lock:
            return self._last_sweep

    def record_walks(self, reports: Sequence[SyncReport]) -> None:
        """Count the walks of one sync pass (outcome and duration per watch kind, items stored)."""
        for rep in reports:
            self.walks.labels(kind=rep.kind, outcome=walk_outcome(rep)).inc()
            if not rep.not_run:
                self.walk_seconds.labels(kind=rep.kind).observe(rep.elapsed_s)
            if rep.stored:
                self.walk_items.labels(kind=rep.kind).inc(rep.stored)
        with self._lock:
            self._last_sync_at = self.clock()

    @property
    def last_sync_at(self) -> float | None:
        """When this daemon's last sync pass ended (epoch s), None before the first."""
        with self._lock:
            return self._last_sync_at

    def record_alerts(self, lines: int) -> None:
        """Count the alert lines of one alert pass."""
        if lines:
            self.alerts.inc(lines)

    # --- tool answers ----------------------------------------------------------------------------

    def count_answer(self, result: Any) -> None:
        """Count one ``tools/call`` answer by its ``cache.source`` (``error`` for a failed call).

        ``result``: the SDK's :class:`~mcp.types.CallToolResult` or its wire mapping
        (``isError``, ``structuredContent``), as the server middleware sees it.
        """
        if isinstance(result, CallToolResult):
            is_error, content = result.is_error, result.structured_content
        elif isinstance(result, Mapping):
            is_error, content = result.get("isError"), result.get("structuredContent")
        else:
            return
        if is_error:
            self.answers.labels(source="error").inc()
            return
        cache = content.get("cache") if isinstance(content, Mapping) else None
        source = cache.get("source") if isinstance(cache, Mapping) else None
        self.answers.labels(source=str(source) if source else "none").inc()

    async def answers_middleware(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """MCP server middleware (``Server.middleware``): counts each ``tools/call`` answer."""
        result = await call_next(ctx)
        if ctx.method == "tools/call":
            self.count_answer(result)
        return result
