"""Pacing counts a request where upstream counts it: by when it left, and while it is in flight.

Crossref counts requests by their arrival. A take (the budget's write transaction) happens before the
request leaves, and on a busy machine the gap can pass ``budget.pace_margin_s`` (found by the issue 27
soak, ``benchmarks/bench_rules2026.py``: one list request answered 429 at load 10 on 2 cores although
every take kept 3 per 1.25 s). So a send is dated by the moment its request left (given at release),
and one still in flight after the window slid past its take counts until released. Injected clock,
no sleeps.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from syncd.budget.buckets import LEASE_POLL_S, Announcement, Budget, Lease, Outcome
from syncd.config import Settings
from syncd.crossref.client import CrossrefClient
from syncd.registry import POOLS
from syncd.store.repo import Store
from syncd.upstream.http import Deadline
from tests.conftest import corpus_json

T0 = 1_800_000_000.0
LISTS = Announcement(limit=3, interval_s=1.0, in_flight=5, api_pool="polite-array")
"""What a 2026 polite list answer announces: 3 per 1 s (paced as 3 per 1.25 s), 5 in flight."""


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(f"sqlite:///{tmp_path / 'send-time.db'}")
    yield s
    s.close()


def _budget(store: Store, now: list[float]) -> Budget:
    settings = Settings(database_url=str(store.engine.url), crossref={"mailto": "ci@example.org"})
    return Budget(store, settings, pools=POOLS, clock=lambda: now[0])


def _announced(budget: Budget, now: list[float]) -> None:
    """One list answer announcing :data:`LISTS`, 10 s before ``now`` (its send out of every window)."""
    at = now[0]
    now[0] -= 10.0
    grant = budget.try_acquire("crossref_list")
    assert grant.lease is not None
    budget.release(grant.lease, Outcome.ANSWERED, announced=LISTS, sent_at=now[0])
    now[0] = at


def _take(budget: Budget, n: int) -> list[Lease]:
    leases = [budget.try_acquire("crossref_list").lease for _ in range(n)]
    assert all(leases)
    return [lease for lease in leases if lease is not None]


def test_a_request_that_left_late_counts_from_when_it_left(store: Store) -> None:
    """Three list slots taken at t0 whose requests left 0.5 s later (answered at t0 + 0.7): at t0 + 1.3
    the window (3 per 1.25 s) still holds them, so a fourth take waits until t0 + 1.75 (0.45 s);
    dated by their takes, it would have been granted at t0 + 1.26 while they arrive at t0 + 0.5, four
    arrivals within one second.
    """
    now = [T0]
    budget = _budget(store, now)
    _announced(budget, now)
    leases = _take(budget, 3)
    now[0] = T0 + 0.7
    for lease in leases:
        budget.release(lease, Outcome.ANSWERED, announced=LISTS, sent_at=T0 + 0.5)
    now[0] = T0 + 1.3
    refused = budget.try_acquire("crossref_list")
    assert refused.lease is None and refused.why == "window"
    assert refused.wait_s == pytest.approx(0.45)
    assert budget.state("crossref_list").window_sends == (T0 + 0.5,) * 3
    now[0] = T0 + 1.76
    assert budget.try_acquire("crossref_list").lease is not None


def test_a_request_still_in_flight_past_the_window_counts_until_released(store: Store) -> None:
    """Three list slots taken at t0 and still in flight at t0 + 2 (a slow answer; a request that left
    late may arrive any moment): the window is full (a poll's wait, not a 1.25 s one); once one is
    answered (it left at t0), a take is granted at once.
    """
    now = [T0]
    budget = _budget(store, now)
    _announced(budget, now)
    leases = _take(budget, 3)
    now[0] = T0 + 2.0
    refused = budget.try_acquire("crossref_list")
    assert refused.lease is None and refused.why == "window"
    assert refused.wait_s == pytest.approx(LEASE_POLL_S)
    budget.release(leases[0], Outcome.ANSWERED, announced=LISTS, sent_at=T0)
    assert budget.try_acquire("crossref_list").lease is not None


def test_a_send_is_never_dated_before_its_take_or_after_its_release(store: Store) -> None:
    """``sent_at`` is bounded: one before the take keeps the take's time, one after now is dated now
    (the release's clock); a request not sent gives its send back.
    """
    now = [T0]
    budget = _budget(store, now)
    early, late, unsent = _take(budget, 3)
    now[0] = T0 + 0.4
    budget.release(early, Outcome.ANSWERED, sent_at=T0 - 5.0)
    budget.release(late, Outcome.ANSWERED, sent_at=T0 + 60.0)
    budget.release(unsent, Outcome.NOT_SENT, sent_at=T0 + 0.1)
    with store.read() as conn:
        at = dict(conn.execute(text("SELECT id, at FROM budget_sends")).all())
    assert at == {early.id: T0, late.id: T0 + 0.4}


def test_the_client_dates_the_send_by_when_the_request_left(store: Store) -> None:
    """Through the Crossref client: the take at t0, the request leaving 0.6 s later (a slow commit, a
    busy machine), the answer 0.3 s after that: the send is stored at t0 + 0.6, not at the take (t0)
    nor at the answer (t0 + 0.9).
    """
    now = [T0]
    settings = Settings(database_url=str(store.engine.url), crossref={"mailto": "ci@example.org"})

    class SlowToSend(Budget):
        def acquire(self, pool: str, max_wait_s: float) -> Lease:
            lease = super().acquire(pool, max_wait_s)
            now[0] += 0.6  # between the take and the request leaving
            return lease

    left: list[float] = []

    def answer(request: httpx.Request) -> httpx.Response:
        left.append(now[0])
        now[0] += 0.3
        return httpx.Response(200, json=corpus_json("crossref/work/10.1101_598821.json"))

    budget = SlowToSend(store, settings, pools=POOLS, clock=lambda: now[0])
    client = CrossrefClient(settings, budget, transport=httpx.MockTransport(answer))
    try:
        assert client.get_work("10.1101/598821", Deadline(5.0)).status == "ok"
    finally:
        client.close()
    with store.read() as conn:
        query = text("SELECT at FROM budget_sends WHERE pool = 'crossref_single'")
        sent = conn.execute(query).scalars().all()
    assert left == [T0 + 0.6] and sent == [T0 + 0.6]
