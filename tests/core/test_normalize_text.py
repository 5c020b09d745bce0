"""Text normalization (anchors §3.6, BC-12) against real Crossref deposits from the upstream corpus."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from syncd.normalize.text import decode_entities, jats_to_text, normalize_text
from tests.corpus_path import CORPUS

WORK_DIR = CORPUS / "crossref" / "work"
WORKS = sorted(p for p in WORK_DIR.glob("*.json") if not p.name.endswith(".headers.json"))
TAG_SHAPE = re.compile(r"</?[A-Za-z][\w:.-]*[\s>/]")


@cache
def message(name: str) -> dict[str, Any]:
    return json.loads((WORK_DIR / f"{name}.json").read_text(encoding="utf-8"))["message"]


# --- normalize_text / decode_entities ----------------------------------------------------------------


def test_references_are_decoded_once_and_need_the_semicolon() -> None:
    """§3.6: one pass over the HTML5 set; ``&amp;lt;`` stays ``&lt;``; ``R&D`` and ``&amp`` survive."""
    assert decode_entities("a &amp;lt; b") == "a &lt; b"
    assert decode_entities("R&D &amp &copy; &NotEqualTilde; &#x2212;1 &#65;") == "R&D &amp © ≂̸ −1 A"
    assert decode_entities("&bogus; &#0; &#x110000; &#" + "9" * 5000 + ";") == "&bogus; \ufffd \ufffd \ufffd"
    assert decode_entities("&#128;") == "€"  # HTML5 reads 0x80-0x9F as windows-1252


def test_normalize_text_collapses_whitespace_runs() -> None:
    """§3.6: every whitespace run (tabs, newlines, NBSP, ``&nbsp;``) becomes one space; ends trimmed."""
    assert (
        normalize_text("  Cold\tSpring \n\n Harbor&nbsp;&nbsp;Laboratory\u00a0 ")
        == "Cold Spring Harbor Laboratory"
    )


def test_normalize_text_leaves_markup_alone() -> None:
    """``normalize_text`` is for plain values: it decodes ``&lt;i&gt;`` to ``<i>`` but strips no tags."""
    assert normalize_text("&lt;i&gt;x&lt;/i&gt;") == "<i>x</i>"


# --- jats_to_text on real abstracts ------------------------------------------------------------------


def test_structured_abstract_keeps_section_titles_and_drops_abstract_heading() -> None:
    """BC-12: 10.1101/598821's ``jats:sec`` titles become their own paragraphs, the leading
    "Abstract" heading is dropped and ``jats:italic`` species names join the prose.
    """
    text = jats_to_text(message("10.1101_598821")["abstract"])
    paragraphs = text.split("\n\n")
    assert paragraphs[0] == "Background"
    assert paragraphs[1].startswith("Birds of prey (raptors) are dominant apex predators")
    assert paragraphs[2] == "Results"
    assert "Conclusions" in paragraphs
    assert "Eurasian eagle-owl (Bubo bubo), oriental scops-owl (Otus sunia)" in text
    assert "<" not in text and "Abstract" not in paragraphs


def test_pretty_printed_sections_are_separated_by_blank_lines() -> None:
    """BC-12: the indented ``jats:sec`` layout of 10.1101/2025.11.10.687519 yields
    Objective/Method/Results paragraphs, each whitespace-collapsed.
    """
    paragraphs = jats_to_text(message("10.1101_2025.11.10.687519")["abstract"]).split("\n\n")
    assert paragraphs[:2] == [
        "Objective",
        paragraphs[1],
    ]
    assert paragraphs[1].startswith("Repeated alcohol-cue pairings with rewarding experiences")
    assert {"Objective", "Method", "Results"} <= set(paragraphs)
    assert all("  " not in p and "\n" not in p for p in paragraphs)


def test_mathml_uses_tex_annotation() -> None:
    """BC-12: 10.1090/s0002-9939-05-08007-x's ``mml:math`` regions read as their TeX annotations."""
    text = jats_to_text(message("10.1090_s0002-9939-05-08007-x")["abstract"])
    assert text.startswith("If \\mathcal {H} is a Hilbert space, A is a positive bounded linear operator")
    assert "range R(A^{1/2}) with its canonical Hilbertian structure." in text


