"""Issue 15, target 5: a warm ``crossref_get_work`` against an empty tool in the same in-memory MCP
session, and where its time goes.

One in-memory ``mcp.Client(server)`` session on syncd's server with one extra tool added for the
benchmark by a server middleware, ``bench_empty`` (no argument, a one-field output model, answered by
the middleware: the SDK's own cost of a call). The
recorded Crossref works are fetched once from the loopback fake, then ``crossref_get_work`` and
``bench_empty`` are called in turn, so both see the same machine load. Beside it, without MCP: the
client's ``jsonschema`` check of one answer (the SDK client validates every answer against the listed
``outputSchema``; built as the SDK builds it, compiled once), the tool body, the answer budget check,
the lookup layer and a raw floor (one ``SELECT body`` on a plain sqlite3 table holding the uncompressed
bodies + ``json.loads``). The client's check without the SDK is also timed against the models' own
schemas (``$defs`` and nullable ``anyOf``), as they were published before ``wire_schema``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import time
from typing import Any

from pydantic import BaseModel, Field

from benchmarks.harness import (
    Context,
    Row,
    bench,
    corpus_dois,
    fake_upstream,
    median,
    ms,
    pct,
    settings_for,
    timed,
)

TARGET_RATIO = 2.0


class Pong(BaseModel):
    """The empty tool's answer."""

    ok: bool = Field(description="Always true.")


def bench_empty() -> Pong:
    """Do nothing (the benchmark's empty tool)."""
    return Pong(ok=True)


async def with_empty_tool(ctx: Any, call_next: Any) -> Any:
    """Server middleware adding the benchmark's empty tool ``bench_empty`` to syncd's server.

    ``tools/list`` gets it appended (its ``outputSchema`` the wire form of :class:`Pong`); a
    ``tools/call`` of it is answered here with ``{"ok": true}`` (text and structured), so the call
    costs what the SDK costs (JSON-RPC, session, transport, the client's check) and nothing of syncd's.
    """
    from mcp.types import CallToolResult, TextContent, Tool

    from syncd.contracts.common import wire_schema

    if ctx.method == "tools/list":
        listed = await call_next(ctx)
        empty = Tool(
            name="bench_empty",
            description=bench_empty.__doc__,
            input_schema={"type": "object", "properties": {}},
            output_schema=wire_schema(Pong.model_json_schema()),
        )
        if isinstance(listed, dict):  # the SDK hands the answer on serialized
            wire = empty.model_dump(mode="json", by_alias=True, exclude_none=True)
            return {**listed, "tools": [*listed["tools"], wire]}
        return listed.model_copy(update={"tools": [*listed.tools, empty]})
    if ctx.method == "tools/call" and (ctx.params or {}).get("name") == "bench_empty":
        answer = bench_empty().model_dump()
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(answer))], structured_content=answer
        )
    return await call_next(ctx)


def client_validator(schema: dict[str, Any]) -> Any:
    """A validator built as ``mcp.client.session.ClientSession`` builds it (compiled once, empty registry)."""
    from jsonschema.validators import validator_for
    from referencing import Registry

    cls = validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, registry=Registry())


def validate_like_the_client(validator: Any, instance: Any) -> None:
    """What the SDK client runs on every answer: ``best_match(iter_errors(...))``."""
    from jsonschema.exceptions import best_match

    if best_match(validator.iter_errors(instance)) is not None:
        raise AssertionError("answer does not fit its schema")


async def _interleaved(
    client: Any, argsets: list[dict[str, Any]], reps: int
) -> tuple[list[float], list[float]]:
    work, empty = [], []
    for i in range(reps):
        a = argsets[i % len(argsets)]
        t = time.perf_counter()
        res = await client.call_tool("crossref_get_work", a)
        work.append(time.perf_counter() - t)
        if res.is_error:
            raise RuntimeError(f"crossref_get_work {a}: {res.structured_content}")
        t = time.perf_counter()
        await client.call_tool("bench_empty", {})
        empty.append(time.perf_counter() - t)
    return work, empty


def open_services(ctx: Context, name: str) -> tuple[Any, Any, str]:
    """A fresh store ``name`` in the work dir and its Services against the run's fake upstream."""
    from syncd.registry import open_services
    from syncd.store.repo import Store

    fake = ctx.results.get("fake") or ctx.results.setdefault("fake", fake_upstream())
    url = f"sqlite:///{ctx.workdir / name}"
    store = Store.open(url)
    return open_services(settings_for(fake, url), store), store, url


