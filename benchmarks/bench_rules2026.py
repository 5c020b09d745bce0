"""Issue 27, first Done-when: four real processes at full load against Crossref's 2026 rules.

The loopback fake (:class:`tests.fakeupstream.FakeUpstream`) enforces Crossref's 2026 limits with
:class:`tests.fakeupstream.CrossrefRules`: 10 single-record requests and 3 list requests per second
(sliding 1 s windows), at most 5 Crossref requests in flight, single and list together, the first
request over any of them answered ``429`` at once (no grace), each answer announcing its limits
(``x-rate-limit-limit``, ``x-rate-limit-interval: 1s``, ``x-concurrency-limit``, ``x-api-pool:
polite-single`` / ``polite-array``, each value doubled as ``"v, v"`` as seen in 2025-26), each admitted
request taking ``LATENCY_S`` to answer (ETag and Last-Modified validators on, so revalidations are
conditional). Halfway through, the fake lowers single records to 5/s and concurrency to 3, announced at
once and enforced two intervals later (no client can keep a limit it has not been told).

Against it, sharing one SQLite store and so one budget: a real ``syncd daemon`` sweeping every second
(``revalidate_batch`` 200) over a store seeded with the corpus's recorded Crossref works and the
search pages the sessions ask for, every one of them stale after ``TTL_S``, and three real ``syncd
mcp`` stdio sessions (the MCP SDK client), each with ``PARALLEL`` calls in flight in a tight loop over
the corpus DOIs: one lane calling ``crossref_get_work``, ``crossref_get_works`` (5 DOIs),
``crossref_search_works`` (the recorded queries) and ``crossref_get_references`` in turn, the other
only the single-record tools (so both pools are pushed to their limits).

What counts comes from the fake (the server's receive times and its own admission log, never the
client's clock): Crossref requests, statuses (429s), most in flight, most requests in any sliding
1 s window (all, single, list; before the lowering and once it is enforced) and the per-second series.
From the sessions: tool calls made and answered (a result that is not an error; ``stale`` counted),
errors by reason, and latency p50/p95 (client wall clock: a report, never a pass/fail figure); from
every process's output, tracebacks. Passing (the Done-when): 0 responses 429, at most 5 in flight (3
once lowered), no window over the limit in force, every call answered, no traceback.

``python -m benchmarks.bench_rules2026 [--duration 60] [--json]`` runs it alone and prints the rows;
``python -m benchmarks --only rules2026 --soak-s 60`` through the runner (target 27.1);
``tests/e2e/test_rules2026_soak.py`` is the 15 s variant in the full test run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import (
    ROOT,
    Context,
    Row,
    bench,
    corpus_dois,
    free_port,
    machine,
    median,
    ms,
    pct,
    settings_for,
    subprocess_env,
)

__all__ = [
    "CONCURRENCY",
    "DURATION_S",
    "LISTS",
    "LOWERED",
    "SINGLE",
    "Soak",
    "rows_of",
    "run_soak",
]

DURATION_S = 60.0
"""Default length of the soak (seconds of full load, after every process is up)."""
SINGLE, LISTS, CONCURRENCY = 10, 3, 5
"""Crossref's 2026 polite pool: single-record and list requests per second, requests in flight."""
LOWERED = {"single": 5, "concurrency": 3}
"""The limits the fake lowers to halfway through (announced at once, enforced two intervals later)."""
GRACE_S = 2.0
"""Seconds between announcing the lowered limits and enforcing them (two 1 s intervals)."""
LATENCY_S = 0.2
"""Seconds each admitted Crossref request takes to answer (in flight meanwhile)."""
TTL_S = 2.0
"""Freshness lifetime of stored works and search pages (seconds): everything goes stale at once."""
SESSIONS = 3
PARALLEL = 2
"""Calls each MCP session keeps in flight (an agent issuing tool calls side by side)."""
BATCH = 5
"""DOIs per ``crossref_get_works`` call."""
QUERIES: tuple[dict[str, Any], ...] = (
    {"query": "ecology", "rows": 2},
    {"query": "ecology", "rows": 10, "filter": {"has-license": "true", "has-abstract": "true"}},
    {"query": "lagotto", "rows": 0, "facets": {"type-name": "*"}},
    {"query": "widget", "rows": 20},
    {"rows": 2},
    {"query": "adfaaf", "rows": 20},
)
"""``crossref_search_works`` arguments, drawn from the recorded ``/works`` queries of the corpus."""


