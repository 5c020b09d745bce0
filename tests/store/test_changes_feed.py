"""Issue 16 "done when" (parts 1, 3, 4): a retraction found on revalidation tells the lab, once, everywhere.

A stored copy of the Lancet hydroxychloroquine paper 10.1016/s0140-6736(20)31180-6 from before its
retraction (the corpus body without its two retraction entries and ``RETRACTED:`` title prefix),
validated 8 days ago (past ``ttl.crossref_work``), is revalidated through the real path: a
``crossref_get_work`` call through an in-memory MCP client session, whose lookup finds it stale and asks
the fake upstream, which serves the recorded (retracted) body. That yields exactly one change row, one
``notifications/resources/updated`` for ``syncd://changes`` to the subscribed session, a notice in the
answer, and, the work being watched, one warning line from the daemon's alert pass. The same
revalidation of an unchanged body yields none of them. Times are injected (``put_content(now=...)``).
"""

from __future__ import annotations

import copy
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from mcp import Client

from syncd.config import Settings
from syncd.crossref.lookups import work_content
from syncd.daemon import alerts
from syncd.passes import refresh
from syncd.registry import open_services
from syncd.road.services import Services
from syncd.server.changes import CHANGES_URI
from syncd.store.changes import list_changes
from syncd.store.repo import Store
from syncd.store.watches import add_watch
from syncd.tools.fit import answer_size
from syncd.zenodo.lookups_fetch import record_content
from tests.conftest import corpus_json, make_settings
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

pytestmark = pytest.mark.anyio

LANCET = "10.1016/s0140-6736(20)31180-6"
LANCET_FILE = "crossref/work/10.1016_s0140-6736_20_31180-6.json"
RW_NOTICE = "10.1016/s0140-6736(20)31324-6"
PUBLISHER_NOTICE = "10.1016/s0140-6736(20)31174-0"
DAY = 86_400.0
QUIET_S = 0.5
"""How long a test listens for a notification that must not come (an absence, not a timing rule)."""


def store_lancet(store: Store, *, retracted: bool, age_s: float = 8 * DAY) -> None:
    """Store the Lancet paper as before its retraction (or as recorded now), validated ``age_s`` ago."""
    body = corpus_json(LANCET_FILE)
    if not retracted:
        body = copy.deepcopy(body)
        message = body["message"]
        message["updated-by"] = [u for u in message["updated-by"] if u["type"] != "retraction"]
        message["title"] = [message["title"][0].removeprefix("RETRACTED: ")]
    store.put_content(work_content(LANCET, body["message"], json.dumps(body)), now=time.time() - age_s)


async def events_after(sub: Any, first_within_s: float | None) -> list[Any]:
    """Events of ``sub``: the first awaited up to ``first_within_s`` (None: none expected), QUIET_S more."""
    got: list[Any] = []
    it = sub.__aiter__()
    if first_within_s is not None:
        with anyio.fail_after(first_within_s):
            got.append(await it.__anext__())
    with anyio.move_on_after(QUIET_S):
        while True:
            got.append(await it.__anext__())
    return got


def alert_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("event=alert ")]