def test_mathml_without_annotation_reads_as_linear_text() -> None:
    """§3.6: 10.1186/s13661-014-0236-x has MathML with no TeX annotation; it becomes ``D^{1,p}(R^N)``,
    a fraction ``(Np)/(N−p)`` (operands grouped as the anchor groups them) and sub/superscripts, with
    ``(p,q)-Laplacian`` kept whole.
    """
    text = jats_to_text(message("10.1186_s13661-014-0236-x")["abstract"])
    assert "nontrivial solution in D^{1,p}(R^N)∩D^{1,q}(R^N) for the following (p,q)-Laplacian" in text
    assert "p^⋆:=(Np)/(N−p)" in text
    assert "Δ_mu:=div(|∇u|^{m−2}∇u) is the m-Laplacian operator" in text


def test_escaped_markup_in_content_is_decoded_once() -> None:
    """BC-12: 10.1002/jor.1100150407 deposits ``p &lt; 0.001`` (text ``<``); 10.53731/r79s4nh-97aq74v-ag4t1
    deposits ``&amp;amp;`` which stays the literal ``&amp;`` (decoded once, never twice).
    """
    assert "(p < 0.001) in both groups" in jats_to_text(message("10.1002_jor.1100150407")["abstract"])
    assert "[Fenner &amp; Aryani (2019)]" in jats_to_text(
        message("10.53731_r79s4nh-97aq74v-ag4t1")["abstract"]
    )


def test_any_namespace_prefix_is_handled() -> None:
    """10.53731/rceh7pn-tzg61kj-7zv63 uses an undeclared ``ns4:`` prefix; the paragraph still reads."""
    text = jats_to_text(message("10.53731_rceh7pn-tzg61kj-7zv63")["abstract"])
    assert text.startswith("In October Jen Gibson started as the new Executive Director for the Dryad")
    assert "ns4" not in text


def test_superscripts_attach_without_layout_space() -> None:
    """Crossref's pretty-printed ``waves⏎ <jats:sup>1</jats:sup>⏎ and`` in 10.1038/s41586-020-2649-2
    reads ``waves1 and``; ``hole⏎<sup>2</sup>⏎.`` reads ``hole2.``.
    """
    text = jats_to_text(message("10.1038_s41586-020-2649-2")["abstract"])
    assert (
        "discovery of gravitational waves1 and in the first imaging of a black hole2. Here we review" in text
    )


def test_titles_with_inline_markup() -> None:
    """Real titles: ``<i>`` italics join with single spaces, ``( KRAS )``-style layout collapses."""
    title = jats_to_text(message("10.1101_2020.12.01.406702")["title"][0], paragraphs=False)
    assert title == (
        "Identification of a novel cationic glycolipid in Streptococcus agalactiae that contributes to "
        "brain entry and meningitis"
    )
    title = jats_to_text(message("10.1136_jclinpath-2020-206745")["title"][0], paragraphs=False)
    assert title == (
        "Construction of a reference material panel for detecting KRAS/NRAS/EGFR/BRAF/MET mutations in "
        "plasma ctDNA"
    )


def test_missing_space_after_comma_before_italic_is_restored() -> None:
    """10.7717/peerj.1268 deposits ``frog,<jats:italic>Physalaemus pustulosus</jats:italic>``."""
    text = jats_to_text(message("10.7717_peerj.1268")["abstract"])
    assert "the Túngara frog, Physalaemus pustulosus, a tropical anuran" in text


@pytest.mark.parametrize("path", WORKS, ids=lambda p: p.stem)
def test_no_tag_survives_in_any_corpus_text_field(path: Path) -> None:
    """Every abstract/title/subtitle/container title in the corpus converts with no tag-shaped text left."""
    msg = json.loads(path.read_text(encoding="utf-8"))["message"]
    values = [msg.get("abstract")] + [
        v for k in ("title", "subtitle", "container-title") for v in msg.get(k, [])
    ]
    for value in filter(None, values):
        out = jats_to_text(value)
        assert not TAG_SHAPE.search(out), out[:200]
        assert "\x01" not in out and "\x05" not in out