@bench(5, "15.5", "warm get_work", figures=("warm crossref_get_work ÷ empty tool, same in-memory session",))
def warm_get_work(ctx: Context) -> list[Row]:
    from mcp import Client
    from pydantic import TypeAdapter

    from syncd.crossref import lookups as lk_crossref
    from syncd.normalize.doi import parse_doi
    from syncd.registry import mcp_specs, tool_specs
    from syncd.store.content import document
    from syncd.tools.fit import answer_size, fit_answer
    from syncd.tools.server import build_server

    reps = 400 if ctx.quick else 3000
    micro = 300 if ctx.quick else 2000
    svc, store, _url = open_services(ctx, "warm.db")
    fake = ctx.results["fake"]
    server = build_server(svc, *mcp_specs(svc.settings))
    server.middleware.append(with_empty_tool)
    spec = next(s for s in tool_specs() if s.name == "crossref_get_work")
    dois = corpus_dois()

    async def session() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(server) as client:
            for d in dois:
                await client.call_tool("crossref_get_work", {"doi": d})
            ok = [d for d in dois if (e := store.get("crossref_work", d)) is not None and e.status == "ok"]
            out["ok"] = ok
            listed = {t.name: t.output_schema for t in (await client.list_tools()).tools}
            out["schema"], out["empty_schema"] = listed["crossref_get_work"], listed["bench_empty"]
            argsets = [{"doi": d} for d in ok]
            await _interleaved(client, argsets, 200)  # warm-up: every view kept, code paths hot
            before = fake.count()
            out["work"], out["empty"] = await _interleaved(client, argsets, reps)
            out["requests"] = fake.count() - before
            answers = [await client.call_tool("crossref_get_work", a) for a in argsets]
            out["answers"] = [r.structured_content for r in answers]
            out["texts"] = [r.content[0].text for r in answers]
        return out

    res = asyncio.run(session())
    ok, answers = res["ok"], res["answers"]
    ctx.results["warm_dois"] = ok
    ctx.log(f"warm: {len(ok)} works stored; the timed loop made {res['requests']} upstream requests")

    # the client's check of one answer, compiled once as the SDK does
    wire = client_validator(res["schema"])
    model = client_validator(TypeAdapter(spec.output).json_schema())
    tiny = client_validator(res["empty_schema"])
    it = iter(range(10**9))
    v_wire = timed(lambda: validate_like_the_client(wire, answers[next(it) % len(answers)]), micro, 50)
    it = iter(range(10**9))
    v_model = timed(lambda: validate_like_the_client(model, answers[next(it) % len(answers)]), micro, 50)
    v_tiny = timed(lambda: validate_like_the_client(tiny, {"ok": True}), micro, 50)

    # below MCP: the tool body, the answer budget, the lookup layer
    args = [spec.parse({"doi": d}) for d in ok]
    it = iter(range(10**9))
    body = timed(lambda: spec.run(svc, args[next(it) % len(args)]), micro, 50)
    results = [spec.run(svc, a) for a in args]
    it = iter(range(10**9))

    def fitted() -> None:
        i = next(it) % len(results)
        fit_answer(spec.fit, results[i], args[i].arguments(), svc.settings.answer_max_chars)

    fit = timed(fitted, micro, 50)
    parsed = [parse_doi(d) for d in ok]
    it = iter(range(10**9))
    layer = timed(
        lambda: document(lk_crossref.get_work(svc, parsed[next(it) % len(parsed)]).entry), micro, 50
    )
    it = iter(range(10**9))
    store_get = timed(lambda: store.get("crossref_work", ok[next(it) % len(ok)]), micro, 50)

    # the raw floor of target 3: the uncompressed bodies in a plain table, one point read + json.loads
    plain = ctx.workdir / "plain-bodies.db"
    con = sqlite3.connect(plain, isolation_level=None)
    con.execute("CREATE TABLE IF NOT EXISTS bodies (key TEXT PRIMARY KEY, body TEXT NOT NULL)")
    rows = []
    for d in ok:
        e = store.get("crossref_work", d)
        text = e.body if isinstance(e.body, str) else json.dumps({"message": document(e)})
        rows.append((d, text))
    con.executemany("INSERT OR REPLACE INTO bodies VALUES (?, ?)", rows)
    it = iter(range(10**9))
    floor = timed(
        lambda: json.loads(
            con.execute("SELECT body FROM bodies WHERE key = ?", (ok[next(it) % len(ok)],)).fetchone()[0]
        ),
        micro,
        50,
    )
    con.close()
    svc.close()
    store.close()

    work, empty = res["work"], res["empty"]
    ratio = median(work) / median(empty)
    text_chars = median([len(t) for t in res["texts"]])
    json_chars = median([len(json.dumps(a, ensure_ascii=False)) for a in answers])
    compact = all(
        not t.lstrip().startswith("{") and json.dumps(a)[:200] not in t
        for t, a in zip(res["texts"], answers, strict=True)
    )
    size = median([answer_size(t, a) for t, a in zip(res["texts"], answers, strict=True)])
    ctx.results["warm"] = {"work": work, "empty": empty, "ratio": ratio, "validation": v_wire}
    ctx.results["warm_breakdown"] = [
        ("raw floor: plain sqlite3 point read + json.loads (uncompressed body)", floor),
        ("Store.get (the stored entry, body as stored)", store_get),
        ("lookup layer: lookups.crossref.get_work + document()", layer),
        ("tool body: crossref_get_work spec.run (lookup + kept view + render_work)", body),
        ("fit_answer (answer_max_chars check: JSON size of the answer)", fit),
        ("client jsonschema check of one answer, published schema", v_wire),
        ("client jsonschema check, the model's own schema ($defs, anyOf)", v_model),
        ("client jsonschema check, empty tool's answer", v_tiny),
        ("bench_empty via in-memory MCP (SDK cost of a call)", empty),
        ("crossref_get_work warm via in-memory MCP", work),
    ]
    n = len(ok)
    return [
        Row(
            "15.5",
            f"warm crossref_get_work, in-memory MCP session, median of {reps:,} calls over {n} stored works "
            f"(p95 {ms(pct(work, 95))}; upstream requests during the loop: {res['requests']})",
            ms(median(work)),
            comparison=f"empty tool `bench_empty`, same session, calls interleaved: {ms(median(empty))} "
            f"(p95 {ms(pct(empty, 95))})",
            ratio=f"{ratio:.2f}x",
            target=f"≤ {TARGET_RATIO:g}x",
            met=ratio <= TARGET_RATIO,
        ),
        Row(
            "15.5",
            "client's jsonschema check of one answer against the published outputSchema "
            f"(`wire_schema`: no $ref/anyOf; {len(json.dumps(res['schema'])):,} chars), median",
            ms(median(v_wire)),
            comparison=f"same answers against the model's own schema ($defs + nullable anyOf, "
            f"{len(json.dumps(TypeAdapter(spec.output).json_schema())):,} chars): {ms(median(v_model))}; "
            f"empty tool's answer: {ms(median(v_tiny))}",
            ratio=f"{median(v_wire) / median(v_model):.2f}x of the model schema; "
            f"{median(v_wire) / median(work):.0%} of the warm call",
            target="(report: the SDK client runs it on every answer)",
            met=None,
        ),
        Row(
            "15.5",
            "text block of a warm answer, median chars (compact Markdown, not the JSON again: "
            f"{'yes' if compact else 'NO'})",
            f"{text_chars:,.0f} chars",
            comparison=f"structuredContent as JSON: {json_chars:,.0f} chars (answer size {size:,.0f} chars)",
            ratio=f"{text_chars / json_chars:.2f}x",
            target="a compact rendering, not the JSON",
            met=compact,
        ),
        Row(
            "15.5",
            "warm crossref_get_work less the client's jsonschema check (both medians above; what the call "
            "would cost a client that does not validate)",
            ms(median(work) - median(v_wire)),
            comparison=f"empty tool less its check: {ms(median(empty) - median(v_tiny))}",
            ratio=f"{(median(work) - median(v_wire)) / (median(empty) - median(v_tiny)):.2f}x",
            target="(report)",
            met=None,
        ),
        Row(
            "15.5",
            "tool body alone (`crossref_get_work` spec.run: store read, policy, kept view, render), median",
            ms(median(body)),
            comparison=f"whole warm call {ms(median(work))}",
            ratio=f"{median(body) / median(work):.0%} of the call",
            target="(report)",
            met=None,
        ),
    ]


