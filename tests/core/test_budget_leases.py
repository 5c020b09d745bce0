"""The budget's lease per attempt: two write transactions per upstream request, none on a warm hit,
reads without the write lock, pool rows from the migration, leases that die with their holder, slots
held while upstream may still be working, a monotonic bucket, and 429 waits read and capped sanely
(issues 11.6, 12.6, 14.2, 15.4, 17.6).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import multiprocessing
import os
import signal
import sqlite3
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from freezegun import freeze_time
from mcp import Client
from sqlalchemy import delete, event, select

from syncd.budget.buckets import BREAKER_THRESHOLD, LEASE_MARGIN_S, Budget, Outcome
from syncd.cli import cli
from syncd.config import Settings
from syncd.errors import (
    BudgetExhausted,
    InvalidInput,
    StoreError,
    UpstreamRateLimited,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from syncd.registry import POOLS
from syncd.store.models import BudgetLease, BudgetPool
from syncd.store.repo import Store
from syncd.upstream.http import Deadline, UpstreamHTTP, parse_retry_after
from tests.conftest import make_settings
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

POOL = "crossref_single"
WORK = {"status": "ok", "message-type": "work", "message": {"DOI": "10.1101/598821", "title": ["T"]}}


def _settings(db_url: str, **pool: float) -> Settings:
    limits: dict[str, Any] = {"per_s": 1.0, "burst": 3, "in_flight": 1, **pool}
    budget = {POOL: limits, "crossref_in_flight": limits["in_flight"]}  # the shared Crossref count follows
    return Settings(database_url=db_url, budget=budget, crossref={"mailto": "ci@example.org"})


@pytest.fixture
def budget_store(tmp_path: Path) -> Iterator[Store]:
    store = Store.open(f"sqlite:///{tmp_path / 'budget.db'}")
    yield store
    store.close()


class WriteCounter:
    """Counts SQLite write transactions (``BEGIN IMMEDIATE``) on an engine, and those touching the budget."""

    def __init__(self, store: Store) -> None:
        self.transactions: list[list[str]] = []
        event.listen(store.engine, "before_cursor_execute", self._seen)

    def _seen(self, _conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if statement.startswith("BEGIN IMMEDIATE"):
            self.transactions.append([])
        elif statement.startswith("BEGIN") or statement.startswith("COMMIT"):
            return
        elif self.transactions:
            self.transactions[-1].append(statement)

    def reset(self) -> None:
        self.transactions.clear()

    @property
    def writes(self) -> int:
        return len(self.transactions)

    @property
    def budget_writes(self) -> int:
        return sum(1 for t in self.transactions if any("budget_" in s for s in t))


def _http(budget: Budget, handler: Any) -> UpstreamHTTP:
    return UpstreamHTTP(
        "crossref", "https://api.crossref.test", budget, transport=httpx.MockTransport(handler)
    )


# --- write transactions per request (issues 11.6, 15.4) ------------------------------------------------


def test_one_upstream_request_is_two_write_transactions(budget_store: Store) -> None:
    """A GET that upstream answers costs exactly 2 write transactions (take; release + outcome), a 429 too,
    and each attempt of a retried refused connection 2 (before: an answered GET cost 3, take,
    record_success and release, and reading the pool's state one more); reading the budget costs none.
    """
    budget = Budget(
        budget_store,
        _settings(str(budget_store.engine.url), per_s=1000.0, burst=10, in_flight=3),
        pools=POOLS,
    )
    counter = WriteCounter(budget_store)
    answers = iter([httpx.Response(200, json=WORK), httpx.Response(429, headers={"Retry-After": "7"})])

    sent = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        answer = next(answers, None)
        if answer is None:
            raise httpx.ConnectError("refused", request=request)
        return answer

    http = _http(budget, handler)
    assert http.get(POOL, "/works/x", deadline=Deadline(5)).json == WORK
    assert counter.writes == 2 and counter.budget_writes == 2
    counter.reset()
    with pytest.raises(UpstreamRateLimited):  # 7 s does not fit the 0.5 s deadline: no retry
        http.get(POOL, "/works/x", deadline=Deadline(0.5))
    assert counter.writes == 2
    assert 6 < budget.state(POOL).blocked_for(budget.clock()) <= 7
    budget.reset(POOL)
    counter.reset()
    sent.clear()
    with pytest.raises(UpstreamUnavailable, match="connection failed"):
        http.get(POOL, "/works/x", deadline=Deadline(1.0))  # retried: 2 write transactions per attempt
    assert len(sent) >= 2 and counter.writes == 2 * len(sent)
    assert budget.state(POOL).failures == len(sent)
    counter.reset()
    budget.state(POOL)
    budget.states()
    budget.offline(POOL)
    assert counter.writes == 0  # reading the budget takes no write lock


def test_an_unwritable_store_at_release_loses_the_bookkeeping_not_the_answer(
    budget_store: Store, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """When the release cannot be written (disk full, lock held past the timeout), both GETs still return
    upstream's answer, and one warning names the cause, not one per call.
    """
    budget = Budget(budget_store, _settings(str(budget_store.engine.url), burst=10, in_flight=3), pools=POOLS)

    def unwritable(*_args: Any, **_kwargs: Any) -> bool:
        raise StoreError("store write failed: OperationalError: database or disk is full")

    monkeypatch.setattr(budget, "release", unwritable)
    http = _http(budget, lambda _request: httpx.Response(200, json=WORK))
    with caplog.at_level(logging.WARNING, logger="syncd.upstream"):
        answers = [http.get(POOL, "/works/x", deadline=Deadline(5)).json for _ in range(2)]
    assert answers == [WORK, WORK]
    warnings = [r.getMessage() for r in caplog.records if "event=budget_not_recorded" in r.getMessage()]
    assert len(warnings) == 1 and "OperationalError" in warnings[0] and "outcome=answered" in warnings[0]


def test_a_tool_call_writes_the_budget_twice_cold_and_never_warm(cache: Any, store: Store) -> None:
    """Through a real MCP session: a cold crossref_get_work makes 2 budget write transactions (no other
    write transaction touches the budget), the same call warm makes no write transaction at all.
    """
    counter = WriteCounter(store)

    async def go() -> list[tuple[int, int]]:
        seen = []
        async with Client(mcp_server(cache)) as client:
            for _ in range(2):
                counter.reset()
                res = await client.call_tool("crossref_get_work", {"doi": "10.1101/598821"})
                assert res.is_error is False
                seen.append((counter.writes, counter.budget_writes))
        return seen

    (cold_writes, cold_budget), (warm_writes, _) = asyncio.run(go())
    assert cold_budget == 2
    assert cold_writes <= 3  # the 2 budget writes + storing the work
    assert warm_writes == 0


def test_state_reads_while_another_process_holds_the_write_lock(budget_store: Store, tmp_path: Path) -> None:
    """With the database's write lock held elsewhere, state() still answers (before: it took the write
    lock itself and failed after the 10 s busy timeout).
    """
    budget = Budget(budget_store, _settings(str(budget_store.engine.url)), pools=POOLS)
    holder = sqlite3.connect(tmp_path / "budget.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        state = budget.state(POOL)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert state.tokens == 3 and state.in_flight == 0 and state.failures == 0


def test_pool_rows_come_from_the_migration_and_a_missing_one_from_the_first_take(budget_store: Store) -> None:
    """A freshly migrated store holds one row per pool before any take; a pool whose row is gone (a new
    slice's, no migration) gets it back from its first take: granted, one row (tests/core/
    test_budget_new_pool.py has the race and the counting).
    """
    with budget_store.read() as conn:
        assert sorted(conn.execute(select(BudgetPool.pool)).scalars()) == sorted(POOLS.names)
    with budget_store.write() as conn:
        conn.execute(delete(BudgetPool).where(BudgetPool.pool == POOL))
    budget = Budget(budget_store, _settings(str(budget_store.engine.url)), pools=POOLS)
    assert budget.try_acquire(POOL).lease is not None
    with budget_store.read() as conn:
        assert conn.execute(select(BudgetPool.pool).where(BudgetPool.pool == POOL)).scalars().all() == [POOL]


def test_a_caller_waiting_for_a_slot_reads_instead_of_taking_the_write_lock(budget_store: Store) -> None:
    """in_flight=1 held by another caller: a waiter polls 5 times (reads) and takes the write lock only for
    its first try and for the take once the slot is free: 2 write transactions (before: one per try, 6).
    """
    settings = _settings(str(budget_store.engine.url), burst=10)
    holder = Budget(budget_store, settings, pools=POOLS)
    held = holder.try_acquire(POOL).lease
    assert held is not None
    counter = WriteCounter(budget_store)
    polls = []

    def sleep(_seconds: float) -> None:
        polls.append(counter.writes)
        if len(polls) == 5:
            holder.release(held, Outcome.ANSWERED)  # one write transaction of the holder, not counted below
            polls.append(-1)

    waiter = Budget(budget_store, settings, pools=POOLS, sleep=sleep)
    lease = waiter.acquire(POOL, max_wait_s=30.0)
    assert lease.pool == POOL
    assert polls[:5] == [1, 1, 1, 1, 1]  # refused once with the write lock, then only reads
    assert counter.writes - 1 == 2  # minus the holder's release


# --- leases die with their holder (issue 12.6) ---------------------------------------------------------


def _hold_a_slot(db_url: str, hold_s: float, ready: Any) -> None:  # pragma: no cover - child process
    store = Store.open(db_url)
    grant = Budget(store, _settings(db_url), pools=POOLS).try_acquire(POOL, hold_s=hold_s)
    ready.put(grant.lease is not None)
    signal.pause()  # hold it until killed


def test_a_killed_holder_frees_its_slot_at_the_next_take(budget_store: Store) -> None:
    """A process holding the only slot (30 s deadline) is SIGKILLed: the very next take from another process
    gets the slot (0 refusals), far within deadline + 2 s; while it lived, the same take was refused.
    """
    db_url = str(budget_store.engine.url)
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Queue()
    child = ctx.Process(target=_hold_a_slot, args=(db_url, 30.0, ready))
    child.start()
    try:
        assert ready.get(timeout=60) is True
        budget = Budget(budget_store, _settings(db_url, burst=10), pools=POOLS)
        refused = budget.try_acquire(POOL)
        assert refused.lease is None and refused.why == "in_flight"
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)
        child.join(30)
        grant = budget.try_acquire(POOL)
        assert grant.lease is not None
    finally:
        if child.is_alive():
            child.kill()
            child.join(30)
    with budget_store.read() as conn:
        holders = conn.execute(select(BudgetLease.pid)).scalars().all()
    assert holders == [os.getpid()]


def test_a_lease_of_another_host_expires_at_its_deadline_plus_margin(budget_store: Store) -> None:
    """A lease from another machine (its process cannot be checked) frees the slot once its holder's
    deadline plus LEASE_MARGIN_S (<= 2 s) has passed, not before.
    """
    settings = _settings(str(budget_store.engine.url), burst=10)
    with freeze_time("2026-12-01 00:00:00") as clock:
        elsewhere = Budget(budget_store, settings, pools=POOLS)
        elsewhere.host = "another-workstation"
        assert elsewhere.try_acquire(POOL, hold_s=5.0).lease is not None
        here = Budget(budget_store, settings, pools=POOLS)
        assert LEASE_MARGIN_S <= 2.0
        clock.tick(timedelta(seconds=5.0 + LEASE_MARGIN_S - 0.01))
        assert here.try_acquire(POOL).why == "in_flight"
        clock.tick(timedelta(seconds=0.02))
        assert here.try_acquire(POOL).lease is not None


def test_acquire_names_the_taken_slots_not_a_spent_bucket(budget_store: Store) -> None:
    """Refused for want of a slot, acquire says the slots are taken (before: 'budget ... is spent' while
    the bucket was full).
    """
    budget = Budget(budget_store, _settings(str(budget_store.engine.url)), pools=POOLS, sleep=lambda _s: None)
    assert budget.try_acquire(POOL).lease is not None
    with pytest.raises(BudgetExhausted, match="in-flight request slots of crossref_single are taken"):
        budget.acquire(POOL, max_wait_s=0.0)


# --- slots held while upstream may still work; a monotonic bucket (issue 17.6) -------------------------


def test_a_timed_out_request_keeps_its_slot_until_the_lease_expires(budget_store: Store) -> None:
    """A lease released as TIMED_OUT stays taken until its deadline plus margin (upstream may still be
    working on it); one released as answered frees the slot at once.
    """
    budget = Budget(budget_store, _settings(str(budget_store.engine.url), burst=10), pools=POOLS)
    with freeze_time("2026-12-01 00:00:00") as clock:
        lease = budget.try_acquire(POOL, hold_s=2.0).lease
        assert lease is not None
        budget.release(lease, Outcome.TIMED_OUT)
        assert budget.try_acquire(POOL).why == "in_flight"
        assert budget.state(POOL).failures == 1
        clock.tick(timedelta(seconds=2.0 + LEASE_MARGIN_S + 0.01))
        again = budget.try_acquire(POOL, hold_s=2.0).lease
        assert again is not None
        budget.release(again, Outcome.ANSWERED)
        assert budget.try_acquire(POOL).lease is not None
        assert budget.state(POOL).failures == 0


def test_upstream_never_sees_more_requests_than_the_slots(fake: FakeUpstream, tmp_path: Path) -> None:
    """in_flight=1, upstream taking 8 s, calls with a 0.4 s deadline: the first times out, the second is
    refused by the budget instead of being sent while upstream still works (before: 2 at once upstream).
    The budget's clock stands still, so the timed-out lease (held 0.4 s + LEASE_MARGIN_S) is still
    taken when the second call comes however slow the machine is.
    """
    db_url = f"sqlite:///{tmp_path / 's.db'}"
    settings = make_settings(fake, db_url, budget={POOL: {"in_flight": 1}})
    store = Store.open(db_url)
    frozen = time.time()
    http = UpstreamHTTP(
        "crossref", fake.crossref_url, Budget(store, settings, pools=POOLS, clock=lambda: frozen)
    )
    fake.fault("latency", delay_s=8.0, service="crossref")
    try:
        with pytest.raises(UpstreamTimeout):
            http.get(POOL, "/works/10.1101/598821", deadline=Deadline(0.4))
        with pytest.raises(BudgetExhausted, match="slots"):
            http.get(POOL, "/works/10.1101/598821", deadline=Deadline(0.4))
    finally:
        http.close()
        store.close()
    assert fake.count(service="crossref") == 1
    assert fake.max_in_flight == 1


def test_the_bucket_never_refills_from_a_timestamp_that_moved_back(budget_store: Store) -> None:
    """Burst 3 at 1/s: takes at t=100, then at t=90 (a clock behind, or a writer that read the clock before
    waiting for the lock), then at t=100 again: 3 tokens in all, the fourth take at t=100 waits 1 s (before:
    the t=90 write moved the timestamp back and the bucket refilled 10 s twice).
    """
    now = [100_000.0]
    budget = Budget(
        budget_store, _settings(str(budget_store.engine.url), in_flight=10), pools=POOLS, clock=lambda: now[0]
    )
    assert budget.try_acquire(POOL).lease is not None
    now[0] = 99_990.0
    assert budget.try_acquire(POOL).lease is not None
    now[0] = 100_000.0
    assert budget.try_acquire(POOL).lease is not None
    fourth = budget.try_acquire(POOL)
    assert fourth.lease is None and fourth.wait_s == pytest.approx(1.0)


# --- Retry-After read against the server's clock, capped, resettable (issue 14.2) ----------------------


def test_retry_after_date_is_measured_against_the_responses_date() -> None:
    """An HTTP-date Retry-After one hour and 30 s ahead, sent with a Date one hour ahead (server clock
    skew), means 30 s; without a Date it is measured against the local clock; delta-seconds stand.
    """
    with freeze_time("2026-12-01 12:00:00"):
        now = email.utils.formatdate(usegmt=True)
        skewed_date = "Tue, 01 Dec 2026 13:00:00 GMT"
        retry_at = "Tue, 01 Dec 2026 13:00:30 GMT"
        assert parse_retry_after(retry_at, date=skewed_date) == 30.0
        assert parse_retry_after(retry_at) == 3630.0
        assert parse_retry_after("Tue, 01 Dec 2026 12:00:20 GMT", date=now) == 20.0
        assert parse_retry_after(retry_at, date="garbage") == 3630.0
        assert parse_retry_after("120") == 120.0
        assert parse_retry_after("Tue, 01 Dec 2026 11:00:00 GMT") == 0.0
        for bad in ("soon", "", None, "inf", "nan"):
            assert parse_retry_after(bad) is None


def test_a_skewed_servers_429_blocks_for_what_it_meant(
    fake: FakeUpstream, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The fake answers 429 with Date one hour ahead and Retry-After that date + 30 s: the pool is blocked
    ~30 s (before: an hour), and the log line names the pool, the raw header and the wait applied.
    """
    db_url = f"sqlite:///{tmp_path / 's.db'}"
    store = Store.open(db_url)
    budget = Budget(store, make_settings(fake, db_url), pools=POOLS)
    http = UpstreamHTTP("crossref", fake.crossref_url, budget)
    ahead = budget.clock() + 3600
    date, retry = email.utils.formatdate(ahead, usegmt=True), email.utils.formatdate(ahead + 30, usegmt=True)
    fake.fault("rate_limit", retry_after=retry, headers={"Date": date}, times=1, service="crossref")
    try:
        with (
            caplog.at_level(logging.WARNING, logger="syncd.upstream"),
            pytest.raises(UpstreamRateLimited) as err,
        ):
            http.get(POOL, "/works/10.1101/598821", deadline=Deadline(1.0))
        blocked = budget.state(POOL).blocked_for(budget.clock())
    finally:
        http.close()
        store.close()
    assert 25 < blocked <= 30 and 25 < err.value.data["retry_after_s"] <= 30
    assert fake.count(service="crossref") == 1
    line = next(r.getMessage() for r in caplog.records if "event=rate_limited" in r.getMessage())
    assert f"pool={POOL}" in line and repr(retry) in line and "wait_s=" in line and "capped=no" in line


