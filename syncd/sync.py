"""Sync walks of watched items, with durable checkpoints (``sync_state``, one row per watch).

Crossref query watches:
    A walk pages the route with ``cursor`` in ``indexed`` order (``sort=indexed&order=asc``, ``rows``
    per page; :mod:`syncd.cursorwalk`). After every page its works are stored (through
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
    :data:`syncd.cursorwalk.STUCK_PAGES` pages, or past ``total-results``.

    Cursors die 5 minutes after they were issued. A cursor refused (``404``, ``400``, ``500``), an
    empty or last page from a resumed cursor while works are still due, or a saved cursor too old or a
    scroll id (upstream may have moved past a page never stored) is never the end: the walk resumes
    at ``cursor=*`` from the watermark's day (``event=cursor_expired``), re-reading only that day's
    works; without a watermark (upstream not paging in ``indexed`` order) it restarts at page 1.
    After :data:`MAX_RESUMES` in one pass it ends short (``event=walk_short``, status ``incomplete``,
    checkpoint unmoved) and the next pass resumes it from the watermark.

Zenodo community and query watches:
    Walked in windows of ``updated`` (``updated:["A" TO "B"}``, sorted ``updated-asc``), paged with
    ``page``/``size``. A window whose total exceeds Zenodo's 10,000-result limit is split in half
    until each part fits. Windows are walked oldest first; when one completes, ``checkpoint =
    {"updated": <its end>}``, so a restart or the next pass continues from there (incremental).
    ``sync_state.cursor`` holds the pending windows and the page within the current one.

DOI watches:
    Missing Crossref works are fetched in groups through one list request each
    (``/works?filter=doi:A,doi:B,...``); DOIs that the list does not return, and Zenodo DOIs, go
    through the single lookups (misses are stored as misses). Stored ones are left to revalidation.

Every request goes through the clients of the :class:`~syncd.services.Services` bundle, so through
the shared budget (the daemon's bundle is non-interactive and leaves the interactive reserve).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from syncd.batch import filter_safe
from syncd.crossref.lookups import fetch_work, work_content
from syncd.crossref.names import CROSSREF_WORK
from syncd.cursorwalk import CURSOR_TTL_S, SORT, CursorWalk, WalkGuard
from syncd.errors import (
    BudgetExhausted,
    InvalidInput,
    MalformedResponse,
    NotFound,
    SyncdError,
    UpstreamError,
    UpstreamRejected,
    UpstreamUnavailable,
)
from syncd.normalize.doi import parse_doi
from syncd.services import Services
from syncd.store.watches import (
    PageVerdict,
    Progress,
    StoredWatch,
    get_sync_state,
    list_watches,
    page_done,
    save_sync_state,
    start_walk,
    walked_elsewhere,
)
from syncd.upstream.http import Deadline
from syncd.zenodo import views as zenodo_norm
from syncd.zenodo.lookups import get_record, record_content, supersede_older
from syncd.zenodo.names import ZENODO_RECORD
from syncd.zenodo.params_id import parse_record_ref

__all__ = [
    "MAX_RESUMES",
    "ZENODO_FLOOR",
    "ZENODO_MAX_RESULTS",
    "SyncReport",
    "crossref_params",
    "state_name",
    "sync_all",
    "sync_watch",
    "zenodo_params",
]

log = logging.getLogger("syncd.sync")

STOP = threading.Event()
"""Set on shutdown (the daemon's SIGTERM): walks stop at the next page boundary, their position saved."""

ZENODO_MAX_RESULTS = 10_000
"""Zenodo answers at most this many hits per query (``page * size``)."""
ZENODO_FLOOR = "2013-01-01T00:00:00"
"""Start of the first ``updated`` window (Zenodo opened in 2013)."""
REQUEST_DEADLINE_S = 60.0
"""Per request: background walks may wait this long for a budget token."""
DOI_GROUP = 50
"""DOIs per ``filter=doi:...`` list request."""
MAX_RESUMES = 3
"""Segments one pass starts after refused cursors before the walk ends short (``event=walk_short``)."""
STOP_REASONS = {"rate_limited", "upstream_unavailable"}
"""Failures that end a pass: the budget is spent or upstream is down (the rest waits)."""

PageHook = Callable[[StoredWatch, int], None]


@dataclass
class SyncReport:
    """Counts of one walk: ``requests`` sent, ``stored`` items seen, how many ``changed``/``new``.

    ``complete``: the walk saw every item upstream said there is (or, Zenodo and DOI watches, walked
    every window and group); ``short``: it ended incomplete (its cursors kept expiring; the next pass
    resumes it from its watermark); ``seen`` / ``total``: works the Crossref walk has seen and the
    ``total-results`` upstream answered for it (None for other kinds);
    ``error``: the reason code the walk failed with (its counts are what it did before failing);
    ``stopped``: why a walk ended early without failing; ``not_run``: why a requested watch was not
    walked at all (an earlier walk of the pass hit ``rate_limited`` or ``upstream_unavailable``, or
    ``shutdown``).
    """

    watch_id: int
    kind: str
    mode: str = "full"
    requests: int = 0
    pages: int = 0
    stored: int = 0
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    failed: int = 0
    resumed: bool = False
    complete: bool = False
    short: bool = False
    seen: int | None = None
    total: int | None = None
    stopped: str | None = None
    error: str | None = None
    not_run: str | None = None
    elapsed_s: float = 0.0
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """Plain dict (``--json``, logs)."""
        return asdict(self)


def state_name(watch: StoredWatch) -> str:
    """The ``sync_state`` row of ``watch``."""
    return f"watch:{watch.id}"


def _deadline() -> Deadline:
    return Deadline(REQUEST_DEADLINE_S)


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
    report.stored += 1
    if before is None:
        report.new += 1
    elif changed:
        report.changed += 1
    else:
        report.unchanged += 1


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
            route, _deadline(), params=params, pool="crossref_list", accept=(200, 404)
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


def _log_page(watch: StoredWatch, page: int, items: int, new: int) -> None:
    """The per-page progress line of a walk (``page``: its number within the walk, resumed ones counted)."""
    log.info("event=page watch=%d page=%d items=%d new=%d", watch.id, page, items, new)


def _ended_early(watch: StoredWatch, report: SyncReport, verdict: PageVerdict) -> SyncReport:
    """A walk ended at a page boundary by ``syncd watch stop``, a shutdown, or ``syncd watch rm``."""
    if verdict is PageVerdict.GONE:
        report.stopped = "watch_removed"
        report.notes.append("watch removed: walk ended")
    elif STOP.is_set():
        report.stopped = "shutdown"
        report.notes.append("stopped for shutdown: resumes from the saved position")
    else:
        report.stopped = "stop_requested"
        report.notes.append("stopped by `syncd watch stop`: the next walk resumes from the saved position")
    log.info("event=walk_ended watch=%d reason=%s pages=%d", watch.id, report.stopped, report.pages)
    return report


def _resume_note(walk: CursorWalk, why: str, from_watermark: bool) -> str:
    if from_watermark:
        return f"{why}: resumed from the watermark {walk.watermark} (from-index-date:{walk.since})"
    return f"{why}: walk restarted from its first page (no watermark)"


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
    rows = int(watch.spec.get("rows") or 20)
    route = watch.spec.get("route") or "/works"
    if state and state.cursor and not full:
        report.resumed = True
        walk = CursorWalk.from_position(state.cursor)
    else:
        base = None if full or not (state and state.checkpoint) else state.checkpoint.get("index_date")
        walk = CursorWalk(base=base, since=base, started_at=now)
    report.mode = "incremental" if walk.base else "full"
    trusted = False  # this segment started at cursor=* in this call, each cursor sent within its life
    resumes = 0

    def resume(why: str) -> bool:
        """Start the next segment (False: too many this pass, the walk ends short)."""
        nonlocal resumes, trusted
        resumes += 1
        if resumes > MAX_RESUMES:
            return False
        pages_before = walk.pages
        from_watermark = walk.resume()
        trusted = False
        log.warning(
            "event=cursor_expired watch=%d why=%r pages_done=%d resume=%s since=%s seen=%d",
            watch.id, why, pages_before, "watermark" if from_watermark else "restart", walk.since, walk.seen,
        )  # fmt: skip
        report.notes.append(_resume_note(walk, why, from_watermark))
        save_sync_state(svc.store, name, cursor=walk.position(), progress=_progress(walk))
        return True

    if walk.token != "*" and not walk.resendable(time.time()):
        resume("saved cursor not sent again (older than its life, or a scroll id)")
    start_walk(svc.store, name, cursor=walk.position(), started_at=walk.started_at, now=now)
    guard = WalkGuard(rows=rows)
    short_before = False  # the page before this one held fewer works than ``rows``
    while True:
        sent = walk.token
        if sent == "*":
            trusted, short_before = True, False
            guard = WalkGuard(rows=rows)
        elif walk.issued_at is not None and time.time() - walk.issued_at > CURSOR_TTL_S:
            if not resume(f"cursor expired (older than {CURSOR_TTL_S:g} s)"):
                return _walk_short(svc, watch, report, walk, "cursors kept expiring")
            continue
        report.requests += 1  # counted when sent: a failed request counts too
        answer = _crossref_page(svc, route, crossref_params(watch.spec, sent, walk.since))
        answered_at = time.time()  # a cursor's life counts from upstream's answer, not from storing
        if isinstance(answer, int):
            if sent == "*":
                raise NotFound(f"crossref: {route} does not exist", reason="not_found")
            if not resume(f"cursor expired (refused with HTTP {answer})"):
                return _walk_short(svc, watch, report, walk, "cursors kept expiring")
            continue
        items = [i for i in answer["items"] if isinstance(i, dict)]
        fresh = guard.fresh(items)
        new_before = report.new
        for item in items:
            _store_work(svc, item, report)
        walk.take(fresh, answer.get("total-results"))
        if items:
            walk.pages += 1
            report.pages += 1
        _log_page(watch, walk.pages, len(items), report.new - new_before)
        nxt = answer.get("next-cursor")
        last = not items or not isinstance(nxt, str) or not nxt
        short_page = 0 < len(items) < rows
        if walk.accounted or last:
            if walk.accounted or (trusted and (short_page or short_before)):
                break  # seen accounts for total-results, or a fresh chain ended on its own (short) last page
            # an empty or last page from a resumed cursor while works are still due: expired, not the end
            if not resume(f"cursor expired (its last page came with {walk.seen} of {walk.total} works seen)"):
                return _walk_short(svc, watch, report, walk, "cursors kept expiring")
            continue
        stuck = guard.stop_reason(len(items), len(fresh), answer.get("total-results"))
        if stuck is not None:
            return _walk_stopped(svc, watch, report, stuck, guard, walk)
        short_before = short_page
        walk.advance(sent, nxt, answered_at)
        verdict = page_done(
            svc.store, name, cursor=walk.position(), progress=_progress(walk), shutdown=STOP.is_set()
        )
        if on_page is not None:
            on_page(watch, walk.pages)
        if verdict is not PageVerdict.GO:
            return _ended_early(watch, report, verdict)
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


# --- Zenodo community / query watches --------------------------------------------------------------


def _iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S")


def _parse_iso(value: str) -> float:
    return dt.datetime.fromisoformat(value).replace(tzinfo=dt.UTC).timestamp()


def zenodo_page_size(svc: Services) -> int:
    """Hits per page: 100 with a token, else 25 (Zenodo's guest page limit)."""
    return 100 if svc.settings.zenodo.token is not None else 25


def zenodo_params(spec: dict[str, Any], start: str, end: str, page: int, size: int) -> dict[str, str]:
    """Query parameters of one page of a Zenodo watch within the ``updated`` window ``[start, end)``."""
    window = f'updated:["{start}" TO "{end}"}}'
    q = f"({spec['q']}) AND {window}" if spec.get("q") else window
    params = {"q": q, "sort": "updated-asc", "size": str(size), "page": str(page)}
    if spec.get("community"):
        params["communities"] = spec["community"]
    if spec.get("all_versions"):
        params["allversions"] = "true"
    return params


def _hits_total(body: dict[str, Any]) -> int:
    total = body["hits"].get("total")
    if isinstance(total, dict):  # OpenSearch shape {"value": n, "relation": "eq"}
        total = total.get("value")
    return int(total) if isinstance(total, int | float) else len(body["hits"]["hits"])


def _store_record(svc: Services, hit: dict[str, Any], report: SyncReport) -> None:
    try:
        keys = zenodo_norm.record_keys(hit)
        content = record_content(hit, None)
    except (MalformedResponse, ValueError, KeyError, TypeError):
        report.failed += 1
        return
    before = svc.store.get(ZENODO_RECORD, keys.recid)
    try:
        _, changed = svc.store.put_content(content)
    except MalformedResponse as exc:  # a poison hit (or a held-back shrink) never stops the walk
        log.warning("event=skip_item kind=zenodo_record recid=%s reason=%s", keys.recid, exc.reason)
        report.failed += 1
        return
    if keys.concept_recid and keys.is_latest:
        svc.store.set_concept(keys.concept_recid, keys.recid)
        supersede_older(svc.store, keys.concept_recid, keys.recid)
    report.stored += 1
    if before is None:
        report.new += 1
    elif changed:
        report.changed += 1
    else:
        report.unchanged += 1


def sync_zenodo(
    svc: Services, watch: StoredWatch, *, now: float | None = None, on_page: PageHook | None = None,
    full: bool = False, report: SyncReport | None = None,
) -> SyncReport:  # fmt: skip
    """Walk one Zenodo community/query watch in ``updated`` windows (see the module docstring).

    ``report``: filled in place when given, so a caller keeps the counts of a walk that raised.
    """
    name = state_name(watch)
    state = get_sync_state(svc.store, name)
    now = time.time() if now is None else now
    report = SyncReport(watch.id, watch.kind) if report is None else report
    size = zenodo_page_size(svc)
    cur = state.cursor if state and state.cursor and not full else None
    if cur:
        report.resumed = True
        windows: list[list[str]] = cur["windows"]
        page: int = cur["page"]
        started = cur["started_at"]
    else:
        start = ZENODO_FLOOR if full or not (state and state.checkpoint) else state.checkpoint["updated"]
        end = _iso(now)
        windows, page, started = ([[start, end]] if start < end else []), 1, now
    cursor = {"windows": windows, "page": page, "started_at": started}
    start_walk(svc.store, name, cursor=cursor, started_at=started, now=now)
    report.mode = "incremental" if windows and windows[0][0] != ZENODO_FLOOR else "full"
    while windows:
        start, end = windows[0]
        report.requests += 1  # counted when sent: a failed request counts too
        body = svc.upstreams.zenodo.search(zenodo_params(watch.spec, start, end, page, size), _deadline())
        total = _hits_total(body)
        hits = [h for h in body["hits"]["hits"] if isinstance(h, dict)]
        if page == 1 and total > ZENODO_MAX_RESULTS:
            a, b = _parse_iso(start), _parse_iso(end)
            if b - a >= 2:
                mid = _iso(a + (b - a) / 2)
                windows[:1] = [[start, mid], [mid, end]]
                save_sync_state(
                    svc.store, name, cursor={"windows": windows, "page": 1, "started_at": started}
                )
                continue
            report.notes.append(f"window {start} holds {total} records; only {ZENODO_MAX_RESULTS} reachable")
        new_before = report.new
        for hit in hits:
            _store_record(svc, hit, report)
        report.pages += 1
        _log_page(watch, report.pages, len(hits), report.new - new_before)
        reachable = min(total, ZENODO_MAX_RESULTS)
        shutdown = STOP.is_set()
        if hits and page * size < reachable:
            page += 1
            cursor = {"windows": windows, "page": page, "started_at": started}
            verdict = page_done(svc.store, name, cursor=cursor, shutdown=shutdown)
        else:
            windows = windows[1:]
            page = 1
            cursor = {"windows": windows, "page": 1, "started_at": started}
            verdict = page_done(
                svc.store, name, cursor=cursor, checkpoint={"updated": end}, shutdown=shutdown
            )
        if on_page is not None:
            on_page(watch, report.pages)
        if verdict is PageVerdict.GONE or (verdict is PageVerdict.STOP and windows):
            return _ended_early(watch, report, verdict)
    finished = time.time()
    save_sync_state(svc.store, name, cursor=None, status="ok", last_success_at=finished, now=finished)
    report.complete = True
    return report


# --- DOI watches -----------------------------------------------------------------------------------


def sync_dois(
    svc: Services, watches: list[StoredWatch], *, now: float | None = None, report: SyncReport | None = None
) -> SyncReport:
    """Fetch the watched DOIs not yet stored: Crossref ones grouped into list requests.

    ``report``: filled in place when given, so a caller keeps the counts of a pass that raised.
    """
    report = SyncReport(0, "doi") if report is None else report
    crossref: list[str] = []
    zenodo: list[str] = []
    for w in watches:
        doi = w.spec["doi"]
        try:
            ref = parse_record_ref(doi)
        except InvalidInput:
            ref = None
        if ref is not None and ref.recid is not None:
            if (
                svc.store.get(ZENODO_RECORD, ref.recid) is None
                and svc.store.concept_latest(ref.recid) is None
            ):
                zenodo.append(doi)
        elif svc.store.get(CROSSREF_WORK, doi) is None:
            crossref.append(doi)
    for i in range(0, len(crossref), DOI_GROUP):
        group = crossref[i : i + DOI_GROUP]
        listed = [d for d in group if filter_safe(d)]  # a comma DOI would split the filter: fetched alone
        if len(listed) > 1:
            params = {"filter": ",".join(f"doi:{d}" for d in listed), "rows": str(len(listed))}
            try:
                message = svc.upstreams.crossref.list_works(params, _deadline())
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
                fetch_work(svc.upstreams.crossref, svc.store, parsed, None, _deadline())
                report.requests += 1
                report.stored += 1
    for doi in zenodo:
        with contextlib.suppress(NotFound):
            get_record(svc, parse_record_ref(doi), _deadline())
        report.requests += 1
        report.stored += 1
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
    if watch.kind != "doi" and walked_elsewhere(get_sync_state(svc.store, state_name(watch))):
        log.info("event=walk_skipped watch=%d reason=running_elsewhere", watch.id)
        report.stopped = "running_elsewhere"
        report.notes.append("walked by another process")
        return report
    try:
        if watch.kind == "crossref_query":
            sync_crossref_query(svc, watch, now=now, on_page=on_page, full=full, report=report)
        elif watch.kind in ("zenodo_community", "zenodo_query"):
            sync_zenodo(svc, watch, now=now, on_page=on_page, full=full, report=report)
        elif watch.kind == "doi":
            sync_dois(svc, [watch], now=now, report=report)
            save_sync_state(svc.store, state_name(watch), status="ok", last_success_at=time.time())
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
    dois = [w for w in watches if w.kind == "doi"]
    if dois:
        rep = SyncReport(0, "doi")
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
        if w.kind == "doi":
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