PEERS_REPS = 2000
"""Warm hits timed per contestant in the peers benchmark (each contestant one call in turn)."""


def _peer_contestants(ctx: Context, ok: list[str]) -> tuple[dict[str, Any], list[Any]]:
    """Each contestant's warm hit ``doi -> the work's message as a dict`` and what to close after.

    The raw floor (plain sqlite3 point read of the uncompressed body + ``json.loads``), syncd's lookup
    layer (``lookups.crossref.get_work`` + ``document()`` on its own store), and the two HTTP caches a
    Python user would put in front of the Crossref API: hishel's ``CacheClient`` on httpx with its
    SQLite storage, and requests-cache's ``CachedSession`` on requests with its SQLite backend, both
    pointed at the same loopback fake. Every cache is filled once before timing.
    """
    import hishel
    import requests_cache
    from hishel.httpx import CacheClient

    from syncd.crossref import lookups as lk_crossref
    from syncd.crossref.rules import WORK_RULES
    from syncd.normalize.doi import parse_doi
    from syncd.store.content import document

    svc, store, _url = open_services(ctx, "peers.db")
    fake = ctx.results["fake"]
    base = fake.crossref_url
    parsed = {d: parse_doi(d) for d in ok}
    for d in ok:
        lk_crossref.get_work(svc, parsed[d])
    plain = sqlite3.connect(ctx.workdir / "peers-plain.db", isolation_level=None)
    plain.execute("CREATE TABLE IF NOT EXISTS bodies (key TEXT PRIMARY KEY, body TEXT NOT NULL)")
    for d in ok:
        entry = store.get("crossref_work", d)
        plain.execute(
            "INSERT OR REPLACE INTO bodies VALUES (?, ?)",
            (d, json.dumps({"message": document(entry, WORK_RULES)})),
        )
    rc = requests_cache.CachedSession(str(ctx.workdir / "peers-requests-cache"), backend="sqlite")
    hc = CacheClient(storage=hishel.SqliteStorage(database_path=str(ctx.workdir / "peers-hishel.db")))
    contestants: dict[str, Any] = {
        "raw floor: plain sqlite3 point read + json.loads (uncompressed body)": lambda d: json.loads(
            plain.execute("SELECT body FROM bodies WHERE key = ?", (d,)).fetchone()[0]
        )["message"],
        "syncd lookup layer: lookups.crossref.get_work + document()": lambda d: document(
            lk_crossref.get_work(svc, parsed[d]).entry, WORK_RULES
        ),
        "hishel (SQLite storage) + httpx": lambda d: hc.get(f"{base}/works/{d}").json()["message"],
        "requests-cache (SQLite backend) + requests": lambda d: rc.get(f"{base}/works/{d}").json()["message"],
    }
    for get in contestants.values():
        for d in ok:
            get(d)
    return contestants, [hc, rc, plain, svc, store]


