"""Item 6: bytes per stored work vs its raw JSON, where the bytes go (dbstat), what compressing the
bodies would give, and the resident memory of syncd processes holding the 1M-work store; issue 28
item 5: the daemon's RSS during a revalidation sweep of the largest cached store, ``syncd mcp`` idle.
``python -m benchmarks.bench_footprint sweep`` runs just the sweep and idle figures."""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

from benchmarks import bigstore
from benchmarks.corpusgen import make_work, pools
from benchmarks.harness import ROOT, Context, Row, bench, fake_upstream, free_port, rss_kb, subprocess_env
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


SWEEP_RSS_TARGET_MB = 150
"""Peak RSS of ``syncd daemon`` during a revalidation sweep of a 1,000,000-work store (issue 28 item 5)."""
MCP_IDLE_TARGET_MB = 100
"""RSS of an idle ``syncd mcp`` after ``initialize`` (issue 28 item 5)."""
SWEEP_WATCH_S = 90.0
"""Seconds the daemon's RSS is sampled once its first sweep started."""


def _largest_store() -> tuple[int, Path] | None:
    """The largest cached big store (1M, else 100k works), or None."""
    for n in (1_000_000, 100_000):
        if bigstore.path_for(n).exists():
            return n, bigstore.path_for(n)
    return None


_EMPTY_LIST = {
    "status": "ok",
    "message-type": "work-list",
    "message-version": "1.0.0",
    "message": {"total-results": 0, "items": [], "items-per-page": 100},
}


def sweep_rss_mb(db: Path, workdir: Path, fake: Any, watch_s: float = SWEEP_WATCH_S) -> dict[str, float]:
    """``syncd daemon`` on a copy of ``db`` with every work stale and a sweep of the whole store.

    ``SYNCD_TTL__CROSSREF_WORK=1`` (every work stale), ``SYNCD_REVALIDATE_BATCH`` the store's size (one
    sweep over all of it), the first sweep 5 s after start, upstream the loopback fake (its
    ``filter=doi:`` list requests answered with an empty list: each work is then confirmed by its own
    ``/works/{doi}``, answered 404, at the budget's pace). VmRSS is sampled every 0.25 s for
    ``watch_s`` seconds of sweeping; returns the idle RSS before the sweep, the peak during it (VmHWM)
    and the entries checked meanwhile.
    """
    copy = workdir / "sweep.db"
    shutil.copy(db, copy)
    fake.set_body("crossref", "/works", _EMPTY_LIST)  # every list request: none of the generated works
    works = sqlite3.connect(copy).execute("SELECT count(*) FROM entries").fetchone()[0]
    port = free_port()
    env = subprocess_env(
        fake,
        f"sqlite:///{copy}",
        workdir,
        SYNCD_HTTP__PORT=str(port),
        SYNCD_TTL__CROSSREF_WORK="1",
        SYNCD_REVALIDATE_BATCH=str(works),
        SYNCD_REVALIDATE_INTERVAL_S="3600",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "syncd", "daemon"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(4.0)
        idle = rss_kb(proc.pid)[0]
        end = time.monotonic() + 5.0 + watch_s
        peak = 0
        while time.monotonic() < end and proc.poll() is None:
            peak = max(peak, rss_kb(proc.pid)[1])
            time.sleep(0.25)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    con = sqlite3.connect(copy)
    checked = con.execute(
        "SELECT count(*) FROM validations WHERE checks > 1 OR last_error IS NOT NULL"
    ).fetchone()
    con.close()
    copy.unlink(missing_ok=True)
    return {"works": works, "idle_mb": idle / 1024, "peak_mb": peak / 1024, "checked": checked[0]}


def mcp_idle_rss_mb(workdir: Path, db_url: str) -> float:
    """VmRSS of ``syncd mcp`` (stdio) 2 s after answering ``initialize``, in MiB.

    On a new store (``db_url`` naming no file yet) the process first runs the migrations (Alembic
    imported); on a store at the schema head it reads ``alembic_version`` alone (no Alembic).
    """
    from benchmarks.bench_startup import INITIALIZE

    proc = subprocess.Popen(
        [sys.executable, "-m", "syncd", "mcp"],
        env=subprocess_env(None, db_url, workdir),
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        proc.stdin.flush()
        line = proc.stdout.readline()
        if b'"result"' not in line:
            raise RuntimeError(f"syncd mcp answered initialize with {line[:200]!r}")
        time.sleep(2.0)
        return rss_kb(proc.pid)[0] / 1024
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


@bench(6.6, "28.5", "sweep rss", figures=("daemon RSS during a sweep; syncd mcp idle RSS",))
def sweep_rss(ctx: Context) -> list[Row]:
    """Peak RSS of the daemon sweeping the largest cached store, and ``syncd mcp`` idle."""
    from benchmarks.harness import NotMeasured

    found = _largest_store()
    if found is None:
        raise NotMeasured("no big store is built (benchmarks.bigstore)")
    n, db = found
    fake = ctx.results.get("fake") or fake_upstream()
    got = sweep_rss_mb(db, ctx.workdir, fake)
    mcp_db = f"sqlite:///{ctx.workdir / 'mcp.db'}"
    first_mcp = mcp_idle_rss_mb(ctx.workdir, mcp_db)  # a new store: this start runs the migrations
    idle_mcp = mcp_idle_rss_mb(ctx.workdir, mcp_db)  # the store at head: every later start
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    return [
        Row(
            "28.5",
            f"`syncd daemon` during a revalidation sweep of the {n:,}-work store (every work stale, "
            f"revalidate_batch {got['works']:,}): peak RSS over {SWEEP_WATCH_S:.0f} s of sweeping, "
            f"{got['checked']:,} entries checked meanwhile (idle before: {got['idle_mb']:.0f} MB)",
            f"{got['peak_mb']:.0f} MB",
            f"≤ {SWEEP_RSS_TARGET_MB} MB (at 1M works)",
            got["peak_mb"] <= SWEEP_RSS_TARGET_MB,
            note=f"load {load}" + ("" if n == 1_000_000 else f"; {n:,} works, the 1M store not built"),
        ),
        Row(
            "28.5",
            "`syncd mcp` (stdio) idle RSS, 2 s after answering initialize, on a store at the schema head "
            "(every start but the first)",
            f"{idle_mcp:.0f} MB",
            f"≤ {MCP_IDLE_TARGET_MB} MB",
            idle_mcp <= MCP_IDLE_TARGET_MB,
            note=f"load {load}",
        ),
        Row(
            "28.5",
            "`syncd mcp` (stdio) idle RSS on its first start with a new store (Alembic imported and the "
            "migrations run before initialize is answered)",
            f"{first_mcp:.0f} MB",
            note=f"load {load}; Python keeps the memory the migrations used",
        ),
    ]


if __name__ == "__main__" and sys.argv[1:2] == ["sweep"]:
    import tempfile

    for row in sweep_rss(
        Context(workdir=Path(tempfile.mkdtemp(prefix="bench-sweep-")), quick=True, log=print)
    ):
        print(f"{row.figure}: {row.value} (target {row.target}, met {row.met}; {row.note})")
