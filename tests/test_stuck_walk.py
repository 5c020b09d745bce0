"""Issue 14 case 3: a cursor walk upstream never ends is stopped, bounded, logged, checkpoint kept."""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import urlencode

import pytest
from click.testing import CliRunner, Result

from syncd import watch as watch_mod
from syncd.cli import cli
from syncd.config import Settings
from syncd.services import Services
from syncd.store.watches import get_sync_state, save_sync_state
from syncd.sync import crossref_params, sync_watch
from tests.conftest import corpus_json
from tests.fakeupstream import FakeUpstream
from tests.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.test_sync import daemon_cache  # noqa: F401  (fixture: the daemon's Services over the fake)


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), obj={})


def _item(doi: str) -> dict[str, Any]:
    work = corpus_json("crossref/work/10.1002_jor.1100150407.json")["message"]
    return {**work, "DOI": doi, "title": [f"Work {doi}"]}


def _page(dois: list[str], next_cursor: str | None, total: int) -> dict[str, Any]:
    message: dict[str, Any] = {"total-results": total, "items": [_item(d) for d in dois], "items-per-page": 2}
    if next_cursor:
        message["next-cursor"] = next_cursor
    return {"status": "ok", "message-type": "work-list", "message-version": "1.0.0", "message": message}


def test_cursor_stuck_forever_is_stopped_after_two_requests_cli(
    env: Settings,  # noqa: F811
    fake: FakeUpstream,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`watch add crossref --filter prefix:10.2222 --rows 2`, Crossref answering `next-cursor: "STUCK"`,
    `total-results: 2` and the same 2 works on every page: after a complete first walk (checkpoint set),
    the next `watch sync` stops after 2 requests with `event=walk_stopped ... reason=cursor_repeated`,
    the watch shows `stopped:cursor_repeated` and keeps its checkpoint; both works are stored.
    """
    added = json.loads(
        run("watch", "add", "crossref", "--filter", "prefix:10.2222", "--rows", "2", "--json").stdout
    )
    assert added[0]["watch"] == "/works filter=prefix:10.2222"
    fake.set_body("crossref", "/works", _page(["10.2222/a", "10.2222/b"], None, 2))
    first = json.loads(run("watch", "sync", "--json").stdout)
    assert [(r["stored"], r["complete"]) for r in first] == [(2, True)]
    checkpoint = json.loads(run("watch", "ls", "--json").stdout)[0]["checkpoint"]
    assert checkpoint["index_date"]
    fake.set_body("crossref", "/works", _page(["10.2222/a", "10.2222/b"], "STUCK", 2))
    fake.reset_log()
    with caplog.at_level(logging.INFO, logger="syncd"):
        res = run("--log-level", "INFO", "watch", "sync", "--json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)[0]
    assert (report["requests"], report["stopped"], report["complete"]) == (2, "cursor_repeated", False)
    assert fake.count("/works", service="crossref") == 2
    assert "event=walk_stopped watch=1 reason=cursor_repeated" in caplog.text
    listed = json.loads(run("watch", "ls", "--json").stdout)[0]
    assert listed["status"] == "stopped:cursor_repeated" and listed["checkpoint"] == checkpoint
    assert json.loads(run("cache", "show", "10.2222/b", "--json").stdout)["key"] == "10.2222/b"
    assert json.loads(run("cache", "verify", "--json").stdout)["ok"] is True


def _serve_chain(fake: FakeUpstream, spec: dict[str, Any], pages: list[tuple[str, dict[str, Any]]]) -> None:
    for cursor, body in pages:
        fake.set_body("crossref", "/works?" + urlencode(crossref_params(spec, cursor)), body)


def test_new_cursors_with_the_same_items_stop_at_no_new_items(
    daemon_cache: Services,  # noqa: F811
    fake: FakeUpstream,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Fresh cursors every page but the same 2 DOIs again: the walk stops after 2 requests
    (`no_new_items`); the position is cleared and the previous checkpoint is left as it was.
    """
    spec = watch_mod.crossref_spec(filters=["prefix:10.2222"], rows=2)
    w, _ = watch_mod.add(daemon_cache.store, "crossref_query", spec)
    save_sync_state(daemon_cache.store, f"watch:{w.id}", checkpoint={"index_date": "2026-11-01"})
    same = ["10.2222/a", "10.2222/b"]
    chain = [("*", _page(same, "C1", 2)), ("C1", _page(same, "C2", 2)), ("C2", _page(same, "C3", 2))]
    for cursor, body in chain:
        params = crossref_params(spec, cursor, "2026-11-01")
        fake.set_body("crossref", "/works?" + urlencode(params), body)
    with caplog.at_level(logging.INFO, logger="syncd"):
        report = sync_watch(daemon_cache, w)
    assert (report.requests, report.stored, report.stopped) == (2, 4, "no_new_items")
    assert f"event=walk_stopped watch={w.id} reason=no_new_items" in caplog.text
    state = get_sync_state(daemon_cache.store, f"watch:{w.id}")
    assert state is not None and state.cursor is None and state.checkpoint == {"index_date": "2026-11-01"}


def test_a_walk_reading_past_total_results_is_stopped(
    daemon_cache: Services,  # noqa: F811
    fake: FakeUpstream,
) -> None:
    """`total-results: 2` but every page brings 2 new works under a new cursor: the walk reads 2 plus a
    margin of one page (2) and stops at the third page (`past_total`), 3 requests, 6 works stored.
    """
    spec = watch_mod.crossref_spec(filters=["prefix:10.2222"], rows=2)
    w, _ = watch_mod.add(daemon_cache.store, "crossref_query", spec)
    chain = [
        (cursor, _page([f"10.2222/p{n}a", f"10.2222/p{n}b"], f"C{n + 1}", 2))
        for n, cursor in enumerate(["*", "C1", "C2", "C3", "C4"])
    ]
    _serve_chain(fake, spec, chain)
    report = sync_watch(daemon_cache, w)
    assert (report.requests, report.new, report.stopped) == (3, 6, "past_total")
    state = get_sync_state(daemon_cache.store, f"watch:{w.id}")
    assert state is not None and state.status == "stopped:past_total" and state.checkpoint is None
