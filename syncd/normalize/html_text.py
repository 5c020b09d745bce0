"""HTML to plain text for Zenodo descriptions (anchors §3.6, the Zenodo rules).

Applies only to ``metadata.description`` and additional descriptions; every other Zenodo string is
served verbatim. The rules, in the anchor's order:

1. comments and ``script``/``style`` elements (with their content) are dropped, an unterminated
   one through the end of the input;
2. ``<br>`` becomes a newline; the end of ``p``, ``div``, ``h1``-``h6``, ``li``, ``tr``, ``blockquote``,
   ``pre``, ``ul``, ``ol`` and ``table`` becomes a newline; ``<li>`` becomes ``- ``;
3. ``<a href=X>T</a>`` becomes ``T (X)`` when X is http(s) and differs from T;
4. every other tag is stripped;
5. entities are decoded exactly once: numeric references (an invalid code point becomes U+FFFD),
   a 16-name table in any case (``nbsp`` becomes a plain space) and the HTML 4 Latin-1 names,
   case-sensitively. Other names (``&euro;``, ``&bogus;``) and a ``&`` without ``;`` stay as written;
6. CRLF/CR become LF, trailing spaces and tabs are trimmed per line, 3 or more newlines collapse to
   2, and the whole is trimmed.

Parsing is done by libxml2 through lxml (C, linear in the input, recovers from any markup). The
entity rule 5 is applied before parsing by rewriting every ``&`` into a form libxml2 decodes exactly
as the table says, so nothing is decoded twice and libxml2's larger entity table never applies.
The tree is walked iteratively (deep nesting cannot overflow the stack) and the line clean-up uses
no backtracking regex, so hostile input stays linear. :func:`html_to_text` never raises.
"""

from __future__ import annotations

import re
from typing import Any

from lxml import etree
from lxml import html as lxml_html

__all__ = ["decode_entities", "html_to_text"]

_NAMED: dict[str, str] = {
    "amp": "&",
    "lt": "<",
    "gt": ">",
    "quot": '"',
    "apos": "'",
    "nbsp": " ",
    "ndash": "–",
    "mdash": "—",
    "hellip": "…",
    "lsquo": "‘",
    "rsquo": "’",
    "ldquo": "“",
    "rdquo": "”",
    "copy": "©",
    "reg": "®",
    "deg": "°",
}
"""The fixed named table, matched in any case."""

_LATIN1: dict[str, str] = {
    name: chr(code)
    for name, code in {
        "AElig": 198,
        "Aacute": 193,
        "Acirc": 194,
        "Agrave": 192,
        "Aring": 197,
        "Atilde": 195,
        "Auml": 196,
        "Ccedil": 199,
        "ETH": 208,
        "Eacute": 201,
        "Ecirc": 202,
        "Egrave": 200,
        "Euml": 203,
        "Iacute": 205,
        "Icirc": 206,
        "Igrave": 204,
        "Iuml": 207,
        "Ntilde": 209,
        "Oacute": 211,
        "Ocirc": 212,
        "Ograve": 210,
        "Oslash": 216,
        "Otilde": 213,
        "Ouml": 214,
        "THORN": 222,
        "Uacute": 218,
        "Ucirc": 219,
        "Ugrave": 217,
        "Uuml": 220,
        "Yacute": 221,
        "aacute": 225,
        "acirc": 226,
        "acute": 180,
        "aelig": 230,
        "agrave": 224,
        "aring": 229,
        "atilde": 227,
        "auml": 228,
        "brvbar": 166,
        "ccedil": 231,
        "cedil": 184,
        "cent": 162,
        "curren": 164,
        "divide": 247,
        "eacute": 233,
        "ecirc": 234,
        "egrave": 232,
        "eth": 240,
        "euml": 235,
        "frac12": 189,
        "frac14": 188,
        "frac34": 190,
        "iacute": 237,
        "icirc": 238,
        "iexcl": 161,
        "igrave": 236,
        "iquest": 191,
        "iuml": 239,
        "laquo": 171,
        "macr": 175,
        "micro": 181,
        "middot": 183,
        "not": 172,
        "ntilde": 241,
        "oacute": 243,
        "ocirc": 244,
        "ograve": 242,
        "ordf": 170,
        "ordm": 186,
        "oslash": 248,
        "otilde": 245,
        "ouml": 246,
        "para": 182,
        "plusmn": 177,
        "pound": 163,
        "raquo": 187,
        "sect": 167,
        "shy": 173,
        "sup1": 185,
        "sup2": 178,
        "sup3": 179,
        "szlig": 223,
        "thorn": 254,
        "times": 215,
        "uacute": 250,
        "ucirc": 251,
        "ugrave": 249,
        "uml": 168,
        "uuml": 252,
        "yacute": 253,
        "yen": 165,
        "yuml": 255,
    }.items()
}
"""The HTML 4 Latin-1 entities (U+00A0-U+00FF), matched case-sensitively: Zenodo's editor stores
accented letters as named entities (``n&uacute;meros``)."""

_REPLACEMENT = "\ufffd"
# One alternation, each branch bounded by a fixed character class: linear on any input.
_REF_RE = re.compile(r"&(?:#[xX]([0-9a-fA-F]+);|#([0-9]+);|([A-Za-z][A-Za-z0-9]*);)?")
# Characters libxml2 cannot hold in a tree (and lone surrogates, which cannot be encoded).
_XML_INVALID_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_NEWLINES_RE = re.compile(r"\n{3,}")
_HTTP_RE = re.compile(r"https?://", re.IGNORECASE)
_TAG_RE = re.compile(r"<[^>]*>")

