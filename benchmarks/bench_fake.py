"""Issue 15, target 6: what the fake upstream itself costs per answer, so cold-path figures measure syncd.

One ``httpx.Client`` (one keep-alive connection) GETs a recorded Crossref work from the loopback fake with
no fault injected; a fresh ``http.client`` connection per request is timed beside it (connect + request +
close, no TLS context). Before the fix (stdlib defaults: unbuffered writer, Nagle on) each keep-alive
answer waited ~40 ms for the client's delayed ACK of the header segment.
"""

from __future__ import annotations

import http.client

from benchmarks.harness import Context, Row, bench, fake_upstream, median, ms, pct, timed

WORK_PATH = "/works/10.1002/jor.1100150407"
TARGET_S = 0.001


@bench(6, "15.6", "fake upstream", figures=("fake upstream: keep-alive GET, no fault injected",))
def fake_speed(ctx: Context) -> list[Row]:
    import httpx

    reps = 200 if ctx.quick else 2000
    fake = fake_upstream()
    try:
        url = fake.url("crossref", WORK_PATH)
        with httpx.Client() as client:
            size = len(client.get(url).content)
            keep_alive = timed(lambda: client.get(url).raise_for_status(), reps, warmup=20)

        def fresh() -> None:
            conn = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=5)
            try:
                conn.request("GET", f"/crossref{WORK_PATH}")
                conn.getresponse().read()
            finally:
                conn.close()

        per_connection = timed(fresh, reps, warmup=20)
    finally:
        fake.stop()
    m = median(keep_alive)
    rows = [
        Row(
            "15.6",
            f"fake upstream, no fault injected: one keep-alive httpx GET of a recorded work "
            f"({size:,} bytes), "
            f"median of {reps:,} (p95 {ms(pct(keep_alive, 95))})",
            ms(m),
            comparison=f"a new connection per GET: {ms(median(per_connection))}",
            ratio=f"{m / median(per_connection):.2f}x",
            target="well under 1 ms",
            met=m < TARGET_S,
        )
    ]
    cold = _cold_calls(ctx)
    if cold:
        c = median(cold)
        rows.append(
            Row(
                "15.6",
                f"cold `crossref_get_work` through an in-memory MCP session (DOI not stored, "
                f"the fake answers at once), median of {len(cold)}",
                ms(c),
                comparison=f"the fake's own keep-alive GET: {ms(m)}",
                ratio=f"fake = {m / c:.0%} of the cold call",
                target="(report: cold figures measure syncd)",
                met=None,
            )
        )
    return rows


def _cold_calls(ctx: Context) -> list[float]:
    """Cold ``crossref_get_work`` calls on a fresh store, each DOI once (no latency injected)."""
    import asyncio
    import time

    from mcp import Client

    from benchmarks.bench_warm import open_services
    from benchmarks.harness import corpus_dois
    from syncd.registry import mcp_specs
    from syncd.server.app import build_server

    svc, store, _url = open_services(ctx, "cold.db")
    dois = corpus_dois()
    out: list[float] = []

    async def run() -> None:
        async with Client(build_server(svc, *mcp_specs(svc.settings))) as client:
            await client.call_tool("crossref_get_work", {"doi": dois[-1]})
            for d in dois[:-1]:
                t = time.perf_counter()
                res = await client.call_tool("crossref_get_work", {"doi": d})
                if not res.is_error:
                    out.append(time.perf_counter() - t)

    try:
        asyncio.run(run())
    finally:
        svc.close()
        store.close()
    return out
