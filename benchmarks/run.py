"""Run every registered benchmark and write BENCHMARKS.md (the one command: ``python -m benchmarks``).

Options: ``--quick`` (fewer repetitions, a 20,000-work import; for trying the harness, not for the
record), ``--only NAME[,NAME]`` (benchmark names, see ``--list``), ``--skip-big`` (skip what needs the
1,000,000-work store), ``--no-profile``, ``--out PATH`` (default BENCHMARKS.md at the repo root).
The 1M-work store is built on first use and cached in ``benchmarks/.cache/`` (gitignored).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path

if __package__ in (None, ""):  # `python benchmarks/run.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import (  # noqa: F401
    bench_fake,
    bench_footprint,
    bench_import,
    bench_reval,
    bench_search,
    bench_store_size,
    bench_warm,
)
from benchmarks.harness import REGISTRY, ROOT, Context, NotMeasured, Row, machine, median, ms, pct

BIG_NEEDED = {"search", "rss"}


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _met(m: bool | None) -> str:
    return "—" if m is None else ("**yes**" if m else "**no**")


def render(rows: list[Row], ctx: Context, command: str, elapsed: float, info: dict[str, str]) -> str:
    out = ["# syncd benchmarks", ""]
    out.append(
        "Written by `python -m benchmarks` (see README, *Benchmarks*). Every ratio below is measured in the "
        "same run; nothing goes over the network (the fake upstream on 127.0.0.1 replays the recorded "
        "corpus)."
    )
    out.append("")
    out.append(f"- **Date**: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}")
    out.append(f"- **Command**: `{command}` ({elapsed / 60:.1f} min)")
    out.append("- **Machine**: " + ", ".join(f"{k} {v}" for k, v in info.items()))
    la = ctx.results.get("loadavg")
    if la:
        out.append(
            f"- **Load average (1 min)** at start {la[0]:.2f}, at end {la[1]:.2f} "
            "(other work on the same 2 cores "
            "inflates every figure; ratios are measured side by side in the same run)"
        )
    from benchmarks import bigstore

    meta = bigstore.meta_for(1_000_000)
    if meta:
        out.append(
            f"- **1M-work store**: built once in {meta['build_s'] / 60:.1f} min, "
            "cached in `benchmarks/.cache/`"
        )
    out += [
        "",
        "## Results",
        "",
        "| # | figure | measured | target | met? |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        note = f" ({r.note})" if r.note else ""
        out.append(f"| {r.item} | {r.figure}{note} | {r.value} | {r.target} | {_met(r.met)} |")
    bd = ctx.results.get("warm_breakdown")
    if bd:
        out += [
            "",
            "## Warm hit, layer by layer (same entries, same run)",
            "",
            "| layer | median | p95 | × raw floor |",
            "| --- | --- | --- | --- |",
        ]
        floor = median(bd[0][1])
        zfloor = next((median(s) for name, s in bd if name.startswith("raw floor: zenodo")), floor)
        for name, s in bd:
            f = zfloor if "zenodo" in name else floor
            out.append(f"| {name} | {ms(median(s))} | {ms(pct(s, 95))} | {median(s) / f:.1f}x |")
    fb = ctx.results.get("footprint_breakdown")
    if fb:
        label, parts, _total, n = fb
        out += [
            "",
            f"## Where the bytes go ({label}, SQLite dbstat)",
            "",
            "| object | bytes per work | share |",
            "| --- | --- | --- |",
        ]
        for name, size, share in parts:
            out.append(f"| {name} | {size / n:,.0f} | {share:.0%} |")
    if ctx.profiles:
        out += ["", "## Profiles (pyinstrument, top of the call tree)", ""]
        for name, text in ctx.profiles.items():
            out += [f"### {name}", "", "```", text, "```", ""]
    analysis = Path(__file__).resolve().parent / "ANALYSIS.md"
    if analysis.exists():
        out += [
            "",
            "## Why targets are missed (from the profiles)",
            "",
            analysis.read_text(encoding="utf-8").strip(),
        ]
    if ctx.notes:
        out += ["", "## Notes", ""] + [f"- {n}" for n in ctx.notes]
    return "\n".join(out).rstrip() + "\n"


NOTES_TEXT = """\
Warm hit (1): stored entries of the recorded corpus (Crossref works, Zenodo records), called in turn in one
MCP client session; the raw floor is `SELECT body FROM entries WHERE kind=? AND key=?` + `json.loads` on a
plain sqlite3 connection to the same file; the cold call is the same tool on a DOI or record not stored yet
while the fake delays every answer by 200 ms (`fake.fault('latency', delay_s=0.2)`).