async def test_a_revalidated_retraction_is_one_row_one_notification_one_alert_and_a_notice(
    cache: Services, store: Store, settings: Settings, fake: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    """Retraction found on revalidation: 1 change row, 1 resource notification, 1 warning line, a notice."""
    caplog.set_level(logging.WARNING, logger="syncd.alerts")
    add_watch(store, "doi", {"doi": LANCET})
    assert alerts.run_pass(store, settings) == 0  # the daemon's first pass starts the cursor
    store_lancet(store, retracted=False)
    fake.reset_log()
    server = mcp_server(cache)
    async with Client(server) as client, client.listen(resource_subscriptions=[CHANGES_URI]) as sub:
        result = await client.call_tool("crossref_get_work", {"doi": LANCET})
        events = await events_after(sub, first_within_s=5)
    assert [e.uri for e in events] == [CHANGES_URI]
    assert fake.count(f"/works/{LANCET}", "crossref") == 1
    data = result.structured_content
    assert data["cache"]["source"] == "upstream"
    assert data["notice"].startswith(
        "Retracted or corrected since syncd first stored this work: "
        f"retraction (notice {RW_NOTICE}, retraction-watch), found "
    )
    assert f"retraction (notice {PUBLISHER_NOTICE}, publisher)" in data["notice"].splitlines()[0]
    assert data["notice"].splitlines()[1].startswith("Updates are recorded against this work:")
    (row,) = list_changes(store)
    assert (row.key, row.types) == (LANCET, ("retraction", "title"))
    assert alerts.run_pass(store, settings) == 1
    (line,) = alert_lines(caplog)
    assert line.startswith(
        f"event=alert type=retraction kind=crossref_work doi={LANCET} notice={RW_NOTICE},{PUBLISHER_NOTICE} "
    )
    assert [r.levelname for r in caplog.records if r.getMessage() == line] == ["WARNING"]
    assert alerts.run_pass(store, settings) == 0  # alerted once
    assert len(alert_lines(caplog)) == 1


async def test_an_unchanged_revalidation_yields_no_row_no_notification_no_alert_no_notice(
    cache: Services, store: Store, settings: Settings, fake: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    """The recorded body stored 8 days ago and revalidated: same content, so nothing is recorded or told."""
    caplog.set_level(logging.WARNING, logger="syncd.alerts")
    add_watch(store, "doi", {"doi": LANCET})
    alerts.run_pass(store, settings)
    store_lancet(store, retracted=True)
    fake.reset_log()
    server = mcp_server(cache)
    async with Client(server) as client, client.listen(resource_subscriptions=[CHANGES_URI]) as sub:
        result = await client.call_tool("crossref_get_work", {"doi": LANCET})
        events = await events_after(sub, first_within_s=None)
    assert events == []
    assert fake.count(f"/works/{LANCET}", "crossref") == 1  # it was revalidated
    assert result.structured_content["cache"]["source"] == "upstream"
    assert "since syncd first stored" not in result.structured_content["notice"]
    assert list_changes(store) == []
    assert alerts.run_pass(store, settings) == 0 and alert_lines(caplog) == []


async def test_a_change_recorded_by_another_process_reaches_subscribers_through_the_poll(
    fake: FakeUpstream, db_url: str
) -> None:
    """A sweep in another process (its own Store) records the retraction; the server's poll notifies once."""
    settings = make_settings(fake, db_url, changes={"poll_s": 0.05})
    server_store, daemon_store = Store.open(db_url), Store.open(db_url)
    served, daemon = open_services(settings, server_store), open_services(settings, daemon_store)
    try:
        store_lancet(daemon_store, retracted=False)
        entry = daemon_store.get("crossref_work", LANCET)
        assert entry is not None
        async with Client(mcp_server(served)) as client:
            async with client.listen(resource_subscriptions=[CHANGES_URI]) as sub:
                outcome = await anyio.to_thread.run_sync(refresh.revalidate, daemon, entry)
                events = await events_after(sub, first_within_s=5)
            assert outcome.result.name == "CHANGED"
            assert [e.uri for e in events] == [CHANGES_URI]
            listed = await client.call_tool("syncd_list_changes", {"since": "1h"})
            assert [c["types"] for c in listed.structured_content["changes"]] == [["retraction", "title"]]
            read = await client.read_resource(CHANGES_URI)
        feed = json.loads(read.contents[0].text)  # type: ignore[union-attr]
        assert [(c["key"], c["watched"]) for c in feed["changes"]] == [(LANCET, False)]
    finally:
        served.close()
        daemon.close()
        server_store.close()
        daemon_store.close()


async def test_list_changes_tool_filters_pages_and_refuses_bad_input(cache: Services, store: Store) -> None:
    """syncd_list_changes: newest first, types/kind/watched filters, a nextCursor page, declared errors."""
    store_lancet(store, retracted=False, age_s=3 * DAY)
    store_lancet(store, retracted=True, age_s=2 * DAY)  # retraction, title
    store_lancet(store, retracted=False, age_s=1 * DAY)  # update_removed, title
    async with Client(mcp_server(cache)) as client:
        first = (await client.call_tool("syncd_list_changes", {"limit": 1})).structured_content
        assert [c["types"] for c in first["changes"]] == [["update_removed", "title"]]
        second = await client.call_tool("syncd_list_changes", {"limit": 1, "cursor": first["nextCursor"]})
        page = second.structured_content
        assert [c["types"] for c in page["changes"]] == [["retraction", "title"]] and "nextCursor" not in page
        only = await client.call_tool("syncd_list_changes", {"types": "retraction"})
        assert [c["items"][0]["doi"] for c in only.structured_content["changes"]] == [RW_NOTICE]
        none = await client.call_tool("syncd_list_changes", {"kind": "zenodo"})
        assert (
            none.structured_content["count"] == 0
            and "No change recorded" in none.structured_content["notice"]
        )
        watched = await client.call_tool("syncd_list_changes", {"watched_only": True})
        assert watched.structured_content["changes"] == []
        recent = await client.call_tool("syncd_list_changes", {"since": "36h"})
        assert recent.structured_content["count"] == 1
        bad = await client.call_tool("syncd_list_changes", {"cursor": "page-2"})
        assert bad.is_error and bad.structured_content["error"]["data"]["reason"] == "invalid_cursor"
        bad = await client.call_tool("syncd_list_changes", {"since": "last week"})
        assert bad.is_error and bad.structured_content["error"]["data"]["reason"] == "invalid_parameter"


def test_a_watched_deletion_alerts_and_runs_the_alert_command(
    fake: FakeUpstream, db_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Zenodo 22931068 (series 22884306 watched by concept DOI) answers 410 spam: deleted, command fed."""
    caplog.set_level(logging.WARNING, logger="syncd.alerts")
    out = tmp_path / "alert.json"
    write = f"import sys; open({str(out)!r}, 'w').write(sys.stdin.read())"
    settings = make_settings(fake, db_url, alerts={"command": [sys.executable, "-c", write]})
    store = Store.open(db_url)
    svc = open_services(settings, store)
    try:
        add_watch(store, "doi", {"doi": "10.5281/zenodo.22884306"})
        alerts.run_pass(store, settings)
        body = corpus_json("zenodo/record/records-22931068_restricted.json")
        store.put_content(record_content(body, json.dumps(body)), now=time.time() - 2 * DAY)
        entry = store.get("zenodo_record", "22931068")
        assert entry is not None
        tombstone = corpus_json("zenodo/error/records-22705918_410_tombstone.json")
        fake.set_body("zenodo", "/records/22931068", tombstone, status=410)
        refresh.revalidate(svc, entry)
        assert alerts.run_pass(store, settings) == 1
    finally:
        svc.close()
        store.close()
    (line,) = alert_lines(caplog)
    assert line.startswith(
        "event=alert type=deleted kind=zenodo_record doi=10.5281/zenodo.22931068 reason=spam "
    )
    sent = json.loads(out.read_text())
    assert (sent["type"], sent["key"], sent["items"][0]["removal_reason"]) == ("deleted", "22931068", "spam")


def test_a_failing_or_hanging_alert_command_is_logged_and_the_pass_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Exit 3 and a command past its timeout each give one event=alert_command_failed line, no exception."""
    caplog.set_level(logging.WARNING, logger="syncd.alerts")
    doc = {"event": "alert", "type": "retraction"}
    assert alerts.run_command([sys.executable, "-c", "raise SystemExit(3)"], doc, 10) is False
    assert alerts.run_command([sys.executable, "-c", "import time; time.sleep(30)"], doc, 0.3) is False
    assert alerts.run_command("/nonexistent/alert-command --x", doc, 1) is False
    failed = [r.getMessage() for r in caplog.records if "event=alert_command_failed" in r.getMessage()]
    assert [m.split()[1] for m in failed] == ["cause=exit", "cause=timeout", "cause=FileNotFoundError"]


def test_an_unwatched_retraction_is_not_alerted(
    store: Store, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """The same retraction recorded for a work on no watch list reaches the feed but no alert line."""
    caplog.set_level(logging.WARNING, logger="syncd.alerts")
    alerts.run_pass(store, settings)
    store_lancet(store, retracted=False, age_s=2 * DAY)
    store_lancet(store, retracted=True, age_s=DAY)
    assert len(list_changes(store)) == 1
    assert alerts.run_pass(store, settings) == 0 and alert_lines(caplog) == []


async def test_a_page_too_large_for_the_answer_budget_is_cut_and_continues(
    cache: Services, store: Store
) -> None:
    """200 changes with long titles pass answer_max_chars: the page is cut, nextCursor resumes right after."""
    for i in range(200):
        store_lancet(store, retracted=i % 2 == 1, age_s=DAY - i)
    async with Client(mcp_server(cache)) as client:
        first = await client.call_tool("syncd_list_changes", {"limit": 200})
        page = first.structured_content
        assert answer_size("".join(c.text for c in first.content), page) <= cache.settings.answer_max_chars
        ids = [c["id"] for c in page["changes"]]
        assert 0 < len(ids) == page["count"] < 199 and page["nextCursor"] == f"before:{ids[-1]}"
        assert "cut to fit answer_max_chars=60,000" in page["notice"]
        rest = await client.call_tool("syncd_list_changes", {"limit": 50, "cursor": page["nextCursor"]})
    assert rest.structured_content["changes"][0]["id"] == ids[-1] - 1
