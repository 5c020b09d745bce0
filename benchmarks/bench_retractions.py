"""Issue 23: importing a real-size Retraction Watch file (70 MB, 69,000 rows) in under 20 s.

The file is generated (:func:`generate`) in the export's format - the header with its trailing
comma, CRLF rows, ``M/D/YYYY 0:00`` dates, ``unavailable`` DOIs and ``0`` PubMed ids, ``;`` lists,
quoted fields with commas and line breaks, Latin-1 bytes in some titles - with field lengths like the
live export's (about 1 KB a row: long author, institution, URL and notes lists). Timed in one process
(the store's own :func:`syncd.retractions.importer.import_path`, wall clock): the first import into a
new SQLite store, the same file again (unchanged: hashed, not parsed), and a next version with 50 rows
changed and 20 added (the stored cells' hashes read, the file decoded and read with ``csv.reader``,
only the 70 rows whose cells differ parsed and rewritten, the change feed; target: no slower than
the first import). The floor is the standard
library alone on the same bytes: decode and ``csv.reader`` over every row. ``python -m
benchmarks.bench_retractions [ROWS]`` runs it alone and prints the rows.
"""

from __future__ import annotations

import csv
import io
import random
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import Context, Row, bench, machine
from syncd.retractions.csvfile import decode
from syncd.retractions.importer import import_path
from syncd.store.repo import Store

__all__ = ["N_ROWS", "TARGET_S", "generate", "retractions"]

N_ROWS = 69_000
"""Rows of the generated file (the live export's size in 2025-26)."""
TARGET_S = 20.0
"""Issue 23's bar for the first import of a real-size file (seconds)."""
HEADER = (
    "Record ID,Title,Subject,Institution,Journal,Publisher,Country,Author,URLS,ArticleType,"
    "RetractionDate,RetractionDOI,RetractionPubMedID,OriginalPaperDate,OriginalPaperDOI,"
    "OriginalPaperPubMedID,RetractionNature,Reason,Paywalled,Notes,"
)
NATURES = ["Retraction"] * 80 + ["Expression of concern"] * 10 + ["Correction"] * 8 + ["Reinstatement"] * 2
_TEXT = (
    "cell protein analysis model network cancer growth effect study novel method data patients response "
    "expression pathway signal clinical synthesis structure optical thermal gene tumour learning"
)
WORDS = _TEXT.split()


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _date(rng: random.Random, start: int, end: int) -> str:
    return f"{rng.randint(1, 12)}/{rng.randint(1, 28)}/{rng.randint(start, end)} 0:00"


def _row(rng: random.Random, n: int) -> list[str]:
    title = _words(rng, rng.randint(8, 20)).capitalize()
    if n % 97 == 0:
        title = f'Caf\xe9 "{title}", a study\nof two lines'
    doi = "unavailable" if n % 11 == 0 else f"10.{1000 + n % 9000}/J.{_words(rng, 1)}.{n}"
    pmid = "0" if n % 3 else str(30_000_000 + n)
    institutions = "; ".join(
        f"Department of {_words(rng, 2).title()}, University of {_words(rng, 1).title()}, City, Country"
        for _ in range(rng.randint(2, 4))
    )
    authors = ";".join(
        f"{_words(rng, 1).title()} {_words(rng, 1).title()}" for _ in range(rng.randint(3, 12))
    )
    urls = ";".join(
        f"https://retractionwatch.com/{rng.randint(2010, 2025)}/{_words(rng, 3).replace(' ', '-')}/"
        for _ in range(rng.randint(1, 3))
    )
    return [
        str(10_000 + n),
        title,
        ";".join(f"({rng.choice(['BLS', 'HSC', 'PHY', 'SOC'])}) {_words(rng, 2).title()};" for _ in range(3)),
        institutions,
        f"Journal of {_words(rng, 2).title()}",
        rng.choice(["Elsevier", "Springer", "IEEE", "Wiley", "Hindawi"]),
        "; ".join(rng.choice(["China", "India", "United States", "Iran", "Germany"]) for _ in range(2)),
        authors,
        urls,
        "Research Article;",
        _date(rng, 2010, 2025),
        f"10.{1000 + n % 9000}/notice.{n}",
        "0" if n % 2 else str(34_000_000 + n),
        _date(rng, 2000, 2020),
        doi,
        pmid,
        rng.choice(NATURES),
        ";".join(f"+{_words(rng, rng.randint(3, 7)).capitalize()};" for _ in range(rng.randint(2, 6))),
        rng.choice(["No", "Yes", "Unknown"]),
        _words(rng, rng.randint(3, 25)),
        "",
    ]


