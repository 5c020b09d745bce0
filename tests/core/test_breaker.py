"""Issue 6, item 2: the offline breaker is shared through the database and closed by a single probe.

After repeated connection failures a pool is marked offline in the database, so every process (here: a
second store and clients on the same file) answers from the store at once with no request. Once upstream is
back and the cooldown is over, the first call is the one probe: exactly one upstream request, which closes
the breaker; the next calls are normal.

No assert here times anything (timing a first call or a fresh session failed about 1 run in 4 on a busy
machine): requests and breaker failures are counted, "at once" is "no budget wait asked" (the injected
:class:`tests.conftest.Clock` records every wait and moves instead of sleeping), entries are aged with
that clock, and the cooldown's end is written into the pool's row instead of slept out (the breaker reads
only ``offline_until``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client
from sqlalchemy import update

import syncd.budget.buckets
from syncd.errors import UpstreamOffline
from syncd.registry import open_services
from syncd.road.services import Services
from syncd.store.models import BudgetPool
from syncd.store.repo import Store
from tests.conftest import Clock, make_settings
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

DEADLINE_S = 10.0  # no claim here is timed: room for a busy machine
DOI = "10.1101/598821"
OTHER_DOI = "10.1002/jor.1100150407"


def call(cache: Services, tool: str, args: dict[str, Any]) -> Any:
    """One tool call through a real MCP client session; returns the result."""

    async def go() -> Any:
        async with Client(mcp_server(cache)) as client:
            return await client.call_tool(tool, args)

    return asyncio.run(go())


@pytest.fixture
def two_processes(
    fake: FakeUpstream, db_url: str, injected_clock: Clock
) -> Iterator[tuple[Services, Services]]:
    """Two caches ("processes") over the same database (the default 30 s breaker cooldown), one clock."""
    settings_a = make_settings(fake, db_url, deadline_s=DEADLINE_S)
    settings_b = make_settings(fake, db_url, deadline_s=DEADLINE_S)
    store_a, store_b = Store.open(db_url), Store.open(db_url)
    a = open_services(settings_a, store_a, clock=injected_clock, sleep=injected_clock.sleep)
    b = open_services(settings_b, store_b, clock=injected_clock, sleep=injected_clock.sleep)
    yield a, b
    a.close()
    b.close()
    store_a.close()
    store_b.close()


def _open_breaker(a: Services, fake: FakeUpstream, injected_clock: Clock) -> None:
    """Store a work, make it stale, stop upstream and call until crossref_single is offline."""
    first = call(a, "crossref_get_work", {"doi": DOI})
    assert first.is_error is False
    a.settings.ttl.crossref_work = 0.001
    injected_clock.advance(1.0)  # older than its 1 ms lifetime: stale
    fake.stop()
    for _ in range(syncd.budget.buckets.BREAKER_THRESHOLD):
        call(a, "crossref_get_work", {"doi": DOI})
        if a.budget.offline("crossref_single"):
            break
    assert a.budget.offline("crossref_single")


def _end_cooldown(cache: Services) -> None:
    """End the open breaker's cooldown now: its end (``offline_until``) moved just before the present."""
    assert cache.budget.offline("crossref_single")
    with cache.budget.store.write() as conn:
        conn.execute(
            update(BudgetPool)
            .where(BudgetPool.pool == "crossref_single")
            .values(offline_until=cache.budget.clock() - 0.001)
        )


