"""Run every benchmark of issue 15 and write BENCHMARKS.md (the one command: ``python -m benchmarks``).

One table per target of issue 15 (figure, measured, comparison, ratio, target, met?), each ratio
measured side by side in the same run, with the machine, the date and the load averages at start and
end. Options: ``--quick`` (fewer repetitions, smaller stores; for trying the harness, not for the
record), ``--only NAME[,NAME]`` (benchmark names, see ``--list``), ``--skip-big`` (skip what needs the
1,000,000-work store), ``--no-profile``, ``--out PATH`` (default BENCHMARKS.md at the repo root),
``--render-only`` (write BENCHMARKS.md again from the last full run's saved rows, e.g. after editing
``benchmarks/ANALYSIS.md``; the figures stay those of that run), ``--soak-s SECONDS`` (how long the
issue 27 soak, ``rules2026``, keeps its four processes at full load; default 60, 15 with ``--quick``).
The 1M-work store is built on first use and cached in ``benchmarks/.cache/`` (gitignored).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # `python benchmarks/run.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import CACHE, REGISTRY, ROOT, Context, NotMeasured, Row, machine, median, ms, pct

MODULES = (
    "bench_import",
    "bench_search",
    "bench_store_size",
    "bench_writes",
    "bench_warm",
    "bench_reval",
    "bench_fake",
    "bench_startup",
    "bench_text",
    "bench_retractions",
    "bench_rules2026",
    "bench_footprint",
    "bench_parquet",
)
"""The benchmark modules, imported in turn; one that fails to import gives a row saying so. Of
``bench_footprint`` only ``sweep rss`` (28.5) runs unnamed; its older rows run when named."""

TARGETS: dict[str, str] = {
    "15.1": "`syncd cache import` at data-file speed",
    "15.2": "offline search at FTS speed",
    "15.3": "store size, and the warm lookup layer",
    "15.4": "SQLite write transactions per upstream request",
    "15.5": "warm `crossref_get_work` vs an empty tool",
    "15.6": "a fake upstream that answers in well under 1 ms",
    "28.1": "start-up: commands beside `python -c pass` (issue 28 item 1)",
    "28.2": "`syncd cache import` past the plain loop, hours for 180 M works (issue 28 item 2)",
    "28.5": "a lean daemon: RSS during a sweep of the 1M-work store, `syncd mcp` idle (issue 28 item 5)",
    "28.6": "warm hits and revalidation beside the peers: the lookup layer, hishel + httpx, requests-cache "
    "(issue 28 item 6)",
    "24.3": "`tools/list` size and portability (issue 24 item 3)",
    "23.1": "Retraction Watch import, 70 MB / 69,000 rows (issue 23 item 1)",
    "27.1": "Crossref's 2026 rules: daemon + three MCP sessions at full load, 0 429s (issue 27)",
    "44.2": "`syncd cache export --format parquet`: works/s and Parquet size on the 1M-work store (issue 44)",
}
"""Issue 15's targets 1-6 (target 7 is this file); start-up (issue 28 item 1), the catalogue (24.3)."""

TARGET_OF = {
    "import": "15.1",
    "search": "15.2",
    "store_size": "15.3",
    "write transactions": "15.4",
    "warm get_work": "15.5",
    "fake upstream": "15.6",
    "startup": "28.1",
    "sweep rss": "28.5",
    "peers": "28.6",
    "revalidation": "28.6",
    "catalogue": "24.3",
    "retractions": "23.1",
    "rules2026": "27.1",
    "parquet": "44.2",
}
"""Benchmark name -> the target its rows belong to (rows already naming a ``15.N`` target, or one of
``TARGETS``, keep it)."""

BIG_NEEDED = {"search"}
LAST_RUN = CACHE / "last-run.json"


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _met(m: bool | None) -> str:
    return "—" if m is None else ("**yes**" if m else "**no**")


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _label(target: str) -> str:
    """A target's name in BENCHMARKS.md: issue 15's by number (``15.3`` -> ``3``), others whole (``28.1``)."""
    return target.split(".")[1] if target.startswith("15.") else target


def _load(la: tuple[float, float, float]) -> str:
    return " / ".join(f"{x:.2f}" for x in la)


