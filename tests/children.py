"""The bodies of the child processes that the multi-process tests spawn, in a module of their own.

A spawned child imports the module that holds its target: a test module pulls in pytest, the fixtures,
hypothesis and the MCP SDK (about 2 s of CPU on top of the ~1 s the child's own syncd imports cost),
so the targets live here, importing only syncd. Each puts its result on the queue it is given.
"""

from __future__ import annotations

import multiprocessing
import time
import traceback

from syncd.budget.buckets import LEASE_MARGIN_S, Budget
from syncd.config import Settings
from syncd.crossref.lookups import get_work
from syncd.errors import SyncdError
from syncd.normalize.doi import parse_doi
from syncd.registry import POOLS, open_services
from syncd.store.repo import Store

PER_S = 4.0
"""The concurrency tests' ``crossref_single`` pool: requests per second, burst, in flight."""
BURST = 2.0
IN_FLIGHT = 2
WORKER_DEADLINE_S = 20.0
"""Each concurrency worker's deadline per call, seconds."""


def budget_settings(db_url: str, **pool: float) -> Settings:
    """Settings with a ``crossref_single`` pool of 1/s, burst 3, 2 in flight unless ``pool`` says."""
    limits: dict[str, float] = {"per_s": 1.0, "burst": 3, "in_flight": 2, **pool}
    return Settings(  # the Crossref concurrency shared with crossref_list follows the pool's here
        database_url=db_url,
        budget={"crossref_single": limits, "crossref_in_flight": int(limits["in_flight"])},
        crossref={"mailto": "ci@example.org"},
    )


def hammer(db_url: str, seconds: float, out: multiprocessing.Queue) -> None:  # pragma: no cover - child
    """Take tokens for ``seconds`` (real time) from a 10/s, burst-5 pool; put the budget-clock time of
    every grant on ``out`` (a list of epoch seconds).
    """
    store = Store.open(db_url)
    budget = Budget(store, budget_settings(db_url, per_s=10.0, burst=5, in_flight=50), pools=POOLS)
    granted: list[float] = []
    end = time.time() + seconds
    while time.time() < end:
        grant = budget.try_acquire("crossref_single", hold_s=0.0)
        if grant.lease is not None:
            granted.append(grant.lease.expires_at - LEASE_MARGIN_S)  # the clock read under the row lock
            budget.release(grant.lease)
        else:
            time.sleep(min(grant.wait_s, 0.01))
    out.put(granted)
    store.close()


def look_up_misses(
    urls: dict[str, str], db_url: str, start: int, n: int, out: multiprocessing.Queue
) -> None:  # pragma: no cover - child
    """``get_work`` of ``n`` DOIs upstream does not hold (``10.5555/load-{start}`` on) through a shared
    pool of :data:`PER_S` / :data:`BURST` / :data:`IN_FLIGHT`; puts ``(outcomes, waits)`` on ``out``:
    the count of each answer's reason (``ok`` for a found work) and every wait the budget asked (s).
    """
    settings = Settings(
        database_url=db_url,
        crossref={"base_url": urls["crossref"], "mailto": "ci@example.org"},
        zenodo={"base_url": urls["zenodo"]},
        deadline_s=WORKER_DEADLINE_S,
        budget={"crossref_single": {"per_s": PER_S, "burst": BURST, "in_flight": IN_FLIGHT}},
    )
    outcomes: dict[str, int] = {}
    waits: list[float] = []

    def sleep(seconds: float) -> None:  # the budget's real wait, recorded
        waits.append(seconds)
        time.sleep(seconds)

    try:
        store = Store.open(db_url)
        cache = open_services(settings, store, sleep=sleep)
        for i in range(start, start + n):
            try:
                get_work(cache, parse_doi(f"10.5555/load-{i}"))
                outcomes["ok"] = outcomes.get("ok", 0) + 1
            except SyncdError as exc:
                outcomes[exc.reason] = outcomes.get(exc.reason, 0) + 1
    except BaseException:
        outcomes["crash: " + traceback.format_exc()] = 1
        out.put((outcomes, waits))
        raise
    out.put((outcomes, waits))
    cache.close()
    store.close()
