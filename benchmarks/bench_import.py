"""Item 3: import throughput (works/s) of a Crossref JSON Lines file of 100,000 generated works,
full-text index included: through the store's write path directly now, through ``syncd cache import``
once it exists."""

from __future__ import annotations

import json
import multiprocessing as mp
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.corpusgen import GENERATOR_VERSION, write_jsonl
from benchmarks.harness import CACHE, ROOT, Context, NotMeasured, Row, bench, subprocess_env

N_IMPORT = 100_000
TARGET = 5000
ENVELOPE = '{"status":"ok","message-type":"work","message":'


def jsonl(n: int, log) -> Path:
    path = CACHE / f"works-{n}-g{GENERATOR_VERSION}.jsonl"
    if not path.exists():
        t = time.perf_counter()
        write_jsonl(path, n)
        log(
            f"import: generated {path.name} ({path.stat().st_size / 1e6:,.0f} MB) "
            f"in {time.perf_counter() - t:.0f} s"
        )
    return path


def _content(line: str):
    from syncd.lookups.crossref import work_content

    m = json.loads(line)
    return work_content(m["DOI"].lower(), m, ENVELOPE + line.rstrip("\n") + "}")


def _chunk(lines: list[str]) -> list:
    return [_content(line) for line in lines]


def _lines(path: Path, limit: int | None = None):
    with path.open(encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if limit is not None and i >= limit:
                return
            yield line


def _db_bytes(db: Path) -> int:
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pages = con.execute("PRAGMA page_count").fetchone()[0] * con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    return pages


def import_batched(path: Path, db: Path, workers: int = 1, limit: int | None = None) -> tuple[int, float]:
    from benchmarks.batchwrite import put_many
    from syncd.store.repo import Store

    store = Store.open(f"sqlite:///{db}")
    t = time.perf_counter()
    n = 0
    batch: list[str] = []
    if workers <= 1:
        contents = []
        for line in _lines(path, limit):
            contents.append(_content(line))
            if len(contents) >= 1000:
                n += put_many(store, contents)
                contents = []
        n += put_many(store, contents)
    else:

        def chunks():
            nonlocal batch
            for line in _lines(path, limit):
                batch.append(line)
                if len(batch) >= 1000:
                    yield batch
                    batch = []
            if batch:
                yield batch

        with mp.get_context("fork").Pool(workers) as pool:
            for contents in pool.imap(_chunk, chunks()):
                n += put_many(store, contents)
    elapsed = time.perf_counter() - t
    store.close()
    return n, elapsed


@bench(3, "3", "import direct", figures=("import works/s (direct write path)",))
def import_direct(ctx: Context) -> list[Row]:
    from syncd.store.repo import Store

    n = 20_000 if ctx.quick else N_IMPORT
    path = jsonl(N_IMPORT, ctx.log)
    raw = sum(len(line.encode("utf-8")) for line in _lines(path, n))
    rows = []
    db1 = ctx.workdir / "import1.db"
    got, el = import_batched(path, db1, 1, n)
    rate = got / el
    rows.append(
        Row(
            "3",
            f"import {got:,} works, batched put_many (1,000/txn), 1 process, FTS included",
            f"{rate:,.0f} works/s",
            f"≥ {TARGET:,} works/s",
            rate >= TARGET,
        )
    )
    ctx.results["import_db"] = (db1, got, raw)
    db2 = ctx.workdir / "import2.db"
    got2, el2 = import_batched(path, db2, 2, n)
    rate2 = got2 / el2
    rows.append(
        Row(
            "3",
            f"import {got2:,} works, batched, 2 parser processes + 1 writer, FTS included",
            f"{rate2:,.0f} works/s",
            f"≥ {TARGET:,} works/s",
            rate2 >= TARGET,
        )
    )
    db2.unlink(missing_ok=True)
    # the single-entry path every lookup uses: work_content + Store.put_content, one transaction each
    single_n = 2_000 if ctx.quick else 10_000
    store = Store.open(f"sqlite:///{ctx.workdir / 'import_single.db'}")
    t = time.perf_counter()
    for line in _lines(path, single_n):
        store.put_content(_content(line))
    el3 = time.perf_counter() - t
    store.close()
    rows.append(
        Row(
            "3",
            f"import first {single_n:,} works one by one (work_content + Store.put_content, 1 txn each)",
            f"{single_n / el3:,.0f} works/s",
            f"≥ {TARGET:,} works/s",
            single_n / el3 >= TARGET,
        )
    )
    # the parse + work_content share alone (no database)
    t = time.perf_counter()
    for line in _lines(path, single_n):
        _content(line)
    el4 = time.perf_counter() - t
    rows.append(
        Row(
            "3",
            f"of which json.loads + work_content alone (no database), first {single_n:,}",
            f"{single_n / el4:,.0f} works/s",
            "(ceiling of one process)",
        )
    )
    return rows


@bench(3.5, "3", "import CLI", figures=("import works/s via `syncd cache import`",))
def import_cli(ctx: Context) -> list[Row]:
    probe = subprocess.run(
        [sys.executable, "-m", "syncd", "cache", "import", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=subprocess_env(None, "sqlite://", ctx.workdir),
    )
    if probe.returncode != 0:
        raise NotMeasured(
            "`syncd cache import` is not built yet (measured through the store's write path above)"
        )
    n = 20_000 if ctx.quick else N_IMPORT
    path = jsonl(N_IMPORT, ctx.log)
    if n != N_IMPORT:
        small = ctx.workdir / "import-small.jsonl"
        small.write_text("".join(_lines(path, n)), encoding="utf-8")
        path = small
    db = ctx.workdir / "import_cli.db"
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "syncd", "cache", "import", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=subprocess_env(None, f"sqlite:///{db}", ctx.workdir),
    )
    el = time.perf_counter() - t
    if proc.returncode != 0:
        return [
            Row(
                "3",
                "import via `syncd cache import FILE`",
                "failed",
                f"≥ {TARGET:,} works/s",
                False,
                note=(proc.stderr.strip().splitlines() or ["?"])[-1],
            )
        ]
    con = sqlite3.connect(db)
    got = con.execute("SELECT count(*) FROM entries WHERE kind='crossref_work'").fetchone()[0]
    con.close()
    return [
        Row(
            "3",
            f"import {got:,} works via `syncd cache import FILE` (process start included)",
            f"{got / el:,.0f} works/s",
            f"≥ {TARGET:,} works/s",
            got / el >= TARGET,
        )
    ]
