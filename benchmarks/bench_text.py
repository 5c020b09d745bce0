"""Text normalization stays linear on hostile input: the speed claims the unit tests no longer time.

``html_to_text`` (abstracts, descriptions) over ten hostile shapes and ``citation_text`` over unclosed
formula openers, each at 10,000 and 160,000 characters (best of 3): growing the input 16x must grow the
time far less than 256x (quadratic), i.e. a ratio under 64. The tests (tests/test_normalize_html_text.py,
tests/test_formula_spacing.py) keep the answers for the same inputs; the time is measured here only.
Run with ``python -m benchmarks --only "text linearity"`` (outside issue 15's targets).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from benchmarks.harness import Context, Row, bench, ms
from syncd.normalize.crossref_lists import citation_text
from syncd.normalize.html_text import html_to_text

HOSTILE: dict[str, Callable[[int], str]] = {
    "nested links": lambda n: '<a href="http://x">' * (n // 20) + "x",
    "ampersands": lambda n: "&" * n,
    "unterminated references": lambda n: "&#" + "1" * n,
    "less-than signs": lambda n: "<" * n,
    "unclosed attributes": lambda n: '<a href="' * (n // 9),
    "comment openers": lambda n: "<!--" * (n // 4),
    "script openers": lambda n: "<script>" * (n // 8),
    "trailing spaces": lambda n: "a" + " " * n + "b",
    "breaks": lambda n: "<br>" * (n // 4),
    "list items": lambda n: "<ul><li>" * (n // 8) + "x",
}
"""The hostile shapes of tests/test_normalize_html_text.py, by name: ``n`` characters of each."""
LIMIT = 64.0


def _best(fn: Callable[[str], object], text: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - start)
    return best


@bench(20, "other", "text linearity", figures=("text normalization on hostile input: t(160k) / t(10k)",))
def text_linearity(ctx: Context) -> list[Row]:
    cases: list[tuple[str, Callable[[str], object], Callable[[int], str]]] = [
        (f"html_to_text, {name}", html_to_text, make) for name, make in HOSTILE.items()
    ]
    cases.append(("citation_text, unclosed formula openers", citation_text, lambda n: "<math>x " * (n // 8)))
    rows = []
    for figure, fn, make in cases:
        small, large = _best(fn, make(10_000)), _best(fn, make(160_000))
        ratio = large / max(small, 1e-4)
        rows.append(
            Row(
                "other",
                f"{figure}: 160,000 characters",
                ms(large),
                comparison=f"10,000 characters: {ms(small)}",
                ratio=f"{ratio:.1f}x",
                target=f"< {LIMIT:g}x (16x the input, linear)",
                met=ratio < LIMIT,
            )
        )
    return rows
