"""The shared request budget: token buckets in the database, 429 blocks, in-flight slots, breaker."""

from __future__ import annotations

import multiprocessing
from datetime import timedelta

import pytest
from freezegun import freeze_time

from syncd.budget.buckets import BREAKER_COOLDOWN_S, BREAKER_THRESHOLD, Budget
from syncd.budget.pools import Pool, PoolLimits, Pools
from syncd.config import Settings
from syncd.errors import BudgetExhausted, InvalidInput, UpstreamOffline
from syncd.registry import POOLS
from syncd.store.repo import Store
from syncd.tools.errors import to_error_info
from tests.children import budget_settings, hammer

pytestmark = pytest.mark.both_backends


_settings = budget_settings


@pytest.fixture
def two_stores(db_url: str):
    a, b = Store.open(db_url), Store.open(db_url)
    yield a, b
    a.close()
    b.close()


def test_bucket_allows_burst_then_refills_at_rate(db_url: str, two_stores) -> None:
    """Burst 3 at 1/s: three grants at once, the fourth must wait ~1 s, and one more token after 1 s."""
    store, _ = two_stores
    with freeze_time("2026-11-29 12:00:00") as clock:
        budget = Budget(store, _settings(db_url), pools=POOLS)
        leases = [budget.try_acquire("crossref_single") for _ in range(2)]
        for g in leases:
            budget.release(g.lease)
        third = budget.try_acquire("crossref_single")
        assert third.lease is not None
        budget.release(third.lease)
        fourth = budget.try_acquire("crossref_single")
        assert fourth.lease is None
        assert fourth.wait_s == pytest.approx(1.0)
        clock.tick(timedelta(seconds=1))
        assert budget.try_acquire("crossref_single").lease is not None


def test_tokens_are_shared_between_store_instances(db_url: str, two_stores) -> None:
    """Two Budget objects on separate engines (as two processes) draw from one bucket."""
    a, b = two_stores
    with freeze_time("2026-11-29 12:00:00"):
        settings = _settings(db_url, in_flight=10)
        first, second = Budget(a, settings, pools=POOLS), Budget(b, settings, pools=POOLS)
        assert first.try_acquire("crossref_single").lease is not None
        assert second.try_acquire("crossref_single").lease is not None
        assert first.try_acquire("crossref_single").lease is not None
        assert second.try_acquire("crossref_single").lease is None
        assert first.state("crossref_single").tokens == pytest.approx(0.0)


def test_429_block_is_seen_by_every_process_and_acquire_does_not_hang(db_url: str, two_stores) -> None:
    """A block set by one process makes another's acquire fail at once (it never waits: the injected sleep
    is not called) with rate_limited and the wait.
    """
    a, b = two_stores
    settings = _settings(db_url)
    Budget(a, settings, pools=POOLS).block("crossref_single", 30)
    slept: list[float] = []
    with pytest.raises(BudgetExhausted) as err:
        Budget(b, settings, pools=POOLS, sleep=slept.append).acquire("crossref_single", max_wait_s=0.5)
    assert slept == []
    assert err.value.reason == "rate_limited"
    assert 29 < err.value.data["retry_after_s"] <= 30


def test_daemon_leaves_the_interactive_reserve(db_url: str, two_stores) -> None:
    """With burst 10 and reserve 0.3 the daemon takes 7 tokens; interactive calls still get the last 3."""
    store, _ = two_stores
    with freeze_time("2026-11-29 12:00:00"):
        settings = _settings(db_url, burst=10, in_flight=20)
        daemon = Budget(store, settings, pools=POOLS, interactive=False)
        got = sum(1 for _ in range(10) if daemon.try_acquire("crossref_single").lease is not None)
        assert got == 7
        interactive = Budget(store, settings, pools=POOLS)
        assert sum(1 for _ in range(5) if interactive.try_acquire("crossref_single").lease is not None) == 3


def test_in_flight_limit_and_release(db_url: str, two_stores) -> None:
    """in_flight=2: a third concurrent request waits for a slot; releasing one frees it."""
    store, _ = two_stores
    with freeze_time("2026-11-29 12:00:00"):
        budget = Budget(store, _settings(db_url, burst=10), pools=POOLS)
        first = budget.try_acquire("crossref_single").lease
        second = budget.try_acquire("crossref_single").lease
        assert first and second
        blocked = budget.try_acquire("crossref_single")
        assert blocked.lease is None and blocked.wait_s < 0.1
        budget.release(first)
        assert budget.try_acquire("crossref_single").lease is not None


