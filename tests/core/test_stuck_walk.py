"""Issue 14 case 3, issue 30.1: a cursor walk upstream never ends is stopped, bounded, logged,
checkpoint kept; judged by its items (no new DOI, past total-results), never by a repeated cursor.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import urlencode

import pytest
from click.testing import CliRunner, Result

from syncd.cli import cli
from syncd.config import Settings
from syncd.crossref.walk import crossref_params
from syncd.crossref.walk_specs import crossref_spec
from syncd.passes import watches as watch_mod
from syncd.passes.sync import sync_watch
from syncd.road.services import Services
from syncd.store.watches import get_sync_state, save_sync_state
from syncd.walks.cursor import STUCK_PAGES
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.conftest import corpus_json
from tests.core.test_sync import daemon_cache  # noqa: F401  (fixture: the daemon's Services over the fake)
from tests.fakeupstream import FakeUpstream


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


def test_a_repeated_cursor_is_no_reason_to_stop_but_a_walk_with_no_new_works_is_cli(
    env: Settings,  # noqa: F811
    fake: FakeUpstream,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`watch add crossref --filter prefix:10.2222 --rows 2`. Crossref answers `next-cursor: "STUCK"` on
    every page (a scroll id does: repeating it is no fault). First walk: `total-results: 2`, the first
    page accounts for both works: complete in 1 request, checkpoint set. Then Crossref says 10 works
    but keeps answering the same 2: after STUCK_PAGES pages in a row with no new DOI the walk stops
    (`event=walk_stopped ... reason=no_new_items`, 1 + 3 requests), shows `stopped:no_new_items` with
    seen / total `2 / 10` and keeps its checkpoint; both works are stored.
    """
    added = json.loads(
        run("watch", "add", "crossref", "--filter", "prefix:10.2222", "--rows", "2", "--json").stdout
    )
    assert added[0]["watch"] == "/works filter=prefix:10.2222"
    fake.set_body("crossref", "/works", _page(["10.2222/a", "10.2222/b"], "STUCK", 2))
    first = json.loads(run("watch", "sync", "--json").stdout)
    assert [(r["stored"], r["requests"], r["outcome"]) for r in first] == [(2, 1, "complete")]
    checkpoint = json.loads(run("watch", "ls", "--json").stdout)[0]["checkpoint"]
    assert checkpoint["index_date"]
    fake.set_body("crossref", "/works", _page(["10.2222/a", "10.2222/b"], "STUCK", 10))
    fake.reset_log()
    with caplog.at_level(logging.INFO, logger="syncd"):
        res = run("--log-level", "INFO", "watch", "sync", "--json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)[0]
    assert (report["requests"], report["stopped"], report["complete"]) == (
        1 + STUCK_PAGES,
        "no_new_items",
        False,
    )
    assert fake.count("/works", service="crossref") == 1 + STUCK_PAGES
    assert "event=walk_stopped watch=1 reason=no_new_items" in caplog.text
    listed = json.loads(run("watch", "ls", "--json").stdout)[0]
    assert listed["status"] == "stopped:no_new_items" and listed["checkpoint"] == checkpoint
    assert listed["progress"] == "2 / 10"
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
    """Fresh cursors every page but the same 2 DOIs again (of 10 announced): the walk stops after
    1 + STUCK_PAGES requests (`no_new_items`); the position is cleared and the previous checkpoint
    is left as it was.
    """
    spec = crossref_spec(filters=["prefix:10.2222"], rows=2)
    w, _ = watch_mod.add(daemon_cache.store, "crossref_query", spec)
    save_sync_state(daemon_cache.store, f"watch:{w.id}", checkpoint={"index_date": "2026-11-01"})
    same = ["10.2222/a", "10.2222/b"]
    cursors = ["*", "C1", "C2", "C3", "C4", "C5"]
    for n, cursor in enumerate(cursors[:-1]):
        params = crossref_params(spec, cursor, "2026-11-01")
        fake.set_body("crossref", "/works?" + urlencode(params), _page(same, cursors[n + 1], 10))
    with caplog.at_level(logging.INFO, logger="syncd"):
        report = sync_watch(daemon_cache, w)
    assert (report.requests, report.stored, report.stopped) == (4, 8, "no_new_items")
    assert f"event=walk_stopped watch={w.id} reason=no_new_items" in caplog.text
    state = get_sync_state(daemon_cache.store, f"watch:{w.id}")
    assert state is not None and state.cursor is None and state.checkpoint == {"index_date": "2026-11-01"}


def test_a_walk_reading_past_total_results_is_stopped(
    daemon_cache: Services,  # noqa: F811
    fake: FakeUpstream,
) -> None:
    """`total-results: 10`, rows 2, but after the first page every page brings one new work and one
    seen again, so the walk never accounts for the 10 nor goes STUCK_PAGES pages without a new one: it
    reads 10 plus a margin of one page (2) and stops at the seventh page (`past_total`, 14 read, 8
    new), its position cleared.
    """
    spec = crossref_spec(filters=["prefix:10.2222"], rows=2)
    w, _ = watch_mod.add(daemon_cache.store, "crossref_query", spec)
    chain = [("*", _page(["10.2222/a", "10.2222/p0"], "C1", 10))] + [
        (f"C{n}", _page(["10.2222/a", f"10.2222/p{n}"], f"C{n + 1}", 10)) for n in range(1, 12)
    ]
    _serve_chain(fake, spec, chain)
    report = sync_watch(daemon_cache, w)
    assert (report.requests, report.new, report.stopped) == (7, 8, "past_total")
    state = get_sync_state(daemon_cache.store, f"watch:{w.id}")
    assert state is not None and state.status == "stopped:past_total" and state.checkpoint is None
    assert state.cursor is None