@dataclass
class Call:
    """One tool call as the session saw it: tool, wall-clock latency (s), answered?, stale?, reason."""

    tool: str
    latency_s: float
    answered: bool
    stale: bool = False
    reason: str = ""


@dataclass
class Soak:
    """The figures of one soak run (counts from the fake unless named otherwise; times in seconds)."""

    duration_s: float
    seeded: int
    requests: int = 0
    single: int = 0
    lists: int = 0
    rejected_429: int = 0
    refusals: list[str] = field(default_factory=list)
    arrivals: list[tuple[float, str, bool]] = field(default_factory=list)
    """The fake's log over the full load: (epoch s of the arrival, kind, admitted), for analysis."""
    statuses: dict[str, int] = field(default_factory=dict)
    max_in_flight: int = 0
    max_in_flight_lowered: int = 0
    worst_window: dict[str, int] = field(default_factory=dict)
    worst_window_lowered: dict[str, int] = field(default_factory=dict)
    per_second: list[dict[str, int]] = field(default_factory=list)
    over_limit_windows: int = 0
    calls: int = 0
    answered: int = 0
    stale: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    item_reasons: dict[str, int] = field(default_factory=dict)
    by_tool: dict[str, int] = field(default_factory=dict)
    p50_s: float = 0.0
    p95_s: float = 0.0
    sweeps: int = 0
    tracebacks: list[str] = field(default_factory=list)
    load_start: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_end: tuple[float, float, float] = (0.0, 0.0, 0.0)
    date: str = ""
    lowered_at_s: float = 0.0
    started: float = 0.0
    ended: float = 0.0
    pace_margin_s: float = 0.25

    @property
    def passed(self) -> bool:
        """The Done-when: no 429, in flight and windows within the limits in force, all answered.

        The limits in force: :data:`CONCURRENCY` in flight (:data:`LOWERED` once enforced), the rate of
        each kind per sliding 1 s window; every call answered; no traceback in any process's output.
        """
        return (
            self.rejected_429 == 0
            and self.statuses.get("429", 0) == 0
            and self.max_in_flight <= CONCURRENCY
            and self.max_in_flight_lowered <= LOWERED["concurrency"]
            and self.over_limit_windows == 0
            and self.calls > 0
            and self.answered == self.calls
            and not self.tracebacks
        )


# --- the windows, from the fake's own log ----------------------------------------------------------


def worst_window(stamps: Sequence[float], width_s: float = 1.0) -> int:
    """Most of ``stamps`` (seconds, any order) inside any half-open window ``(t - width_s, t]``."""
    s = sorted(stamps)
    most, lo = 0, 0
    for hi, t in enumerate(s):
        while s[lo] <= t - width_s:
            lo += 1
        most = max(most, hi - lo + 1)
    return most


def over_limit(stamps: Sequence[float], limit_at: Callable[[float], int], width_s: float = 1.0) -> int:
    """How many of ``stamps`` close a window ``(t - width_s, t]`` holding more than ``limit_at(t)``."""
    s = sorted(stamps)
    over, lo = 0, 0
    for hi, t in enumerate(s):
        while s[lo] <= t - width_s:
            lo += 1
        if hi - lo + 1 > limit_at(t):
            over += 1
    return over


def per_second(log: Sequence[tuple[float, str, bool]], start: float, seconds: int) -> list[dict[str, int]]:
    """Admitted single / list requests and 429s per whole second from ``start`` (the fake's clock)."""
    out = [{"single": 0, "lists": 0, "rejected": 0} for _ in range(seconds)]
    for at, kind, ok in log:
        k = int(at - start)
        if 0 <= k < seconds:
            out[k][kind if ok else "rejected"] += 1
    return out


# --- the processes -----------------------------------------------------------------------------------


