r"""Pure DOI input parsing: the canonical ``doi_key`` of real-user-cases convention 1.

A DOI argument is taken whole (never regex-extracted from prose), cleaned of the wrappers people paste
around it, decoded at most once and validated against ``^10\.[0-9]{4,9}/\S+$``::

    parse_doi(" https://doi.org/10.1175/1520-0477(1996)077%3C0935:WOTWSM%3E2.0.CO;2 ")
    -> ParsedDOI(doi="10.1175/1520-0477(1996)077<0935:WOTWSM>2.0.CO;2",
                 key="10.1175/1520-0477(1996)077<0935:wotwsm>2.0.co;2",
                 input_form="url")

``doi`` keeps the caller's case (it is what goes upstream, through :func:`doi_path_segment`); ``key`` is
the cache key, lowercased for ASCII letters only as the DOI Handbook prescribes.
"""

from __future__ import annotations

import re
import unicodedata
import urllib.parse
from dataclasses import dataclass
from typing import Literal

from syncd.errors import InvalidInput

__all__ = [
    "MAX_DOI_INPUT_LENGTH",
    "InputForm",
    "ParsedDOI",
    "doi_path_segment",
    "fold_lookalikes",
    "is_zenodo_doi",
    "parse_doi",
    "trim_pasted",
]

MAX_DOI_INPUT_LENGTH = 1000
"""Inputs longer than this (in characters, before cleaning) are refused outright."""

InputForm = Literal["bare", "doi_prefix", "url", "percent_encoded"]

# Zero-width characters that copy/paste from PDFs and web pages smuggle in. They are never part of a DOI,
# so they are removed wherever they occur (NBSP, being whitespace, is only trimmed at the ends).
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))
_TRIM = " \t\r\n\f\v\u00a0\u2007\u202f\u3000"

# Arrow blocks (U+2190-U+21FF, U+27F0-U+27FF, U+2900-U+297F, U+2B00-U+2BFF): the "opens in a new
# window" marks web pages put after a link, copied with it. Trimmed at the end with every other symbol
# glyph (Unicode category So: emoji, the link mark U+1F517) and format character (Cf: zero-width).
_ARROW_BLOCKS = ((0x2190, 0x21FF), (0x27F0, 0x27FF), (0x2900, 0x297F), (0x2B00, 0x2BFF))
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
"""Non-ASCII dashes folded to ``-`` for the key (U+2010-U+2015, U+2212); see :attr:`ParsedDOI.written`."""

# Look-alike punctuation that PDFs, word processors and web fonts put in place of the ASCII characters
# Crossref DOIs are made of (hyphens, slashes, full stops; full-width forms): mapped back before checks.
_LOOKALIKES = str.maketrans(
    {
        **dict.fromkeys(_DASHES + "\ufe63\uff0d", "-"),
        **dict.fromkeys("\u2215\u2044\uff0f", "/"),
        **dict.fromkeys("\u2024\uff0e", "."),
        **{chr(0xFF10 + d): str(d) for d in range(10)},
    }
)
# Quotes and brackets that prose and reference lists put around a DOI; a DOI never starts with one.
_OPENERS = "\"'\u201c\u2018\u00ab\u2039<([{"
_CLOSING_QUOTES = "\"'\u201d\u2019\u00bb\u203a"
_TRUNCATED = ("\u2026", "...")
_SICI_HASH_CHECK = (";2-#",)
"""The end of a SICI DOI whose check character is ``#`` (kept in a resolver URL, not read as a fragment)."""

