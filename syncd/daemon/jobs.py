"""The daemon's scheduled passes: revalidation sweep, watch-list sync, alerts, the slices' jobs, file look.

:class:`DaemonJobs` holds the coroutines :mod:`syncd.daemon.run` schedules; each runs its pass
(:func:`sweep_pass`, :func:`sync_pass`, :func:`alerts_pass`, a slice's :class:`~syncd.slice.Job`
such as the Retraction Watch read) in a worker thread, only on the refreshing daemon (the holder of
the :class:`~syncd.store.leader.DaemonLock`). Their log lines are the daemon's (logger ``syncd.daemon``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

from syncd.daemon.alerts import run_pass as alert_pass
from syncd.daemon.ops.activity import Activity
from syncd.daemon.sdnotify import notify
from syncd.errors import StoreError
from syncd.lazy import load
from syncd.passes.refresh import SweepReport, sweep
from syncd.passes.sync import SyncReport, sync_all
from syncd.passes.watches import apply_config
from syncd.road.services import Services
from syncd.slice import Job
from syncd.store.changes import prune_changes
from syncd.store.fileguard import FileGuard
from syncd.store.leader import DaemonLock

if TYPE_CHECKING:
    from syncd.config import Settings

__all__ = ["DaemonJobs", "alerts_pass", "sweep_pass", "sync_pass"]

log = logging.getLogger("syncd.daemon")


class DaemonJobs:
    """The daemon's scheduled passes, each run in a worker thread of ``loop``.

    ``guard`` is the store file's guard (None: not a file-backed SQLite store). The sweep and the sync
    walk take turns (one :class:`asyncio.Lock`: never both at once) and run only
    on the holder of ``lock`` (a standby daemon serves only); ``running`` holds the worker futures the
    stop drains (at most 25 s).
    """

    def __init__(
        self,
        settings: Settings,
        services: Services,
        activity: Activity,
        lock: DaemonLock,
        loop: asyncio.AbstractEventLoop,
        guard: FileGuard | None,
    ) -> None:
        self.settings = settings
        self.services = services
        self.activity = activity
        self.lock = lock
        self.loop = loop
        self.running: set[asyncio.Future[Any]] = set()
        self.turn = asyncio.Lock()
        self.guard = guard

    async def sweep(self) -> None:
        """One revalidation sweep (:func:`sweep_pass`); a bug is logged with its traceback and counted."""
        if not self.lock.held:  # a standby daemon serves only
            return
        async with self.turn:
            self.activity.sweep_started()
            fut = self.loop.run_in_executor(None, sweep_pass, self.services, self.settings.revalidate_batch)
            self.running.add(fut)
            try:
                report = await fut
            except Exception:  # a bug: logged with its traceback, counted; the next sweep runs as planned
                log.exception("event=sweep_failed reason=internal_error")
                self.activity.sweep_ended_without_report()
                return
            finally:
                self.running.discard(fut)
            self.activity.record_sweep(report)
            counts = f"{report.checked} checked, {report.changed} changed, {report.failed} failed"
            notify(f"STATUS=last sweep: {counts}")

    async def sync(self) -> None:
        """One watch-list pass (:func:`sync_pass`), its walks recorded and told to systemd."""
        if not self.lock.held:
            return
        async with self.turn:
            fut = self.loop.run_in_executor(None, sync_pass, self.services, self.settings)
            self.running.add(fut)
            try:
                reports = await fut
            finally:
                self.running.discard(fut)
            self.activity.record_walks(reports)
            stored, failed = sum(r.stored for r in reports), sum(1 for r in reports if r.error)
            notify(f"STATUS=last sync: {stored} items stored, {failed} walks failed")

    async def file_check(self) -> None:
        """A deep look at the store's file (replaced or deleted while nothing is written)."""
        guard = self.guard
        if guard is not None:
            with contextlib.suppress(StoreError):  # logged once by the guard, retried
                await self.loop.run_in_executor(None, lambda: guard.check(deep=True))

    async def alerts(self) -> None:
        """One alert pass (:func:`alerts_pass`) on the refreshing daemon (one daemon of the lab alerts)."""
        if self.lock.held:
            self.activity.record_alerts(await self.loop.run_in_executor(None, alerts_pass, self.services))

    async def slice_job(self, job: Job) -> None:
        """One run of a slice's daemon job (``daemon_pass(services)`` of its module, loaded on first use).

        On the refreshing daemon only (one daemon of the lab runs it), taking its turn with the sweep
        and the sync walk.
        """
        if self.lock.held:
            run = load(__name__, job.module).daemon_pass
            async with self.turn:
                await self.loop.run_in_executor(None, run, self.services)


def sweep_pass(svc: Services, batch: int) -> SweepReport:
    """Drop old replaced bodies and changes (``store.keep_previous_s``, ``changes.keep_s``), then sweep.

    Returns the revalidation sweep's report.

    A store that cannot be written (full disk, read-only file, swapped file) skips the sweep: its
    cause is logged once by the store, and the report says ``stopped`` with the cause; a sweep
    that meets a store failure midway ends the same way, never with a traceback.
    """
    problem = svc.store.write_problem()
    if problem is not None:
        log.warning("event=sweep_skipped reason=store_unwritable cause=%s", problem)
        return SweepReport(stopped=f"store:{problem}")
    try:
        pruned = svc.store.prune_previous()
        if pruned:
            log.info("event=previous_pruned bodies=%d", pruned)
        dropped = prune_changes(svc.store, svc.settings.changes.keep_s)
        if dropped:
            log.info("event=changes_pruned changes=%d", dropped)
        return sweep(svc, batch)
    except StoreError as exc:
        cause = svc.store.write_problem() or exc.reason
        log.warning("event=sweep_stopped reason=store_unwritable cause=%s", cause)
        return SweepReport(stopped=f"store:{cause}")


def alerts_pass(svc: Services) -> int:
    """One alert pass over the change feed (:func:`syncd.daemon.alerts.run_pass`); a store failure waits."""
    if svc.store.write_problem() is not None:
        return 0
    try:
        return alert_pass(svc.store, svc.settings)
    except StoreError as exc:
        log.info("event=alerts_skipped reason=%s", exc.reason)
        return 0


def sync_pass(svc: Services, settings: Settings) -> list[SyncReport]:
    """One watch-list pass (config watches added first); returns one report per walk.

    A pass with a failed walk, or walks left for the next pass, ends with ``event=sync_pass`` at
    WARNING (each failed walk has its own ``event=sync_failed`` line too).
    """
    try:
        apply_config(svc.store, settings.watch)
    except Exception as exc:  # a bad DOI file must not stop the pass over the other watches
        log.warning("event=watch_config_failed error=%s", getattr(exc, "reason", exc.__class__.__name__))
    reports = sync_all(svc)
    failed = [r for r in reports if r.error]
    not_run = [r for r in reports if r.not_run]
    log.log(
        logging.WARNING if failed or not_run else logging.INFO,
        "event=sync_pass walks=%d failed=%d not_run=%d stored=%d reasons=%s",
        len(reports),
        len(failed),
        len(not_run),
        sum(r.stored for r in reports),
        ",".join(sorted({str(r.error or r.not_run) for r in failed + not_run})) or "-",
    )
    return reports
