"""Tests for syncd.normalize.html_text: the Zenodo HTML-to-text rules of anchors §3.6."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from syncd.normalize.html_text import decode_entities, html_to_text
from tests.corpus_path import CORPUS

ZENODO = CORPUS / "zenodo"


def _description(rel: str) -> str:
    body: dict[str, Any] = json.loads((ZENODO / rel).read_text(encoding="utf-8"))
    return body["metadata"]["description"]


def test_script_style_and_comments_are_dropped_with_their_content() -> None:
    """Rule 1: script/style elements and comments vanish, content included."""
    html = (
        '<p>keep</p><script type="text/javascript">alert("x")</script><style>p{}</style><!-- hidden -->after'
    )
    assert html_to_text(html) == "keep\nafter"


def test_unterminated_script_and_comment_run_to_the_end() -> None:
    """Rule 1: an unclosed script or comment drops everything after its opener."""
    assert html_to_text("before<script>never closed") == "before"
    assert html_to_text("before<!-- never closed") == "before"


def test_br_and_block_ends_become_newlines() -> None:
    """Rule 2: <br> in any spelling and the end of p/div/h1-6/blockquote become newlines."""
    assert html_to_text("a<br>b<br/>c<BR />d") == "a\nb\nc\nd"
    assert (
        html_to_text("<h1>Title</h1><div>one</div><blockquote>two</blockquote>three")
        == "Title\none\ntwo\nthree"
    )


def test_list_items_get_a_dash_and_table_rows_a_line() -> None:
    """Rule 2: <li> opens with '- '; a row ends a line while cells run together."""
    assert html_to_text('<ul><li>alpha</li><li class="x">beta</li></ul>') == "- alpha\n- beta"
    assert html_to_text("<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>") == "ab\nc"


def test_other_tags_are_stripped() -> None:
    """Rule 4: inline tags disappear without adding spaces."""
    assert html_to_text('<span style="x">in<b>line</b></span> <em>text</em>') == "inline text"


def test_links_inline_their_http_target_when_it_differs_from_the_text() -> None:
    """Rule 3: <a href=X>T</a> becomes 'T (X)' for http(s) X != T; otherwise just T."""
    assert html_to_text('See <a href="https://example.org/docs">the docs</a>.') == (
        "See the docs (https://example.org/docs)."
    )
    assert html_to_text('<a href="https://example.org">https://example.org</a>') == "https://example.org"
    assert html_to_text('<a href="mailto:someone">Contact</a> <a href="/rel">Rel</a>') == "Contact Rel"
    assert html_to_text("<a href='https://a.test'><b>A</b></a>") == "A (https://a.test)"
    assert html_to_text("<a href=https://b.test target=_blank>B</a>") == "B (https://b.test)"


def test_link_href_entities_are_decoded_exactly_once() -> None:
    """Rules 3+5: &amp; in an href decodes to &, and &amp;lt; stays a literal &lt;."""
    assert html_to_text('<a href="https://x.test/?a=1&amp;b=%3C">Q</a>') == "Q (https://x.test/?a=1&b=%3C)"
    assert html_to_text('<a href="https://x.test/?q=&amp;lt;">Q</a>') == "Q (https://x.test/?q=&lt;)"


def test_numeric_references_and_invalid_code_points() -> None:
    """Rule 5: decimal and hex references decode; 0, surrogates and > U+10FFFF become U+FFFD."""
    assert html_to_text("&#65;&#x42;&#X43;&#8364;&#x1F600;") == "ABC€😀"
    assert decode_entities("&#0;|&#xD800;|&#x110000;") == "\ufffd|\ufffd|\ufffd"
    assert html_to_text("a&#0;b&#xD800;c&#99999999999999999999;d") == "a\ufffdb\ufffdc\ufffdd"


def test_fixed_named_table_is_case_insensitive_and_nbsp_is_a_space() -> None:
    """Rule 5: the 16 names decode in any case; &nbsp; is a plain space."""
    assert (
        decode_entities(
            "&amp;&lt;&gt;&quot;&apos;&nbsp;&ndash;&mdash;&hellip;&lsquo;&rsquo;&ldquo;&rdquo;&copy;&reg;&deg;"
        )
        == "&<>\"' –—…‘’“”©®°"
    )
    assert html_to_text("&AMP;&Lt;&NBSP;x") == "&< x"


def test_latin1_names_are_case_sensitive_and_unknown_names_stay() -> None:
    """Rule 5: Latin-1 names decode in exact case only; &euro;, &bogus; and a bare & stay as written."""
    assert html_to_text("n&uacute;meros &Aacute;&aacute; &szlig; &AElig;&THORN;&yuml;") == "números Áá ß ÆÞÿ"
    assert html_to_text("&UACUTE;") == "&UACUTE;"
    assert html_to_text("&bogus; &euro; & plain R&D &copy x") == "&bogus; &euro; & plain R&D &copy x"


def test_nothing_is_decoded_twice() -> None:
    """Rule 5: escaped markup stays text; an escaped entity stays an entity."""
    assert html_to_text("&amp;lt;script&amp;gt;") == "&lt;script&gt;"
    assert html_to_text("&lt;b&gt;not a tag&lt;/b&gt;") == "<b>not a tag</b>"


def test_whitespace_normalization() -> None:
    """Rule 6: CRLF/CR → LF, trailing blanks trimmed per line, 3+ newlines → 2, whole trimmed."""
    assert html_to_text("  a  \r\nb\t\rc\n\n\n\n\nd  ") == "a\nb\nc\n\nd"
    assert html_to_text("<p></p><br><script>x</script>") == ""


def test_real_description_22705923_paragraphs_and_pre_blocks() -> None:
    """scikit-learn 1.9.1 (RDM record 22705923): <p> and <pre><code> become paragraphs."""
    assert html_to_text(_description("record/records-22705923.json")) == "\n".join(
        [
            "We're happy to announce the 1.9.1 release.",
            "",
            "This release contains a few bug fixes and is the first version supporting Python 3.15.",
            "",
            "You can see the changelog here: https://scikit-learn.org/stable/whats_new/v1.9.html#version-1-9-1",
            "",
            "You can upgrade with pip as usual:",
            "",
            "pip install -U scikit-learn",
            "",
            "The conda-forge builds can be installed using:",
            "",
            "conda install -c conda-forge scikit-learn",
            "",
            "Thanks to everyone who contributed to this release !",
        ]
    )


def test_real_description_22931068_latin1_entities_and_br() -> None:
    """Restricted record 22931068 (Spanish, editor-stored Latin-1 entities): decoded, <br> kept."""
    text = html_to_text(_description("record/records-22931068_restricted.json"))
    assert "descomposición exacta del conteo de los\nnúmeros primos" in text
    assert "—una componente de densidad" in text
    assert text.endswith("registro con fines de fecha y autoría.")
    assert "&" not in text


def test_real_description_5244404_link_equal_to_its_text_is_not_repeated() -> None:
    """Record 5244404 links the Cell DOI with the URL as text: it appears once; &ldquo; → “."""
    text = html_to_text(_description("record/records-5244404.json"))
    assert "Published online: 18-Aug-2021, Cell, https://doi.org/10.1016/j.cell.2021.08.017\n" in text
    assert text.count("https://doi.org/10.1016/j.cell.2021.08.017") == 1
    assert "a “laboratory escape” scenario" in text
    assert text.endswith(
        "https://github.com/sars-cov-2-origins/critical-review"
    )  # trailing &nbsp; para trimmed


def test_real_long_description_7391177_has_no_markup_left() -> None:
    """The ~34 KB HTML release notes of record 7391177 convert to tag-free text of a sane size."""
    html = _description("record/records-7391177.json")
    text = html_to_text(html)
    assert len(text) > 4_000
    assert "<" not in text.replace("<=", "").replace("< ", "")
    assert "\n\n\n" not in text
    assert text.startswith(text.strip())


@pytest.mark.parametrize(
    "value",
    [
        None,
        42,
        b"<p>x</p>",
        "",
        "\x00\x01\x02",
        "\ud800 lone surrogate",
        "<",
        "&",
        "<!---->",
        "<?pi?>",
        "<![CDATA[x]]>",
    ],
)
def test_never_raises(value: Any) -> None:
    """Odd input (non-strings, NUL and control characters, lone surrogates, fragments) gives a string."""
    assert isinstance(html_to_text(value), str)


def test_deep_nesting_keeps_the_text() -> None:
    """5,000 nested <div>s (past libxml2's 2,048 depth limit) still yield the text, no RecursionError."""
    depth = 5_000
    assert html_to_text("<div>" * depth + "x &amp; y" + "</div>" * depth + "after") == "x & yafter"
    assert html_to_text("<div>" * 1_000 + "x" + "</div>" * 1_000 + "after") == "x\n\nafter"


_HOSTILE: dict[str, Callable[[int], str]] = {
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


@pytest.mark.parametrize("name", list(_HOSTILE))
def test_hostile_input_is_read_whole(name: str) -> None:
    """160,000 characters of each hostile shape give a string no longer than the input (no error, nothing
    invented); its linear time (t(160k)/t(10k) < 64) is measured in benchmarks/bench_text.py, not here.
    """
    text = _HOSTILE[name](160_000)
    out = html_to_text(text)
    assert isinstance(out, str) and len(out) <= len(text)