def test_an_enormous_retry_after_is_capped_by_max_block_s(
    fake: FakeUpstream, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Zenodo's ``Retry-After: 86400000`` blocks zenodo_general for budget.max_block_s (120 s here), not
    1,000 days; the log says the wait was capped.
    """
    db_url = f"sqlite:///{tmp_path / 's.db'}"
    store = Store.open(db_url)
    budget = Budget(store, make_settings(fake, db_url, budget={"max_block_s": 120}), pools=POOLS)
    http = UpstreamHTTP("zenodo", fake.zenodo_url, budget)
    fake.fault("rate_limit", retry_after=86_400_000, times=1, service="zenodo")
    try:
        with caplog.at_level(logging.WARNING, logger="syncd.upstream"), pytest.raises(UpstreamRateLimited):
            http.get("zenodo_general", "/records/5244404", deadline=Deadline(1.0))
        blocked = budget.state("zenodo_general").blocked_for(budget.clock())
    finally:
        http.close()
        store.close()
    assert 115 < blocked <= 120
    line = next(r.getMessage() for r in caplog.records if "event=rate_limited" in r.getMessage())
    assert "pool=zenodo_general" in line and "retry_after='86400000'" in line and "capped=yes" in line
    assert "wait_s=120.0" in line


def test_a_block_ends_at_max_block_s_and_reset_clears_blocks_and_breakers(budget_store: Store) -> None:
    """block(86,400,000 s) with max_block_s 300 refuses at +299 s and grants at +301 s; reset(pool) clears a
    block and an open breaker of that pool only; reset() clears every pool; an unknown pool is refused.
    """
    settings = _settings(str(budget_store.engine.url), burst=10, in_flight=10)
    budget = Budget(budget_store, settings, pools=POOLS)
    with freeze_time("2026-12-01 00:00:00") as clock:
        budget.block(POOL, 86_400_000)
        clock.tick(timedelta(seconds=299))
        assert budget.try_acquire(POOL).why == "blocked"
        clock.tick(timedelta(seconds=2))
        assert budget.try_acquire(POOL).lease is not None
        budget.block(POOL, 60)
        budget.block("doi", 60)
        for _ in range(BREAKER_THRESHOLD):
            budget.record_failure(POOL)
        assert budget.offline(POOL)
        assert budget.reset(POOL) == [POOL]
        state = budget.state(POOL)
        assert (state.blocked_until, state.offline_until, state.failures) == (0.0, 0.0, 0)
        clock.tick(timedelta(seconds=1))  # the 429 emptied the bucket: one token back after 1 s at 1/s
        assert budget.try_acquire(POOL).lease is not None
        assert budget.state("doi").blocked_for(budget.clock()) == pytest.approx(59)
        assert budget.reset() == list(POOLS.names)
        assert budget.state("doi").blocked_until == 0.0
    with pytest.raises(InvalidInput):
        budget.reset("crossref")


def test_cli_cache_budget_reset(fake: FakeUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`syncd cache budget --reset zenodo_general` clears that pool's block (and says so) and leaves others;
    `--reset` alone clears all; a POOL without --reset is a usage error (exit 2).
    """
    db_url = f"sqlite:///{tmp_path / 's.db'}"
    for key in list(os.environ):
        if key.startswith("SYNCD_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("SYNCD_DATABASE_URL", db_url)
    store = Store.open(db_url)
    budget = Budget(store, make_settings(fake, db_url), pools=POOLS)
    budget.block("zenodo_general", 200)
    budget.block("doi", 200)

    def rows(*args: str) -> dict[str, Any]:
        res = CliRunner().invoke(cli, ["cache", "budget", *args, "--json"], obj={})
        assert res.exit_code == 0, res.output
        return {row["pool"]: row for row in json.loads(res.stdout)}

    try:
        after = rows("--reset", "zenodo_general")
        assert not after["zenodo_general"]["blocked_until"]
        assert after["doi"]["blocked_until"]
        assert not rows("--reset")["doi"]["blocked_until"]
        usage = CliRunner().invoke(cli, ["cache", "budget", "doi"], obj={})
        assert usage.exit_code == 2
    finally:
        store.close()
