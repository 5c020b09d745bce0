"""The Crossref walkers: query watches (``crossref_query``) and the watched DOIs Crossref holds.

Crossref query watches:
    A walk pages the route with ``cursor`` in ``indexed`` order (``sort=indexed&order=asc``, ``rows``
    per page; :mod:`syncd.walks.cursor`). After every page its works are stored (through
    :func:`syncd.crossref.lookups.work_content` and ``Store.put_content``, so unchanged works only get
    ``validated_at`` bumped) and *then* the position is written to ``sync_state``: the next cursor,
    and the **watermark** (the ``indexed`` time of the last work stored) with ``seen``/``total``.
    The walk is complete when what it saw accounts for the ``total-results`` upstream answered (or
    when a segment begun at ``cursor=*`` in this pass ended on its own last page: a page shorter than
    ``rows``, or the empty page after one); then
    ``checkpoint = {"index_date": <UTC day the walk started>}`` and later walks are incremental: the
    same route with ``from-index-date:<that day>``, so only works Crossref re-indexed since (changed,
    or newly matching) are transferred. A stuck walk is told by its items, never by its cursor
    (Crossref's scroll id is the same on every page): no new DOI over
    :data:`syncd.walks.cursor.STUCK_PAGES` pages, or past ``total-results``.

    Cursors die 5 minutes after they were issued. A cursor refused (``404``, ``400``, ``500``), an
    empty or last page from a resumed cursor while works are still due, or a saved cursor too old or a
    scroll id (upstream may have moved past a page never stored) is never the end: the walk resumes
    at ``cursor=*`` from the watermark's day (``event=cursor_expired``), re-reading only that day's
    works; without a watermark (upstream not paging in ``indexed`` order) it restarts at page 1.
    After :data:`MAX_RESUMES` in one pass it ends short (``event=walk_short``, status ``incomplete``,
    checkpoint unmoved) and the next pass resumes it from the watermark.

DOI watches:
    Missing Crossref works are fetched in groups through one list request each
    (``/works?filter=doi:A,doi:B,...``); DOIs that the list does not return go through the single
    lookup ``/works/{doi}`` (misses are stored as misses).

Every request goes through the clients of the :class:`~syncd.road.services.Services` bundle, so through
the shared budget (the daemon's bundle is non-interactive and leaves the interactive reserve).
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Sequence
from typing import Any

from syncd.crossref.lookups import fetch_work, work_content
from syncd.crossref.names import CROSSREF_WORK
from syncd.crossref.params_filter import filter_safe
from syncd.crossref.walk_specs import CROSSREF_QUERY
from syncd.errors import (
    InvalidInput,
    MalformedResponse,
    NotFound,
    UpstreamError,
    UpstreamRejected,
    UpstreamUnavailable,
)
from syncd.normalize.doi import parse_doi
from syncd.road.services import Services
from syncd.store.repo import Store
from syncd.store.watches import (
    PageVerdict,
    Progress,
    StoredWatch,
    get_sync_state,
    page_done,
    save_sync_state,
    start_walk,
)
from syncd.walks.cursor import CURSOR_TTL_S, SORT, CursorWalk, WalkGuard
from syncd.walks.walker import (
    STOP,
    STOP_REASONS,
    DoiWalker,
    PageHook,
    SyncReport,
    Walker,
    deadline,
    ended_early,
    log_page,
    state_name,
)

__all__ = [
    "DOIS",
    "DOI_GROUP",
    "MAX_RESUMES",
    "WALKERS",
    "crossref_params",
    "fetch_dois",
    "sync_crossref_query",
]

log = logging.getLogger("syncd.sync")  # the walkers' log lines keep the name they always had

DOI_GROUP = 50
"""DOIs per ``filter=doi:...`` list request."""
MAX_RESUMES = 3
"""Segments one pass starts after refused cursors before the walk ends short (``event=walk_short``)."""


def _store_work(svc: Services, item: dict[str, Any], report: SyncReport, now: float | None = None) -> None:
    doi = item.get("DOI")
    if not isinstance(doi, str):
        report.failed += 1
        return
    try:
        key = parse_doi(doi).key
    except InvalidInput:
        report.failed += 1
        return
    before = svc.store.get(CROSSREF_WORK, key)
    try:
        _, changed = svc.store.put_content(work_content(key, item, None), now=now)
    except MalformedResponse as exc:  # a poison item (or a held-back shrink) never stops the walk
        log.warning("event=skip_item kind=crossref_work doi=%s reason=%s", key, exc.reason)
        report.failed += 1
        return
    report.count_stored(before is None, changed)


# --- Crossref query watches ------------------------------------------------------------------------


def crossref_params(spec: dict[str, Any], cursor: str, since: str | None = None) -> dict[str, str]:
    """Query parameters of one page of a Crossref watch, in ``indexed`` order (:data:`SORT`).

    ``since``: the ``from-index-date`` day (an incremental walk, or a segment resumed from its watermark).
    """
    params: dict[str, str] = {}
    filters = [f for f in (spec.get("filter") or "").split(",") if f]
    if since:
        filters.append(f"from-index-date:{since}")
    if filters:
        params["filter"] = ",".join(filters)
    if spec.get("query"):
        params["query"] = spec["query"]
    if spec.get("rows"):
        params["rows"] = str(spec["rows"])
    params.update(SORT)
    params["cursor"] = cursor
    return params


def _crossref_page(svc: Services, route: str, params: dict[str, str]) -> dict[str, Any] | int:
    """One page's ``message``, or the HTTP status with which Crossref refused the page's cursor.

    Crossref answers an expired or unknown cursor ``404`` (a JSON ``resource-failure``), and has been
    seen answering ``400`` and ``500`` to one; each is returned as an int when the page carried a cursor
    other than ``*`` (for ``*`` only the 404 is, meaning the route does not exist; the others raise).

    Raises:
        MalformedResponse: the answer is not a work list.
        UpstreamError, BudgetExhausted: see :meth:`syncd.crossref.client.CrossrefClient.get_json`.
    """
    resent = params.get("cursor") != "*"
    try:
        resp = svc.upstreams.crossref.get_json(
            route, deadline(), params=params, pool="crossref_list", accept=(200, 404)
        )
    except UpstreamRejected:
        if resent:
            return 400
        raise
    except UpstreamUnavailable as exc:
        if resent and exc.data.get("status") == 500:
            return 500
        raise
    if resp.status == 404:
        return 404
    body = resp.json
    if not (isinstance(body, dict) and body.get("message-type") == "work-list"):
        raise MalformedResponse("crossref: the answer is not a work list")
    message = body.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("items"), list):
        raise MalformedResponse("crossref: the work list has no items")
    return message


def _utc_day(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d")


def _progress(walk: CursorWalk) -> Progress:
    return Progress(walk.watermark, walk.seen, walk.total)


def _walk_stopped(
    svc: Services, watch: StoredWatch, report: SyncReport, reason: str, guard: WalkGuard, walk: CursorWalk
) -> SyncReport:
    """End a walk upstream would not end: logged, ``sync_state.status = stopped:<reason>``.

    The checkpoint of the last complete walk is kept (the next pass is no more incremental than it
    was) and the cursor cleared, so the next pass starts the walk again from that checkpoint.
    """
    log.warning(
        "event=walk_stopped watch=%d reason=%s requests=%d read=%d total=%d",
        watch.id, reason, report.requests, guard.read, guard.total,
    )  # fmt: skip
    save_sync_state(
        svc.store, state_name(watch), cursor=None, status=f"stopped:{reason}", progress=_progress(walk)
    )
    report.stopped = reason
    report.notes.append(f"walk stopped: {reason} (checkpoint kept; the next pass starts again from it)")
    return report


def _walk_short(
    svc: Services, watch: StoredWatch, report: SyncReport, walk: CursorWalk, why: str
) -> SyncReport:
    """End a pass whose walk could not finish (its cursors kept expiring): ``incomplete``, logged.

    The position is the start of the next segment (the watermark), so the next pass finishes the walk
    from there; the checkpoint is not moved.
    """
    report.short = True
    report.seen, report.total = walk.seen, walk.total
    progress = _progress(walk)
    log.warning(
        "event=walk_short watch=%d outcome=incomplete reason=%s seen=%d total=%s requests=%d watermark=%s",
        watch.id, why, walk.seen, walk.total, report.requests, walk.watermark,
    )  # fmt: skip
    from_watermark = walk.resume()  # the saved position is the next segment's start, never a dead cursor
    save_sync_state(
        svc.store, state_name(watch), cursor=walk.position(), status="incomplete", progress=progress
    )
    report.notes.append(
        f"walk incomplete: {report.seen} of {report.total if report.total is not None else '?'} works "
        f"seen ({why}); the next pass resumes "
        + (f"from the watermark {walk.watermark}" if from_watermark else "from the first page")
    )
    return report


def _resume_note(walk: CursorWalk, why: str, from_watermark: bool) -> str:
    if from_watermark:
        return f"{why}: resumed from the watermark {walk.watermark} (from-index-date:{walk.since})"
    return f"{why}: walk restarted from its first page (no watermark)"


class _Pass:
    """One pass of a Crossref query walk: the segments (cursor chains) it starts and the pages it stores.

    ``trusted``: the current segment started at ``cursor=*`` in this pass, each cursor sent within its
    life; ``resumes``: segments started after refused cursors (at most :data:`MAX_RESUMES`);
    ``short_before``: the page before this one held fewer works than ``rows``.
    """

    def __init__(
        self,
        svc: Services,
        watch: StoredWatch,
        report: SyncReport,
        walk: CursorWalk,
        on_page: PageHook | None,
    ) -> None:
        self.svc, self.watch, self.report, self.walk, self.on_page = svc, watch, report, walk, on_page
        self.name = state_name(watch)
        self.rows = int(watch.spec.get("rows") or 20)
        self.route = watch.spec.get("route") or "/works"
        self.trusted = False
        self.resumes = 0
        self.guard = WalkGuard(rows=self.rows)
        self.short_before = False

    def resume(self, why: str) -> bool:
        """Start the next segment (False: too many this pass, the walk ends short)."""
        walk = self.walk
        self.resumes += 1
        if self.resumes > MAX_RESUMES:
            return False
        pages_before = walk.pages
        from_watermark = walk.resume()
        self.trusted = False
        log.warning(
            "event=cursor_expired watch=%d why=%r pages_done=%d resume=%s since=%s seen=%d",
            self.watch.id, why, pages_before, "watermark" if from_watermark else "restart", walk.since,
            walk.seen,
        )  # fmt: skip
        self.report.notes.append(_resume_note(walk, why, from_watermark))
        save_sync_state(self.svc.store, self.name, cursor=walk.position(), progress=_progress(walk))
        return True

    def _resumed(self, why: str) -> bool | SyncReport:
        """:meth:`resume`, or the short end of the walk when it may not (its report)."""
        if self.resume(why):
            return True
        return _walk_short(self.svc, self.watch, self.report, self.walk, "cursors kept expiring")

    def page(self) -> bool | SyncReport:
        """Ask for and store one page: True to go on, False when the walk is complete, else its report.

        A report is returned when the walk ended short, was stopped, or ended at a page boundary.

        Raises:
            NotFound: the route does not exist.
            UpstreamError, BudgetExhausted: the page could not be had.
        """
        walk, report = self.walk, self.report
        sent = walk.token
        if sent == "*":
            self.trusted, self.short_before = True, False
            self.guard = WalkGuard(rows=self.rows)
        elif walk.issued_at is not None and time.time() - walk.issued_at > CURSOR_TTL_S:
            return self._resumed(f"cursor expired (older than {CURSOR_TTL_S:g} s)")
        report.requests += 1  # counted when sent: a failed request counts too
        answer = _crossref_page(self.svc, self.route, crossref_params(self.watch.spec, sent, walk.since))
        answered_at = time.time()  # a cursor's life counts from upstream's answer, not from storing
        if isinstance(answer, int):
            if sent == "*":
                raise NotFound(f"crossref: {self.route} does not exist", reason="not_found")
            return self._resumed(f"cursor expired (refused with HTTP {answer})")
        items = [i for i in answer["items"] if isinstance(i, dict)]
        fresh = self.guard.fresh(items)
        new_before = report.new
        for item in items:
            _store_work(self.svc, item, report)
        walk.take(fresh, answer.get("total-results"))
        if items:
            walk.pages += 1
            report.pages += 1
        log_page(self.watch, walk.pages, len(items), report.new - new_before)
        nxt = answer.get("next-cursor")
        last = not items or not isinstance(nxt, str) or not nxt
        short_page = 0 < len(items) < self.rows
        if walk.accounted or last:
            if walk.accounted or (self.trusted and (short_page or self.short_before)):
                # seen accounts for total-results, or a fresh chain ended on its own (short) last page
                return False
            # an empty or last page from a resumed cursor while works are still due: expired, not the end
            return self._resumed(
                f"cursor expired (its last page came with {walk.seen} of {walk.total} works seen)"
            )
        stuck = self.guard.stop_reason(len(items), len(fresh), answer.get("total-results"))
        if stuck is not None:
            return _walk_stopped(self.svc, self.watch, report, stuck, self.guard, walk)
        self.short_before = short_page
        walk.advance(sent, nxt, answered_at)
        verdict = page_done(
            self.svc.store,
            self.name,
            cursor=walk.position(),
            progress=_progress(walk),
            shutdown=STOP.is_set(),
        )
        if self.on_page is not None:
            self.on_page(self.watch, walk.pages)
        if verdict is not PageVerdict.GO:
            return ended_early(self.watch, report, verdict)
        return True


def sync_crossref_query(
    svc: Services, watch: StoredWatch, *, now: float | None = None, on_page: PageHook | None = None,
    full: bool = False, report: SyncReport | None = None,
) -> SyncReport:  # fmt: skip
    """Walk one Crossref query watch (full, incremental or resumed; see the module docstring).

    ``report``: filled in place when given, so a caller keeps the counts of a walk that raised.

    Raises:
        NotFound: the route does not exist (``404`` to ``cursor=*``).
        UpstreamError, BudgetExhausted: a page could not be had (the position of the last stored
            page stays saved; a refused cursor is never sent again).
    """
    name = state_name(watch)
    state = get_sync_state(svc.store, name)
    now = time.time() if now is None else now
    report = SyncReport(watch.id, watch.kind) if report is None else report
    if state and state.cursor and not full:
        report.resumed = True
        walk = CursorWalk.from_position(state.cursor)
    else:
        base = None if full or not (state and state.checkpoint) else state.checkpoint.get("index_date")
        walk = CursorWalk(base=base, since=base, started_at=now)
    report.mode = "incremental" if walk.base else "full"
    run = _Pass(svc, watch, report, walk, on_page)
    if walk.token != "*" and not walk.resendable(time.time()):
        run.resume("saved cursor not sent again (older than its life, or a scroll id)")
    start_walk(svc.store, name, cursor=walk.position(), started_at=walk.started_at, now=now)
    while (step := run.page()) is True:
        pass
    if isinstance(step, SyncReport):
        return step
    if not walk.accounted:
        log.info(
            "event=walk_total_mismatch watch=%d seen=%d total=%s (the walk ended on its own last page)",
            watch.id, walk.seen, walk.total,
        )  # fmt: skip
    finished = time.time()
    save_sync_state(
        svc.store, name, cursor=None, checkpoint={"index_date": _utc_day(walk.started_at)}, status="ok",
        last_success_at=finished, progress=_progress(walk), now=finished,
    )  # fmt: skip
    report.seen, report.total = walk.seen, walk.total
    report.complete = True
    return report


# --- DOI watches -----------------------------------------------------------------------------------


def _missing(store: Store, doi: str) -> bool:
    return store.get(CROSSREF_WORK, doi) is None


def fetch_dois(svc: Services, dois: Sequence[str], report: SyncReport, now: float | None = None) -> None:
    """Fetch the watched Crossref works ``dois`` (each not stored), :data:`DOI_GROUP` to a list request.

    A DOI that cannot go into a ``doi:`` filter (:func:`~syncd.crossref.params_filter.filter_safe`),
    or that the list does not return, is asked for alone (``/works/{doi}``; a 404 stored as a miss).
    A list request that fails is left to the single lookups, unless the failure ends the pass.

    Raises:
        UpstreamError: the list request failed with a :data:`~syncd.walks.walker.STOP_REASONS` reason.
        UpstreamError, BudgetExhausted: a single lookup failed.
    """
    for i in range(0, len(dois), DOI_GROUP):
        group = dois[i : i + DOI_GROUP]
        listed = [d for d in group if filter_safe(d)]  # a comma DOI would split the filter: fetched alone
        if len(listed) > 1:
            params = {"filter": ",".join(f"doi:{d}" for d in listed), "rows": str(len(listed))}
            try:
                message = svc.upstreams.crossref.list_works(params, deadline())
                items = message["items"]
            except UpstreamError as exc:
                if exc.reason in STOP_REASONS:
                    raise
                log.info("event=doi_group_failed reason=%s fallback=single", exc.reason)
                items = []
            report.requests += 1
            for item in items:
                if isinstance(item, dict):
                    _store_work(svc, item, report, now)
        for doi in group:
            if svc.store.get(CROSSREF_WORK, doi) is None:  # not in the list: ask once, store the miss
                parsed = parse_doi(doi)
                fetch_work(svc.upstreams.crossref, svc.store, parsed, None, deadline())
                report.requests += 1
                report.stored += 1


DOIS = DoiWalker(claims=None, missing=_missing, fetch=fetch_dois)
"""Watched DOIs no other upstream claims are Crossref works (:mod:`syncd.registry` lists it)."""

WALKERS: dict[str, Walker] = {CROSSREF_QUERY: sync_crossref_query}
"""The Crossref watch kinds and their walkers (:mod:`syncd.registry` lists them)."""
