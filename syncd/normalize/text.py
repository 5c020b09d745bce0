"""Text normalization for the Crossref contract (anchors §3.6).

Two entry points, for human-readable deposited strings only (identifiers, URLs and dates never pass
through here):

* :func:`normalize_text`: the baseline for every plain value (names, affiliations, subjects, publisher,
  funder names): decode HTML5 character references once, collapse whitespace runs.
* :func:`jats_to_text`: for JATS/HTML fields (``title``, ``subtitle``, ``container-title``,
  ``abstract``): strip markup *before* decoding references, keep paragraph structure, read MathML.

How :func:`jats_to_text` works, so that it stays linear on hostile input:

1. One left-to-right scan tokenizes the string. A ``<`` starts a tag only when it has the shape of one
   (``<name attr="v">``, no space after ``<``; quoted values cannot cross another ``<``); otherwise it is
   literal text. Comments, CDATA, processing instructions and doctypes are recognised by a cached
   ``str.find`` so an unclosed opener never causes a rescan. Namespace prefixes (``jats:p``, ``mml:mi``)
   are dropped and names lowercased.
2. The scan balances the tags itself (a closer with no open element of that name is dropped; a closer
   pops up to its opener), caps nesting depth at :data:`MAX_DEPTH` and escapes every ``&``, so the
   string handed to lxml (recover mode, ``huge_tree`` off, no DTD, no network) is well-formed and carries
   the deposited character references untouched.
3. A tree walk emits text with boundary markers by element class (tight, inline, block, paragraph,
   list item); MathML becomes its TeX annotation or a linear form (:mod:`syncd.normalize.mathml`);
   ``alternatives`` keeps its first text-bearing child. Each paragraph is then resolved, decoded once
   and whitespace-collapsed.

Any exception falls back to a plain regex strip: the functions never raise on malformed markup.
"""

from __future__ import annotations

import html
import re
from html.entities import html5 as _HTML5

from lxml import etree

from syncd.normalize.mathml import element_children, local_name, math_text

__all__ = ["MAX_DEPTH", "decode_entities", "jats_to_text", "normalize_text"]

MAX_DEPTH = 128
"""Deepest element nesting kept; openers beyond it are dropped (their text is kept)."""

# --------------------------------------------------------------------------------------------------
# Character references and whitespace
# --------------------------------------------------------------------------------------------------

_ENTITY = re.compile(r"&(?:#[xX]([0-9A-Fa-f]++);|#([0-9]++);|([A-Za-z][A-Za-z0-9]*+);)")
_WS = re.compile(r"\s+")


def _entity_repl(m: re.Match[str]) -> str:
    hexa, dec, name = m.groups()
    if name is not None:
        return _HTML5.get(name + ";", m.group(0))
    digits = (hexa or dec or "").lstrip("0") or "0"
    if len(digits) > 8:  # far past U+10FFFF; also keeps int() away from its digit limit
        return "\ufffd"
    # html.unescape applies the HTML5 numeric rules (NUL/surrogates/out of range -> U+FFFD,
    # 0x80-0x9F read as windows-1252).
    return html.unescape(m.group(0))


def decode_entities(s: str) -> str:
    """Decode HTML5 character references in one pass.

    Named references use the full HTML5 set (``html.entities.html5``); decimal and hex forms follow the
    HTML5 rules. The trailing ``;`` is required, so ``R&D`` and ``&amp`` stay as written, and the result is
    never decoded again: ``&amp;lt;`` becomes the literal text ``&lt;``.

    Args:
        s: deposited text.

    Returns:
        ``s`` with every complete character reference replaced.
    """
    if "&" not in s:
        return s
    return _ENTITY.sub(_entity_repl, s)


def normalize_text(s: str) -> str:
    """Baseline normalization of a human-readable deposited value (``normalizeText`` of the anchor).

    Decodes character references once (:func:`decode_entities`), collapses every whitespace run
    (including NBSP and line breaks) to one space and trims the ends. Markup is left alone; use
    :func:`jats_to_text` for JATS/HTML fields.

    Args:
        s: e.g. a ``publisher``, an author ``given``/``family``, an ``affiliation[].name``, a ``subject``.

    Returns:
        The normalized string (possibly empty).
    """
    return _WS.sub(" ", decode_entities(s)).strip()


# --------------------------------------------------------------------------------------------------
# Tokenizer: shape-tested tags, balanced and depth-capped, rendered as well-formed XML
# --------------------------------------------------------------------------------------------------