_BLOCK_END = frozenset(
    {"p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "li", "tr", "blockquote", "pre", "ul", "ol", "table"}
)
_DROPPED = frozenset({"script", "style"})
_MARKUP_CHARS = frozenset("<>&\"'")


def _code_point(digits: str, base: int) -> str:
    """The character of a numeric reference; U+FFFD for 0, surrogates and beyond U+10FFFF."""
    digits = digits.lstrip("0")
    if not digits or len(digits) > (6 if base == 16 else 7):
        return _REPLACEMENT
    cp = int(digits, base)
    if cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
        return _REPLACEMENT
    return chr(cp)


def _decode_ref(match: re.Match[str]) -> str | None:
    """The decoded character of one reference, or ``None`` when it is not decoded (stays as written)."""
    hex_digits, dec_digits, name = match.group(1), match.group(2), match.group(3)
    if hex_digits is not None:
        return _code_point(hex_digits, 16)
    if dec_digits is not None:
        return _code_point(dec_digits, 10)
    if name is not None:
        named = _NAMED.get(name.lower())
        if named is not None:
            return named
        return _LATIN1.get(name)
    return None


def decode_entities(text: str) -> str:
    """Decode character references in plain text by rule 5 (one pass; unknown names stay).

    Args:
        text: text that may hold ``&…;`` references (no markup is interpreted).

    Returns:
        The text with numeric references, the 16 fixed names (any case) and the Latin-1 names
        (exact case) decoded.
    """

    def repl(match: re.Match[str]) -> str:
        decoded = _decode_ref(match)
        return match.group(0) if decoded is None else decoded

    return _REF_RE.sub(repl, text)


def _reencode_ref(match: re.Match[str]) -> str:
    """Rewrite one ``&`` so that libxml2 decodes it exactly as rule 5 says, once.

    A decodable reference becomes its character, written literally when it cannot be read as
    markup or whitespace, else as a decimal reference; a reference to a character libxml2 cannot
    hold becomes U+FFFD; anything else becomes ``&amp;`` so it survives as written.
    """
    decoded = _decode_ref(match)
    if decoded is None:
        return "&amp;" + match.group(0)[1:]
    if _XML_INVALID_RE.match(decoded):
        return _REPLACEMENT
    if decoded in _MARKUP_CHARS or decoded.isspace():
        return f"&#{ord(decoded)};"
    return decoded


def _clean_lines(text: str) -> str:
    """Rule 6: LF line ends, trailing blanks trimmed per line, at most one blank line, trimmed."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = "\n".join(line.rstrip(" \t") for line in text.split("\n"))
    return _NEWLINES_RE.sub("\n\n", text).strip()


def _walk(root: Any) -> str:
    """Render the parsed tree by rules 1-4, iteratively."""
    out: list[str] = []
    # Start offset in ``out`` of the open <a> being tracked, and whether it has an <a> inside.
    link_start: int | None = None
    link_nested = False
    walker = etree.iterwalk(root, events=("start", "end"))
    for event, el in walker:
        tag = el.tag if isinstance(el.tag, str) else ""
        tag = tag.lower()
        if event == "start":
            if not tag or tag in _DROPPED:
                walker.skip_subtree()
                continue
            if tag == "br":
                out.append("\n")
            elif tag == "li":
                out.append("- ")
            elif tag == "a":
                if link_start is None:
                    link_start, link_nested = len(out), False
                else:
                    link_nested = True
            if el.text:
                out.append(el.text)
            continue
        # end event
        if tag and tag not in _DROPPED:
            if tag in _BLOCK_END:
                out.append("\n")
            elif tag == "a" and link_start is not None:
                start, link_start = link_start, None
                href = (el.get("href") or "").strip()
                if not link_nested and _HTTP_RE.match(href):
                    text = "".join(out[start:]).strip()
                    if href != text:
                        out.append(f" ({href})")
        if el.tail:
            out.append(el.tail)
    return "".join(out)


def _parser() -> lxml_html.HTMLParser:
    """A fresh parser per call: lxml parser objects must not be shared between threads."""
    return lxml_html.HTMLParser(
        encoding="utf-8",
        remove_comments=True,
        remove_pis=True,
        huge_tree=True,
        no_network=True,
        default_doctype=False,
    )


def _fallback(text: str) -> str:
    """Last resort when libxml2 fails: drop ``<…>`` runs, then decode entities (rule 5 only)."""
    return decode_entities(_TAG_RE.sub("", text))


def html_to_text(s: str) -> str:
    """Convert a Zenodo HTML description (``metadata.description``) to plain text.

    Args:
        s: the HTML fragment as Zenodo stores it.

    Returns:
        Plain text by the six rules of the module docstring; ``""`` for markup with no text.
        Never raises: a non-string gives ``""``.
    """
    if not isinstance(s, str) or not s:
        return ""
    try:
        cleaned = _XML_INVALID_RE.sub("", s)
        prepared = _REF_RE.sub(_reencode_ref, cleaned)
        if not prepared.strip():
            return ""
        parser = _parser()
        try:
            root = lxml_html.document_fromstring(prepared.encode("utf-8"), parser=parser)
        except etree.ParserError:
            return ""  # nothing but comments or whitespace
        if any(entry.level >= etree.ErrorLevels.FATAL for entry in parser.error_log):
            # libxml2 gave up part-way (nesting deeper than 2048): keep the text, lose the layout.
            return _clean_lines(_fallback(cleaned))
        return _clean_lines(_walk(root))
    except Exception:  # never raise on depositor text
        try:
            return _clean_lines(_fallback(_XML_INVALID_RE.sub("", s)))
        except Exception:
            return ""
