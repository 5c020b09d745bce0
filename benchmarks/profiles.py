"""pyinstrument profiles of the paths the numbers point at (short tops go into BENCHMARKS.md)."""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import Any

from benchmarks.harness import Context


def _top(profiler: Any, lines: int) -> str:
    text = profiler.output_text(unicode=False, color=False, show_all=False, short_mode=False)
    out = text.splitlines()
    head = [ln.strip() for ln in out if "Duration:" in ln]
    start = next((i for i, ln in enumerate(out) if re.match(r"^\d+\.\d+ ", ln)), 0)
    body = [ln for ln in out[start:] if ln.strip()]
    return "\n".join([re.sub(r"^.*?(Duration:)", r"\1", h) for h in head] + body[:lines])


@contextlib.contextmanager
def _inline_threads():
    """Run ``anyio.to_thread.run_sync`` inline so the tool body shows in the main-thread profile."""
    import anyio.to_thread

    original = anyio.to_thread.run_sync

    async def inline(func, *args, **kwargs):
        return func(*args)

    anyio.to_thread.run_sync = inline
    try:
        yield
    finally:
        anyio.to_thread.run_sync = original


def profile_warm(ctx: Context, calls: int = 600, lines: int = 34) -> None:
    from mcp import Client
    from pyinstrument import Profiler

    from benchmarks.harness import settings_for
    from syncd.cache import Cache
    from syncd.store.repo import Store
    from syncd.tools.server import build_server

    if "warm_dois" not in ctx.results:
        return
    dois = ctx.results["warm_dois"]
    url = ctx.results["url"]
    store = Store.open(url)
    cache = Cache(settings_for(ctx.results["fake"], url), store)

    async def run() -> Profiler:
        async with Client(build_server(cache)) as client:
            for d in dois[:50]:
                await client.call_tool("crossref_get_work", {"doi": d})
            p = Profiler(interval=0.0002, async_mode="disabled")
            p.start()
            for i in range(calls):
                await client.call_tool("crossref_get_work", {"doi": dois[i % len(dois)]})
            p.stop()
            return p

    with _inline_threads():
        p = asyncio.run(run())
    cache.close()
    store.close()
    ctx.profiles[
        f"warm crossref_get_work, in-memory MCP session ({calls} calls, tool body run inline for the profile)"
    ] = _top(p, lines)


def profile_import(ctx: Context, n: int = 5000, lines: int = 30) -> None:
    from pyinstrument import Profiler

    from benchmarks.batchwrite import put_many
    from benchmarks.bench_import import N_IMPORT, _content, _lines, jsonl
    from syncd.store.repo import Store

    path = jsonl(N_IMPORT, ctx.log)
    store = Store.open(f"sqlite:///{ctx.workdir / 'profile_import.db'}")
    p = Profiler(interval=0.0005)
    p.start()
    contents = []
    for line in _lines(path, n):
        contents.append(_content(line))
        if len(contents) >= 1000:
            put_many(store, contents)
            contents = []
    put_many(store, contents)
    p.stop()
    store.close()
    ctx.profiles[f"import, batched direct write path ({n:,} works)"] = _top(p, lines)


def profile_revalidation(ctx: Context, lines: int = 40) -> None:
    """Revalidation of stored Crossref works; upstream's answer (200, same content) replayed in-process."""
    from pyinstrument import Profiler

    from benchmarks.bench_reval import ReplayTransport, _fill
    from benchmarks.harness import fake_upstream, settings_for
    from syncd.cache import Cache
    from syncd.store.repo import Store
    from syncd.upstream.http import Deadline

    fake = ctx.results.get("fake") or ctx.results.setdefault("fake", fake_upstream())
    url = f"sqlite:///{ctx.workdir / 'profile_reval.db'}"
    store = Store.open(url)
    replay = ReplayTransport()
    cache = Cache(settings_for(fake, url), store, transport=replay)
    _fill(cache)
    with store.read() as conn:
        ids = [
            r[0]
            for r in conn.exec_driver_sql("SELECT id FROM entries WHERE kind='crossref_work' AND status='ok'")
        ]
    for i in ids:
        cache.revalidate(store.get_by_id(i), Deadline(10))
    replay.live = False
    p = Profiler(interval=0.0005)
    p.start()
    for _ in range(3):
        for i in ids:
            cache.revalidate(store.get_by_id(i), Deadline(10))
    p.stop()
    cache.close()
    store.close()
    ctx.profiles[
        f"revalidation of {len(ids)} stored Crossref works x3, upstream 200 same content replayed in-process"
    ] = _top(p, lines)
