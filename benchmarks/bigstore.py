"""The cached large store for the search and footprint benchmarks (built once, reused between runs).

``ensure(n)`` returns the path of ``benchmarks/.cache/store-<n>-g<GENERATOR_VERSION>.db``, building it
first when missing: ``n`` synthetic works (:mod:`benchmarks.corpusgen`) through the store's own write
path (``syncd.lookups.crossref.work_content`` + the FTS triggers), written with the batched
:func:`benchmarks.batchwrite.put_many`; two worker processes build the entry contents. The build goes
to a ``.part`` file renamed at the end, so an interrupted build is never taken for a finished one.
``python -m benchmarks.bigstore N`` builds it on its own.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import sqlite3
import sys
import time
from pathlib import Path

from benchmarks.corpusgen import GENERATOR_VERSION

CACHE = Path(__file__).resolve().parent / ".cache"
CHUNK = 1000


def path_for(n: int) -> Path:
    return CACHE / f"store-{n}-g{GENERATOR_VERSION}.db"


def meta_for(n: int) -> dict:
    meta = path_for(n).with_suffix(".json")
    return json.loads(meta.read_text()) if meta.exists() else {}


def _contents(args: tuple[int, int]) -> tuple[list, int]:
    from benchmarks.corpusgen import works
    from syncd.lookups.crossref import work_content

    start, count = args
    out = []
    raw_bytes = 0
    for w in works(count, start=start):
        line = json.dumps(w, ensure_ascii=False, separators=(",", ":"))
        raw_bytes += len(line.encode("utf-8")) + 1
        out.append(
            work_content(w["DOI"].lower(), w, '{"status":"ok","message-type":"work","message":' + line + "}")
        )
    return out, raw_bytes


def ensure(n: int, log=print) -> Path:
    """The path of the cached ``n``-work store, built first if missing."""
    final = path_for(n)
    if final.exists() and final.with_suffix(".json").exists():
        return final
    from benchmarks.batchwrite import put_many
    from syncd.store.repo import Store

    CACHE.mkdir(parents=True, exist_ok=True)
    part = final.with_name(final.name + ".part")
    while part.exists() and time.time() - part.stat().st_mtime < 120 and not final.exists():
        log(
            f"bigstore: another process is building {part.name}; waiting"
        )  # e.g. `python -m benchmarks.bigstore`
        time.sleep(30)
    if final.exists() and final.with_suffix(".json").exists():
        return final
    for p in (part, Path(f"{part}-wal"), Path(f"{part}-shm")):
        p.unlink(missing_ok=True)
    store = Store.open(f"sqlite:///{part}")
    started = time.perf_counter()
    done = raw = 0
    jobs = [(s, min(CHUNK, n - s)) for s in range(0, n, CHUNK)]
    with mp.get_context("fork").Pool(2) as pool:
        for contents, raw_bytes in pool.imap(_contents, jobs):
            put_many(store, contents)
            done += len(contents)
            raw += raw_bytes
            if done % 50_000 == 0 or done == n:
                el = time.perf_counter() - started
                log(f"bigstore: {done:,}/{n:,} works, {done / el:,.0f} works/s, {el:,.0f} s")
    store.close()
    con = sqlite3.connect(part, isolation_level=None)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.execute("INSERT INTO entries_fts(entries_fts) VALUES ('optimize')")
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