_RESOLVER_URL = re.compile(r"^(?:https?://)?(?:dx\.|www\.)?doi\.org/", re.IGNORECASE)
_OTHER_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_DOI_PREFIX_WRAPPER = re.compile(r"^(?:info:doi/|doi:\s*|doi\s+)", re.IGNORECASE)
_DOI = re.compile(r"^10\.[0-9]{4,9}/\S+$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_ZENODO = re.compile(r"^10\.5281/zenodo\.([0-9]+)$", re.IGNORECASE)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_ENCODED_HASH = "%23"


def _is_trailing_glyph(ch: str) -> bool:
    """Whether ``ch`` is pasted decoration, never the last character of an identifier."""
    if ch in _TRIM or ch.isspace():
        return True
    code = ord(ch)
    if any(lo <= code <= hi for lo, hi in _ARROW_BLOCKS):
        return True
    return unicodedata.category(ch) in ("So", "Cf", "Zs")


def trim_pasted(raw: str) -> str:
    """``raw`` without the decoration copy and paste brings along, for every slice's identifier parser.

    Zero-width characters (U+200B, U+200C, U+200D, U+2060, U+FEFF) are removed wherever they occur;
    whitespace (NBSP, U+202F, U+3000 included) is trimmed at both ends; at the end, any run of
    arrow glyphs (``↗`` U+2197, ``→``, ``⇗``, ``⟶``, ``⤴``, ``⬈``), other symbol glyphs (Unicode category
    ``So``: ``🔗``, ``⧉``) and format characters, with the spaces between them, is dropped:
    ``"10.1016/J.CELL.2011.03.022\u00a0↗"`` -> ``"10.1016/J.CELL.2011.03.022"``.
    """
    s = raw.translate(_INVISIBLE).strip(_TRIM)
    end = len(s)
    while end and _is_trailing_glyph(s[end - 1]):
        end -= 1
    return s[:end]


@dataclass(frozen=True)
class ParsedDOI:
    """A cleaned, validated DOI.

    Attributes:
        doi: the cleaned DOI as given (case kept), e.g. ``10.31219/osf.io/f7txY``. Send this upstream.
        key: the canonical cache key: ``doi`` with ASCII letters lowercased only, e.g.
            ``10.31219/osf.io/f7txy``. Crossref's ``message.DOI`` equals it for Crossref DOIs.
        input_form: how the DOI arrived: ``"url"`` (a doi.org resolver URL, decoded once),
            ``"percent_encoded"`` (a fully encoded bare DOI such as ``10.1175%2F...``, decoded once),
            ``"doi_prefix"`` (``doi:``, ``DOI``, ``info:doi/`` wrapper) or ``"bare"``.
        written: the DOI as the caller wrote it (wrappers removed, case kept) when look-alike folding
            changed it (a U+2010-U+2015 or U+2212 dash, a division slash, full-width digits), else
            ``None``. Tool answers echo it as ``normalized_from``; a 404 on ``doi`` is asked once more
            with it when it holds a non-ASCII dash (:attr:`retry_form`).
    """

    doi: str
    key: str
    input_form: InputForm
    written: str | None = None

    @property
    def normalized_from(self) -> str | None:
        """The DOI as written when the key was folded from it (``written``), for a tool answer."""
        return self.written

    @property
    def retry_form(self) -> str | None:
        """The DOI as written when a non-ASCII dash of it was folded: asked once more after a 404.

        A few DOIs were registered with U+2010 (or another dash) in their suffix; folded to ``-``
        they answer 404. ``None`` when no dash was folded.
        """
        if self.written is None or not any(ch in _DASHES for ch in self.written):
            return None
        return self.written


def _refuse(raw: str, why: str) -> InvalidInput:
    shown = raw if len(raw) <= 120 else raw[:117] + "..."
    return InvalidInput(
        f"Not a DOI: {shown!r} ({why}). Expected a DOI such as 10.1038/nature12373, bare or as "
        "https://doi.org/10.1038/nature12373 or doi:10.1038/nature12373.",
        reason="invalid_parameter",
        hint="Pass the DOI itself (10.NNNN/suffix); publisher landing-page URLs are not accepted.",
    )


def _strip_unbalanced_closer(doi: str) -> str:
    """Drop one trailing ``)``, ``]`` or ``>`` when the suffix has more closers than openers of that kind."""
    if not doi or doi[-1] not in ")]>":
        return doi
    closer = doi[-1]
    opener = {")": "(", "]": "[", ">": "<"}[closer]
    suffix = doi.partition("/")[2]
    if suffix.count(closer) > suffix.count(opener):
        return doi[:-1]
    return doi


def parse_doi(raw: str) -> ParsedDOI:
    r"""Clean and validate a DOI argument (real-user-cases convention 1).

    Steps, in order: trim whitespace/NBSP, remove zero-width characters (U+200B, U+200C, U+200D,
    U+2060, U+FEFF) and drop trailing arrow and symbol glyphs (:func:`trim_pasted`); drop quotes
    and brackets around the DOI (a DOI starts with ``10.``; a trailing
    ``>``, like ``)``/``]``, only when unbalanced); refuse a DOI that ends with an ellipsis (cut short);
    unwrap ``https?://(dx.|www.)?doi.org/`` (query string and fragment dropped), else
    ``doi:``, ``DOI `` or ``info:doi/``; percent-decode exactly once when the input was a resolver URL or
    is a fully encoded bare DOI (``%2F`` and no literal ``/``; a resolver URL ending in a SICI's
    ``;2-#`` keeps its ``#`` check character), else read a bare DOI's trailing ``%23`` as the ``#`` it
    encodes (``...;2-%23`` and ``...;2-#`` are one DOI); Unicode NFC; look-alike hyphens, slashes, full
    stops and full-width digits mapped to ASCII (U+2010-U+2015, U+2212, U+2215, U+2044, U+FF0D, U+FF0F,
    ...; the DOI as written kept in :attr:`ParsedDOI.written`);
    drop one trailing sentence ``.``, ``,`` or ``;``; drop a trailing ``)``/``]``/``>`` only when it is
    unbalanced within the suffix. Every other character (``< > ; ( ) [ ] # :``) is kept.

    Args:
        raw: the caller's DOI string (a tool argument or CLI value), at most 1000 characters.

    Returns:
        The :class:`ParsedDOI` (cleaned ``doi``, ASCII-lowercased ``key``, ``input_form``).

    Raises:
        InvalidInput: ``reason="invalid_parameter"`` when the input is not a string, is too long, is a
            non-doi.org URL (publisher landing pages are not DOIs), contains control characters, or does
            not match ``^10\.[0-9]{4,9}/\S+$`` after cleaning. Raised before any request is made.
    """
    if not isinstance(raw, str):
        raise _refuse(repr(raw), "not a string")
    if len(raw) > MAX_DOI_INPUT_LENGTH:
        raise _refuse(raw, f"longer than {MAX_DOI_INPUT_LENGTH} characters")
    s = trim_pasted(raw)
    while s and s[0] in _OPENERS and not s.startswith("10."):
        s = s[1:].lstrip(_TRIM)
    s = trim_pasted(s.rstrip(_CLOSING_QUOTES + _TRIM))
    if s.endswith(_TRUNCATED):
        raise _refuse(raw, "it ends with an ellipsis, so it was cut short; paste the whole DOI")
    form: InputForm = "bare"

    url = _RESOLVER_URL.match(s)
    if url:
        form = "url"
        s = s[url.end() :]
        s = s.split("?", 1)[0]
        if s.endswith(_SICI_HASH_CHECK):  # a SICI whose check character is "#", not an empty fragment
            s = s[:-1] + "%23"
        s = s.split("#", 1)[0]
        s = urllib.parse.unquote(s, errors="replace")
    elif _OTHER_URL.match(s):
        raise _refuse(raw, "a URL that is not a doi.org resolver URL; publisher URLs are not DOIs")
    else:
        wrapper = _DOI_PREFIX_WRAPPER.match(s)
        if wrapper:
            form = "doi_prefix"
            s = s[wrapper.end() :]
        if "/" not in s and "%2f" in s.lower():
            form = "percent_encoded"
            s = urllib.parse.unquote(s, errors="replace")
        elif s.endswith(_ENCODED_HASH):  # "%23" typed for a trailing "#": the same DOI as with "#"
            s = s[: -len(_ENCODED_HASH)] + "#"

    unfolded = unicodedata.normalize("NFC", trim_pasted(s))
    s = unfolded.translate(_LOOKALIKES)
    if s.endswith((".", ",", ";")):
        s = s[:-1].rstrip(_CLOSING_QUOTES)  # "10.1/x”; -> 10.1/x
    s = _strip_unbalanced_closer(s)

    if _CONTROL.search(s):
        raise _refuse(raw, "contains control characters")
    if not _DOI.match(s):
        raise _refuse(raw, 'must be "10." + 4-9 digits + "/" + a suffix without spaces')
    written = _written(unfolded, s)
    return ParsedDOI(doi=s, key=s.translate(_ASCII_LOWER), input_form=form, written=written)


def fold_lookalikes(text: str) -> str:
    """``text`` in Unicode NFC with look-alike dashes, slashes, full stops and full-width digits as ASCII.

    The folding :func:`parse_doi` applies for the key (U+2010-U+2015 and U+2212 to ``-``, U+2215 to
    ``/``, ...), for a parser that keeps more of its input than :func:`parse_doi` does.
    """
    return unicodedata.normalize("NFC", text).translate(_LOOKALIKES)


def _written(unfolded: str, folded: str) -> str | None:
    """The unfolded DOI, cut like the folded one was (trailing punctuation), when folding changed it."""
    if unfolded == folded or len(unfolded) < len(folded):
        return None
    written = unfolded[: len(folded)]
    return written if written != folded and written.translate(_LOOKALIKES) == folded else None


def doi_path_segment(doi: str) -> str:
    """Encode a cleaned DOI for the ``/works/{doi}`` (and ``/agency``) request path (convention 2).

    ``urllib.parse.quote(doi, safe="/")``: ``/`` stays literal; ``< > ; ( ) : # [ ] ? % space`` and every
    non-ASCII character are percent-encoded (``<`` -> ``%3C``, ``;`` -> ``%3B``, ``#`` -> ``%23``).

    Args:
        doi: a cleaned DOI, normally :attr:`ParsedDOI.doi`.

    Returns:
        The path-safe string to append after ``/works/``.
    """
    return urllib.parse.quote(doi, safe="/")


def is_zenodo_doi(key: str) -> str | None:
    """Return the Zenodo record id of a Zenodo (DataCite) DOI, else ``None``.

    Zenodo mints ``10.5281/zenodo.<record id>``; such a DOI never resolves at Crossref (BC-08), so the
    Crossref tool short-circuits with a pointer to ``zenodo_get_record(<id>)``.

    Args:
        key: a DOI key (:attr:`ParsedDOI.key`); ASCII case is ignored.

    Returns:
        The record id digits (e.g. ``"13225792"`` for ``10.5281/zenodo.13225792``) or ``None``.
    """
    m = _ZENODO.match(key)
    return m.group(1) if m else None