def _seed(fake: Any, db_url: str, dois: Sequence[str]) -> int:
    """Store every corpus work and every page of :data:`QUERIES` (the fake without rules, a wide budget).

    Every call of the soak then has a stored copy to answer from when the budget says wait (a page
    never stored, of a query without terms, has nothing to answer with: a declared error, which is
    not what the soak measures). Returns how many works were stored.
    """
    from syncd.budget.buckets import Budget
    from syncd.crossref.lookups import get_work
    from syncd.crossref.queries import search_works
    from syncd.errors import SyncdError
    from syncd.normalize.doi import parse_doi
    from syncd.registry import POOLS, open_services
    from syncd.store.repo import Store

    settings = settings_for(fake, db_url)
    store = Store.open(db_url)
    services = open_services(settings, store)
    stored = 0
    try:
        for doi in dois:
            try:
                get_work(services, parse_doi(doi))
                stored += 1
            except SyncdError:
                pass
        for query in QUERIES:
            search_works(services, dict(query))
    finally:
        services.close()
    Budget(store, settings, pools=POOLS).reset()  # the soak starts from full buckets of its own limits
    store.close()
    return stored


def _env(fake: Any, db_url: str, workdir: Path, **extra: str) -> dict[str, str]:
    """The environment of the four processes: the fake's URLs, the store, the soak's lifetimes."""
    return subprocess_env(
        fake,
        db_url,
        workdir,
        SYNCD_DATACITE__BASE_URL=fake.datacite_url,
        SYNCD_TTL__CROSSREF_WORK=str(TTL_S),
        SYNCD_TTL__SEARCH=str(TTL_S),
        PYTHONUNBUFFERED="1",
        **extra,
    )


def _start_daemon(env: dict[str, str], port: int, out: TextIO) -> subprocess.Popen[bytes]:
    """``syncd daemon`` (sweeping every second); returns once ``/healthz`` answers (at most 90 s)."""
    import httpx

    proc = subprocess.Popen(
        [sys.executable, "-m", "syncd", "daemon"],
        env=env,
        cwd=str(ROOT),
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2.0)
            return proc
        except httpx.HTTPError:
            if proc.poll() is not None:
                break
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("syncd daemon did not start (see its log)")


def _plan(dois: Sequence[str], lane: int) -> list[tuple[str, dict[str, Any]]]:
    """The calls of one lane, in a loop over the corpus DOIs.

    Even lanes call the four tools in turn (``crossref_get_works`` and ``crossref_search_works`` use
    list requests); odd lanes only the single-record tools, so the single pool is pushed to its
    limit too while the list pool (3/s) holds the mixed lanes back.
    """
    calls: list[tuple[str, dict[str, Any]]] = []
    n = len(dois)
    for i in range(n):
        doi = dois[(i * 7 + lane * 13) % n]
        batch = [dois[(i * 7 + lane * 13 + k * 11) % n] for k in range(BATCH)]
        calls.append(("crossref_get_work", {"doi": doi}))
        if lane % 2 == 0:
            calls += [
                ("crossref_get_works", {"dois": batch}),
                ("crossref_search_works", dict(QUERIES[(i + lane) % len(QUERIES)])),
            ]
        calls.append(("crossref_get_references", {"doi": dois[(i * 7 + lane * 13 + 5) % n], "limit": 20}))
    return calls


def _judge(tool: str, result: Any, latency_s: float) -> Call:
    data: dict[str, Any] = result.structured_content or {}
    if result.is_error:
        nested = data.get("error")
        error: dict[str, Any] = nested if isinstance(nested, dict) else data
        reason = str(error.get("reason") or (error.get("data") or {}).get("reason") or "")
        if not reason:
            reason = "undeclared: " + " ".join(getattr(c, "text", "") for c in result.content)[:80]
        message = str(error.get("message") or "")[:80]
        return Call(tool, latency_s, False, reason=f"{reason} ({tool.removeprefix('crossref_')}: {message})")
    cache = data.get("cache") or {}
    stale = bool(cache.get("stale"))
    reasons = ",".join(sorted({str(i.get("reason")) for i in data.get("items") or [] if i.get("reason")}))
    if tool == "crossref_get_works":
        stale = stale or any((i.get("cache") or {}).get("stale") for i in data.get("items") or [])
    return Call(tool, latency_s, True, stale=stale, reason=reasons)


