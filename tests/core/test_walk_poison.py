"""A watch walk stores every readable item of a page and skips a poison one: it never stops the walk.

Found by a newcomer on the recorded member-98 works page: its fifth item, the journal issue
10.1002/humu.2018.39.issue-6, has no ``title`` (real Crossref journal-issue records often have none);
the store refused it as a hollow body and the whole walk failed on that page at every pass.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest

from syncd.crossref.walk import crossref_params
from syncd.passes import watches as watch_mod
from syncd.passes.sync import sync_watch
from syncd.registry import open_services
from syncd.road.services import Services
from syncd.store.repo import Store
from tests.conftest import corpus_json, make_settings
from tests.fakeupstream import FakeUpstream

MEMBER_98 = corpus_json("crossref/work-list/members-98-works_rows-5_cursor-star.json")
ISSUE = "10.1002/humu.2018.39.issue-6"
FAST = {pool: {"per_s": 100, "burst": 100, "in_flight": 5} for pool in ("crossref_list", "crossref_single")}


@pytest.fixture
def daemon_cache(fake: FakeUpstream, db_url: str) -> Iterator[Services]:
    """The daemon's view of a fresh store, with a generous test budget."""
    settings = make_settings(fake, db_url, budget=FAST)
    store = Store.open(settings.database_url)
    svc = open_services(settings, store, interactive=False)
    yield svc
    svc.close()
    store.close()


def _page(items: list[dict[str, Any]], next_cursor: str) -> dict[str, Any]:
    message = {"total-results": len(items), "items": items, "items-per-page": 5, "next-cursor": next_cursor}
    return {"status": "ok", "message-type": "work-list", "message-version": "1.0.0", "message": message}


def _serve(fake: FakeUpstream, spec: dict[str, Any], items: list[dict[str, Any]]) -> None:
    fake.set_body("crossref", f"{spec['route']}?" + urlencode(crossref_params(spec, "*")), _page(items, "p2"))
    fake.set_body("crossref", f"{spec['route']}?" + urlencode(crossref_params(spec, "p2")), _page([], "p2"))


def test_untitled_journal_issue_is_stored_by_the_walk(daemon_cache: Services, fake: FakeUpstream) -> None:
    """Walking /members/98/works (rows 5): all 5 recorded items are stored, the untitled journal issue
    included (type journal-issue, no title), and the walk completes.
    """
    spec = {"route": "/members/98/works", "rows": 5}
    items = MEMBER_98["message"]["items"]
    assert [i["DOI"] for i in items][-1] == ISSUE and "title" not in items[-1]
    _serve(fake, spec, items)
    w, _ = watch_mod.add(daemon_cache.store, "crossref_query", spec)
    report = sync_watch(daemon_cache, w)
    assert (report.stored, report.new, report.failed, report.complete) == (5, 5, 0, True)
    issue = daemon_cache.store.get("crossref_work", ISSUE)
    assert issue is not None and issue.status == "ok" and issue.title is None


def test_a_poison_item_is_skipped_and_logged_the_rest_stored(
    daemon_cache: Services, fake: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    """An item with no type among the 5 (a hollow body the store refuses) is counted failed and logged
    at WARNING with its DOI; the other 4 are stored and the walk completes.
    """
    spec = {"route": "/members/98/works", "rows": 5}
    items = copy.deepcopy(MEMBER_98["message"]["items"])
    poison = items[1]["DOI"].lower()
    del items[1]["type"]
    _serve(fake, spec, items)
    w, _ = watch_mod.add(daemon_cache.store, "crossref_query", spec)
    with caplog.at_level(logging.WARNING, logger="syncd.sync"):
        report = sync_watch(daemon_cache, w)
    assert (report.stored, report.failed, report.complete) == (4, 1, True)
    assert daemon_cache.store.get("crossref_work", poison) is None
    assert any(f"event=skip_item kind=crossref_work doi={poison}" in r.message for r in caplog.records)