# --- jats_to_text rules on small inputs -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("markup", "expected"),
    [
        ("H<sub>2</sub>O", "H2O"),
        ("<jats:p>CO<jats:sub>2</jats:sub> and 10<jats:sup>−3</jats:sup> M</jats:p>", "CO2 and 10−3 M"),
        ("<i>H</i><sub>2</sub>O", "H2O"),
        ("in<i>vitro</i> and <i>E. coli</i>strains", "in vitro and E. coli strains"),
        ("<jats:p>a &amp;lt; b and x &lt; y</jats:p>", "a &lt; b and x < y"),
        (
            "a < b, <100> silicon and <Stack Overflow, http://x.org/>",
            "a < b, <100> silicon and <Stack Overflow, http://x.org/>",
        ),
        (
            "<jats:p>see <jats:ext-link xlink:href='https://ex.org/a'>our site</jats:ext-link></jats:p>",
            "see our site (https://ex.org/a)",
        ),
        ('<p>at <a href="https://ex.org">https://ex.org</a>.</p>', "at https://ex.org."),
        ("<p>x</p><script>alert(1)</script><style>p{}</style><!-- note -->", "x"),
        (
            "<alternatives><tex-math>\\alpha</tex-math><mml:math><mml:mi>α</mml:mi></mml:math></alternatives>",
            "\\alpha",
        ),
        ("<math><msub><mi>x</mi><mi>i</mi></msub></math>", "x_i"),
        ("<math><msup><mi>A</mi><mrow><mo>−</mo><mn>1</mn></mrow></msup></math>", "A^{−1}"),
        ("<math><msqrt><mi>m</mi></msqrt></math>", "√(m)"),
        ("<math><mfrac><mrow><mi>a</mi><mo>+</mo><mi>b</mi></mrow><mi>c</mi></mfrac></math>", "(a+b)/c"),
        ('<math alttext="x squared"><mrow></mrow></math>', "x squared"),
        (
            "<mixed-citation><person-group><surname>Smith</surname><given-names>J</given-names></person-group></mixed-citation>",
            "Smith J",
        ),
    ],
)
def test_markup_rules(markup: str, expected: str) -> None:
    """§3.6 element classes: tight, inline, links, dropped regions, alternatives, MathML forms, citations."""
    assert jats_to_text(markup) == expected


def test_lists_become_one_paragraph_with_joined_items() -> None:
    """List items (each possibly a ``p``) join into one paragraph with ``"; "``, or a space after an item
    that ends in punctuation.
    """
    markup = (
        "<jats:p>Aims:</jats:p><jats:list><jats:list-item><jats:p>one</jats:p></jats:list-item>"
        "<jats:list-item><jats:p>two.</jats:p></jats:list-item><jats:list-item>three</jats:list-item></jats:list>"
    )
    assert jats_to_text(markup) == "Aims:\n\none; two. three"


def test_paragraphs_false_joins_on_one_line() -> None:
    """Title fields: ``paragraphs=False`` turns paragraph breaks into single spaces."""
    assert jats_to_text("<p>One</p><p>Two</p>", paragraphs=False) == "One Two"
    assert jats_to_text("<p>One</p><p>Two</p>") == "One\n\nTwo"


@pytest.mark.parametrize(
    "markup",
    [
        "<p>unclosed <b>bold <i>x</p> tail </q> more",
        "<<<>>>&&&;;;</</>",
        "<!-- never closed <p>text",
        "<![CDATA[ unterminated",
        '<a href="x>y</a>',
        "<p\x00>nul\x0b</p>\ud800",
        "</p></p></p>",
        "<math><mfrac><mi>a</mi></mfrac></math>",
    ],
)
def test_malformed_markup_never_raises(markup: str) -> None:
    """Never raise on malformed markup: a string always comes back, with no control characters."""
    out = jats_to_text(markup)
    assert isinstance(out, str)
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f]", out)


def test_random_garbage_never_raises() -> None:
    """A seeded fuzz over markup-ish alphabets: jats_to_text returns a string for every input."""
    rng = random.Random(20240611)
    atoms = [
        "<",
        ">",
        "</",
        "/>",
        "<jats:p>",
        "</jats:p>",
        "<mml:math>",
        "&",
        "&amp;",
        ";",
        '"',
        "'",
        "=",
        " ",
        "\n",
        "a",
        "é",
        "<!--",
        "-->",
        "<i>",
        "</i>",
        "<sub>",
    ]
    for _ in range(300):
        s = "".join(rng.choice(atoms) for _ in range(rng.randint(0, 60)))
        assert isinstance(jats_to_text(s), str)


# --- linear time on hostile input -----------------------------------------------------------------------

HOSTILE: dict[str, Callable[[int], str]] = {
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


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_output_grows_in_proportion(name: str) -> None:
    """§3.6 on hostile input: 16x more input gives at most ~16x the output (no blow-up) and never more than
    the input. The linear-time guarantee itself (t(16k)/t(1k) < 64) is measured in benchmarks/bench_text.py,
    not timed here.
    """
    make = HOSTILE[name]
    small, large = make(1_000), make(16_000)
    out_small, out_large = jats_to_text(small), jats_to_text(large)
    assert len(out_large) <= 20 * len(out_small) + 64
    assert len(out_large) <= len(large)
