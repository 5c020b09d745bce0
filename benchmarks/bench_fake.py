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


@bench(0.5, "15.6", "fake upstream", figures=("fake upstream: keep-alive GET median / p95",))
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
    return [
        Row(
            "15.6",
            f"fake upstream, no fault injected: one keep-alive httpx GET of a recorded work "
            f"({size:,} bytes), median / p95 over {reps:,} "
            f"(a new connection per GET: median {ms(median(per_connection))})",
            f"{ms(m)} / {ms(pct(keep_alive, 95))}",
            "median < 1 ms",
            m < TARGET_S,
        )
    ]
