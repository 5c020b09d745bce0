"""Item 6: bytes per stored work vs its raw JSON, where the bytes go (dbstat), what compressing the
bodies would give, and the resident memory of syncd processes holding the 1M-work store."""

from __future__ import annotations

import asyncio
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import zlib

from benchmarks import bigstore
from benchmarks.corpusgen import make_work, pools
from benchmarks.harness import ROOT, Context, Row, bench, free_port, rss_kb, subprocess_env
from syncd.store.codec import decode_body
from syncd.store.repo import Store

RSS_TARGET_MB = 150


def _size(db: str) -> int:
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = con.execute("PRAGMA page_count").fetchone()[0] * con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    return size


def _breakdown(db: str) -> list[tuple[str, int]]:
    con = sqlite3.connect(db)
    rows = con.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
    con.close()
    return rows


def _compression(db: str, sample: int = 3000) -> dict[str, float]:
    """zlib on a sample of the bodies' JSON text (decoded first: the store keeps them zstd-compressed)."""
    store = Store.open(f"sqlite:///{db}", upgrade=False)  # registers the file's body dictionaries
    con = sqlite3.connect(db)
    maxid = con.execute("SELECT MAX(id) FROM entries").fetchone()[0]
    rng = random.Random(5)
    ids = [rng.randint(1, maxid) for _ in range(sample)]
    raw = z6 = z1 = 0
    t_c = t_d = 0.0
    for i in ids:
        row = con.execute("SELECT body FROM entries WHERE id=?", (i,)).fetchone()
        if not row or not row[0]:
            continue
        b = (decode_body(row[0]) or "").encode("utf-8")
        raw += len(b)
        t = time.perf_counter()
        c = zlib.compress(b, 6)
        t_c += time.perf_counter() - t
        z6 += len(c)
        z1 += len(zlib.compress(b, 1))
        t = time.perf_counter()
        zlib.decompress(c)
        t_d += time.perf_counter() - t
    con.close()
    store.close()
    return {
        "ratio6": z6 / raw,
        "ratio1": z1 / raw,
        "compress_us": t_c / sample * 1e6,
        "decompress_us": t_d / sample * 1e6,
    }


@bench(6, "6", "footprint", figures=("bytes per stored work vs raw JSON",))
def footprint(ctx: Context) -> list[Row]:
    rows: list[Row] = []
    stores = []
    if "import_db" in ctx.results:
        db, n, raw = ctx.results["import_db"]
        stores.append((f"{n:,}-work import store", str(db), n, raw))
    big = bigstore.path_for(1_000_000)
    if big.exists():
        meta = bigstore.meta_for(1_000_000)
        stores.append(("1,000,000-work store", str(big), meta["works"], meta["raw_jsonl_bytes"]))
    for label, db, n, raw in stores:
        size = _size(db)
        r = size / raw
        rows.append(
            Row(
                "6",
                f"{label}: bytes per work {size / n:,.0f} vs raw JSON {raw / n:,.0f}",
                f"{r:.0%}",
                "≤ 50%",
                r <= 0.5,
            )
        )
    if stores:
        label, db, n, raw = stores[0]
        parts = _breakdown(db)
        total = sum(s for _, s in parts)
        ctx.results["footprint_breakdown"] = (
            label,
            [(name, s, s / total) for name, s in parts[:8]],
            total,
            n,
        )
        comp = _compression(db)
        ctx.results["compression"] = comp
        body_bytes = sum(s for name, s in parts if name == "entries")
        projected = (total - body_bytes * (1 - comp["ratio6"])) / raw
        rows.append(
            Row(
                "6",
                f"projection: same store with zlib-6 bodies (bodies shrink to {comp['ratio6']:.0%}; "
                f"+{comp['compress_us']:.0f} µs/write, +{comp['decompress_us']:.0f} µs/read)",
                f"≈ {projected:.0%}",
                "≤ 50%",
                projected <= 0.5,
                note="projection, not a measured store",
            )
        )
    return rows


@bench(6.5, "6", "rss", figures=("daemon RSS on the 1M store",))
def rss(ctx: Context) -> list[Row]:
    from benchmarks.harness import NotMeasured

    big = bigstore.path_for(1_000_000)
    if not big.exists():
        raise NotMeasured("the 1M store is not built (run without --skip-big)")
    fake = ctx.results.get("fake")
    db_url = f"sqlite:///{big}"
    p = pools()
    rng = random.Random(3)
    dois = [make_work(rng.randrange(1_000_000), p=p)["DOI"] for _ in range(50)]
    extra = {
        "SYNCD_TTL__CROSSREF_WORK": "1e9",
        "SYNCD_TTL__MISS": "1e9",
        "SYNCD_REVALIDATE_INTERVAL_S": "3600",
    }
    rows = []

    # the daemon (Streamable HTTP) after answering calls on the 1M store
    port = free_port()
    env = subprocess_env(fake, db_url, ctx.workdir, SYNCD_HTTP__PORT=str(port), **extra)
    proc = subprocess.Popen(
        [sys.executable, "-m", "syncd", "daemon"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.2)
        idle = rss_kb(proc.pid)

        async def calls() -> int:
            from mcp import Client

            ok = 0
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                for _ in range(4):
                    for d in dois:
                        res = await client.call_tool("crossref_get_work", {"doi": d})
                        ok += not res.is_error
            return ok

        ok = asyncio.run(calls())
        busy = rss_kb(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    mb = busy[1] / 1024
    rows.append(
        Row(
            "6",
            f"`syncd daemon` on the 1M store: peak RSS (VmHWM) after {ok} warm crossref_get_work calls "
            f"over HTTP (idle RSS {idle[0] / 1024:.0f} MB, RSS now {busy[0] / 1024:.0f} MB)",
            f"{mb:.0f} MB",
            f"≤ {RSS_TARGET_MB} MB",
            mb <= RSS_TARGET_MB,
        )
    )

    # a process holding the store and running the FTS stand-in search (what crossref_search_works will do)
    script = (
        "import json,sys,re\n"
        "from syncd.store.repo import Store\n"
        "from benchmarks.bench_search import queries\n"
        f"s=Store.open({db_url!r})\n"
        "for q in queries(400): s.search(q, kind='crossref_work')\n"
        "t=open('/proc/self/status').read()\n"
        "print(re.search(r'VmHWM:\\s+(\\d+)',t).group(1))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=subprocess_env(fake, db_url, ctx.workdir, **extra),
    )
    if out.returncode == 0:
        mb = int(out.stdout.strip().splitlines()[-1]) / 1024
        rows.append(
            Row(
                "6",
                "a process holding the 1M store after 400 FTS searches (Store.search): peak RSS",
                f"{mb:.0f} MB",
                f"≤ {RSS_TARGET_MB} MB",
                mb <= RSS_TARGET_MB,
            )
        )
    return rows
