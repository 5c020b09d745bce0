"""Passes over the watch lists, with durable checkpoints (``sync_state``, one row per watch).

A pass walks every watch (or those asked for): the DOI watches together, then each other watch
through its kind's walker. Which walker walks which watch kind, and which upstream fetches a watched
DOI, is read from the composition root (:data:`syncd.registry.WALKERS`,
:data:`syncd.registry.DOI_WALKERS`); each upstream's walkers live in its slice (``<slice>/walk.py``,
their walks described there) and share :mod:`syncd.walks.walker`. No upstream is named here.

DOI watches:
    Each watched DOI goes to the DOI walker whose upstream claims it; the ones not stored yet are
    fetched by that walker (grouped into list requests where the upstream has them; misses are
    stored as misses). Stored ones are left to revalidation.

A failing walk is recorded in its ``sync_state`` row (``failed:<reason>``); a spent budget or an
offline upstream (:data:`~syncd.walks.walker.STOP_REASONS`) ends the pass, the watches left waiting for
the next one. Every request goes through the clients of the :class:`~syncd.road.services.Services`
bundle, so through the shared budget (the daemon's bundle is non-interactive and leaves the
interactive reserve).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from syncd.errors import BudgetExhausted, InvalidInput, SyncdError, UpstreamError
from syncd.registry import DOI_WALKERS, WALKERS
from syncd.road.services import Services
from syncd.store.watches import StoredWatch, get_sync_state, list_watches, save_sync_state, walked_elsewhere
from syncd.walks.walker import STOP, STOP_REASONS, PageHook, SyncReport, state_name

__all__ = ["DOI_WATCH", "STOP", "SyncReport", "state_name", "sync_all", "sync_dois", "sync_watch"]

log = logging.getLogger("syncd.sync")

DOI_WATCH = "doi"
"""The watch kind of one watched DOI (:mod:`syncd.passes.watches`): walked by the DOI walkers, grouped in a
pass."""


# --- DOI watches -----------------------------------------------------------------------------------


def _holder(doi: str) -> int:
    """The position in :data:`~syncd.registry.DOI_WALKERS` of the walker whose upstream claims ``doi``.

    A DOI no walker claims goes to the one taking every unclaimed DOI (``claims`` None).
    """
    for at, walker in enumerate(DOI_WALKERS):
        if walker.claims is not None and walker.claims(doi):
            return at
    return next(at for at, walker in enumerate(DOI_WALKERS) if walker.claims is None)


def sync_dois(
    svc: Services, watches: list[StoredWatch], *, now: float | None = None, report: SyncReport | None = None
) -> SyncReport:
    """Fetch the watched DOIs not yet stored, each by the DOI walker of its upstream, in registry order.

    ``report``: filled in place when given, so a caller keeps the counts of a pass that raised.

    Raises:
        UpstreamError, BudgetExhausted: a walker could not go on (see :class:`syncd.walks.walker.DoiWalker`).
    """
    report = SyncReport(0, DOI_WATCH) if report is None else report
    due: list[list[str]] = [[] for _ in DOI_WALKERS]
    for w in watches:
        doi = w.spec["doi"]
        at = _holder(doi)
        if DOI_WALKERS[at].missing(svc.store, doi):
            due[at].append(doi)
    for walker, dois in zip(DOI_WALKERS, due, strict=True):
        walker.fetch(svc, dois, report, now)
    report.complete = True
    return report


# --- passes ----------------------------------------------------------------------------------------


def sync_watch(
    svc: Services, watch: StoredWatch, *, now: float | None = None, on_page: PageHook | None = None,
    full: bool = False, report: SyncReport | None = None,
) -> SyncReport:  # fmt: skip
    """Walk one watch; failures are recorded in ``sync_state.status`` (``failed:<reason>``) and raised.

    ``report``: filled in place when given, so a caller keeps the counts of a walk that raised (the
    pages stored before the failure). A watch another live process walks now is left to it
    (``stopped = "running_elsewhere"``, no request).
    """
    started = time.monotonic()
    report = SyncReport(watch.id, watch.kind) if report is None else report
    if watch.kind != DOI_WATCH and walked_elsewhere(get_sync_state(svc.store, state_name(watch))):
        log.info("event=walk_skipped watch=%d reason=running_elsewhere", watch.id)
        report.stopped = "running_elsewhere"
        report.notes.append("walked by another process")
        return report
    try:
        if watch.kind == DOI_WATCH:
            sync_dois(svc, [watch], now=now, report=report)
            save_sync_state(svc.store, state_name(watch), status="ok", last_success_at=time.time())
        elif (walker := WALKERS.get(watch.kind)) is not None:
            walker(svc, watch, now=now, on_page=on_page, full=full, report=report)
        else:
            raise InvalidInput(f"unknown watch kind {watch.kind!r}")
    except SyncdError as exc:
        report.error = exc.reason
        report.elapsed_s = round(time.monotonic() - started, 3)
        save_sync_state(svc.store, state_name(watch), status=f"failed:{exc.reason}")
        log.warning(
            "event=sync_failed watch=%d kind=%s reason=%s requests=%d stored=%d",
            watch.id, watch.kind, exc.reason, report.requests, report.stored,
        )  # fmt: skip
        raise
    except KeyboardInterrupt:  # a second Ctrl-C: the position of the last stored page stays saved
        save_sync_state(svc.store, state_name(watch), status="interrupted")
        log.warning("event=walk_ended watch=%d reason=interrupted", watch.id)
        raise
    report.elapsed_s = round(time.monotonic() - started, 3)
    log.info(
        "event=sync watch=%d kind=%s mode=%s resumed=%s requests=%d stored=%d new=%d changed=%d "
        "unchanged=%d elapsed_s=%.3f",
        watch.id, watch.kind, report.mode, report.resumed, report.requests, report.stored, report.new,
        report.changed, report.unchanged, report.elapsed_s,
    )  # fmt: skip
    return report


def sync_all(
    svc: Services, *, ids: list[int] | None = None, now: float | None = None, full: bool = False,
    on_watch: Callable[[StoredWatch, SyncReport | None], None] | None = None,
) -> list[SyncReport]:  # fmt: skip
    """One pass over every watch (or ``ids``): DOI watches grouped, then each query watch.

    One report per walk: the DOI watches' together (``watch_id`` 0), then one per query watch. A
    failing walk is logged and skipped, its report keeping what it did before failing (``error`` set);
    a spent budget or an offline upstream ends the pass, and each query watch left waits for the
    next pass (resuming from its checkpoint), reported with ``not_run`` set to that reason
    (``shutdown`` when the pass was stopped).
    """
    watches = [w for w in list_watches(svc.store) if ids is None or w.id in ids]
    reports: list[SyncReport] = []
    ended: str | None = None
    dois = [w for w in watches if w.kind == DOI_WATCH]
    if dois:
        rep = SyncReport(0, DOI_WATCH)
        try:
            sync_dois(svc, dois, now=now, report=rep)
            done = time.time()
            for w in dois:
                save_sync_state(svc.store, state_name(w), status="ok", last_success_at=done, now=done)
        except (UpstreamError, BudgetExhausted) as exc:
            log.warning("event=sync_failed kind=doi reason=%s", exc.reason)
            rep.error = exc.reason
            if exc.reason in STOP_REASONS:
                ended = exc.reason
        reports.append(rep)
        if on_watch:
            on_watch(dois[0], rep)
    for w in watches:
        if w.kind == DOI_WATCH:
            continue
        if ended is None and STOP.is_set():
            ended = "shutdown"
        rep = SyncReport(w.id, w.kind)
        reports.append(rep)
        if ended is not None:
            rep.not_run = ended
            rep.notes.append(f"not run: the pass ended ({ended}); the next pass walks it")
            continue
        try:
            sync_watch(svc, w, now=now, full=full, report=rep)
        except SyncdError as exc:
            if exc.reason in STOP_REASONS:
                ended = exc.reason
        finally:
            if on_watch:
                on_watch(w, rep)
    return reports
