"""Issue 15 target 3: store bytes per work vs raw JSON with compressed bodies, and the warm lookup layer.

A store of ``n`` synthetic works (:mod:`benchmarks.corpusgen`, stored form by the store's own
``work_content``) is written with plain-text bodies, as a store migrated from before the compressed
bodies holds them (the "before" store). A copy is then compressed the way users do it
(:func:`syncd.store.maintenance.vacuum`: dictionary trained on the store's bodies, every body
re-encoded in batches, ``VACUUM``), and both files are measured against the raw JSON Lines bytes of
the same works. The 1,000,000-work store of :mod:`benchmarks.bigstore` is measured too when it is
built (its bodies compressed in a copy).

Lookup layer: ``Store.get`` + ``json.loads(entry.body)`` on the compressed store vs one raw SQLite
read (``sqlite3``, ``SELECT body ... WHERE kind=? AND key=?``) + ``json.loads`` of the uncompressed body
on the "before" store; both warm (every key read once first), interleaved, median per lookup.

``python -m benchmarks.bench_store_size [N]`` runs it alone and prints the rows.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import bigstore
from benchmarks.corpusgen import works
from benchmarks.harness import Context, Row, bench, median
from syncd.crossref.lookups import work_content
from syncd.store.maintenance import vacuum
from syncd.store.repo import Store

SIZE_TARGET = 0.5
LOOKUP_TARGET = 2.0
_INS_ENTRY = (
    "INSERT INTO entries (id, kind, key, status, body, content_hash, upstream_version, doi, concept_key, "
    "title, search_text, fetched_at, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
_INS_VALID = (
    "INSERT INTO validations (entry_id, validated_at, etag, last_modified, checks, changes, volatile) "
    "VALUES (?,?,?,?,1,1,?)"
)


def _size(db: Path) -> int:
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = con.execute("PRAGMA page_count").fetchone()[0] * con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    return size


def build_plain(n: int, path: Path, log: object = print) -> tuple[int, list[str]]:
    """The "before" store of ``n`` works at ``path`` (plain-text bodies); returns (raw JSONL bytes, keys)."""
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        p.unlink(missing_ok=True)
    Store.open(f"sqlite:///{path}").close()
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA synchronous=OFF")
    raw = 0
    keys: list[str] = []
    now = time.time()
    con.execute("BEGIN")
    for i, w in enumerate(works(n), start=1):
        line = json.dumps(w, ensure_ascii=False, separators=(",", ":"))
        raw += len(line.encode("utf-8")) + 1
        c = work_content(w["DOI"].lower(), w, '{"status":"ok","message-type":"work","message":' + line + "}")
        con.execute(
            _INS_ENTRY,
            (
                i,
                c.kind,
                c.key,
                c.status,
                c.body,
                c.content_hash,
                c.upstream_version,
                c.doi,
                c.concept_key,
                c.title,
                c.search_text,
                now,
                now,
            ),
        )
        con.execute(_INS_VALID, (i, now, c.etag, c.last_modified, c.volatile))
        keys.append(c.key)
        if i % 10_000 == 0:
            con.execute("COMMIT")
            con.execute("BEGIN")
            log(f"store_size: {i:,}/{n:,} works written")  # type: ignore[operator]
    con.execute("COMMIT")
    con.execute("VACUUM")
    con.close()
    return raw, keys


def compress_copy(src: Path, dst: Path) -> tuple[dict[str, object], float]:
    """Copy ``src`` to ``dst`` and compress it with ``syncd cache vacuum``'s code; (its result, seconds)."""
    for p in (dst, Path(f"{dst}-wal"), Path(f"{dst}-shm")):
        p.unlink(missing_ok=True)
    shutil.copyfile(src, dst)
    store = Store.open(f"sqlite:///{dst}")
    try:
        started = time.perf_counter()
        result = vacuum(store)
        return result, time.perf_counter() - started
    finally:
        store.close()