def test_breaker_opens_after_repeated_failures_and_lets_one_probe_through(db_url: str, two_stores) -> None:
    """After BREAKER_THRESHOLD failures nobody may call; after the cooldown exactly one probe is granted."""
    a, b = two_stores
    with freeze_time("2026-11-29 12:00:00") as clock:
        settings = _settings(db_url, burst=10, in_flight=10)
        one, other = Budget(a, settings, pools=POOLS), Budget(b, settings, pools=POOLS)
        for _ in range(BREAKER_THRESHOLD):
            one.record_failure("crossref_single")
        with pytest.raises(UpstreamOffline):
            other.try_acquire("crossref_single")
        clock.tick(timedelta(seconds=BREAKER_COOLDOWN_S + 1))
        probe = one.try_acquire("crossref_single")
        assert probe.lease is not None and probe.probe
        with pytest.raises(UpstreamOffline):
            other.try_acquire("crossref_single")
        one.record_success("crossref_single")
        assert other.try_acquire("crossref_single").lease is not None


@pytest.mark.serial  # a real process
def test_three_processes_never_exceed_the_bucket(db_url: str) -> None:
    """3 processes x 1.5 s on a 10/s, burst-5 pool: in every window of the grants (each stamped with the
    budget's own clock, read under the pool's row lock) at most burst + rate x window tokens are granted.

    The budget's clock, not the test's: a loaded machine slows the contenders, never the arithmetic.
    """
    Store.open(db_url).close()
    ctx = multiprocessing.get_context("spawn")
    out: multiprocessing.Queue = ctx.Queue()
    procs = [ctx.Process(target=hammer, args=(db_url, 1.5, out)) for _ in range(3)]
    for p in procs:
        p.start()
    stamps = sorted(t for _ in procs for t in out.get(timeout=60))
    for p in procs:
        p.join(timeout=30)
    assert len(stamps) >= 10  # the bucket really granted tokens to the contenders
    n = len(stamps)
    worst = max((j - i + 1) - 10.0 * (stamps[j] - stamps[i]) for i in range(n) for j in range(i, n))
    assert worst <= 5 + 1e-6, worst  # granted in [a, b] <= burst + rate x (b - a)


def test_the_budget_takes_names_services_and_limits_from_the_pools_it_is_handed(db_url: str) -> None:
    """A budget handed a one-pool table (the ``datacite`` row, declared here as "A mirror", 2/s, burst 7,
    3 in flight) lists that pool only, applies its limits, and its breaker's error names its service in
    the data and the client's message: the budget names no upstream itself.
    """
    mirror = Pool("datacite", "A mirror", lambda _s: PoolLimits(per_s=2, burst=7, in_flight=3))
    store = Store.open(db_url)
    try:
        with freeze_time("2026-11-29 12:00:00"):
            budget = Budget(store, Settings(database_url=db_url), pools=Pools((mirror,)))
            [state] = budget.states()
            assert (state.pool, state.limits.per_s, state.limits.burst, state.limits.in_flight) == (
                "datacite",
                2,
                7,
                3,
            )
            for _ in range(BREAKER_THRESHOLD):
                budget.record_failure("datacite")
            with pytest.raises(UpstreamOffline) as caught:
                budget.try_acquire("datacite")
        info = to_error_info(caught.value)
        assert caught.value.data["service"] == "A mirror"
        assert info.message.startswith("A mirror is offline after repeated failures")
        with pytest.raises(InvalidInput, match="expected one of datacite"):
            budget.reset("crossref_single")
    finally:
        store.close()


def test_a_pool_table_refuses_an_undeclared_group_and_a_name_declared_twice() -> None:
    """A pool naming a group nobody declared, or a name declared twice, is refused when the table is
    composed (never at the first take); its ``budget.<pool>`` settings come from the declaration itself.
    """

    def limits(_s: Settings) -> PoolLimits:
        return PoolLimits(per_s=1, burst=1, in_flight=1)

    assert Pools((Pool("lab_mirror", "Lab mirror", limits),)).names == ("lab_mirror",)
    with pytest.raises(ValueError, match="undeclared group"):
        Pools((Pool("doi", "doi.org", limits, group="resolvers"),))
    with pytest.raises(ValueError, match="declared twice"):
        Pools((Pool("doi", "doi.org", limits), Pool("doi", "doi.org", limits)))
