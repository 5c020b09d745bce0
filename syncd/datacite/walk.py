"""The DataCite walker: watched DataCite queries in ``updated:[A TO B]`` windows, walked by cursor.

A walk asks ``GET /dois?query=(<q>) AND updated:[A TO B]&page[cursor]=...&page[size]=N`` (whole
records: ``include=client``, ``affiliation=true``, ``publisher=true``; ``client-id`` when the watch
names a repository). DataCite's cursor (``page[cursor]=1``, then the token of ``links.next``) walks
by ``created`` ascending past the 10,000 rows ranked pages reach, so one window holds any number of
works. The first walk's window starts at :data:`DATACITE_FLOOR`; when a window is walked through,
``checkpoint = {"updated": B}`` and the next pass asks only ``[B TO now]`` (incremental: DataCite
sends no validators, so the window is what keeps a pass small). ``sync_state.cursor`` holds the
window, the token of the next page and the rows delivered, saved after every stored page, so a
stop, a shutdown or a crash resumes at the next page without asking the stored ones again.

Each record is stored through the store's content-hash check (:func:`syncd.datacite.lookups_content.
work_content`): unchanged ones only bump ``validated_at``. A window ends at an empty page, a page
without a next token, once ``meta.total`` rows are delivered, or at a token that does not move (a
peer's cursor never wedges the walk: the window is closed with a note).
"""

from __future__ import annotations

import datetime as dt
import logging
import time
import urllib.parse
from typing import Any

from syncd.datacite.client import RECORD_PARAMS
from syncd.datacite.lookups_content import work_content
from syncd.datacite.names import DATACITE_WORK
from syncd.datacite.views import stored_body
from syncd.datacite.walk_specs import DATACITE_QUERY, PAGE_SIZE
from syncd.errors import MalformedResponse
from syncd.road.services import Services
from syncd.store.watches import (
    PageVerdict,
    StoredWatch,
    get_sync_state,
    page_done,
    save_sync_state,
    start_walk,
)
from syncd.walks.walker import STOP, PageHook, SyncReport, Walker, deadline, ended_early, log_page, state_name

__all__ = ["DATACITE_FLOOR", "WALKERS", "datacite_params", "next_token", "sync_datacite"]

log = logging.getLogger("syncd.sync")

DATACITE_FLOOR = "2009-01-01T00:00:00Z"
"""Start of the first ``updated`` window (DataCite was founded in December 2009)."""


def _iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def datacite_params(spec: dict[str, Any], start: str, end: str, token: str) -> dict[str, str]:
    """Query parameters of one page of a DataCite watch in the window ``updated:[start TO end]``.

    ``token``: ``"1"`` for the first page, else the ``page[cursor]`` of the previous page's next link.
    """
    window = f"updated:[{start} TO {end}]"
    q = spec.get("q") or "*"
    params = {
        "query": window if q == "*" else f"({q}) AND {window}",
        "page[cursor]": token,
        "page[size]": str(spec.get("rows") or PAGE_SIZE),
        **{k: v for k, v in RECORD_PARAMS.items() if k != "sort"},
    }
    if spec.get("repository"):
        params["client-id"] = str(spec["repository"])
    return params


def next_token(body: dict[str, Any]) -> str | None:
    """The ``page[cursor]`` token of ``links.next`` (None when the page has no next link or token)."""
    link = (body.get("links") or {}).get("next")
    if not isinstance(link, str):
        return None
    values = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query).get("page[cursor]")
    return values[0] if values and values[0] else None


def _store_page(svc: Services, body: dict[str, Any], report: SyncReport) -> int:
    """Store the whole records of one page (each through the content-hash check); rows on the page."""
    rows = [r for r in body.get("data") or [] if isinstance(r, dict)]
    included = body.get("included") if isinstance(body.get("included"), list) else None
    for record in rows:
        doi = str((record.get("attributes") or {}).get("doi") or "").lower()
        try:
            content = work_content(doi, stored_body(record, included))
            before = svc.store.get(DATACITE_WORK, doi)
            _, changed = svc.store.put_content(content)
        except MalformedResponse as exc:  # a poison record (or a held-back shrink) never stops the walk
            log.warning("event=skip_item kind=datacite_work doi=%s reason=%s", doi or "-", exc.reason)
            report.failed += 1
            continue
        report.count_stored(before is None, changed)
    return len(rows)


def sync_datacite(
    svc: Services, watch: StoredWatch, *, now: float | None = None, on_page: PageHook | None = None,
    full: bool = False, report: SyncReport | None = None,
) -> SyncReport:  # fmt: skip
    """Walk one DataCite query watch in an ``updated`` window by cursor (see the module docstring).

    Raises:
        UpstreamRejected: DataCite refused the watch's query (HTTP 400).
        UpstreamError, BudgetExhausted: a page could not be had (the last stored page's position stays).
    """
    name = state_name(watch)
    state = get_sync_state(svc.store, name)
    now = time.time() if now is None else now
    report = SyncReport(watch.id, watch.kind) if report is None else report
    cur = state.cursor if state and state.cursor and not full else None
    if cur:
        report.resumed = True
    else:
        start = DATACITE_FLOOR if full or not (state and state.checkpoint) else state.checkpoint["updated"]
        cur = {"window": [start, _iso(now)], "token": "1", "delivered": 0, "started_at": now}
    start_walk(svc.store, name, cursor=cur, started_at=cur["started_at"], now=now)
    start, end = cur["window"]
    report.mode = "full" if start == DATACITE_FLOOR else "incremental"
    while True:
        report.requests += 1  # counted when sent: a failed request counts too
        answer = svc.upstreams.datacite.get_list(
            "/dois", datacite_params(watch.spec, start, end, cur["token"]), deadline()
        )
        body = answer.body
        new_before = report.new
        rows = _store_page(svc, body, report)
        report.pages += 1
        log_page(watch, report.pages, rows, report.new - new_before)
        total = (body.get("meta") or {}).get("total")
        report.total = int(total) if isinstance(total, int) else report.total
        delivered = cur["delivered"] + rows
        token = next_token(body)
        if token is not None and token == cur["token"]:
            report.notes.append(f"DataCite's cursor did not move at {delivered} rows: window closed")
            token = None
        more = rows > 0 and token is not None and not (isinstance(total, int) and delivered >= total)
        shutdown = STOP.is_set()
        if more:
            cur = {**cur, "token": token, "delivered": delivered}
            verdict = page_done(svc.store, name, cursor=cur, shutdown=shutdown)
        else:
            verdict = page_done(svc.store, name, cursor=None, checkpoint={"updated": end}, shutdown=shutdown)
        if on_page is not None:
            on_page(watch, report.pages)
        if verdict is PageVerdict.GONE or (verdict is PageVerdict.STOP and more):
            return ended_early(watch, report, verdict)
        if not more:
            break
    finished = time.time()
    save_sync_state(svc.store, name, cursor=None, status="ok", last_success_at=finished, now=finished)
    report.complete = True
    return report


WALKERS: dict[str, Walker] = {DATACITE_QUERY: sync_datacite}
"""The DataCite watch kinds and their walker (:mod:`syncd.registry` lists them)."""
