"""Budget under concurrency: several real processes share one pool against the fake upstream.

Real processes and real time (the budget's rate is what is tested), so the module is ``serial``; no
assert reads the client's clock: rates come from the fake's own receive times (the server's clock),
and "at once" is "no budget wait asked" (each worker records its budget's waits).
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from syncd.crossref.lookups import get_work
from syncd.errors import SyncdError
from syncd.normalize.doi import parse_doi
from syncd.registry import open_services
from syncd.store.repo import Store
from tests.children import BURST, IN_FLIGHT, PER_S, look_up_misses
from tests.conftest import make_settings
from tests.fakeupstream import FakeUpstream

pytestmark = pytest.mark.serial


def test_processes_never_exceed_rate_or_in_flight(fake: FakeUpstream, tmp_path: Path) -> None:
    """3 processes x 6 misses on a 4/s, burst-2, 2-in-flight pool: upstream never sees more than allowed."""
    db_url = f"sqlite:///{tmp_path / 'load.db'}"
    Store.open(db_url).close()
    fake.fault("latency", delay_s=0.15)  # requests overlap, so the in-flight limit is exercised
    ctx = multiprocessing.get_context("spawn")
    out: multiprocessing.Queue = ctx.Queue()
    urls = {"crossref": fake.crossref_url, "zenodo": fake.zenodo_url}
    procs = [ctx.Process(target=look_up_misses, args=(urls, db_url, k * 100, 6, out)) for k in range(3)]
    for p in procs:
        p.start()
    results = [out.get(timeout=120)[0] for _ in procs]
    for p in procs:
        p.join(timeout=30)
    assert sum(r.get("doi_not_found", 0) for r in results) == 18  # every miss got its declared answer
    stamps = sorted(r.at for r in fake.requests if r.service == "crossref")
    assert len(stamps) == 18
    # any window of 1 s holds at most burst + rate x 1 s requests
    worst = max(sum(1 for t in stamps if s <= t < s + 1.0) for s in stamps)
    print(
        f"figures: requests={len(stamps)} worst_1s_window={worst} budget={BURST + PER_S:g} "
        f"max_in_flight={fake.max_in_flight} limit={IN_FLIGHT}"
    )
    assert worst <= BURST + PER_S
    assert fake.max_in_flight <= IN_FLIGHT
    assert stamps[-1] - stamps[0] >= (18 - BURST) / PER_S - 0.5


def test_429_pauses_every_process(fake: FakeUpstream, tmp_path: Path) -> None:
    """One 429 with Retry-After blocks the pool for all processes: the others get rate_limited at once, no
    request (the block outlasts their deadline, so they do not wait: no budget wait is asked in any
    process). The block (300 s, budget.max_block_s) outlasts the workers' start on a busy machine.
    """
    db_url = f"sqlite:///{tmp_path / 'block.db'}"
    Store.open(db_url).close()
    fake.fault("rate_limit", retry_after=300, times=1, service="crossref")
    settings = make_settings(fake, db_url)
    store = Store.open(db_url)
    cache = open_services(settings, store)
    try:
        try:
            get_work(cache, parse_doi("10.5555/first"))
        except SyncdError as exc:
            assert exc.reason == "rate_limited"
        ctx = multiprocessing.get_context("spawn")
        out: multiprocessing.Queue = ctx.Queue()
        urls = {"crossref": fake.crossref_url, "zenodo": fake.zenodo_url}
        fake.reset_log()
        procs = [ctx.Process(target=look_up_misses, args=(urls, db_url, k * 10, 2, out)) for k in range(2)]
        for p in procs:
            p.start()
        reported = [out.get(timeout=120) for _ in procs]
        for p in procs:
            p.join(timeout=30)
    finally:
        cache.close()
        store.close()
    assert all(r == {"rate_limited": 2} for r, _s in reported), reported
    assert fake.count(service="crossref") == 0
    assert all(waits == [] for _r, waits in reported), reported
