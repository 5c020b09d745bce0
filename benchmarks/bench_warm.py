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

The floor of an answer of that size (issue 28 item 4): two more benchmark tools answered by the
middleware with a recorded ``crossref_get_work`` answer of the DOI asked (the same text block and
``structuredContent``, so the same bytes through the SDK), built on a worker thread as syncd's tool
bodies run: ``bench_echo`` lists a trivial ``outputSchema`` (``{"type": "object"}``: the SDK's cost of
the answer's size and of the thread hop, no per-value check), ``bench_echo_checked`` lists
``crossref_get_work``'s own published schema (adding the client's check in the session). All four
tools are called in turn in one loop; what ``crossref_get_work`` costs past ``bench_echo_checked``
is syncd's own server side (arguments, lookup, kept view, provenance, budget, the server's check
against the full model).
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


ECHOED: dict[str, tuple[str, dict[str, Any]]] = {}
"""``doi -> (text, structuredContent)`` of a recorded warm ``crossref_get_work`` answer, echoed by
``bench_echo`` and ``bench_echo_checked`` (filled by the benchmark before the timed loop)."""

ECHO_TOOLS = ("bench_echo", "bench_echo_checked")
"""The floor tools: a recorded answer of the DOI asked, trivial schema / crossref_get_work's schema."""


async def with_empty_tool(ctx: Any, call_next: Any) -> Any:
    """Server middleware adding the benchmark's tools: ``bench_empty`` and the echo tools.

    ``tools/list`` gets them appended (``bench_empty``'s ``outputSchema`` the wire form of
    :class:`Pong`; ``bench_echo``'s ``{"type": "object"}``; ``bench_echo_checked``'s the one listed for
    ``crossref_get_work``). A ``tools/call`` of ``bench_empty`` is answered here with ``{"ok": true}``
    (text and structured), so the call costs what the SDK costs (JSON-RPC, session, transport, the
    client's check) and nothing of syncd's; one of an echo tool with the recorded ``crossref_get_work``
    answer of its ``doi`` argument (:data:`ECHOED`), the result built on a worker thread as syncd's
    tool bodies run.
    """
    import anyio.to_thread
    from mcp.types import CallToolResult, TextContent, Tool

    from syncd.contracts.common import wire_schema

    if ctx.method == "tools/list":
        listed = await call_next(ctx)
        tools = (
            listed["tools"]
            if isinstance(listed, dict)
            else [t.model_dump(by_alias=True) for t in listed.tools]
        )
        work_schema = next((t.get("outputSchema") for t in tools if t["name"] == "crossref_get_work"), None)
        doi_args = {"type": "object", "properties": {"doi": {"type": "string"}}, "required": ["doi"]}
        extra = [
            Tool(
                name="bench_empty",
                description=bench_empty.__doc__,
                input_schema={"type": "object", "properties": {}},
                output_schema=wire_schema(Pong.model_json_schema()),
            ),
            Tool(
                name="bench_echo",
                description="A recorded crossref_get_work answer, trivial outputSchema.",
                input_schema=doi_args,
                output_schema={"type": "object"},
            ),
            Tool(
                name="bench_echo_checked",
                description="A recorded crossref_get_work answer, crossref_get_work's outputSchema.",
                input_schema=doi_args,
                output_schema=work_schema or {"type": "object"},
            ),
        ]
        if isinstance(listed, dict):  # the SDK hands the answer on serialized
            wire = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in extra]
            return {**listed, "tools": [*listed["tools"], *wire]}
        return listed.model_copy(update={"tools": [*listed.tools, *extra]})
    name = (ctx.params or {}).get("name") if ctx.method == "tools/call" else None
    if name == "bench_empty":
        answer = bench_empty().model_dump()
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(answer))], structured_content=answer
        )
    if name in ECHO_TOOLS:
        text, structured = ECHOED[ctx.params["arguments"]["doi"]]

        def echo() -> CallToolResult:
            return CallToolResult(
                content=[TextContent(type="text", text=text)], structured_content=structured
            )

        return await anyio.to_thread.run_sync(echo)
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


IN_TURN = ("crossref_get_work", "bench_empty", *ECHO_TOOLS)
"""The tools the timed loop calls in turn, once each per round."""


async def _interleaved(client: Any, argsets: list[dict[str, Any]], reps: int) -> dict[str, list[float]]:
    """Seconds per call of each :data:`IN_TURN` tool, ``reps`` rounds, one call of each per round."""
    times: dict[str, list[float]] = {name: [] for name in IN_TURN}
    for i in range(reps):
        a = argsets[i % len(argsets)]
        for name in IN_TURN:
            t = time.perf_counter()
            res = await client.call_tool(name, {} if name == "bench_empty" else a)
            times[name].append(time.perf_counter() - t)
            if res.is_error:
                raise RuntimeError(f"{name} {a}: {res.structured_content}")
    return times


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
    from syncd.server.app import build_server
    from syncd.store.content import document
    from syncd.tools.fit import answer_size, fit_answer

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
            answers = [await client.call_tool("crossref_get_work", a) for a in argsets]
            ECHOED.update(
                (d, (r.content[0].text, r.structured_content)) for d, r in zip(ok, answers, strict=True)
            )
            await _interleaved(client, argsets, 200)  # warm-up: every view kept, code paths hot
            before = fake.count()
            times = await _interleaved(client, argsets, reps)
            out["requests"] = fake.count() - before
            out["work"], out["empty"] = times["crossref_get_work"], times["bench_empty"]
            out["echo"], out["echo_checked"] = times["bench_echo"], times["bench_echo_checked"]
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
    echo, checked = median(res["echo"]), median(res["echo_checked"])
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
        ("bench_echo via in-memory MCP (same answer, trivial schema, worker thread)", res["echo"]),
        (
            "bench_echo_checked via in-memory MCP (same answer, crossref_get_work's schema)",
            res["echo_checked"],
        ),
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
            "floor of an answer this size: `bench_echo`, a recorded crossref_get_work answer of the DOI "
            "asked (same text and structuredContent), trivial outputSchema, built on a worker thread, median",
            ms(echo),
            comparison=f"empty tool {ms(median(empty))}; the target's bound, 2x the empty tool: "
            f"{ms(TARGET_RATIO * median(empty))}",
            ratio=f"{echo / median(empty):.2f}x the empty tool",
            target="(report: what any tool answering this much costs through the SDK)",
            met=None,
        ),
        Row(
            "15.5",
            "`bench_echo_checked`: the same answers with crossref_get_work's published outputSchema (the "
            "client's check in the session), median",
            ms(checked),
            comparison=f"bench_echo {ms(echo)}: the check in the session costs {ms(checked - echo)}",
            ratio=f"{checked / median(empty):.2f}x the empty tool",
            target="(report)",
            met=None,
        ),
        Row(
            "15.5",
            "syncd's own server side: warm crossref_get_work less bench_echo_checked (arguments, lookup, "
            "kept view, provenance, budget, the server's check against the full model), median difference",
            ms(median(work) - checked),
            comparison=f"tool body alone {ms(median(body))}",
            ratio=f"{(median(work) - checked) / median(empty):.2f}x the empty tool",
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
