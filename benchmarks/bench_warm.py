"""Items 1 and 2: warm hits through real MCP client sessions vs the raw floor, a cold call, and the
HTTP-cache alternatives a Python user would assemble (requests-cache, hishel, habanero + hishel)."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import sys
import time
import types
from typing import Any

from benchmarks.harness import (
    ROOT,
    Context,
    NotMeasured,
    Row,
    bench,
    corpus_dois,
    corpus_record_ids,
    fake_upstream,
    median,
    ms,
    pct,
    settings_for,
    subprocess_env,
    timed,
)

SAFE = re.compile(r"^[a-z0-9./_:-]+$")  # DOIs every alternative client can put in a URL unencoded
LATENCY_S = 0.2


async def _mcp_loop(
    client: Any, tool: str, argsets: list[dict[str, Any]], reps: int, warmup: int
) -> list[float]:
    for i in range(warmup):
        await client.call_tool(tool, argsets[i % len(argsets)])
    out = []
    for i in range(reps):
        a = argsets[i % len(argsets)]
        t = time.perf_counter()
        res = await client.call_tool(tool, a)
        out.append(time.perf_counter() - t)
        if res.is_error:
            raise RuntimeError(f"{tool}{a}: {res.structured_content}")
    return out


def _stat_rows(
    item: str, label: str, warm: list[float], floor: list[float] | None, cold: list[float] | None
) -> list[Row]:
    rows = [Row(item, f"{label}: median / p95", f"{ms(median(warm))} / {ms(pct(warm, 95))}", "(see ratios)")]
    if floor:
        r = median(warm) / median(floor)
        rows.append(
            Row(item, f"{label}: median ÷ raw floor ({ms(median(floor))})", f"{r:.1f}x", "≤ 3x", r <= 3)
        )
    if cold:
        r = median(cold) / median(warm)
        rows.append(
            Row(
                item,
                f"{label}: cold call ({ms(median(cold))}, 200 ms injected) ÷ warm median",
                f"{r:,.0f}x faster",
                "≥ 100x",
                r >= 100,
            )
        )
    return rows


@bench(1, "1", "warm hit", figures=("warm hit vs floor and cold call",))
def warm_hit(ctx: Context) -> list[Row]:
    from mcp import Client, StdioServerParameters

    from syncd.cache import Cache, document
    from syncd.lookups import crossref as lk_crossref
    from syncd.lookups import zenodo as lk_zenodo
    from syncd.normalize.doi import parse_doi
    from syncd.normalize.zenodo_id import parse_record_ref
    from syncd.store.repo import Store
    from syncd.tools import crossref as tool_crossref
    from syncd.tools.server import build_server

    reps = 300 if ctx.quick else 2000
    stdio_reps = 150 if ctx.quick else 600
    db = ctx.workdir / "warm.db"
    url = f"sqlite:///{db}"
    fake = fake_upstream()
    ctx.results["fake"] = fake
    settings = settings_for(fake, url)
    store = Store.open(url)
    cache = Cache(settings, store)
    dois = [d for d in corpus_dois() if SAFE.match(d)]
    recids = corpus_record_ids()
    cold_n = 10 if ctx.quick else 25

    async def run() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(build_server(cache)) as client:
            # cold: DOIs not stored yet, every upstream answer delayed by 200 ms
            fake.fault("latency", delay_s=LATENCY_S)
            cold_w, cold_z = [], []
            for d in dois[:cold_n]:
                t = time.perf_counter()
                await client.call_tool("crossref_get_work", {"doi": d})
                cold_w.append(time.perf_counter() - t)
            for r in recids[:cold_n]:
                t = time.perf_counter()
                await client.call_tool("zenodo_get_record", {"id": r})
                cold_z.append(time.perf_counter() - t)
            fake.clear_faults()
            for d in dois[cold_n:]:
                await client.call_tool("crossref_get_work", {"doi": d})
            for r in recids[cold_n:]:
                await client.call_tool("zenodo_get_record", {"id": r})
            out["cold_w"], out["cold_z"] = cold_w, cold_z
            ok_w = [d for d in dois if (e := store.get("crossref_work", d)) and e.status == "ok"]
            ok_z = [r for r in recids if (e := store.get("zenodo_record", r)) and e.status == "ok"]
            out["ok_w"], out["ok_z"] = ok_w, ok_z
            before = fake.count()
            out["mcp_w"] = await _mcp_loop(client, "crossref_get_work", [{"doi": d} for d in ok_w], reps, 100)
            out["mcp_z"] = await _mcp_loop(client, "zenodo_get_record", [{"id": r} for r in ok_z], reps, 100)
            out["warm_requests"] = fake.count() - before
        return out

    res = asyncio.run(run())
    ok_w, ok_z = res["ok_w"], res["ok_z"]
    ctx.results["warm_dois"] = ok_w
    ctx.log(
        f"warm: {len(ok_w)} works, {len(ok_z)} records stored; warm loop made {res['warm_requests']} requests"
    )

    # the raw floor: one SQLite point read + JSON decode of the same body
    con = sqlite3.connect(db)
    keys_w = [("crossref_work", d) for d in ok_w]
    keys_z = [("zenodo_record", r) for r in ok_z]

    def floor_loop(keys: list[tuple[str, str]]) -> list[float]:
        it = iter(range(10**9))

        def one() -> None:
            k = keys[next(it) % len(keys)]
            body = con.execute("SELECT body FROM entries WHERE kind=? AND key=?", k).fetchone()[0]
            json.loads(body)

        return timed(one, reps, warmup=100)

    floor_w, floor_z = floor_loop(keys_w), floor_loop(keys_z)
    con.close()

    # breakdown below the MCP layer (same entries)
    parsed_w = [parse_doi(d) for d in ok_w]
    parsed_z = [parse_record_ref(r) for r in ok_z]
    i = iter(range(10**9))
    lib_w = timed(
        lambda: document(lk_crossref.get_work(cache, parsed_w[next(i) % len(parsed_w)]).entry), reps, 100
    )
    i = iter(range(10**9))
    lib_z = timed(
        lambda: document(lk_zenodo.get_record(cache, parsed_z[next(i) % len(parsed_z)]).entry), reps, 100
    )
    i = iter(range(10**9))
    store_get = timed(lambda: store.get("crossref_work", ok_w[next(i) % len(ok_w)]), reps, 100)
    i = iter(range(10**9))
    tool_w = timed(lambda: tool_crossref.get_work(cache, ok_w[next(i) % len(ok_w)]), reps, 100)

    # stdio: a real `syncd mcp` process on the same store
    async def stdio() -> tuple[list[float], list[float]]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "syncd", "mcp"],
            env=subprocess_env(fake, url, ctx.workdir),
            cwd=str(ROOT),
        )
        async with Client(params) as client:
            w = await _mcp_loop(client, "crossref_get_work", [{"doi": d} for d in ok_w], stdio_reps, 50)
            z = await _mcp_loop(client, "zenodo_get_record", [{"id": r} for r in ok_z], stdio_reps, 50)
        return w, z

    stdio_w, stdio_z = asyncio.run(stdio())
    cache.close()
    store.close()

    ctx.results.update(
        warm_mcp_w=res["mcp_w"],
        warm_lib_w=lib_w,
        warm_floor_w=floor_w,
        db=db,
        url=url,
    )
    ctx.results["warm_breakdown"] = [
        ("raw floor: sqlite3 point read + json.loads (crossref body)", floor_w),
        ("Store.get (SQLAlchemy select, entries ⋈ validations)", store_get),
        ("lookups.crossref.get_work + document() (policy + Store.get + json.loads)", lib_w),
        ("tools.crossref.get_work (+ work_view, model_dump, render_work)", tool_w),
        ("crossref_get_work via in-memory MCP session", res["mcp_w"]),
        ("crossref_get_work via stdio MCP (`syncd mcp` subprocess)", stdio_w),
        ("raw floor: zenodo body", floor_z),
        ("lookups.zenodo.get_record + document()", lib_z),
        ("zenodo_get_record via in-memory MCP session", res["mcp_z"]),
        ("zenodo_get_record via stdio MCP", stdio_z),
    ]
    rows: list[Row] = []
    rows += _stat_rows("1", "crossref_get_work warm, in-memory MCP", res["mcp_w"], floor_w, res["cold_w"])
    rows += _stat_rows("1", "crossref_get_work warm, stdio MCP", stdio_w, floor_w, res["cold_w"])
    rows += _stat_rows("1", "zenodo_get_record warm, in-memory MCP", res["mcp_z"], floor_z, res["cold_z"])
    rows += _stat_rows("1", "zenodo_get_record warm, stdio MCP", stdio_z, floor_z, res["cold_z"])
    rows.append(
        Row(
            "1",
            "upstream requests made by the warm loops",
            str(res["warm_requests"]),
            "0",
            res["warm_requests"] == 0,
        )
    )
    return rows


def _habanero_behind_hishel(fake: Any, path: str):
    import habanero.request as hreq
    import hishel
    import httpx2
    from habanero import Crossref
    from hishel.httpx2 import CacheClient

    client = CacheClient(storage=hishel.SqliteStorage(database_path=path))
    shim = types.SimpleNamespace(**{n: getattr(httpx2, n) for n in dir(httpx2) if not n.startswith("__")})
    shim.get = client.get  # habanero calls the module-level httpx2.get: route it through the cache
    hreq.httpx2 = shim
    cr = Crossref(base_url=fake.crossref_url, mailto="bench@example.org")
    return lambda doi: cr.works(ids=doi)["message"], client


@bench(2, "2", "alternatives", figures=("HTTP-cache alternatives, warm",))
def alternatives(ctx: Context) -> list[Row]:
    if "warm_dois" not in ctx.results:
        raise NotMeasured("needs the warm-hit benchmark (item 1) in the same run")
    import hishel
    import requests_cache
    from hishel.httpx import CacheClient

    fake = ctx.results["fake"]
    dois = ctx.results["warm_dois"]
    reps = 300 if ctx.quick else 2000
    base = fake.crossref_url
    alts: dict[str, Any] = {}

    rc = requests_cache.CachedSession(str(ctx.workdir / "rc"), backend="sqlite")
    alts["requests-cache (SQLite) + requests"] = lambda d: rc.get(f"{base}/works/{d}").json()["message"]
    hc = CacheClient(storage=hishel.SqliteStorage(database_path=str(ctx.workdir / "hishel.db")))
    alts["hishel (SQLite) + httpx"] = lambda d: hc.get(f"{base}/works/{d}").json()["message"]
    try:
        fn, _client = _habanero_behind_hishel(fake, str(ctx.workdir / "hishel2.db"))
        alts["habanero + hishel (SQLite) on httpx2"] = fn
    except Exception as exc:
        ctx.log(f"habanero: not measured ({exc})")

    rows: list[Row] = []
    syncd_lib = median(ctx.results["warm_lib_w"])
    syncd_mcp = median(ctx.results["warm_mcp_w"])
    for name, get in alts.items():
        for d in dois:  # fill the cache (no latency)
            get(d)
        before = fake.count()
        it = iter(range(10**9))
        samples = timed(lambda get=get, it=it: get(dois[next(it) % len(dois)]), reps, 100)
        hits = fake.count() - before
        m = median(samples)
        rows.append(
            Row(
                "2",
                f"{name}: warm median / p95 (requests during loop: {hits})",
                f"{ms(m)} / {ms(pct(samples, 95))}",
            )
        )
        rows.append(
            Row(
                "2",
                f"{name} ÷ syncd lookup (get_work + document(), {ms(syncd_lib)})",
                f"{m / syncd_lib:.2f}x",
            )
        )
        rows.append(
            Row(
                "2",
                f"{name} ÷ syncd crossref_get_work in-memory MCP ({ms(syncd_mcp)})",
                f"{m / syncd_mcp:.2f}x",
            )
        )
    return rows
