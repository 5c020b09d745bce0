"""cProfile of the warm ``crossref_get_work`` path, client and server in one process (target 5).

The SDK runs synchronous tool bodies on worker threads, which one profiler does not see; for the
profile they run inline on the event loop (``anyio.to_thread.run_sync`` replaced for the duration),
so the client's validation, the SDK's dispatch and serialization and syncd's tool body are in one
table. Profiling slows every call down several times; read the shares, not the times.
"""

from __future__ import annotations

import asyncio
import contextlib
import cProfile
import io
import pstats
import re
from collections.abc import Iterator
from typing import Any

from benchmarks.harness import Context

GROUPS: tuple[tuple[str, str], ...] = (
    (
        "client: jsonschema check of the answer (validate_tool_result)",
        r"session\.py:\d+\(validate_tool_result\)",
    ),
    ("server: syncd tool body (spec.run: lookup, kept view, render)", r"params\.py:\d+\(run\)"),
    ("  of which the store read (Store.get)", r"repo\.py:\d+\(get\)$"),
    ("  of which the work view (work_view, on a miss of the kept views)", r"crossref\.py:\d+\(work_view\)"),
    ("  of which the provenance block (Provenance.as_dict)", r"policy\.py:\d+\(as_dict\)"),
    ("server: fit_answer (answer_max_chars check)", r"fit\.py:\d+\(fit_answer\)"),
    (
        "server: SDK's pydantic check of the answer (convert_result)",
        r"func_metadata\.py:\d+\(convert_result\)",
    ),
    ("server: argument model (ToolSpec.parse)", r"params\.py:\d+\(parse\)"),
    ("SDK: result serialization (runner _serialize)", r"runner\.py:\d+\(_serialize\)"),
    ("client: result model (validate_server_result)", r"methods\.py:\d+\(validate_server_result\)"),
    ("one call end to end (Client.call_tool)", r"client\.py:\d+\(call_tool\)"),
)
"""Rows of the profile summary: a label and the pstats function key (file:line(name)) it sums."""


@contextlib.contextmanager
def _inline_threads() -> Iterator[None]:
    """Run ``anyio.to_thread.run_sync`` inline so the tool body shows in the main-thread profile."""
    import anyio.to_thread

    original = anyio.to_thread.run_sync

    async def inline(func: Any, *args: Any, **kwargs: Any) -> Any:
        return func(*args)

    anyio.to_thread.run_sync = inline
    try:
        yield
    finally:
        anyio.to_thread.run_sync = original


def summarize(stats: pstats.Stats, calls: int) -> str:
    """Cumulative time per call of each :data:`GROUPS` entry, and its share of one call."""
    table: dict[str, float] = {}
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    for (filename, line, name), (_cc, _nc, _tt, ct, _callers) in raw.items():
        key = f"{filename.rsplit('/', 1)[-1]}:{line}({name})"
        for label, pattern in GROUPS:
            if re.search(pattern, key):
                table[label] = max(table.get(label, 0.0), ct)  # recursion: the outermost frame
    whole = table.get(GROUPS[-1][0]) or 1.0
    lines = [f"{'part of one warm call (profiled, inline threads)':70} {'per call':>10} {'share':>6}"]
    for label, _ in GROUPS:
        if label in table:
            lines.append(f"{label:70} {table[label] / calls * 1e6:8.0f} µs {table[label] / whole:6.0%}")
    out = io.StringIO()
    stats.stream = out  # type: ignore[attr-defined]
    stats.sort_stats("tottime").print_stats(12)
    top = [ln for ln in out.getvalue().splitlines() if re.match(r"\s*\d", ln)]
    lines += ["", "top functions by own time (ncalls, tottime, percall, cumtime, percall, function):"]
    lines += [re.sub(r"/\S*/site-packages/|/\S*/lib/python3\.\d+/|/work/main/", "", ln) for ln in top]
    return "\n".join(lines)


def profile_warm(ctx: Context, calls: int = 1000) -> None:
    """Profile ``calls`` warm ``crossref_get_work`` calls in one in-memory session (ctx.profiles)."""
    from mcp import Client

    from benchmarks.bench_warm import open_services
    from syncd.registry import mcp_specs
    from syncd.server.app import build_server

    dois = ctx.results.get("warm_dois")
    if not dois:
        return
    svc, store, _url = open_services(ctx, "profile.db")
    profiler = cProfile.Profile()

    async def run() -> None:
        async with Client(build_server(svc, *mcp_specs(svc.settings))) as client:
            for d in dois:
                await client.call_tool("crossref_get_work", {"doi": d})
            for d in dois:
                await client.call_tool("crossref_get_work", {"doi": d})
            profiler.enable()
            for i in range(calls):
                await client.call_tool("crossref_get_work", {"doi": dois[i % len(dois)]})
            profiler.disable()

    try:
        with _inline_threads():
            asyncio.run(run())
    finally:
        svc.close()
        store.close()
    ctx.profiles[f"warm crossref_get_work, in-memory MCP session, {calls:,} calls (cProfile)"] = summarize(
        pstats.Stats(profiler), calls
    )