def _breakdown(breakdown: list[Any] | None) -> list[str]:
    """Target 5's layer table: (name, median, p95) per layer, the first being the raw floor."""
    if not breakdown:
        return []
    floor = breakdown[0][1]
    out = [
        "",
        "Target 5, layer by layer (same works, same run):",
        "",
        "| layer | median | p95 | × raw floor |",
        "| --- | --- | --- | --- |",
    ]
    for name, med, p95 in breakdown:
        out.append(f"| {name} | {ms(med)} | {ms(p95)} | {med / floor:.1f}x |")
    return out


def render(rows: list[Row], info: dict[str, Any]) -> str:
    """BENCHMARKS.md from the rows and the run's facts (date, command, machine, loads, breakdowns)."""
    out = ["# syncd benchmarks", ""]
    out.append(
        "Written by `python -m benchmarks` (see README, *Benchmarks*): one table per target of issue 15, "
        "every ratio measured side by side in the same run. Nothing goes over the network (the fake "
        "upstream on 127.0.0.1 replays the recorded corpus)."
    )
    out.append("")
    out.append(f"- **Date**: {info['date']}")
    out.append(f"- **Command**: `{info['command']}` ({info['elapsed_s'] / 60:.1f} min)")
    out.append("- **Machine**: " + ", ".join(f"{k} {v}" for k, v in info["machine"].items()))
    out.append(
        f"- **Load average** (1 / 5 / 15 min) at start {_load(info['load_start'])}, at end "
        f"{_load(info['load_end'])}: other work shared the 2 cores, which inflates every absolute figure; "
        "ratios are measured side by side"
    )
    if info.get("bigstore"):
        out.append(f"- **1M-work store**: {info['bigstore']}")
    out += ["", "## Summary", "", "| target | what | met? |", "| --- | --- | --- |"]
    by_target: dict[str, list[Row]] = {t: [] for t in TARGETS}
    others: list[Row] = []
    for r in rows:
        by_target.get(r.item, others).append(r)
    for t, title in TARGETS.items():
        judged = [r.met for r in by_target[t] if r.met is not None]
        verdict = "not measured" if not judged else ("**yes**" if all(judged) else "**no**")
        out.append(f"| {_label(t)} | {title} | {verdict} |")
    out.append("| 7 | this file, regenerated in full | **yes** |")
    for t, title in TARGETS.items():
        out += ["", f"## Target {_label(t)}: {title}", ""]
        out += [
            "| figure | measured | comparison | ratio | target | met? |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for r in by_target[t] or [Row(t, "not measured in this run", "—")]:
            figure = r.figure + (f" ({r.note})" if r.note else "")
            out.append(
                f"| {_cell(figure)} | {_cell(r.value)} | {_cell(r.comparison)} | {_cell(r.ratio)} | "
                f"{_cell(r.target)} | {_met(r.met)} |"
            )
        for key, doc in (info.get("methods") or {}).items():
            if key.split()[0] == t:
                out += ["", f"*How* (`{key.split()[1]}`): {doc}"]
        if t == "15.5":
            out += _breakdown(info.get("warm_breakdown"))
    analysis = Path(__file__).resolve().parent / "ANALYSIS.md"
    if analysis.exists():
        out += ["", "## Missed and narrow targets: where the time goes, the next step", ""]
        out.append(analysis.read_text(encoding="utf-8").strip())
    if info.get("profiles"):
        out += ["", "## Profiles", ""]
        for name, text in info["profiles"].items():
            out += [f"### {name}", "", "```", text.rstrip(), "```", ""]
    if others:
        out += ["", "## Other figures", ""]
        out += ["| figure | measured | comparison | ratio | met? |", "| --- | --- | --- | --- | --- |"]
        for r in others:
            figure = r.figure + (f" ({r.note})" if r.note else "")
            out.append(
                f"| {_cell(figure)} | {_cell(r.value)} | {_cell(r.comparison)} | {_cell(r.ratio)} | "
                f"{_met(r.met)} |"
            )
    if info.get("notes"):
        out += ["", "## Notes", ""] + [f"- {n}" for n in info["notes"]]
    return "\n".join(out).rstrip() + "\n"


def _import_modules() -> list[Row]:
    """Import the benchmark modules (registering their benchmarks); a failed import becomes a row."""
    failed = []
    for name in MODULES:
        try:
            importlib.import_module(f"benchmarks.{name}")
        except Exception as exc:  # a module being rewritten by its owner must not stop the run
            _log(f"cannot import benchmarks.{name}: {exc!r}")
            failed.append(Row("other", f"benchmarks.{name}", f"not measured: import failed ({exc!r})"))
    return failed


def _bigstore_line() -> str:
    try:
        from benchmarks import bigstore

        meta = bigstore.meta_for(1_000_000)
    except Exception:
        return ""
    if not meta:
        return ""
    build = meta.get("build_s")
    return f"{meta.get('works', 1_000_000):,} works" + (
        f", built once in {build / 60:.1f} min, cached in `benchmarks/.cache/`" if build else ""
    )


def _run_benches(args: argparse.Namespace, ctx: Context) -> list[Row]:
    rows = _import_modules()
    benches = sorted(REGISTRY, key=lambda b: b.order)
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    for b in benches:
        if b.name not in TARGET_OF and not only:
            continue  # benchmarks outside issue 15 run only when named
        if only and b.name not in only:
            continue
        target = TARGET_OF.get(b.name, "other")
        if args.skip_big and b.name in BIG_NEEDED:
            ctx.results["skip_big"] = True  # the bench measures what needs no 1M-work store
        _log(f"running {b.name} (target {target}); load {_load(os.getloadavg())}")
        t = time.perf_counter()
        try:
            got = b.func(ctx)
        except NotMeasured as exc:
            got = [Row(target, f, "not measured", note=str(exc)) for f in b.figures]
        except Exception as exc:
            traceback.print_exc()
            got = [Row(target, f, f"failed: {exc.__class__.__name__}: {exc}"[:300]) for f in b.figures]
        for r in got:
            if not r.item.startswith("15.") and r.item not in TARGETS:
                r.item = target
        rows += got
        doc = " ".join((sys.modules[b.func.__module__].__doc__ or "").split())
        if doc and target != "other" and doc not in ctx.results.setdefault("methods", {}).values():
            ctx.results["methods"][f"{target} {b.func.__module__}"] = " ".join(doc.split())
        _log(f"  {b.name}: {time.perf_counter() - t:.0f} s")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--skip-big", action="store_true")
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--render-only", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "BENCHMARKS.md"))
    ap.add_argument("--soak-s", type=float, default=None, help="seconds of the rules2026 soak (default 60)")
    args = ap.parse_args(argv)
    if args.list:
        _import_modules()
        for b in sorted(REGISTRY, key=lambda b: b.order):
            print(f"{b.name:22} {TARGET_OF.get(b.name, '(other: run only when named)')}")
        return 0
    if args.render_only:
        saved = json.loads(LAST_RUN.read_text(encoding="utf-8"))
        rows = [Row(**r) for r in saved.pop("rows")]
        Path(args.out).write_text(render(rows, saved), encoding="utf-8")
        _log(f"wrote {args.out} from {LAST_RUN} ({saved['date']})")
        return 0
    command = "python -m benchmarks" + (" " + " ".join(sys.argv[1:] if argv is None else argv)).rstrip()
    workdir = Path(tempfile.mkdtemp(prefix="syncd-bench-"))
    ctx = Context(workdir=workdir, quick=args.quick, log=_log)
    if args.soak_s is not None:
        ctx.results["soak_s"] = args.soak_s
    started = time.perf_counter()
    load_start = os.getloadavg()
    _log(f"load average at start {_load(load_start)}")
    try:
        rows = _run_benches(args, ctx)
        if not args.no_profile and "warm" in ctx.results:
            from benchmarks import profiles

            _log("profiling")
            try:
                profiles.profile_warm(ctx)
            except Exception:
                traceback.print_exc()
    finally:
        fake = ctx.results.get("fake")
        if fake is not None:
            fake.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    load_end = os.getloadavg()
    breakdown = [(name, median(s), pct(s, 95)) for name, s in ctx.results.get("warm_breakdown", [])]
    info: dict[str, Any] = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": command,
        "elapsed_s": time.perf_counter() - started,
        "machine": machine(),
        "load_start": load_start,
        "load_end": load_end,
        "bigstore": _bigstore_line(),
        "warm_breakdown": breakdown,
        "profiles": ctx.profiles,
        "methods": ctx.results.get("methods", {}),
        "notes": ctx.notes,
    }
    CACHE.mkdir(parents=True, exist_ok=True)
    full = not (args.quick or args.only or args.skip_big)
    saved = LAST_RUN if full else LAST_RUN.with_name("last-partial-run.json")
    saved.write_text(json.dumps({**info, "rows": [asdict(r) for r in rows]}, indent=1), encoding="utf-8")
    Path(args.out).write_text(render(rows, info), encoding="utf-8")
    _log(f"wrote {args.out} ({info['elapsed_s'] / 60:.1f} min); load average at end {_load(load_end)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