@bench(
    5.5, "28.6", "peers", figures=("warm hit: syncd's lookup layer beside hishel + httpx and requests-cache",)
)
def peers(ctx: Context) -> list[Row]:
    """Issue 28 item 6: a warm hit of syncd's lookup layer beside the HTTP caches a user would assemble."""
    from benchmarks.harness import NotMeasured

    ok = ctx.results.get("warm_dois")
    if not ok:
        raise NotMeasured("needs the warm get_work benchmark (its stored DOIs) in the same run")
    reps = 300 if ctx.quick else PEERS_REPS
    contestants, to_close = _peer_contestants(ctx, ok)
    fake = ctx.results["fake"]
    samples: dict[str, list[float]] = {name: [] for name in contestants}
    same = {
        name: get(ok[0]) == contestants[next(iter(contestants))](ok[0]) for name, get in contestants.items()
    }
    before = fake.count()
    load_before = os.getloadavg()
    for i in range(50 + reps):  # 50 warm-up rounds, then every contestant one call in turn
        doi = ok[i % len(ok)]
        for name, get in contestants.items():
            t = time.perf_counter()
            get(doi)
            if i >= 50:
                samples[name].append(time.perf_counter() - t)
    requests = fake.count() - before
    load_after = os.getloadavg()
    for thing in to_close:
        thing.close()
    names = list(contestants)
    floor, layer = median(samples[names[0]]), median(samples[names[1]])
    note = (
        f"median of {reps:,} warm hits over {len(ok)} works, contestants in turn; upstream requests during "
        f"the loop: {requests}; load {load_before[0]:.2f} before, {load_after[0]:.2f} after"
    )
    ctx.results["peers"] = {name: median(s) for name, s in samples.items()}
    rows = []
    for name in names:
        m = median(samples[name])
        rows.append(
            Row(
                "28.6",
                f"{name}: median / p95 (each hit the work asked for: {'yes' if same[name] else 'NO'})",
                f"{ms(m)} / {ms(pct(samples[name], 95))}",
                comparison=f"raw floor {ms(floor)}; syncd lookup layer {ms(layer)}",
                ratio=f"{m / floor:.2f}x floor; {m / layer:.2f}x the lookup layer",
                target="lookup layer ahead of both peers" if name == names[1] else "(report)",
                met=(layer < min(median(samples[n]) for n in names[2:])) if name == names[1] else None,
                note=note if name == names[0] else "",
            )
        )
    return rows