def lookups(plain: Path, compressed: Path, keys: list[str], rounds: int = 5) -> tuple[float, float]:
    """Median seconds per warm lookup: (Store.get + json.loads on ``compressed``, raw read + json.loads)."""
    store = Store.open(f"sqlite:///{compressed}")
    con = sqlite3.connect(plain, isolation_level=None)
    sql = "SELECT body FROM entries WHERE kind=? AND key=?"
    try:
        for k in keys:  # warm both: page cache, statement caches, dictionaries
            json.loads(store.get("crossref_work", k).body)  # type: ignore[union-attr,arg-type]
            json.loads(con.execute(sql, ("crossref_work", k)).fetchone()[0])
        ours: list[float] = []
        raw: list[float] = []
        for _ in range(rounds):
            t = time.perf_counter()
            for k in keys:
                json.loads(store.get("crossref_work", k).body)  # type: ignore[union-attr,arg-type]
            ours.append((time.perf_counter() - t) / len(keys))
            t = time.perf_counter()
            for k in keys:
                json.loads(con.execute(sql, ("crossref_work", k)).fetchone()[0])
            raw.append((time.perf_counter() - t) / len(keys))
        return median(ours), median(raw)
    finally:
        con.close()
        store.close()


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


@bench(6.2, "3", "store_size", figures=("store bytes per work vs raw JSON (compressed bodies)",))
def store_size(ctx: Context) -> list[Row]:
    """The rows of target 3 (100,000 works; 20,000 with ``--quick``)."""
    return measure(ctx, 20_000 if ctx.quick else 100_000)


def measure(ctx: Context, n: int) -> list[Row]:
    """Sizes before/after compression of an ``n``-work store, the 1M store when built, the lookup ratio."""
    rows: list[Row] = []
    plain = ctx.workdir / f"size-{n}-plain.db"
    packed = ctx.workdir / f"size-{n}-compressed.db"
    load_before = _load()
    raw, keys = build_plain(n, plain, ctx.log)
    before = _size(plain)
    result, seconds = compress_copy(plain, packed)
    after = _size(packed)
    rows.append(
        Row(
            "3",
            f"{n:,}-work store, bodies as text (before): bytes per work {before / n:,.0f} "
            f"vs raw JSON {raw / n:,.0f}",
            f"{before / raw:.0%}",
            note=f"load {load_before}",
        )
    )
    rows.append(
        Row(
            "3",
            f"{n:,}-work store, compressed bodies (dictionary {result['dictionary']}, "
            f"{result['bodies_compressed']:,} bodies compressed + VACUUM in {seconds:,.0f} s): "
            f"bytes per work {after / n:,.0f} vs raw JSON {raw / n:,.0f}",
            f"{after / raw:.0%}",
            f"≤ {SIZE_TARGET:.0%}",
            after / raw <= SIZE_TARGET,
            note=f"load {_load()}",
        )
    )
    sample = random.Random(7).sample(keys, min(2000, len(keys)))
    load_lookup = _load()
    ours, base = lookups(plain, packed, sample)
    ratio = ours / base
    rows.append(
        Row(
            "3",
            f"warm lookup layer: Store.get + json.loads on the compressed store {ours * 1e6:,.0f} µs "
            f"vs one raw SQLite read + json.loads of the uncompressed body {base * 1e6:,.0f} µs",
            f"{ratio:.2f}x",
            f"≤ {LOOKUP_TARGET:.0f}x",
            ratio <= LOOKUP_TARGET,
            note=f"load {load_lookup} (median of 5 rounds over {len(sample):,} keys)",
        )
    )
    big = bigstore.path_for(1_000_000)
    if big.exists() and not ctx.quick:
        meta = bigstore.meta_for(1_000_000)
        copy = ctx.workdir / "size-1m-compressed.db"
        result, seconds = compress_copy(big, copy)
        size = _size(copy)
        rows.append(
            Row(
                "3",
                f"1,000,000-work store, compressed bodies ({seconds:,.0f} s to compress + VACUUM): "
                f"bytes per work {size / meta['works']:,.0f} "
                f"vs raw JSON {meta['raw_jsonl_bytes'] / meta['works']:,.0f}",
                f"{size / meta['raw_jsonl_bytes']:.0%}",
                f"≤ {SIZE_TARGET:.0%}",
                size / meta["raw_jsonl_bytes"] <= SIZE_TARGET,
                note=f"load {_load()}",
            )
        )
        copy.unlink(missing_ok=True)
    ctx.results["store_size"] = {"works": n, "raw": raw, "before": before, "after": after, "lookup": ratio}
    for p in (plain, packed):
        p.unlink(missing_ok=True)
    return rows


def main(argv: list[str]) -> int:
    """Run :func:`measure` alone (``N`` works, default 100,000) and print its rows."""
    n = int(argv[0]) if argv else 100_000
    with tempfile.TemporaryDirectory() as tmp:
        ctx = Context(workdir=Path(tmp), quick=n <= 20_000)
        for row in measure(ctx, n):
            print(f"{row.figure}: {row.value} (target {row.target}, met {row.met}; {row.note})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