_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_TAG = re.compile(
    r"""<(?P<close>/)?(?P<name>[A-Za-z_][\w.:-]*+)
    (?P<attrs>(?:\s++[^\s"'<>/=]++(?:\s*+=\s*+(?:"[^"<]*+"|'[^'<]*+'|[^\s"'<>=`]++))?+)*+)
    \s*+(?P<selfclose>/)?>""",
    re.VERBOSE,
)
_ATTR = re.compile(r"""([^\s"'<>/=]+)(?:\s*=\s*("[^"<]*"|'[^'<]*'|[^\s"'<>=`]+))?""")
_DECL = re.compile(r"<![^<>]*+>")
_LOCAL_NAME = re.compile(r"[A-Za-z_][\w.-]*")
_KEPT_ATTRS = frozenset({"encoding", "alttext", "href", "open", "close", "separators"})
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track"}
    | {"wbr", "mspace", "mglyph", "none", "mprescripts", "malignmark", "maligngroup"}
)


def _xml_text(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _xml_attr(s: str) -> str:
    return _xml_text(s).replace('"', "&quot;")


class _Finder:
    """``str.find`` with a per-needle memo, so repeated unclosed openers never rescan the tail."""

    def __init__(self, s: str) -> None:
        self.s = s
        self.memo: dict[str, tuple[int, int]] = {}

    def find(self, needle: str, start: int) -> int:
        hit = self.memo.get(needle)
        if hit is not None:
            searched_from, found = hit
            if searched_from <= start and (found == -1 or found >= start):
                return found
        found = self.s.find(needle, start)
        self.memo[needle] = (start, found)
        return found


def _to_xml(s: str) -> str:
    """Tokenize ``s`` and return a well-formed ``<root>…</root>`` XML string (see module docstring)."""
    out: list[str] = ["<root>"]
    stack: list[str] = []
    open_count: dict[str, int] = {}
    finder = _Finder(s)
    pos = 0
    n = len(s)
    while pos < n:
        lt = s.find("<", pos)
        if lt == -1:
            out.append(_xml_text(s[pos:]))
            break
        if lt > pos:
            out.append(_xml_text(s[pos:lt]))
        pos = lt
        if s.startswith("<!--", lt):
            end = finder.find("-->", lt + 4)
            if end != -1:
                pos = end + 3
                continue
        elif s.startswith("<![CDATA[", lt):
            end = finder.find("]]>", lt + 9)
            if end != -1:
                out.append(_xml_text(s[lt + 9 : end]))
                pos = end + 3
                continue
        elif s.startswith("<?", lt):
            end = finder.find("?>", lt + 2)
            if end != -1:
                pos = end + 2
                continue
        elif s.startswith("<!", lt):
            decl = _DECL.match(s, lt)
            if decl:
                pos = decl.end()
                continue
        else:
            m = _TAG.match(s, lt)
            local = m.group("name").rsplit(":", 1)[-1].lower() if m else ""
            if m and _LOCAL_NAME.fullmatch(local):
                pos = m.end()
                if m.group("close"):
                    if open_count.get(local):
                        while stack:
                            top = stack.pop()
                            open_count[top] -= 1
                            out.append(f"</{top}>")
                            if top == local:
                                break
                    elif local not in _TIGHT and local not in _INLINE:
                        out.append(" ")
                    continue
                attrs = _render_attrs(m.group("attrs"))
                if m.group("selfclose") or local in _VOID:
                    out.append(f"<{local}{attrs}/>")
                elif len(stack) >= MAX_DEPTH:
                    if local not in _TIGHT and local not in _INLINE:
                        out.append(" ")
                else:
                    stack.append(local)
                    open_count[local] = open_count.get(local, 0) + 1
                    out.append(f"<{local}{attrs}>")
                continue
        out.append("&lt;")
        pos = lt + 1
    out.extend(f"</{name}>" for name in reversed(stack))
    out.append("</root>")
    return "".join(out)


def _render_attrs(raw: str) -> str:
    if not raw:
        return ""
    kept: dict[str, str] = {}
    for m in _ATTR.finditer(raw):
        name = m.group(1).rsplit(":", 1)[-1].lower()
        if name in _KEPT_ATTRS and name not in kept:
            value = m.group(2) or ""
            if value[:1] in ("'", '"'):
                value = value[1:-1]
            kept[name] = value
    return "".join(f' {k}="{_xml_attr(v)}"' for k, v in kept.items())


# --------------------------------------------------------------------------------------------------
# Tree walk
# --------------------------------------------------------------------------------------------------

# Markers placed in the text stream, resolved per paragraph (the input's C0 controls are removed first).
_M_INLINE = "\x01"  # a space only between word characters or after a sentence end
_M_TIGHT = "\x02"  # no space; cancels adjacent inline markers
_M_PARA = "\x03"  # paragraph break
_M_ITEM = "\x04"  # list-item separator
_M_SOFT = "\x05"  # layout whitespace (a run with a line break) next to a tag; see _marker_repl
_M_SCRIPT = "\x06"  # start of sub/sup: tight, and swallows soft whitespace before it
_M_FORMULA_OPEN = "\x07"  # an inline formula starts: it stands as a token against the prose before
_M_FORMULA_CLOSE = "\x08"  # an inline formula ends: it stands as a token against the prose after
_SCRIPTS = frozenset({"sub", "sup", "inf"})
_LEAD_WS = re.compile(r"\s+")

_TIGHT = frozenset({"sub", "sup", "inf", "inline-graphic", "private-char", "glyph-data", "glyph-ref", "wbr"})
_FORMULA = frozenset({"inline-formula", "tex-math", "formula"})
_INLINE = frozenset(
    {"i", "b", "em", "strong", "italic", "bold", "sc", "span", "u", "underline", "monospace", "roman"}
    | {"sans-serif", "small", "big", "strike", "overline", "font", "tt", "code", "var", "kbd", "samp"}
    | {"s", "ins", "del", "mark", "q", "cite", "dfn", "abbr", "abbrev", "named-content", "styled-content"}
    | {"given-names", "surname", "prefix", "suffix", "string-name", "name", "xref", "label"}
    | {"ruby", "rt", "rp", "bdi", "bdo", "num", "fn", "sc-small", "underline-start", "underline-end"}
)
_BLOCK = frozenset({"p", "br", "disp-formula", "refersplit", "hr"})
_PARAGRAPH = frozenset(
    {"p", "sec", "title", "abstract", "trans-abstract", "disp-quote", "boxed-text", "caption", "fig"}
    | {"table-wrap", "statement", "div", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "body"}
    | {"article-title", "subtitle", "trans-title", "pre", "section", "table", "tr", "def"}
)
_LIST = frozenset({"list", "ul", "ol", "def-list", "dl"})
_LIST_ITEM = frozenset({"list-item", "li", "def-item", "dt", "dd"})
_DROP = frozenset({"script", "style", "object-id", "graphic", "media", "annotation", "annotation-xml"})
_CITATION = frozenset({"mixed-citation", "element-citation", "nlm-citation", "citation"})
_LINK = frozenset({"a", "ext-link", "uri"})


def _soften(text: str) -> str:
    """Mark whitespace runs that touch a tag and contain a line break as layout (:data:`_M_SOFT`).

    Crossref pretty-prints many deposits (``waves⏎    <jats:sup>1</jats:sup>⏎    and``); such runs say
    nothing about whether the source had a space there, so :func:`_marker_repl` decides from the
    neighbouring characters instead.
    """
    lead = _LEAD_WS.match(text)
    if lead and lead.end() == len(text):
        return _M_SOFT if "\n" in text else text
    if lead and "\n" in lead.group():
        text = _M_SOFT + text[lead.end() :]
    body = text.rstrip()
    if "\n" in text[len(body) :]:
        text = body + _M_SOFT
    return text


class _Walker:
    """Emit the text stream of a tree built by :func:`_to_xml`, with boundary markers."""

    def __init__(self, paragraphs: bool) -> None:
        self.paragraphs = paragraphs
        self.out: list[str] = []
        self.in_list = 0
        self.in_citation = 0

    def para(self) -> None:
        if self.paragraphs and not self.in_list and not self.in_citation:
            self.out.append(_M_PARA)
        else:
            self.out.append(" ")

    def walk(self, el: etree._Element) -> None:
        name = local_name(el)
        if name in _DROP:
            return
        if name == "math":
            self.out.append(_M_FORMULA_OPEN + math_text(el) + _M_FORMULA_CLOSE)
            return
        if name in _FORMULA:
            self.content(el, _M_FORMULA_OPEN, _M_FORMULA_CLOSE)
            return
        if name == "alternatives":
            for child in element_children(el):
                if "".join(child.itertext()).strip():
                    self.walk(child)
                    break
            return
        if name in _LINK:
            self.link(el)
            return
        if name in _CITATION:
            self.in_citation += 1
            self.content(el, _M_INLINE, _M_INLINE)
            self.in_citation -= 1
            return
        if self.in_citation or name in _INLINE:
            self.content(el, _M_INLINE, _M_INLINE)
        elif name in _TIGHT:
            self.content(el, _M_SCRIPT if name in _SCRIPTS else _M_TIGHT, _M_TIGHT)
        elif name in _LIST:
            self.para()
            self.in_list += 1
            self.content(el, _M_ITEM, _M_ITEM)
            self.in_list -= 1
            self.para()
        elif name in _LIST_ITEM:
            mark = _M_ITEM if self.in_list else " "
            self.content(el, mark, mark)
        elif name in _PARAGRAPH:
            self.para()
            self.content(el, "", "")
            self.para()
        elif name in _BLOCK or name != "root":
            self.content(el, " ", " ")  # unknown elements are structure: a block boundary
        else:
            self.content(el, "", "")

    def content(self, el: etree._Element, before: str, after: str) -> None:
        self.out.append(before)
        if el.text:
            self.out.append(_soften(el.text))
        for child in element_children(el):
            self.walk(child)
            if child.tail:
                self.out.append(_soften(child.tail))
        self.out.append(after)

    def link(self, el: etree._Element) -> None:
        href = (el.get("href") or "").strip()
        self.content(el, _M_INLINE, "")
        if href.lower().startswith(("http://", "https://")):
            text = "".join(el.itertext())
            if href not in text and href.split("://", 1)[1] not in text:
                self.out.append(f" ({href})")
        self.out.append(_M_INLINE)


# --------------------------------------------------------------------------------------------------
# Paragraph resolution and the public function
# --------------------------------------------------------------------------------------------------

_MARKER_RUN = re.compile("[\x01\x02\x05\x06\x07\x08]+")
_NO_SPACE_AFTER = frozenset("([{/-\u2010\u2011")
_NO_SPACE_BEFORE = frozenset(".,;:!?)]}%/-\u2010\u2011")
_SENTENCE_PUNCT = frozenset(".!?:;,")
_ABSTRACT_HEADING = re.compile(r"abstract[.:]?", re.IGNORECASE)
_TAGLIKE = re.compile(r"<[^<>]*>")


def _marker_repl(m: re.Match[str]) -> str:
    """Resolve one maximal run of boundary markers to ``" "`` or ``""`` from the run and its neighbours.

    Layout whitespace after the last sub/sup start wins (a space unless an opening bracket, slash or
    hyphen precedes or closing punctuation follows); otherwise a tight element removes the run; otherwise
    (inline boundaries only) a space between word characters or after ``. ! ? : ; ,`` before a letter.
    """
    run, text, start, end = m.group(), m.string, m.start(), m.end()
    if start == 0 or end == len(text):
        return ""
    before, after = text[start - 1], text[end]
    if before.isspace() or after.isspace():
        return ""
    if _M_FORMULA_OPEN in run or _M_FORMULA_CLOSE in run:
        return _formula_gap(run, before, after)
    if _M_SOFT in run.rsplit(_M_SCRIPT, 1)[-1]:
        return "" if before in _NO_SPACE_AFTER or after in _NO_SPACE_BEFORE else " "
    if _M_TIGHT in run or _M_SCRIPT in run:
        return ""
    if (before.isalnum() or before == "_") and (after.isalnum() or after == "_"):
        return " "
    return " " if before in _SENTENCE_PUNCT and after.isalpha() else ""


def _formula_gap(run: str, before: str, after: str) -> str:
    r"""The gap between an inline formula and its neighbour: the formula is a token of the sentence.

    The deposit's whitespace there (layout runs included) is kept as a space, so ``time scale
    <inline-formula>…</inline-formula> with`` reads ``time scale $\mathbb{T}$ with``; a formula
    that abuts a word with no whitespace is set apart from it (``neutron-rich<math>…</math>and`` reads
    ``neutron-rich ^{33}Si and``), and so is one after a hyphen (``anti-<inline-formula>`` reads
    ``anti- $$k_{\bot }$$``, as the anchor renders it); one that abuts other punctuation with none stays
    tight (``(p,q)-Laplacian``, ``(<math>…</math>)``). Two formulas in a row are kept apart.
    """
    if (
        _M_FORMULA_OPEN in run
        and _M_FORMULA_CLOSE in run
        and run.index(_M_FORMULA_CLOSE) < run.rindex(_M_FORMULA_OPEN)
    ):
        return " "
    if _M_FORMULA_OPEN in run:  # prose before, formula after; layout inside the wrapper is not a gap
        if before in "([{":
            return ""
        soft = _M_SOFT in run[: run.index(_M_FORMULA_OPEN)]
        hyphen = before in "-\u2010\u2011"  # ``anti-<inline-formula>`` reads ``anti- $$k_{\bot }$$``
        return " " if soft or hyphen or before.isalnum() or before in _SENTENCE_PUNCT else ""
    if after in ")]}":  # formula before, prose after
        return ""
    soft = _M_SOFT in run[run.rindex(_M_FORMULA_CLOSE) :]
    return " " if soft or after.isalnum() else ""


def _resolve(chunk: str) -> str:
    return normalize_text(_MARKER_RUN.sub(_marker_repl, chunk))


def _join_items(items: list[str]) -> str:
    joined = ""
    for item in items:
        if not joined:
            joined = item
        elif joined[-1] in ".;:,!?":
            joined += " " + item
        else:
            joined += "; " + item
    return joined


def _finish(stream: str, paragraphs: bool) -> str:
    paras: list[str] = []
    for chunk in stream.split(_M_PARA):
        items = [t for t in (_resolve(part) for part in chunk.split(_M_ITEM)) if t]
        text = _join_items(items)
        if text:
            paras.append(text)
    if paras and _ABSTRACT_HEADING.fullmatch(paras[0]):
        paras = paras[1:]
    return ("\n\n" if paragraphs else " ").join(paras)


def _fallback(s: str) -> str:
    return normalize_text(_TAGLIKE.sub(" ", s))


def jats_to_text(s: str, *, paragraphs: bool = True) -> str:
    """Convert a JATS/HTML deposit (``abstract``, ``title``, ``subtitle``, ``container-title``) to text.

    Rules (anchors §3.6 ``normalizeMarkupText``, BC-12): markup is stripped *before* character references
    are decoded (once: ``&amp;lt;`` stays the literal ``&lt;``); namespace prefixes (``jats:``, ``mml:``)
    are ignored. Element classes:

    * tight (``sub``, ``sup``, ``inf``…): removed with no space, so ``H<sub>2</sub>O`` -> ``H2O``;
    * inline formulas (``inline-formula``, ``tex-math``, ``formula``, MathML ``math``) are tokens of the
      sentence: the deposit's whitespace around them is a space, a word they abut is set apart
      (``scale<tex-math>$x$</tex-math>with`` -> ``scale $x$ with``), punctuation they abut stays tight;
    * inline (``i``, ``b``, ``italic``, ``bold``, ``sc``, ``span``, ``given-names``…): a space only between
      two word characters or between ``. ! ? : ; ,`` and a letter (``<i>in</i>vitro`` -> ``in vitro``,
      ``frog,<i>Physalaemus</i>`` -> ``frog, Physalaemus``);
    * layout whitespace (a run with a line break touching a tag, as in Crossref's pretty-printed
      deposits) is a space unless it sits after an opening bracket/slash/hyphen or before closing
      punctuation, and is dropped before ``sub``/``sup`` (``waves⏎<sup>1</sup>⏎ and`` -> ``waves1 and``);
    * paragraph (``p``, ``sec``, ``title``…): its own paragraph; paragraphs are separated by a blank line
      and a leading ``Abstract`` heading is dropped; section titles stay as their own paragraphs;
    * lists: one paragraph, items joined with ``"; "`` (or a space after an item's own punctuation);
    * MathML ``<math>``: its TeX annotation if present, else a linear form (``x_i``, ``A^{−1}``,
      ``√(m)``, ``(a+b)/c``), else its ``alttext``; ``alternatives`` keeps its first text-bearing child;
    * links (``a``, ``ext-link``, ``uri``): the text, followed by `` (href)`` when the text does not
      already contain the http(s) ``href``;
    * ``script``/``style``/comments dropped; unknown elements act as a block boundary (a space).

    Whitespace is collapsed within paragraphs. A ``<`` that does not have a tag's shape (``a < b``,
    ``<100>``, ``<Stack Overflow, http://…>``) is text.

    Args:
        s: the deposited markup string.
        paragraphs: ``False`` for one-line fields (titles): paragraph breaks become single spaces.

    Returns:
        Plain text (possibly empty). Never raises on malformed markup; it falls back to a regex strip.
    """
    if "<" not in s:
        return normalize_text(s)
    try:
        clean = _XML_INVALID.sub("", s)
        parser = etree.XMLParser(
            recover=True, huge_tree=False, resolve_entities=False, no_network=True, load_dtd=False
        )
        root = etree.fromstring(_to_xml(clean), parser)
        if root is None:
            return _fallback(clean)
        walker = _Walker(paragraphs)
        walker.walk(root)
        return _finish("".join(walker.out), paragraphs)
    except Exception:  # any parser or walker failure: degrade, never raise
        return _fallback(_XML_INVALID.sub("", s))