async def _lane(
    client: Any, plan: list[tuple[str, dict[str, Any]]], stop_at: float, calls: list[Call]
) -> None:
    i = 0
    while time.monotonic() < stop_at:
        tool, args = plan[i % len(plan)]
        i += 1
        t = time.perf_counter()
        try:
            result = await client.call_tool(tool, args)
        except Exception as exc:  # the session itself failed: an unanswered call
            calls.append(Call(tool, time.perf_counter() - t, False, reason=f"session:{type(exc).__name__}"))
            continue
        calls.append(_judge(tool, result, time.perf_counter() - t))


async def _session(
    env: dict[str, str],
    errlog: TextIO,
    plans: list[list[tuple[str, dict[str, Any]]]],
    ready: asyncio.Event,
    go: asyncio.Event,
    until: list[float],
    calls: list[Call],
) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "syncd", "--log-level", "INFO", "mcp"], env=env, cwd=str(ROOT)
    )
    async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
        await client.list_tools()
        ready.set()
        await go.wait()
        await asyncio.gather(*(_lane(client, plan, until[0], calls) for plan in plans))


async def _drive(
    env: dict[str, str],
    logs: Sequence[TextIO],
    dois: Sequence[str],
    duration_s: float,
    on_start: Callable[[], None],
    calls: list[Call],
) -> None:
    go = asyncio.Event()
    until = [0.0]
    readies = [asyncio.Event() for _ in range(SESSIONS)]
    tasks = [
        asyncio.create_task(
            _session(
                env,
                logs[s],
                [_plan(dois, s * PARALLEL + p) for p in range(PARALLEL)],
                readies[s],
                go,
                until,
                calls,
            )
        )
        for s in range(SESSIONS)
    ]
    waiting: asyncio.Future[Any] = asyncio.ensure_future(asyncio.gather(*(r.wait() for r in readies)))
    await asyncio.wait([waiting, *tasks], timeout=120, return_when=asyncio.FIRST_COMPLETED)
    if not all(r.is_set() for r in readies):
        for t in tasks:
            t.cancel()
        failed = [t for t in tasks if t.done() and t.exception() is not None]
        raise RuntimeError(f"MCP sessions did not start: {failed[0].exception() if failed else 'timeout'!r}")
    until[0] = time.monotonic() + duration_s
    on_start()
    go.set()
    await asyncio.gather(*tasks)


def _clients(env: dict[str, str], logs: list[str], dois: list[str], duration_s: float, out: Any) -> None:
    """The three MCP sessions, in a process of their own (spawned): the fake's clock is never held up
    by the clients' work (JSON, output-schema checks) in one interpreter. Puts ``("start", epoch)``
    when the load starts, then ``("calls", [Call...])``, or ``("error", traceback)``.
    """
    calls: list[Call] = []
    files = [open(p, "w", encoding="utf-8") for p in logs]  # noqa: SIM115 (closed below)
    try:
        asyncio.run(_drive(env, files, dois, duration_s, lambda: out.put(("start", time.time())), calls))
        out.put(("calls", [asdict(c) for c in calls]))
    except BaseException:
        import traceback

        out.put(("error", traceback.format_exc()))
    finally:
        for f in files:
            f.close()