Budget pools are widened to 1,000/s for the benchmark so that sequential requests are not paced by the
published limits; the budget bookkeeping still runs on every upstream request.

Alternatives (2): the same DOIs against the same fake, cache filled once, then warm reads; habanero calls
the module-level `httpx2.get`, so it is routed through a hishel `CacheClient` (what a user would have to do).

Import (3): a JSON Lines file of 100,000 works generated from the recorded Crossref works (template shapes,
new DOIs, recombined titles, abstracts and authors, random prefixes of reference lists; cached in
benchmarks/.cache/), each line parsed, turned into the stored form by `syncd.lookups.crossref.work_content`
and written with the FTS triggers firing; `benchmarks/batchwrite.py` is the batched write (one transaction
per 1,000 new entries); `syncd cache import FILE` is timed as a subprocess on the same file.

Search (4): the store-level stand-in `Store.search` (FTS5 MATCH of all terms + bm25, 20 rows + the entries
they point at) and `crossref_search_works` through an in-memory MCP session with every upstream URL pointing
at a closed port (its local-mirror answer, `Store.search_page`); 1-3 term queries drawn from corpus words and
author names; the tool is time-capped at 120 s of queries.

Revalidation (5): `Cache.revalidate` per stored entry; upstream's answers are fetched once from the fake
(`fake.etags = True` for the 304 case) and then replayed in-process by an httpx transport, so the timing is
syncd's local cost (budget take/release, conditional headers, parse, content hash, the store writes); the
end-to-end time through the loopback fake is given beside it. Batch revalidation: `syncd.batch` with the
fake answering each `/works?filter=doi:...` list request (overrides built from the stored `indexed` stamps).

Footprint (6): database file size (after a WAL checkpoint) divided by the works it holds, against the mean
size of the works' raw JSON (the JSONL lines); RSS is VmHWM of the process from /proc.
"""
NOTES = [" ".join(p.split()) for p in NOTES_TEXT.strip().split("\n\n")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--skip-big", action="store_true")
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "BENCHMARKS.md"))
    args = ap.parse_args(argv)
    benches = sorted(REGISTRY, key=lambda b: b.order)
    if args.list:
        for b in benches:
            print(f"{b.name:22} item {b.item}")
        return 0
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    command = "python -m benchmarks" + (
        "" if argv is None and len(sys.argv) <= 1 else " " + " ".join(argv or sys.argv[1:])
    )
    workdir = Path(tempfile.mkdtemp(prefix="syncd-bench-"))
    ctx = Context(workdir=workdir, quick=args.quick, log=_log)
    ctx.notes.extend(NOTES)
    rows: list[Row] = []
    started = time.perf_counter()
    load0 = os.getloadavg()[0]
    try:
        for b in benches:
            if only and b.name not in only:
                continue
            if args.skip_big and b.name in BIG_NEEDED:
                rows += [Row(b.item, f, "not measured (--skip-big)", "", None) for f in b.figures]
                continue
            _log(f"running {b.name} (item {b.item})")
            t = time.perf_counter()
            try:
                rows += b.func(ctx)
            except NotMeasured as exc:
                rows += [Row(b.item, f, "not measured yet", "", None, note=str(exc)) for f in b.figures]
            except Exception as exc:
                traceback.print_exc()
                rows += [
                    Row(b.item, f, "error", "", False, note=f"{type(exc).__name__}: {exc}") for f in b.figures
                ]
            _log(f"  {b.name}: {time.perf_counter() - t:.0f} s")
        if not args.no_profile and not only:
            from benchmarks import profiles

            _log("profiling")
            for fn in (profiles.profile_warm, profiles.profile_import, profiles.profile_revalidation):
                try:
                    fn(ctx)
                except Exception:
                    traceback.print_exc()
    finally:
        fake = ctx.results.get("fake")
        if fake is not None:
            fake.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    elapsed = time.perf_counter() - started
    ctx.results["loadavg"] = (load0, os.getloadavg()[0])
    text = render(rows, ctx, command, elapsed, machine())
    Path(args.out).write_text(text, encoding="utf-8")
    _log(f"wrote {args.out} ({elapsed / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