def generate(path: Path, rows: int, seed: int = 23, changed: int = 0, added: int = 0) -> int:
    """Write a ``rows``-row file in the export's format to ``path``; returns its size in bytes.

    ``changed`` rows (the first ones) get another reason and ``added`` rows are appended, for a next
    version of the same file (same ``seed``).
    """
    rng = random.Random(seed)
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\r\n")
    out.write(HEADER + "\r\n")
    for n in range(rows + added):
        row = _row(rng, n)
        if n < changed:
            row[17] = "+Changed reason in the next version;"
        writer.writerow(row)
    data = out.getvalue().encode("cp1252", errors="replace")
    path.write_bytes(data)
    return len(data)


def _floor(path: Path) -> float:
    started = time.perf_counter()
    text, _ = decode(path.read_bytes())
    sum(1 for _ in csv.reader(io.StringIO(text, newline="")))
    return time.perf_counter() - started


@bench(23.1, "23.1", "retractions", ("Retraction Watch import, 69,000 rows",))
def retractions(ctx: Context, rows: int | None = None) -> list[Row]:
    """First import, unchanged re-import and a next version of a generated real-size file."""
    rows = rows or (5_000 if ctx.quick else N_ROWS)
    first, second = ctx.workdir / "rw1" / "retraction_watch.csv", ctx.workdir / "rw2" / "retraction_watch.csv"
    first.parent.mkdir(parents=True, exist_ok=True)
    second.parent.mkdir(parents=True, exist_ok=True)
    size = generate(first, rows)
    generate(second, rows, changed=50, added=20)
    store = Store.open(f"sqlite:///{ctx.workdir / 'retractions.db'}")
    try:
        floor = _floor(first)
        t0 = time.perf_counter()
        report = import_path(store, first)
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = import_path(store, first)
        unchanged = time.perf_counter() - t0
        t0 = time.perf_counter()
        nxt = import_path(store, second)
        diff = time.perf_counter() - t0
    finally:
        store.close()
    assert report.dataset.rows == rows and again.unchanged and nxt.dataset.changed == 50
    mb = size / 1e6
    return [
        Row(
            "23.1",
            f"`retractions import`: first import of a generated {mb:.1f} MB, {rows:,}-row file into a new "
            f"store ({report.replaced_bytes:,} non-UTF-8 bytes)",
            f"{cold:.1f} s",
            f"< {TARGET_S:g} s",
            cold < TARGET_S,
            comparison=f"floor {floor:.1f} s (decode + csv.reader)",
            ratio=f"{cold / floor:.2f}x",
        ),
        Row("23.1", "the same file again (SHA-256 equal: not parsed)", f"{unchanged:.2f} s"),
        Row(
            "23.1",
            f"next version: 50 rows changed, 20 added (found {nxt.dataset.added} added, "
            f"{nxt.dataset.changed} changed; unchanged rows not parsed)",
            f"{diff:.1f} s",
            "<= the first import",
            diff <= cold,
            comparison=f"first import {cold:.1f} s",
            ratio=f"{diff / cold:.2f}x",
        ),
    ]


if __name__ == "__main__":
    import tempfile

    n = int(sys.argv[1]) if len(sys.argv) > 1 else N_ROWS
    with tempfile.TemporaryDirectory() as tmp:
        print(machine())
        for row in retractions(Context(Path(tmp)), n):
            print(f"{row.figure}: {row.value} {row.comparison} {row.ratio} target {row.target} met {row.met}")
