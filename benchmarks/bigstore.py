"""The cached large store for the search and footprint benchmarks (built once, reused between runs).

``ensure(n)`` returns the path of ``benchmarks/.cache/store-<n>-g<GENERATOR_VERSION>.db``, building it
first when missing: ``n`` synthetic works (:mod:`benchmarks.corpusgen`) turned into their stored form by
the store's own :func:`syncd.crossref.lookups.work_content` in two worker processes, then written by the
main process with raw ``executemany`` (10,000 works per transaction, ``synchronous=OFF`` while building)
into a schema made by the store's migrations, so its search-index triggers fill the index as for any
write. The build goes to a ``.part`` file renamed at the end, so an interrupted build is never taken for a
finished one. ``python -m benchmarks.bigstore N`` builds it on its own.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.corpusgen import GENERATOR_VERSION

CACHE = Path(__file__).resolve().parent / ".cache"
CHUNK = 2000
TXN = 10_000

_INS_ENTRY = (
    "INSERT INTO entries (id, kind, key, status, body, content_hash, upstream_version, doi, concept_key, "
    "title, search_text, fetched_at, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
_INS_LINE = "INSERT INTO entry_lines (entry_id, line) VALUES (?, ?)"
_INS_VALID = (
    "INSERT INTO validations (entry_id, validated_at, etag, last_modified, checks, changes, volatile) "
    "VALUES (?,?,?,?,1,1,?)"
)


def path_for(n: int) -> Path:
    """Where the cached ``n``-work store lives (built or not)."""
    return CACHE / f"store-{n}-g{GENERATOR_VERSION}.db"


def meta_for(n: int) -> dict[str, Any]:
    """The build record of the cached ``n``-work store (works, raw JSONL bytes, build time), or {}."""
    meta = path_for(n).with_suffix(".json")
    return json.loads(meta.read_text()) if meta.exists() else {}


def _rows(args: tuple[int, int]) -> tuple[list[tuple[Any, ...]], int]:
    """Worker: the stored form of works ``start .. start+count-1`` as row tuples, and their raw bytes."""
    from benchmarks.corpusgen import works
    from syncd.crossref.lookups import work_content

    start, count = args
    out = []
    raw_bytes = 0
    for w in works(count, start=start):
        line = json.dumps(w, ensure_ascii=False, separators=(",", ":"))
        raw_bytes += len(line.encode("utf-8")) + 1
        c = work_content(w["DOI"].lower(), w, '{"status":"ok","message-type":"work","message":' + line + "}")
        out.append(
            (
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
                c.summary,
                c.etag,
                c.last_modified,
                c.volatile,
            )
        )
    return out, raw_bytes


def ensure(n: int, log: Callable[[str], None] = print) -> Path:
    """The path of the cached ``n``-work store, built first if missing."""
    final = path_for(n)
    if final.exists() and final.with_suffix(".json").exists():
        return final
    from syncd.store.repo import Store

    CACHE.mkdir(parents=True, exist_ok=True)
    part = final.with_name(final.name + ".part")
    while part.exists() and time.time() - part.stat().st_mtime < 120 and not final.exists():
        log(f"bigstore: another process is building {part.name}; waiting")  # `python -m benchmarks.bigstore`
        time.sleep(30)
    if final.exists() and final.with_suffix(".json").exists():
        return final
    for p in (part, Path(f"{part}-wal"), Path(f"{part}-shm")):
        p.unlink(missing_ok=True)
    Store.open(f"sqlite:///{part}").close()  # the schema, by the store's migrations
    con = sqlite3.connect(part, isolation_level=None)
    con.execute("PRAGMA synchronous=OFF")
    con.execute("PRAGMA cache_size=-262144")
    started = time.perf_counter()
    done = raw = 0
    now = time.time()
    jobs = [(s, min(CHUNK, n - s)) for s in range(0, n, CHUNK)]
    con.execute("BEGIN")
    with mp.get_context("fork").Pool(2) as pool:
        for rows, raw_bytes in pool.imap(_rows, jobs):
            ids = range(done + 1, done + 1 + len(rows))
            con.executemany(_INS_ENTRY, [(i, *r[:10], now, now) for i, r in zip(ids, rows, strict=True)])
            con.executemany(
                _INS_LINE, [(i, r[10]) for i, r in zip(ids, rows, strict=True) if r[10] is not None]
            )
            con.executemany(
                _INS_VALID, [(i, now, r[11], r[12], r[13]) for i, r in zip(ids, rows, strict=True)]
            )
            done += len(rows)
            raw += raw_bytes
            if done % TXN == 0 or done == n:
                con.execute("COMMIT")
                con.execute("BEGIN")
            if done % 50_000 == 0 or done == n:
                el = time.perf_counter() - started
                log(f"bigstore: {done:,}/{n:,} works, {done / el:,.0f} works/s, {el:,.0f} s")
    con.execute("COMMIT")
    for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type='table' AND sql LIKE '%fts5%'"):
        con.execute(f"INSERT INTO {name}({name}) VALUES ('optimize')")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    elapsed = time.perf_counter() - started
    for suffix in ("-wal", "-shm"):
        Path(f"{part}{suffix}").unlink(missing_ok=True)
    os.replace(part, final)
    final.with_suffix(".json").write_text(
        json.dumps(
            {
                "works": n,
                "raw_jsonl_bytes": raw,
                "build_s": round(elapsed, 1),
                "generator_version": GENERATOR_VERSION,
                "built_at": time.time(),
            }
        )
    )
    log(f"bigstore: built {final.name} in {elapsed:,.0f} s")
    return final


if __name__ == "__main__":
    ensure(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
