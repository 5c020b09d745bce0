"""Issue 44 item 2: ``syncd cache export --format parquet DIR`` on the 1M-work store: works/s and sizes.

The command users run (``python -m syncd cache export --format parquet DIR``) runs as a subprocess over
the cached big store of :mod:`benchmarks.bigstore` (its bodies as text, as built; no watches, no
reference rows, no Retraction Watch rows, no changes: the works table is the whole export), timed wall
clock, process start included. Figures: works per second; the Parquet files' bytes beside the store's
file (database plus WAL) and beside the raw JSON Lines of the same works (the build's record); then one
DuckDB query over the export (works per journal, top 10), to show it reads. The 1,000,000-work store is
used when it is built, else the largest of 100,000 (built if missing, about 1.5 min) - the row says
which. ``python -m benchmarks.bench_parquet [N]`` runs it alone on the ``N``-work store and prints the
rows.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import bigstore
from benchmarks.harness import Context, Row, bench

__all__ = ["measure", "parquet_export"]


def _load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def _bytes(path: Path) -> int:
    """Bytes of a file (with its ``-wal``) or of every file under a directory."""
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    wal = Path(f"{path}-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def measure(ctx: Context, n: int) -> list[Row]:
    """Export the cached ``n``-work store to Parquet with the CLI; the rows of issue 44 item 2."""
    import duckdb

    store = bigstore.ensure(n, ctx.log)
    meta = bigstore.meta_for(n)
    out = ctx.workdir / "parquet-export"
    shutil.rmtree(out, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCD_")}
    env.update(
        SYNCD_DATABASE_URL=f"sqlite:///{store}",
        SYNCD_CHECK_UPSTREAMS_AT_START="false",
        XDG_CONFIG_HOME=str(ctx.workdir / "cfg"),
    )
    load_before = _load()
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "syncd", "cache", "export", "--format", "parquet", str(out)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"export failed ({done.returncode}): {done.stderr[-2000:]}")
    load_after = _load()
    parquet_bytes = _bytes(out)
    works_bytes = _bytes(out / "crossref_works")
    store_bytes = _bytes(store)
    con = duckdb.connect()
    glob = f"{out}/crossref_works/*.parquet"
    (count,) = con.execute(f"SELECT count(*) FROM read_parquet('{glob}')").fetchone()  # type: ignore[misc]
    q_started = time.perf_counter()
    top = con.execute(
        f"SELECT container_title, count(*) AS n FROM read_parquet('{glob}') "
        "GROUP BY container_title ORDER BY n DESC LIMIT 10"
    ).fetchall()
    q_seconds = time.perf_counter() - q_started
    assert count == meta.get("works", n), (count, meta)
    label = f"{count:,}-work store"
    rows = [
        Row(
            "44.2",
            f"`syncd cache export --format parquet DIR` of the {label} (process start included; "
            f"{seconds:,.0f} s wall; load {load_before} before, {load_after} after)",
            f"{count / seconds:,.0f} works/s",
            note=f"{sum(1 for _ in (out / 'crossref_works').glob('*.parquet'))} files in crossref_works",
        ),
        Row(
            "44.2",
            f"Parquet export of the {label}: {parquet_bytes:,} bytes ({parquet_bytes / count:,.0f} per work; "
            f"crossref_works {works_bytes:,}) vs the store file {store_bytes:,} bytes "
            f"({store_bytes / count:,.0f} per work; bodies as text, search index included)",
            f"{parquet_bytes / store_bytes:.0%}",
            comparison=f"store {store_bytes / 1e9:,.2f} GB",
            ratio=f"{parquet_bytes / store_bytes:.2f}x",
        ),
    ]
    if meta.get("raw_jsonl_bytes"):
        raw = meta["raw_jsonl_bytes"]
        rows.append(
            Row(
                "44.2",
                f"Parquet export of the {label} vs the raw JSON Lines of the same works ({raw:,} bytes)",
                f"{parquet_bytes / raw:.0%}",
                comparison=f"raw JSON {raw / 1e9:,.2f} GB",
                ratio=f"{parquet_bytes / raw:.2f}x",
            )
        )
    rows.append(
        Row(
            "44.2",
            f"DuckDB over the export: works per container_title, top 10, over {count:,} works "
            f"(first: {top[0][0]!r}, {top[0][1]:,})",
            f"{q_seconds * 1000:,.0f} ms",
        )
    )
    shutil.rmtree(out, ignore_errors=True)
    return rows


@bench(44.2, "44.2", "parquet", figures=("`cache export --format parquet`: works/s and size, 1M-work store",))
def parquet_export(ctx: Context) -> list[Row]:
    """The rows of issue 44 item 2: the 1M-work store when built (and not ``--quick``), else 100,000."""
    big = bigstore.path_for(1_000_000)
    n = 1_000_000 if big.exists() and not ctx.quick and not ctx.results.get("skip_big") else 100_000
    return measure(ctx, n)


def main(argv: list[str]) -> int:
    """Run :func:`measure` alone on the ``N``-work store (default 1,000,000) and print its rows."""
    n = int(argv[0]) if argv else 1_000_000
    with tempfile.TemporaryDirectory(dir=bigstore.CACHE) as tmp:
        for row in measure(Context(workdir=Path(tmp)), n):
            print(f"{row.figure}: {row.value} {row.comparison} {row.ratio} ({row.note})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