def test_breaker_is_shared_and_one_probe_closes_it(
    two_processes: tuple[Services, Services], fake: FakeUpstream, injected_clock: Clock
) -> None:
    """Open in process A means offline in process B (answer at once, 0 requests); after the cooldown with
    upstream back, B's first call makes exactly one request (the probe) and closes the breaker for both;
    the next calls, including a fetch of a DOI never stored, are normal.
    """
    a, b = two_processes
    _open_breaker(a, fake, injected_clock)
    fake.restart()
    fake.reset_log()
    b.settings.ttl.crossref_work = 0.001
    assert b.budget.offline("crossref_single")
    injected_clock.slept.clear()
    res = call(b, "crossref_get_work", {"doi": DOI})
    assert res.structured_content["cache"]["source"] == "store-stale"
    assert res.structured_content["cache"]["upstream_error"] == "upstream_unavailable"
    assert fake.count(service="crossref") == 0
    assert injected_clock.slept == []  # answered at once: no wait for a token (or a retry) until the deadline
    miss = call(b, "crossref_get_work", {"doi": OTHER_DOI})
    assert miss.structured_content["error"]["data"]["reason"] == "upstream_unavailable"
    assert fake.count(service="crossref") == 0

    assert b.budget.clock() < b.budget.state("crossref_single").offline_until  # still within the cooldown
    _end_cooldown(b)
    probe = call(b, "crossref_get_work", {"doi": DOI})
    assert fake.count(service="crossref") == 1
    assert probe.is_error is False and probe.structured_content["cache"]["source"] == "upstream"
    assert not a.budget.offline("crossref_single") and not b.budget.offline("crossref_single")
    assert a.budget.state("crossref_single").failures == 0

    a.settings.ttl.crossref_work = b.settings.ttl.crossref_work = 86_400.0
    fresh = call(a, "crossref_get_work", {"doi": OTHER_DOI})
    assert fresh.is_error is False and fresh.structured_content["cache"]["source"] == "upstream"
    assert fake.count(service="crossref") == 2
    again = call(b, "crossref_get_work", {"doi": OTHER_DOI})
    assert again.structured_content["cache"]["source"] == "store"
    assert fake.count(service="crossref") == 2


def test_probe_is_granted_to_one_caller_only(
    two_processes: tuple[Services, Services], fake: FakeUpstream, injected_clock: Clock
) -> None:
    """After the cooldown the first try_acquire is the probe; a second process asking meanwhile is held off
    (UpstreamOffline) instead of joining in, so a still-dead upstream sees one request, not a stampede.
    """
    a, b = two_processes
    _open_breaker(a, fake, injected_clock)
    _end_cooldown(a)
    grant = a.budget.try_acquire("crossref_single")
    assert grant.lease is not None and grant.probe is True
    with pytest.raises(UpstreamOffline):
        b.budget.try_acquire("crossref_single")
    a.budget.release(grant.lease)


def test_failed_probe_reopens_the_breaker(
    two_processes: tuple[Services, Services], fake: FakeUpstream, injected_clock: Clock
) -> None:
    """Upstream still down after the cooldown: the probe call fails (one connection attempt: one more
    failure counted, no retry), the stale entry is answered, and the pool is offline again, so the
    following call makes no attempt at all.
    """
    a, b = two_processes
    _open_breaker(a, fake, injected_clock)
    _end_cooldown(a)
    b.settings.ttl.crossref_work = 0.001
    failures = b.budget.state("crossref_single").failures
    res = call(b, "crossref_get_work", {"doi": DOI})
    assert res.structured_content["cache"]["source"] == "store-stale"
    assert b.budget.state("crossref_single").failures == failures + 1  # the probe only: no retry
    assert b.budget.offline("crossref_single")
    res2 = call(a, "crossref_get_work", {"doi": DOI})
    assert res2.structured_content["cache"]["upstream_error"] == "upstream_unavailable"
    assert a.budget.state("crossref_single").failures == failures + 1  # no attempt at all


def test_db_offline_flag_survives_a_new_process(db_url: str, fake: FakeUpstream) -> None:
    """The breaker lives in the database: a process started after it opened sees the pool offline."""
    settings = make_settings(fake, db_url, deadline_s=1.5)
    store = Store.open(db_url)
    cache = open_services(settings, store)
    for _ in range(syncd.budget.buckets.BREAKER_THRESHOLD):
        cache.budget.record_failure("zenodo_general")
    cache.close()
    store.close()
    later = Store.open(db_url)
    try:
        assert open_services(make_settings(fake, db_url), later).budget.offline("zenodo_general")
    finally:
        later.close()