def run_soak(
    duration_s: float = DURATION_S,
    *,
    workdir: Path | None = None,
    lower_at_s: float | None = None,
    pace_margin_s: float | None = None,
    log: Callable[[str], None] = print,
) -> Soak:
    """Run the soak for ``duration_s`` seconds of full load; the limits are lowered at ``lower_at_s``.

    ``lower_at_s`` defaults to half the duration. ``workdir`` holds the store and the processes' logs
    (a temporary directory, removed afterwards, when None). ``pace_margin_s``: the four processes'
    ``budget.pace_margin_s`` (None: the default, 0.25 s).

    Raises:
        RuntimeError: a process could not be started.
    """
    from tests.corpus_path import CORPUS
    from tests.fakeupstream import CrossrefRules, FakeUpstream

    own = workdir is None
    work = Path(tempfile.mkdtemp(prefix="syncd-rules2026-")) if workdir is None else workdir
    work.mkdir(parents=True, exist_ok=True)
    lower_at = duration_s / 2 if lower_at_s is None else lower_at_s
    db_url = f"sqlite:///{work / 'soak.db'}"
    dois = corpus_dois()
    fake = FakeUpstream(CORPUS).start()
    fake.etags = fake.last_modified = True
    daemon: subprocess.Popen[bytes] | None = None
    logs: list[TextIO] = []
    result = Soak(duration_s=duration_s, seeded=0, load_start=os.getloadavg())
    margin = {} if pace_margin_s is None else {"SYNCD_BUDGET__PACE_MARGIN_S": str(pace_margin_s)}
    result.pace_margin_s = 0.25 if pace_margin_s is None else pace_margin_s
    try:
        result.seeded = _seed(fake, db_url, dois)
        log(f"seeded {result.seeded} works; starting the daemon and {SESSIONS} MCP sessions")
        rules = CrossrefRules(
            single=SINGLE, lists=LISTS, concurrency=CONCURRENCY, doubled=True, latency_s=LATENCY_S
        )
        fake.crossref_rules = rules
        port = free_port()
        daemon_log = (work / "daemon.log").open("w")
        logs.append(daemon_log)
        daemon = _start_daemon(
            _env(
                fake,
                db_url,
                work,
                SYNCD_HTTP__PORT=str(port),
                SYNCD_REVALIDATE_INTERVAL_S="1",
                SYNCD_REVALIDATE_BATCH="200",
                **margin,
            ),
            port,
            daemon_log,
        )
        calls = _run_load(
            fake, rules, _env(fake, db_url, work, **margin), work, dois, duration_s, lower_at, result, log
        )
        _tally(result, rules, calls)
    finally:
        if daemon is not None:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                daemon.kill()
        fake.stop()
        for f in logs:
            f.close()
        result.load_end = os.getloadavg()
        result.date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    for path in sorted(work.glob("*.log")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.name == "daemon.log":
            result.sweeps = text.count("event=sweep ")
        if "Traceback (most recent call last)" in text:
            at = text.index("Traceback (most recent call last)")
            result.tracebacks.append(f"{path.name}: {text[at : at + 600]}")
    if own:
        shutil.rmtree(work, ignore_errors=True)
    return result


def _run_load(
    fake: Any,
    rules: Any,
    env: dict[str, str],
    work: Path,
    dois: list[str],
    duration_s: float,
    lower_at: float,
    result: Soak,
    log: Callable[[str], None],
) -> list[Call]:
    """Run the sessions' process for ``duration_s`` and lower the limits at ``lower_at``; the calls made.

    Sets ``result``'s span (``started``/``ended``, the fake's clock), ``lowered_at_s`` and the
    statuses the fake sent over the span.

    Raises:
        RuntimeError: the sessions' process failed (its traceback).
    """
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    logs = [str(work / f"mcp-{s}.log") for s in range(SESSIONS)]
    proc = ctx.Process(target=_clients, args=(env, logs, dois, duration_s, out))
    proc.start()
    try:
        kind, value = out.get(timeout=300)
        if kind == "error":
            raise RuntimeError(f"the MCP sessions failed:\n{value}")
        result.started = time.monotonic() - (time.time() - value)
        before = Counter(fake.statuses)  # answers sent before the full load
        log(f"full load for {duration_s:g} s; limits lowered to {LOWERED} at {lower_at:g} s")
        time.sleep(max(0.0, result.started + lower_at - time.monotonic()))
        rules.change(grace_s=GRACE_S, **LOWERED)
        result.lowered_at_s = time.monotonic() - result.started
        kind, value = out.get(timeout=duration_s + 300)
        result.ended = time.monotonic()
        if kind == "error":
            raise RuntimeError(f"the MCP sessions failed:\n{value}")
        result.statuses = {
            str(status): n
            for (service, status), n in sorted((fake.statuses - before).items())
            if service == "crossref"
        }
        return [Call(**c) for c in value]
    finally:
        proc.join(timeout=60)
        if proc.is_alive():
            proc.kill()


def _tally(result: Soak, rules: Any, calls: list[Call]) -> None:
    """Fill ``result`` from the fake's log (admissions, in-flight) and the sessions' calls."""
    start, end = result.started, result.ended
    log = [(at, kind, ok) for at, kind, ok in rules.log if start <= at <= end]
    admitted = [(at, kind) for at, kind, ok in log if ok]
    result.single = sum(1 for _, k in admitted if k == "single")
    result.lists = sum(1 for _, k in admitted if k == "lists")
    result.requests = len(log)
    result.rejected_429 = rules.rejected
    result.refusals = [f"{at - start:.3f}s {kind} {why}" for at, kind, why in rules.refusals]
    epoch = time.time() - time.monotonic()
    result.arrivals = [(round(at + epoch, 4), kind, ok) for at, kind, ok in log]
    lowered_from = start + result.lowered_at_s + GRACE_S
    before = [(at, k) for at, k in admitted if at < start + result.lowered_at_s]
    after = [(at, k) for at, k in admitted if at >= lowered_from]

    def windows(part: list[tuple[float, str]]) -> dict[str, int]:
        return {
            "all": worst_window([at for at, _ in part]),
            "single": worst_window([at for at, k in part if k == "single"]),
            "lists": worst_window([at for at, k in part if k == "lists"]),
        }

    result.worst_window = windows(before)
    result.worst_window_lowered = windows(after)
    limits = {
        "single": (SINGLE, LOWERED.get("single", SINGLE)),
        "lists": (LISTS, LOWERED.get("lists", LISTS)),
    }
    for kind, (old, new) in limits.items():

        def limit_at(t: float, old: int = old, new: int = new) -> int:
            return new if t >= lowered_from else old

        result.over_limit_windows += over_limit([at for at, k in admitted if k == kind], limit_at)
    spans = rules.admitted_in_flight
    result.max_in_flight = max((n for at, n in spans if start <= at <= end), default=0)
    result.max_in_flight_lowered = max((n for at, n in spans if lowered_from <= at <= end), default=0)
    result.per_second = per_second(log, start, int(end - start) + 1)
    result.calls = len(calls)
    result.answered = sum(1 for c in calls if c.answered)
    result.stale = sum(1 for c in calls if c.answered and c.stale)
    result.errors = dict(Counter(c.reason for c in calls if not c.answered))
    result.item_reasons = dict(
        Counter(r for c in calls if c.answered and c.reason for r in c.reason.split(","))
    )
    result.by_tool = dict(Counter(c.tool for c in calls))
    lat = [c.latency_s for c in calls]
    if lat:
        result.p50_s, result.p95_s = median(lat), pct(lat, 95)


# --- rows --------------------------------------------------------------------------------------------


def _load(la: Sequence[float]) -> str:
    return " / ".join(f"{x:.2f}" for x in la)


def _series(per_s: list[dict[str, int]]) -> str:
    """The per-second series, summarised: min/median/max single and list requests per second."""
    if not per_s:
        return "-"
    single = [float(s["single"]) for s in per_s]
    lists = [float(s["lists"]) for s in per_s]
    return (
        f"single {min(single):g}/{median(single):g}/{max(single):g}, "
        f"list {min(lists):g}/{median(lists):g}/{max(lists):g} (min/median/max per whole second)"
    )


def rows_of(s: Soak, item: str = "27.1") -> list[Row]:
    """The table rows of one soak run."""
    note = (
        f"{s.duration_s:g} s, load {_load(s.load_start)} -> {_load(s.load_end)}, "
        f"pace margin {s.pace_margin_s:g} s"
    )
    errs = ", ".join(f"{k}: {v}" for k, v in sorted(s.errors.items())) or "none"
    items = ", ".join(f"{k}: {v}" for k, v in sorted(s.item_reasons.items())) or "none"
    tools = ", ".join(f"{k.removeprefix('crossref_')} {v:,}" for k, v in sorted(s.by_tool.items()))
    lw, ww = s.worst_window_lowered, s.worst_window
    return [
        Row(
            item,
            f"Crossref requests the fake received ({note}; {s.seeded} stale works seeded, {s.sweeps} sweeps)",
            f"{s.requests:,}",
            comparison=f"single {s.single:,}, list {s.lists:,}",
        ),
        Row(
            item,
            "responses 429",
            f"{s.rejected_429}",
            comparison="; ".join(s.refusals[:5]),
            target="0",
            met=s.rejected_429 == 0,
        ),
        Row(
            item,
            "most requests in flight (single + list)",
            f"{s.max_in_flight}",
            comparison=f"once lowered: {s.max_in_flight_lowered}",
            target=f"≤ {CONCURRENCY} (≤ {LOWERED['concurrency']} lowered)",
            met=s.max_in_flight <= CONCURRENCY and s.max_in_flight_lowered <= LOWERED["concurrency"],
        ),
        Row(
            item,
            "most requests in any sliding 1 s window, before the lowering: all / single / list",
            f"{ww.get('all', 0)} / {ww.get('single', 0)} / {ww.get('lists', 0)}",
            comparison=f"once enforced ({LOWERED['single']}/s single): {lw.get('all', 0)} / "
            f"{lw.get('single', 0)} / {lw.get('lists', 0)}; windows over the limit in force: "
            f"{s.over_limit_windows}",
            target=f"single ≤ {SINGLE} (≤ {LOWERED['single']} lowered), list ≤ {LISTS}",
            met=s.over_limit_windows == 0,
        ),
        Row(item, "per-second series (the fake's clock)", _series(s.per_second)),
        Row(
            item,
            f"tool calls ({SESSIONS} sessions x {PARALLEL} in flight): answered / made",
            f"{s.answered:,} / {s.calls:,}",
            comparison=f"stale {s.stale:,}; errors: {errs}; batch items: {items}; {tools}",
            target="all answered",
            met=s.calls > 0 and s.answered == s.calls,
        ),
        Row(item, "call latency p50 / p95 (client wall clock)", f"{ms(s.p50_s)} / {ms(s.p95_s)}"),
        Row(
            item,
            "tracebacks in the four processes' output",
            str(len(s.tracebacks)),
            target="0",
            met=not s.tracebacks,
        ),
    ]


@bench(27.1, "27.1", "rules2026", figures=("Crossref's 2026 rules, four processes",))
def rules2026(ctx: Context) -> list[Row]:
    """The soak for ``ctx.results['soak_s']`` seconds (default :data:`DURATION_S`; 15 with ``--quick``)."""
    duration = float(ctx.results.get("soak_s") or (15.0 if ctx.quick else DURATION_S))
    soak = run_soak(duration, workdir=ctx.workdir / "rules2026", log=ctx.log)
    ctx.results["rules2026"] = asdict(soak)
    return rows_of(soak)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.bench_rules2026", description=__doc__.splitlines()[0]
    )
    ap.add_argument("--duration", type=float, default=DURATION_S, help="seconds of full load (default 60)")
    ap.add_argument(
        "--lower-at", type=float, default=None, help="second the limits are lowered (default: half)"
    )
    ap.add_argument("--pace-margin", type=float, default=None, help="budget.pace_margin_s (default 0.25)")
    ap.add_argument("--json", action="store_true", help="print the whole result as JSON")
    ap.add_argument("--keep", default="", help="directory to keep the store and the process logs in")
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    log(f"machine: {machine()}")
    soak = run_soak(
        args.duration,
        lower_at_s=args.lower_at,
        pace_margin_s=args.pace_margin,
        workdir=Path(args.keep) if args.keep else None,
        log=log,
    )
    if args.json:
        print(json.dumps(asdict(soak), indent=1))
    print(f"date {soak.date}; load {_load(soak.load_start)} -> {_load(soak.load_end)}; passed: {soak.passed}")
    for r in rows_of(soak):
        print(
            f"- {r.figure}: {r.value}"
            + (f" ({r.comparison})" if r.comparison else "")
            + (f" [{'met' if r.met else 'NOT MET'}]" if r.met is not None else "")
        )
    for t in soak.tracebacks:
        print(t)
    return 0 if soak.passed else 1


if __name__ == "__main__":
    sys.exit(main())
