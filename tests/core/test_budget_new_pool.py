"""A declared pool whose ``budget_pools`` row no migration made: the budget creates it at the first take."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import delete, select

from syncd.budget.buckets import Budget, Outcome
from syncd.budget.pools import Pool, PoolLimits, Pools
from syncd.config import Settings
from syncd.errors import StoreError
from syncd.store.models import BudgetPool
from syncd.store.repo import Store

pytestmark = pytest.mark.both_backends

NOW = 1_800_000_000.0
"""The injected budget clock of the counting test (epoch seconds; it stands still)."""
POOL = "datacite"
"""A pool name with a ``budget.<name>`` settings section (composed from the DataCite slice's pools)."""


def _published(settings: Settings) -> PoolLimits:
    return PoolLimits(per_s=2.0, burst=4, in_flight=3)


TABLE = Pools((Pool(POOL, "A new registry", _published),))
"""A pool table of one pool, declared here (as a new slice's ``pools.py`` would), no migration for it."""


def _without_row(store: Store) -> None:
    """Drop the pool's row: the store as a new slice finds it (no migration ever inserted it)."""
    with store.write() as conn:
        conn.execute(delete(BudgetPool).where(BudgetPool.pool == POOL))


def _rows(store: Store) -> list[tuple[str, int]]:
    with store.read() as conn:
        query = select(BudgetPool.pool, BudgetPool.requests_total).where(BudgetPool.pool == POOL)
        return [(r.pool, r.requests_total) for r in conn.execute(query)]


def test_first_take_of_a_pool_without_a_row_creates_it_and_counts(db_url: str) -> None:
    """No row for the declared pool: the first take is granted (a full bucket of the declared burst,
    4), the row exists afterwards, the released request is counted (``requests_total`` 1), and the
    bucket holds the burst less the one taken (3 tokens, refilled from now on).
    """
    store = Store.open(db_url)
    try:
        _without_row(store)
        assert _rows(store) == []
        budget = Budget(store, Settings(database_url=db_url), pools=TABLE, clock=lambda: NOW)
        assert budget.state(POOL).tokens == 4.0  # read only: the full bucket the first take will find
        assert _rows(store) == []
        grant = budget.try_acquire(POOL)
        assert grant.lease is not None
        assert _rows(store) == [(POOL, 0)]
        budget.release(grant.lease, Outcome.ANSWERED)
        assert _rows(store) == [(POOL, 1)]
        state = budget.state(POOL)
        assert state.in_flight == 0
        assert state.tokens == 3.0  # the budget's clock stood still: nothing refilled
    finally:
        store.close()


def test_a_block_before_any_take_creates_the_row(db_url: str) -> None:
    """A release-side write (a 429's block) on a pool with no row creates it and blocks it."""
    store = Store.open(db_url)
    try:
        _without_row(store)
        budget = Budget(store, Settings(database_url=db_url), pools=TABLE, clock=lambda: NOW)
        budget.block(POOL, 30.0)
        assert _rows(store) == [(POOL, 0)]
        assert budget.state(POOL).blocked_for(NOW) == 30.0
    finally:
        store.close()


def test_a_pool_not_declared_gets_no_row(db_url: str) -> None:
    """A take of a name the budget was not handed creates nothing and fails (no stray row)."""
    store = Store.open(db_url)
    try:
        budget = Budget(store, Settings(database_url=db_url), pools=TABLE)
        with pytest.raises(StoreError, match="not a declared pool"):
            budget.try_acquire("no_such_pool")
        with store.read() as conn:
            assert (
                conn.execute(select(BudgetPool.pool).where(BudgetPool.pool == "no_such_pool")).first() is None
            )
    finally:
        store.close()


def test_two_first_takers_at_once_create_one_row(db_url: str) -> None:
    """Two engines (as two processes) take the pool's first token at the same moment: both are granted,
    one row exists, and both requests are counted on it (``requests_total`` 2).
    """
    stores = [Store.open(db_url), Store.open(db_url)]
    try:
        _without_row(stores[0])
        budgets = [Budget(s, Settings(database_url=db_url), pools=TABLE) for s in stores]
        start = threading.Barrier(2)
        errors: list[BaseException] = []

        def take(budget: Budget) -> None:
            try:
                start.wait(timeout=10)
                grant = budget.try_acquire(POOL)
                assert grant.lease is not None
                budget.release(grant.lease, Outcome.ANSWERED)
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=take, args=(b,)) for b in budgets]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert errors == []
        assert _rows(stores[0]) == [(POOL, 2)]
    finally:
        for s in stores:
            s.close()
