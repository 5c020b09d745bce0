"""Text normalization stays linear on hostile input: the speed claims the unit tests no longer time.

``html_to_text`` (abstracts, descriptions) over ten hostile shapes and ``citation_text`` over unclosed
formula openers, each at 10,000 and 160,000 characters, and ``jats_to_text`` (§3.6) over twelve shapes at
1,000 and 16,000 repetitions (best of 3): growing the input 16x must grow the time far less than 256x
(quadratic), i.e. a ratio under 64. The tests (tests/core/test_normalize_html_text.py,
tests/crossref/test_formula_spacing.py, tests/core/test_normalize_text.py) keep the answers for the same
inputs; the time is measured here only.
Run with ``python -m benchmarks --only "text linearity"`` (outside issue 15's targets).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from benchmarks.harness import Context, Row, bench, ms
from syncd.crossref.views_lists import citation_text
from syncd.normalize.html_text import html_to_text
from syncd.normalize.text import jats_to_text

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
"""The hostile shapes of tests/core/test_normalize_html_text.py, by name: ``n`` characters of each."""
JATS_HOSTILE: dict[str, Callable[[int], str]] = {
    "unclosed openers": lambda n: "<jats:p>x " * n,
    "unclosed quoted attribute": lambda n: '<a x="y ' * n,
    "unclosed comments": lambda n: "<!-- x " * n,
    "stray closers": lambda n: "<i>" * 50 + "</b>x " * n,
    "deep nesting": lambda n: "<i>" * n + "x" + "</i>" * n,
    "alternating mismatch": lambda n: "<a><b></a></b>y " * n,
    "entity soup": lambda n: "&#x41;&amp;&#" * n,
    "math": lambda n: "<math>" + "<mrow><mi>x</mi>" * n + "</math>",
    "empty inline runs": lambda n: "a" + "<i></i>" * n + "b",
    "long whitespace run": lambda n: "<p>x" + " " * (16 * n) + "y</p>",
    "nested links": lambda n: "<a href='http://x.org/'>" * n + "t",
    "bare brackets": lambda n: "< a <= b <" * n,
}
"""The hostile shapes of tests/core/test_normalize_text.py (``jats_to_text``, §3.6), ``n`` repeats each."""
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
    sizes = {figure: (10_000, 160_000) for figure, _fn, _make in cases}
    for name, make in JATS_HOSTILE.items():  # 1,000 and 16,000 repetitions, as in the test
        cases.append((f"jats_to_text, {name}", jats_to_text, make))
        sizes[f"jats_to_text, {name}"] = (1_000, 16_000)
    rows = []
    for figure, fn, make in cases:
        lo, hi = sizes[figure]
        small, large = _best(fn, make(lo)), _best(fn, make(hi))
        ratio = large / max(small, 1e-4)
        rows.append(
            Row(
                "other",
                f"{figure}: {hi:,}",
                ms(large),
                comparison=f"{lo:,}: {ms(small)}",
                ratio=f"{ratio:.1f}x",
                target=f"< {LIMIT:g}x (16x the input, linear)",
                met=ratio < LIMIT,
            )
        )
    return rows
