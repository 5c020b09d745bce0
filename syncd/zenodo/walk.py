"""The Zenodo walkers: community and query watches, and the watched DOIs that are Zenodo records.

Zenodo community and query watches:
    Walked in windows of ``updated`` (``updated:["A" TO "B"}``, sorted ``updated-asc``), paged with
    ``page``/``size``. A window whose total exceeds Zenodo's 10,000-result limit is split in half
    until each part fits. Windows are walked oldest first; when one completes, ``checkpoint =
    {"updated": <its end>}``, so a restart or the next pass continues from there (incremental).
    ``sync_state.cursor`` holds the pending windows and the page within the current one.

DOI watches:
    A Zenodo record DOI (``10.5281/zenodo.<recid>``) not yet stored (neither as a record nor as a
    concept's latest version) is fetched through the single record lookup (a miss is stored as one).

Every request goes through the clients of the :class:`~syncd.road.services.Services` bundle, so through
the shared budget (the daemon's bundle is non-interactive and leaves the interactive reserve).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import time
from collections.abc import Sequence
from typing import Any

from syncd.errors import InvalidInput, MalformedResponse, NotFound
from syncd.road.services import Services
from syncd.store.repo import Store
from syncd.store.watches import (
    PageVerdict,
    StoredWatch,
    get_sync_state,
    page_done,
    save_sync_state,
    start_walk,
)
from syncd.walks.walker import (
    STOP,
    DoiWalker,
    PageHook,
    SyncReport,
    Walker,
    deadline,
    ended_early,
    log_page,
    state_name,
)
from syncd.zenodo import views as zenodo_norm
from syncd.zenodo.lookups import get_record
from syncd.zenodo.lookups_fetch import record_content, supersede_older
from syncd.zenodo.names import ZENODO_RECORD
from syncd.zenodo.params_id import RecordRef, parse_record_ref
from syncd.zenodo.settings import SECTION
from syncd.zenodo.walk_specs import ZENODO_COMMUNITY, ZENODO_QUERY

__all__ = [
    "DOIS",
    "WALKERS",
    "ZENODO_FLOOR",
    "ZENODO_MAX_RESULTS",
    "fetch_dois",
    "sync_zenodo",
    "zenodo_page_size",
    "zenodo_params",
]

log = logging.getLogger("syncd.sync")  # the walkers' log lines keep the name they always had

ZENODO_MAX_RESULTS = 10_000
"""Zenodo answers at most this many hits per query (``page * size``)."""
ZENODO_FLOOR = "2013-01-01T00:00:00"
"""Start of the first ``updated`` window (Zenodo opened in 2013)."""


def _iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S")


def _parse_iso(value: str) -> float:
    return dt.datetime.fromisoformat(value).replace(tzinfo=dt.UTC).timestamp()


def zenodo_page_size(svc: Services) -> int:
    """Hits per page: 100 with a token, else 25 (Zenodo's guest page limit)."""
    return 100 if SECTION.of(svc.settings).token is not None else 25


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
    report.count_stored(before is None, changed)


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
        body = svc.upstreams.zenodo.search(zenodo_params(watch.spec, start, end, page, size), deadline())
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
        log_page(watch, report.pages, len(hits), report.new - new_before)
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
            return ended_early(watch, report, verdict)
    finished = time.time()
    save_sync_state(svc.store, name, cursor=None, status="ok", last_success_at=finished, now=finished)
    report.complete = True
    return report


# --- DOI watches -----------------------------------------------------------------------------------


def _record_ref(doi: str) -> RecordRef | None:
    """The record a watched DOI names, when it is a Zenodo record DOI (else None)."""
    try:
        ref = parse_record_ref(doi)
    except InvalidInput:
        return None
    return ref if ref.recid is not None else None


def _missing(store: Store, doi: str) -> bool:
    ref = _record_ref(doi)
    recid = ref.recid if ref is not None else None
    return recid is None or (store.get(ZENODO_RECORD, recid) is None and store.concept_latest(recid) is None)


def fetch_dois(svc: Services, dois: Sequence[str], report: SyncReport, now: float | None = None) -> None:
    """Fetch the watched Zenodo record DOIs ``dois`` (each not stored) one by one; a 404 stored as a miss.

    ``now`` is unused (the record lookup stores with the clock).

    Raises:
        UpstreamError, BudgetExhausted: a lookup failed.
    """
    for doi in dois:
        with contextlib.suppress(NotFound):
            get_record(svc, parse_record_ref(doi), deadline())
        report.requests += 1
        report.stored += 1


DOIS = DoiWalker(claims=lambda doi: _record_ref(doi) is not None, missing=_missing, fetch=fetch_dois)
"""Watched Zenodo record DOIs (:mod:`syncd.registry` lists it)."""

WALKERS: dict[str, Walker] = {ZENODO_COMMUNITY: sync_zenodo, ZENODO_QUERY: sync_zenodo}
"""The Zenodo watch kinds and their walker (:mod:`syncd.registry` lists them)."""
