"""Issue 27's first Done-when, short: four real processes at full load against Crossref's 2026 rules.

The 15 s variant of ``benchmarks/bench_rules2026.py`` (the 60 s soak of BENCHMARKS.md): the loopback
fake enforces 10 single-record and 3 list requests per sliding second and 5 Crossref requests in
flight across both, answers the first request over with a 429 and announces its limits (doubled
values) on every answer; at 7 s it lowers single records to 5/s and concurrency to 3 (announced at
once, enforced 2 s later). A real ``syncd daemon`` sweeps a store of stale corpus works every second
while three real ``syncd mcp`` sessions call ``crossref_get_work``, ``crossref_get_works``,
``crossref_search_works`` and ``crossref_get_references`` two at a time in a tight loop, one store and
one budget for all four.

Real processes and real time (the budget's pacing across processes is what is tested), so the module
is ``serial`` and part of the full run only (``full``: ``SYNCD_TEST_FULL=1``, ``.ci/run``). Every claim
is a count: the fake's own (429s answered, most in flight at any admission, requests per sliding 1 s
window of its receive clock) and the sessions' (calls made and answered); none reads the client's
wall clock. The processes run with ``budget.pace_margin_s`` 0.5 s, the setting that absorbs the delay
between a request leaving and upstream reading it: on a 2-core machine at load 12-17 that delay
reached 0.42 s now and then (BENCHMARKS.md, issue 27), past the default 0.25 s, and the suite must
pass on a busy machine; the 60 s benchmark keeps the default. The budget's own accounting (a send
dated by when it left, counted while in flight) is held by ``tests/core/test_budget_send_time.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.bench_rules2026 import CONCURRENCY, LISTS, LOWERED, SINGLE, run_soak

pytestmark = [pytest.mark.full, pytest.mark.serial]  # real processes, real time

SOAK_S = 15.0
LOWER_AT_S = 7.0
PACE_MARGIN_S = 0.5


def test_four_processes_at_full_load_meet_crossrefs_2026_rules(tmp_path: Path) -> None:
    """Daemon sweep + three MCP sessions for 15 s against the 2026 rules, lowered at 7 s: upstream
    answers no 429, never sees more than 5 requests in flight (3 once the lowering is enforced) nor a
    sliding second over the limit in force, both pools carry load, and every tool call is answered
    (stale where the budget said wait), with no traceback in any process's output.
    """
    soak = run_soak(SOAK_S, workdir=tmp_path, lower_at_s=LOWER_AT_S, pace_margin_s=PACE_MARGIN_S, log=print)
    print(
        f"figures: requests={soak.requests} single={soak.single} lists={soak.lists} "
        f"429={soak.rejected_429} in_flight={soak.max_in_flight}/{soak.max_in_flight_lowered} "
        f"windows={soak.worst_window}/{soak.worst_window_lowered} calls={soak.calls} "
        f"answered={soak.answered} stale={soak.stale} errors={soak.errors}"
    )
    assert soak.seeded >= 80  # the corpus's Crossref works, all stored before the soak
    assert soak.rejected_429 == 0 and soak.statuses.get("429", 0) == 0, soak.statuses
    assert soak.max_in_flight <= CONCURRENCY
    assert soak.max_in_flight_lowered <= LOWERED["concurrency"]
    assert soak.over_limit_windows == 0
    assert soak.worst_window["single"] <= SINGLE and soak.worst_window["lists"] <= LISTS
    assert soak.worst_window_lowered["single"] <= LOWERED["single"]
    assert soak.single > 0 and soak.lists > 0  # both pools were used: the sweep's lists, the sessions' works
    assert soak.calls >= 3 and soak.answered == soak.calls, soak.errors
    assert set(soak.by_tool) == {
        "crossref_get_work",
        "crossref_get_works",
        "crossref_search_works",
        "crossref_get_references",
    }
    assert not soak.tracebacks, soak.tracebacks
