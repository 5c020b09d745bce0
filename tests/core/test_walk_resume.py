"""Issues 30.1/30.4, 29.1, 27.2: Crossref walks finish against real cursor behaviour.

The fake upstream answers a Crossref list route by cursor from synthetic works (a real corpus work with
its DOI, title and ``indexed`` time changed; :meth:`tests.fakeupstream.FakeUpstream.serve_cursor_walk`):
a scroll id that stays the same on every page (as the recorded widget chain shows), cursors that die
after their time to live (the clock moved by freezegun, never slept), and each way an expired cursor
has been answered (404, 400, 500, an empty 200).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner, Result
from freezegun import freeze_time

from syncd.cli import cli
from syncd.cli.watch_commands import _outcome
from syncd.config import Settings
from syncd.crossref.walk import MAX_RESUMES
from syncd.crossref.walk_specs import crossref_spec
from syncd.passes import watches as watch_mod
from syncd.passes.sync import sync_watch
from syncd.road.services import Services
from syncd.store.watches import StoredWatch, get_sync_state, save_sync_state
from syncd.walks.cursor import CURSOR_TTL_S
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.conftest import corpus_json
from tests.core.test_sync import daemon_cache  # noqa: F401  (fixture: the daemon's Services over the fake)
from tests.fakeupstream import FakeUpstream

BASE_WORK = "crossref/work/10.1002_jor.1100150407.json"
PREFIX = "10.5555"
DAY0 = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
NOW = "2026-12-15 12:00:00"


def works(n: int, per_day: int) -> list[dict[str, Any]]:
    """``n`` works made from a real corpus work: DOI ``10.5555/walk.<i>``, ``per_day`` indexed a day.

    Indexed times rise with ``i`` (every 60 s within a day), so ``sort=indexed`` keeps the DOI order.
    """
    base = corpus_json(BASE_WORK)["message"]
    out = []
    for i in range(n):
        moment = DAY0 + dt.timedelta(days=i // per_day, seconds=60 * (i % per_day))
        indexed = {
            "date-parts": [[moment.year, moment.month, moment.day]],
            "date-time": moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "timestamp": int(moment.timestamp() * 1000),
        }
        # a shallow copy: the fake only serializes a work, nothing changes the parts the works share
        out.append({**base, "DOI": f"{PREFIX}/walk.{i:05d}", "title": [f"Walk work {i}"], "indexed": indexed})
    return out


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), obj={})


def _stored(svc: Services, n: int) -> int:
    return sum(svc.store.get("crossref_work", f"{PREFIX}/walk.{i:05d}") is not None for i in range(n))


class Killed(Exception):
    """Stands for the process dying right after a page was stored."""


def _kill_after(pages: int) -> Any:
    def hook(_watch: StoredWatch, done: int) -> None:
        if done == pages:
            raise Killed

    return hook


@pytest.fixture
def clock() -> Iterator[Any]:
    with freeze_time(NOW, tick=True) as frozen:
        yield frozen


def test_scroll_cursor_walk_of_30_pages_stores_every_work(
    env: Settings,  # noqa: F811
    fake: FakeUpstream,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 30.1: Crossref answers the same scroll id as `next-cursor` on every page; `watch sync`
    walks all 30 pages (300 works, rows 10) in 30 requests and ends `complete`, every work stored;
    `watch ls` shows 300 / 300 and the watermark (the indexed time of the last work).
    """
    walk = fake.serve_cursor_walk("/works", works(300, per_day=25), style="scroll")
    monkeypatch.setenv("SYNCD_BUDGET__CROSSREF_LIST__PER_S", "100")
    monkeypatch.setenv("SYNCD_BUDGET__CROSSREF_LIST__BURST", "100")
    added = run("watch", "add", "crossref", "--filter", f"prefix:{PREFIX}", "--rows", "10", "--json")
    assert added.exit_code == 0, added.output
    res = run("watch", "sync", "--json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)[0]
    outcome = (report["outcome"], report["requests"], report["pages"], report["new"])
    assert outcome == ("complete", 30, 30, 300)
    assert (report["seen"], report["total"]) == (300, 300)
    cursors = [r.query["cursor"] for r in fake.requests if r.service_path == "/works"]
    assert cursors[0] == "*" and len(set(cursors[1:])) == 1 and len(cursors) == 30  # one scroll id
    assert all(r.query["sort"] == "indexed" and r.query["order"] == "asc" for r in fake.requests)
    assert walk.opened == 1 and walk.refused == 0
    listed = json.loads(run("watch", "ls", "--json").stdout)[0]
    assert (listed["status"], listed["seen"], listed["total"]) == ("ok", 300, 300)
    assert listed["progress"] == "300 / 300"
    assert listed["watermark"] == "2026-11-12T00:24:00.000Z"  # work 299: day 11, minute 24
    shown = json.loads(run("cache", "show", f"{PREFIX}/walk.00299", "--json").stdout)
    assert shown["title"] == "Walk work 299"


@pytest.mark.parametrize("expired", ["empty", "404", "400", "500"])
def test_killed_walk_resumes_from_its_watermark_after_the_cursor_expired(
    daemon_cache: Services,  # noqa: F811
    fake: FakeUpstream,
    clock: Any,
    expired: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issues 29 and 27.2: a walk of 150 works (rows 10, 4 indexed a day, cursors that rotate and die
    after 60 s) is killed after 11 pages; 2 minutes later the resumed walk sends its saved cursor, which
    upstream refuses (an empty `200` while 40 works are due, or 404, 400, 500). That is never the end:
    the walk resumes at `cursor=*` with `from-index-date` the watermark's day, reads that day's 2 stored
    works again (the overlap) and the 40 not yet stored, in 5 pages, and ends complete with all 150
    stored: the resumed pass costs the refused request plus 4 pages not yet stored plus 1 of overlap.
    """
    listed = works(150, per_day=4)
    walk = fake.serve_cursor_walk("/works", listed, style="rotating", ttl_s=60, expired=expired)
    spec = crossref_spec(filters=[f"prefix:{PREFIX}"], rows=10)
    w, _ = watch_mod.add(daemon_cache.store, "crossref_query", spec)
    with pytest.raises(Killed):
        sync_watch(daemon_cache, w, on_page=_kill_after(11))
    state = get_sync_state(daemon_cache.store, f"watch:{w.id}")
    assert state is not None and state.checkpoint is None
    assert (state.seen, state.total, state.watermark) == (110, 150, "2026-11-28T00:01:00.000Z")
    assert _stored(daemon_cache, 150) == 110
    clock.tick(120)
    fake.reset_log()
    with caplog.at_level(logging.WARNING, logger="syncd"):
        report = sync_watch(daemon_cache, w)
    refused = 3 if expired == "500" else 1  # a 500 is tried 3 times (the client's retries) before it counts
    assert walk.refused == refused
    assert report.complete and report.resumed and (report.seen, report.total) == (150, 150)
    not_yet_stored, overlap = 4, 1
    assert report.requests == 1 + not_yet_stored + overlap
    assert len(fake.requests) == refused + not_yet_stored + overlap
    sent = [(r.query["cursor"], r.query["filter"]) for r in fake.requests]
    assert sent[refused] == ("*", f"prefix:{PREFIX},from-index-date:2026-11-28")
    assert _stored(daemon_cache, 150) == 150
    assert f"event=cursor_expired watch={w.id}" in caplog.text and "resume=watermark" in caplog.text
    state = get_sync_state(daemon_cache.store, f"watch:{w.id}")
    assert state is not None and state.status == "ok" and state.cursor is None
    assert state.checkpoint == {"index_date": "2026-12-15"}


def test_a_saved_scroll_id_is_never_sent_again(
    daemon_cache: Services,  # noqa: F811
    fake: FakeUpstream,
    clock: Any,
) -> None:
    """A scroll id's position lives upstream (it may have moved past a page never stored), and this
    one is past its 5 minutes: the resumed walk does not send it (no refused request) and goes straight
    to the watermark, 5 requests for the 40 works left and the 2 of the overlap.
    """
    walk = fake.serve_cursor_walk("/works", works(150, per_day=4), style="scroll")
    spec = crossref_spec(filters=[f"prefix:{PREFIX}"], rows=10)
    w, _ = watch_mod.add(daemon_cache.store, "crossref_query", spec)
    with pytest.raises(Killed):
        sync_watch(daemon_cache, w, on_page=_kill_after(11))
    clock.tick(CURSOR_TTL_S + 60)
    fake.reset_log()
    report = sync_watch(daemon_cache, w)
    assert walk.refused == 0 and report.complete and report.requests == 5
    assert fake.requests[0].query["cursor"] == "*"
    assert fake.requests[0].query["filter"] == f"prefix:{PREFIX},from-index-date:2026-11-28"
    assert _stored(daemon_cache, 150) == 150


def test_a_walk_whose_cursors_keep_expiring_ends_short_and_the_next_pass_finishes_it(
    env: Settings,  # noqa: F811
    daemon_cache: Services,  # noqa: F811
    fake: FakeUpstream,
    clock: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Every page takes longer than the cursor lives (a long budget wait): each cursor is refused with
    an empty `200`. The pass resumes from the watermark MAX_RESUMES times, then ends short: never
    `complete`, `event=walk_short` at warning level with `outcome=incomplete`, the checkpoint unmoved,
    `watch ls` showing seen / total. The next pass (cursors living again) finishes it: 120 stored.
    """
    listed = works(120, per_day=3)
    walk = fake.serve_cursor_walk("/works", listed, style="rotating", ttl_s=60, expired="empty")
    spec = crossref_spec(filters=[f"prefix:{PREFIX}"], rows=10)
    w, _ = watch_mod.add(daemon_cache.store, "crossref_query", spec)
    with caplog.at_level(logging.WARNING, logger="syncd"):
        short = sync_watch(daemon_cache, w, on_page=lambda _w, _p: clock.tick(120))
    assert not short.complete and short.short and _outcome(short) == "incomplete"
    assert walk.refused == MAX_RESUMES + 1
    walk_short = [r for r in caplog.records if r.getMessage().startswith("event=walk_short")]
    assert len(walk_short) == 1 and walk_short[0].levelno == logging.WARNING
    assert "outcome=incomplete" in walk_short[0].getMessage()
    stored_first = _stored(daemon_cache, 120)
    assert (short.seen, short.total, stored_first) == (37, 120, 37)  # 10 a segment, less 1 of overlap
    listed_row = json.loads(run("watch", "ls", "--json").stdout)[0]
    assert (listed_row["status"], listed_row["progress"]) == ("incomplete", "37 / 120")
    assert listed_row["checkpoint"] is None and listed_row["resumable"] is True
    done = sync_watch(daemon_cache, w)
    assert done.complete and done.resumed and (done.seen, done.total) == (120, 120)
    assert fake.requests[-done.requests].query["cursor"] == "*"  # from the watermark, not a dead cursor
    assert _stored(daemon_cache, 120) == 120
    state = get_sync_state(daemon_cache.store, f"watch:{w.id}")
    assert state is not None and state.status == "ok" and state.checkpoint == {"index_date": "2026-12-15"}


def test_an_incremental_pass_never_moves_its_checkpoint_past_works_it_has_not_stored(
    daemon_cache: Services,  # noqa: F811
    fake: FakeUpstream,
    clock: Any,
) -> None:
    """An incremental pass (checkpoint 2026-12-01) killed after its first page and resumed past its
    cursor's life: its first page says 30 works were indexed since; the checkpoint stays 2026-12-01
    until all 30 are stored, then moves to the day the pass started (2026-12-15). The 90 works
    indexed before 2026-12-01 are never asked for.
    """
    listed = works(120, per_day=3)
    fake.serve_cursor_walk("/works", listed, style="rotating", ttl_s=60, expired="empty")
    spec = crossref_spec(filters=[f"prefix:{PREFIX}"], rows=10)
    w, _ = watch_mod.add(daemon_cache.store, "crossref_query", spec)
    name = f"watch:{w.id}"
    save_sync_state(daemon_cache.store, name, checkpoint={"index_date": "2026-12-01"}, status="ok")
    with pytest.raises(Killed):
        sync_watch(daemon_cache, w, on_page=_kill_after(1))
    state = get_sync_state(daemon_cache.store, name)
    assert state is not None and state.checkpoint == {"index_date": "2026-12-01"}
    assert (state.seen, state.total) == (10, 30)
    assert fake.requests[0].query["filter"] == f"prefix:{PREFIX},from-index-date:2026-12-01"
    clock.tick(120)
    resumed = sync_watch(daemon_cache, w)
    assert resumed.complete and resumed.mode == "incremental" and (resumed.seen, resumed.total) == (30, 30)
    assert _stored(daemon_cache, 120) == 30
    assert all(daemon_cache.store.get("crossref_work", f"{PREFIX}/walk.{i:05d}") for i in range(90, 120))
    state = get_sync_state(daemon_cache.store, name)
    assert state is not None and state.checkpoint == {"index_date": "2026-12-15"}
