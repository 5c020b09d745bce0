"""The budget driven by what upstream says (issue 27.1): rate-limit headers read (both spellings, doubled
values, hostile values bounded), the lower of the configured and the announced limit (announcements
expire), one in-flight count for Crossref's single and list pools, pacing over a sliding window that
every process shares, Zenodo's remaining/reset pausing the pool before it runs dry, `syncd cache
budget` naming the announced limits and where they came from, and processes at load against a fake
that enforces Crossref's 2026 rules without one 429.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from syncd.budget.buckets import Announcement, Budget, Outcome
from syncd.cli import cli
from syncd.config import Settings
from syncd.crossref.client import CrossrefClient
from syncd.errors import BudgetExhausted, SyncdError, UpstreamRateLimited
from syncd.registry import POOLS
from syncd.store.repo import Store
from syncd.upstream.http import Deadline, UpstreamHTTP
from syncd.upstream.limits import read_announcement
from tests.conftest import corpus_json, make_settings
from tests.fakeupstream import CrossrefRules, FakeUpstream

WORK_DOIS = ("10.1101/598821", "10.7554/elife.01567", "10.1371/journal.pone.0033693")
RUN_S = 3.5
"""Seconds each load worker calls Crossref."""


def _recorded(rel: str) -> dict[str, str]:
    """The recorded headers of a corpus exchange, names lower-cased as the client sees them."""
    return {k.lower(): str(v) for k, v in corpus_json(rel)["headers"].items()}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(f"sqlite:///{tmp_path / 'b.db'}")
    yield s
    s.close()


def _settings(db_url: str, **budget: Any) -> Settings:
    return Settings(database_url=db_url, crossref={"mailto": "ci@example.org"}, budget=budget)


def _answer(budget: Budget, pool: str, said: Announcement) -> None:
    """One request of ``pool`` whose answer announced ``said``."""
    grant = budget.try_acquire(pool)
    assert grant.lease is not None, grant
    budget.release(grant.lease, Outcome.ANSWERED, announced=said)


# --- reading the headers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        (  # 2026 polite pool, single-record route
            "crossref/work/10.7554_elife.01567.headers.json",
            {"limit": 10, "interval_s": 1.0, "in_flight": 3, "api_pool": "polite-single"},
        ),
        (  # 2026 polite pool, list route: 3/s
            "crossref/work-list/works_rows-20_filter-prefix-10.5555-type-journal-article.headers.json",
            {"limit": 3, "interval_s": 1.0, "in_flight": 3, "api_pool": "polite-array"},
        ),
        (  # 2026 public pool: 5/s, one at a time
            "crossref/member/members-98.headers.json",
            {"limit": 5, "interval_s": 1.0, "in_flight": 1, "api_pool": "public"},
        ),
        (  # 2022: both spellings, x-rate-limit-* and x-ratelimit-*
            "crossref/member/members-10.headers.json",
            {"limit": 50, "interval_s": 1.0, "in_flight": None, "api_pool": "polite"},
        ),
        (  # 2017: X-Rate-Limit-* capitalised, no pool name
            "crossref/work/10.1016_j.ejphar.2015.03.018.headers.json",
            {"limit": 50, "interval_s": 1.0, "in_flight": None, "api_pool": None},
        ),
    ],
)
def test_recorded_crossref_headers_are_read(rel: str, expected: dict[str, Any]) -> None:
    """Every recorded Crossref header set, from 2017 to 2026, reads as the limit it states."""
    said = read_announcement(_recorded(rel), default_interval_s=1.0, now=time.time())
    assert said is not None
    assert {k: getattr(said, k) for k in expected} == expected
    assert said.remaining is None and f"x-rate-limit-limit: {expected['limit']}" in said.headers.lower()


def test_recorded_zenodo_headers_give_the_window_and_its_reset_by_the_servers_clock() -> None:
    """Zenodo's July 2026 answer (133 per minute, 131 left, reset 1784787021 with Date 06:09:20) reads as
    133 per 60 s, 131 remaining, reset 61 s after the answer, whatever the local clock says.
    """
    headers = _recorded("zenodo/record-history/records-5244404__2026-07-23.headers.json")
    said = read_announcement(headers, default_interval_s=60.0, now=0.0)
    assert said is not None
    assert (said.limit, said.interval_s, said.remaining, said.reset_s) == (133, 60.0, 131, 61.0)
    assert said.in_flight is None and said.api_pool is None


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"x-rate-limit-limit": "50, 50", "x-rate-limit-interval": "1s, 1s"}, (50, 1.0, None)),
        ({"x-rate-limit-limit": "10, 5", "x-concurrency-limit": "3, 1"}, (5, 1.0, 1)),  # the lower wins
        ({"x-rate-limit-limit": "10", "x-ratelimit-limit": "3"}, (3, 1.0, None)),  # both spellings: lower
        ({"x-rate-limit-limit": "10", "x-rate-limit-interval": "500ms"}, (10, 0.5, None)),
        ({"x-rate-limit-limit": "100", "x-rate-limit-interval": "1m"}, (100, 60.0, None)),
        ({"x-rate-limit-limit": "abc", "x-concurrency-limit": "5"}, (None, None, 5)),
        ({"x-rate-limit-limit": "-5"}, None),
        ({"x-rate-limit-limit": "1e309", "x-concurrency-limit": "inf"}, None),
        ({"x-rate-limit-limit": "0", "x-concurrency-limit": "0"}, (1, 1.0, 1)),  # bounded to at least 1
        ({"x-rate-limit-limit": "99999999999"}, (1_000_000, 1.0, None)),
        ({"x-rate-limit-limit": "10", "x-rate-limit-interval": "0s"}, (10, 1.0, None)),  # unreadable: 1 s
        ({"x-rate-limit-limit": "1", "x-rate-limit-interval": "86400000s"}, (1, 60.0, None)),  # >= 1/min
        ({"x-rate-limit-limit": "2", "x-rate-limit-interval": "1 fortnight"}, (2, 1.0, None)),
        ({"x-concurrency-limit": "99999999"}, (None, None, 10_000)),
        ({"x-api-pool": "polite\r\nX-Evil: 1", "x-rate-limit-limit": "10"}, (10, 1.0, None)),
        ({"x-rate-limit-limit": "7" * 5000}, None),
    ],
)
def test_doubled_and_hostile_values_are_read_bounded(
    headers: dict[str, str], expected: tuple[Any, ...] | None
) -> None:
    """Comma lists take their most restrictive value; hostile values are ignored or cut to their bounds:
    a limit of 1 per 1,000 days is read as 1 per minute, a limit under 1 as 1, a pool name with control
    characters is dropped, and the headers kept for display are printable and bounded.
    """
    said = read_announcement(headers, default_interval_s=1.0, now=time.time())
    if expected is None:
        assert said is None
        return
    assert said is not None
    assert (said.limit, said.interval_s, said.in_flight) == expected
    assert said.api_pool is None or "\n" not in said.api_pool
    assert all(32 <= ord(c) < 127 for c in said.headers) and len(said.headers) <= 512


# --- the effective limit ---------------------------------------------------------------------------


def test_an_announced_limit_lowers_the_pool_and_expires(store: Store) -> None:
    """Configured 10/s burst 10, 5 in flight; an answer announcing 5 per 1 s with concurrency 2 makes the
    pool 4/s (5 per 1 s + 0.25 s margin), burst 5, 2 in flight, a window of 5 per 1.25 s; a raised
    announcement (20 per 1 s) is picked up from the next answer but never goes over the configured 10/s;
    once ``announce_ttl_s`` passes without an answer, the configured limits rule again.
    """
    now = [1_800_000_000.0]
    budget = Budget(
        store, _settings(str(store.engine.url), announce_ttl_s=600), pools=POOLS, clock=lambda: now[0]
    )
    _answer(
        budget,
        "crossref_single",
        Announcement(limit=5, interval_s=1.0, in_flight=2, api_pool="polite-single"),
    )
    state = budget.state("crossref_single")
    assert (state.limits.per_s, state.limits.burst, state.limits.in_flight) == (4.0, 5.0, 2)
    assert (state.window_limit, state.window_s, state.group_limit) == (5, 1.25, 2)
    assert state.announced is not None and state.announced.api_pool == "polite-single"
    assert state.configured is not None and state.configured.per_s == 10
    now[0] += 1.0
    _answer(budget, "crossref_single", Announcement(limit=20, interval_s=1.0, in_flight=9))
    state = budget.state("crossref_single")
    assert (state.limits.per_s, state.limits.burst, state.limits.in_flight, state.group_limit) == (
        10,
        10,
        5,
        5,
    )
    _answer(budget, "crossref_single", Announcement(limit=5, interval_s=1.0, in_flight=2))
    now[0] += 601.0
    state = budget.state("crossref_single")
    assert state.announced is None and state.window_limit is None
    assert (state.limits.per_s, state.limits.in_flight, state.group_limit) == (10, 5, 5)


@pytest.mark.both_backends
def test_the_window_holds_every_process_under_the_announced_limit(db_url: str) -> None:
    """Two processes' budgets (two engines) under an announced 10 per 1 s: 10 takes in all, then the
    window refuses (why=window, wait 1.25 s from the first send); once they are answered and it has
    slid, one more; the daemon stops at 7 of each window (reserve 0.3), leaving 3 to interactive calls.
    """
    a, b = Store.open(db_url), Store.open(db_url)
    try:
        now = [1_800_000_000.0]
        settings = _settings(
            db_url, crossref_single={"per_s": 100, "burst": 100, "in_flight": 50}, crossref_in_flight=50
        )
        first = Budget(a, settings, pools=POOLS, clock=lambda: now[0])
        second = Budget(b, settings, pools=POOLS, clock=lambda: now[0])
        _answer(first, "crossref_single", Announcement(limit=10, interval_s=1.0))
        leases = [(first if i % 2 else second).try_acquire("crossref_single").lease for i in range(9)]
        assert all(leases)  # the announcing request's send counts: 10 in the window
        refused = second.try_acquire("crossref_single")
        assert refused.lease is None and refused.why == "window"
        assert refused.wait_s == pytest.approx(1.25)
        with pytest.raises(BudgetExhausted, match="10 per 1 s"):
            first.acquire("crossref_single", max_wait_s=0.5)
        for lease in leases:  # answered (a request in flight counts in the window until then)
            assert lease is not None
            first.release(lease, Outcome.ANSWERED, sent_at=now[0])
        now[0] += 1.26
        last = first.try_acquire("crossref_single").lease
        assert last is not None
        first.release(last, Outcome.ANSWERED, sent_at=now[0])
        now[0] += 10.0
        daemon = Budget(a, settings, pools=POOLS, interactive=False, clock=lambda: now[0])
        assert sum(1 for _ in range(10) if daemon.try_acquire("crossref_single").lease) == 7
        assert sum(1 for _ in range(5) if second.try_acquire("crossref_single").lease) == 3
    finally:
        a.close()
        b.close()


@pytest.mark.both_backends
def test_crossref_single_and_list_requests_share_one_in_flight_limit(db_url: str) -> None:
    """Polite pool: 5 Crossref requests in flight in all (before: 3 single + 3 list = 6); 3 single and 2
    list leases fill it, a 6th of either pool waits (why=group_in_flight), a release frees one; a list
    answer announcing x-concurrency-limit 3 lowers the shared count to 3; the public pool allows 1.
    """
    store = Store.open(db_url)
    try:
        now = [1_800_000_000.0]
        budget = Budget(store, _settings(db_url), pools=POOLS, clock=lambda: now[0])
        single = [budget.try_acquire("crossref_single").lease for _ in range(3)]
        listing = [budget.try_acquire("crossref_list").lease for _ in range(2)]
        assert all(single) and all(listing)
        for pool in ("crossref_single", "crossref_list"):
            refused = budget.try_acquire(pool)
            assert refused.lease is None and refused.why == "group_in_flight"
        with pytest.raises(BudgetExhausted, match=r"all 5 in-flight Crossref request slots are taken"):
            budget.acquire("crossref_list", max_wait_s=0.01)
        state = budget.state("crossref_list")
        assert (state.group, state.group_in_flight, state.group_limit, state.in_flight) == (
            "crossref",
            5,
            5,
            2,
        )
        budget.release(single[0], Outcome.ANSWERED)
        assert budget.try_acquire("crossref_list").lease is not None
        for lease in [*single[1:], *listing]:
            budget.release(
                lease, Outcome.ANSWERED, announced=Announcement(limit=3, interval_s=1.0, in_flight=3)
            )
        assert budget.state("crossref_single").group_limit == 3
        public = Budget(store, Settings(database_url=db_url), pools=POOLS, clock=lambda: now[0] + 1000)
        store_state = public.state("crossref_single")
        assert store_state.group_limit == 1
    finally:
        store.close()


def test_the_daemon_can_take_from_a_bucket_of_one(store: Store) -> None:
    """The public list pool has burst 1: the daemon's reserve (30 % of the burst) never exceeds burst - 1,
    so the daemon still takes from a full bucket (before: it waited for 1.3 tokens forever).
    """
    now = [1_800_000_000.0]
    settings = Settings(
        database_url=str(store.engine.url)
    )  # no mailto: public pool, crossref_list 1/s burst 1
    daemon = Budget(store, settings, pools=POOLS, interactive=False, clock=lambda: now[0])
    assert daemon.try_acquire("crossref_list").lease is not None
    assert daemon.try_acquire("crossref_list").why == "tokens"


def test_zenodos_remaining_pauses_the_pool_before_it_runs_dry(store: Store) -> None:
    """Zenodo answers 60 per minute with X-RateLimit-Remaining counting down (7, 6, 5, 4) and a reset 30 s
    after its Date: the answer saying 4 left (the pool's in-flight limit) pauses zenodo_general until the
    reset, so the next call is refused at once as rate_limited with ~30 s to wait, without a request.
    """
    settings = Settings(database_url=str(store.engine.url))
    budget = Budget(store, settings, pools=POOLS)
    left = iter([7, 6, 5, 4])
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        date = time.time()
        headers = {
            "date": time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(date)),
            "x-ratelimit-limit": "60",
            "x-ratelimit-remaining": str(next(left)),
            "x-ratelimit-reset": str(int(date) + 30),
        }
        return httpx.Response(200, json={"id": "1", "metadata": {}}, headers=headers)

    http = UpstreamHTTP(
        "zenodo",
        "https://zenodo.test/api",
        budget,
        transport=httpx.MockTransport(handler),
        rate_window_s=60.0,
    )
    try:
        for _ in range(3):
            http.get("zenodo_general", "/records/1", deadline=Deadline(2.0))
        assert budget.state("zenodo_general").blocked_for(time.time()) == 0
        http.get("zenodo_general", "/records/1", deadline=Deadline(2.0))
        state = budget.state("zenodo_general")
        assert state.block_reason == "remaining" and 28 <= state.blocked_for(time.time()) <= 31
        assert state.announced is not None and state.announced.remaining == 4
        with pytest.raises(BudgetExhausted, match="paused") as refused:
            http.get("zenodo_general", "/records/1", deadline=Deadline(2.0))
        assert refused.value.reason == "rate_limited" and 28 <= refused.value.data["retry_after_s"] <= 31
        assert len(sent) == 4
    finally:
        http.close()


def test_cache_budget_shows_the_announced_limits_and_where_they_came_from(
    fake: FakeUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After one Crossref answer under the 2026 rules, `syncd cache budget --json` gives crossref_single
    the announced 10 per 1 s, 5 in flight, pool polite-single, the headers as received and when, the
    effective 8/s (10 per 1.25 s) beside the configured 10/s, and the shared Crossref count; the table
    says the same in words.
    """
    db_url = f"sqlite:///{tmp_path / 's.db'}"
    for key in list(__import__("os").environ):
        if key.startswith("SYNCD_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("SYNCD_DATABASE_URL", db_url)
    monkeypatch.setenv("SYNCD_CROSSREF__MAILTO", "ci@example.org")
    fake.crossref_rules = CrossrefRules()
    settings = make_settings(fake, db_url)
    store = Store.open(db_url)
    client = CrossrefClient(settings, Budget(store, settings, pools=POOLS))
    try:
        assert client.get_work("10.1101/598821", Deadline(3.0)).status == "ok"
    finally:
        client.close()
        store.close()
    res = CliRunner().invoke(cli, ["cache", "budget", "--json"], obj={})
    assert res.exit_code == 0, res.output
    row = next(r for r in json.loads(res.stdout) if r["pool"] == "crossref_single")
    said = row["announced"]
    assert (said["limit"], said["interval_s"], said["in_flight"], said["api_pool"]) == (
        10,
        1.0,
        5,
        "polite-single",
    )
    assert "x-rate-limit-limit: 10" in said["headers"] and "x-api-pool: polite-single" in said["headers"]
    assert said["at"].endswith("Z") and said["expires_at"] > said["at"]
    assert (row["per_s"], row["configured"]["per_s"], row["window"]["limit"]) == (8.0, 10, 10)
    assert row["group"] == {
        "name": "crossref",
        "pools": ["crossref_single", "crossref_list"],
        "in_flight": 0,
        "limit": 5,
    }
    human = CliRunner().invoke(cli, ["cache", "budget"], obj={}, terminal_width=200)
    assert human.exit_code == 0, human.output
    assert "crossref_single: announced by its answer at" in human.output
    assert "crossref in flight (crossref_single + crossref_list together): 0 of 5" in human.output


# --- at load against Crossref's 2026 rules ----------------------------------------------------------


def _load_settings(fake_crossref_url: str, db_url: str) -> dict[str, Any]:
    return {
        "database_url": db_url,
        "crossref": {"base_url": fake_crossref_url, "mailto": "ci@example.org"},
        "deadline_s": 3.0,
        "budget": {"pace_margin_s": 0.5},  # a busy test machine delays requests more than a network
    }


def _worker(values: dict[str, Any], go: Any, run_s: float, index: int) -> dict[str, int]:
    """Hammer Crossref (single works and DOI-filter lists, alternately) from ``go`` for ``run_s`` s."""
    settings = Settings(**values)
    store = Store.open(settings.database_url)
    client = CrossrefClient(settings, Budget(store, settings, pools=POOLS))
    counts = {"ok": 0, "budget": 0, "http_429": 0}
    go.wait(60)
    end = time.monotonic() + run_s
    i = index
    try:
        while time.monotonic() < end:
            i += 1
            doi = WORK_DOIS[i % len(WORK_DOIS)]
            try:
                if i % 3:
                    client.get_work(doi, Deadline(3.0))
                else:
                    client.list_works({"filter": f"doi:{doi}"}, Deadline(3.0))
                counts["ok"] += 1
            except UpstreamRateLimited:
                counts["http_429"] += 1
            except BudgetExhausted:
                counts["budget"] += 1
            except SyncdError as exc:  # counted by reason (and message, for the assertion's report)
                key = f"other:{exc.reason}:{exc.message[:80]}"
                counts[key] = counts.get(key, 0) + 1
    finally:
        client.close()
        store.close()
    return counts


def _process_worker(values: dict[str, Any], go: Any, run_s: float, threads: int, out: Any) -> None:
    results: list[dict[str, int]] = []
    workers = [
        threading.Thread(target=lambda i=i: results.append(_worker(values, go, run_s, i)))
        for i in range(threads)
    ]
    for t in workers:
        t.start()
    out.put("ready")
    for t in workers:
        t.join()
    out.put(results)


def test_processes_at_load_never_get_a_429_from_crossrefs_2026_rules(
    fake: FakeUpstream, tmp_path: Path
) -> None:
    """Against a fake enforcing 10/s single, 3/s list, 5 in flight across both, 429 on the first request
    over, each answer taking 0.3 s: a second process (4 threads) and this one (3 threads) call Crossref
    flat out for 3.5 s; after 1 s the fake lowers single records to 5/s and concurrency to 3 (announced
    at once, enforced 1 s later). Upstream sees 0 requests over any limit (0 429s), never more than 5
    at once (3 once lowered), single records went on within the lowered limit, and every call that was
    not answered failed with a declared reason (no 429, nothing undeclared).
    """
    db_url = f"sqlite:///{tmp_path / 'load.db'}"
    Store.open(db_url).close()
    rules = CrossrefRules(single=10, lists=3, concurrency=5, latency_s=0.3)
    fake.crossref_rules = rules
    values = _load_settings(fake.crossref_url, db_url)
    ctx = multiprocessing.get_context("fork")  # a process of its own, without a second import (seconds)
    go, out = ctx.Event(), ctx.Queue()
    proc = ctx.Process(target=_process_worker, args=(values, go, RUN_S, 4, out))
    proc.start()
    try:
        assert out.get(timeout=60) == "ready"
        local: list[dict[str, int]] = []
        threads = [
            threading.Thread(target=lambda i=i: local.append(_worker(values, go, RUN_S, 10 + i)))
            for i in range(3)
        ]
        for t in threads:
            t.start()
        go.set()
        time.sleep(1.0)
        enforced_from = time.monotonic() + 1.0
        rules.change(single=5, concurrency=3, grace_s=1.0)
        time.sleep(1.0)
        most_before = rules.max_in_flight
        rules.max_in_flight = 0  # from here on, the lowered concurrency rules
        for t in threads:
            t.join(timeout=30)
        remote = out.get(timeout=30)
    finally:
        proc.join(timeout=30)
    counts = [*local, *remote]
    totals = {k: sum(c.get(k, 0) for c in counts) for k in ("ok", "budget", "http_429")}
    declared = {k.split(":")[1] for c in counts for k in c if k.startswith("other:")}
    assert rules.rejected == 0 and totals["http_429"] == 0, (rules.rejected, totals)
    assert declared <= {"request_timeout", "store_unavailable"}, declared
    # calls were answered (10 or more on an idle machine, 6 under two CPU hogs: the run lasts 3.5 s of
    # wall time, so the count is the machine's speed; the claims are the limits above and below)
    assert totals["ok"] >= 1 and rules.answered >= totals["ok"]
    assert most_before <= 5 and rules.max_in_flight <= 3
    print(f"load: {totals} {declared} answered={rules.answered} most_in_flight={most_before}")
    lowered = [at for at, kind, ok in rules.log if ok and kind == "single" and at >= enforced_from]
    assert lowered  # single-record requests went on under the lowered limit, within it:
    assert max(sum(1 for b in lowered if a - 1.0 < b <= a) for a in lowered) <= 5


def test_an_answer_from_the_public_pool_despite_a_mailto_is_warned_once(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    """With crossref.mailto set, answers saying ``x-api-pool: public-single`` (Crossref did not take the
    address) log one warning naming the pool and the setting to check, not one per answer; the new
    limits are logged when they change (event=limits_announced), not on every answer.
    """
    settings = Settings(database_url=str(store.engine.url), crossref={"mailto": "ci@example.org"})
    body = corpus_json("crossref/work/10.1101_598821.json")
    headers = {"x-rate-limit-limit": "5", "x-rate-limit-interval": "1s", "x-concurrency-limit": "1"}
    transport = httpx.MockTransport(
        lambda request: httpx.Response(200, json=body, headers={**headers, "x-api-pool": "public-single"})
    )
    client = CrossrefClient(settings, Budget(store, settings, pools=POOLS), transport=transport)
    try:
        with caplog.at_level(logging.INFO, logger="syncd.upstream"):
            for _ in range(3):
                assert client.get_work("10.1101/598821", Deadline(3.0)).status == "ok"
    finally:
        client.close()
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert (
        len(warned) == 1
        and "expected=polite got=public-single" in warned[0]
        and "crossref.mailto" in warned[0]
    )
    changes = [r.getMessage() for r in caplog.records if "event=limits_announced" in r.getMessage()]
    assert changes == [
        "event=limits_announced service=crossref pool=crossref_single limit=5 interval_s=1 in_flight=1 "
        "api_pool=public-single"
    ]
