"""Parse the ``id`` input of the Zenodo record tools into a record reference.

Implements the identifier table of the anchor server (``parseRecordRef``): purely local, URLs are
never fetched. Accepted forms and the ``input_kind`` they yield:

==========================================================  ==========================================
input                                                        result
==========================================================  ==========================================
``22705923`` (digits, possibly a concept recid)              recid, ``record_id``
``zenodo.22705923``                                          recid, ``zenodo_doi``
``10.5281/zenodo.N`` any case, optional ``doi:``             recid, ``zenodo_doi``
``https://doi.org/…`` (also dx./www.), path percent-decoded  recid or external DOI, ``url``
zenodo.org / www.zenodo.org ``/records/N``, ``/record/N``,   recid, ``url`` (scheme optional, query and
``/api/records/N``, ``/records/N/files/…``,                  fragment ignored)
``/doi/10.5281/zenodo.N``, ``/badge/DOI/10.5281/zenodo.N.svg``
any other DOI (``10.3897/ap.e134190``)                       external DOI, ``external_doi``
==========================================================  ==========================================

Wrapping noise (``<…>``, straight and curly quotes, surrounding whitespace, trailing ``.``/``,``/``;``
after a wrapper) is stripped repeatedly. Refused with :class:`~syncd.errors.InvalidInput`
(``reason="invalid_identifier"``): ``zenodo.org/badge/latestdoi/N`` (a GitHub repository id),
``sandbox.zenodo.org`` and every other host (look-alikes such as ``evilzenodo.org`` get the
"not zenodo.org" message), the empty string, more than 500 characters, anything else.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote, urlsplit

from syncd.errors import InvalidInput
from syncd.normalize.doi import fold_lookalikes, parse_doi, trim_pasted

__all__ = ["MAX_ID_LENGTH", "InputKind", "RecordRef", "parse_record_ref"]

InputKind = Literal["record_id", "zenodo_doi", "external_doi", "url"]

MAX_ID_LENGTH = 500
"""The contract's ``id`` bound (``string().trim().min(1).max(500)``), counted after trimming."""

_ZENODO_HOSTS = frozenset({"zenodo.org", "www.zenodo.org"})
_DOI_HOSTS = frozenset({"doi.org", "dx.doi.org", "www.doi.org"})
_DOI_RE = re.compile(r"10\.\d{4,9}/\S+")
_ZENODO_DOI_RE = re.compile(r"10\.5281/zenodo\.(\d+)", re.IGNORECASE)
_ZENODO_SUFFIX_RE = re.compile(r"zenodo\.(\d+)", re.IGNORECASE)
_DIGITS_RE = re.compile(r"\d+")
_TRAILING_PUNCT_RE = re.compile(r"[.,;]+$")
_DOI_PREFIX_RE = re.compile(r"doi:\s*", re.IGNORECASE)
_SCHEME_RE = re.compile(r"[a-z][a-z0-9+.-]*://", re.IGNORECASE)
# A scheme-less URL: a dotted host name followed by a path, or a bare known host.
_SCHEMELESS_URL_RE = re.compile(r"(?:[a-z0-9-]+\.)+[a-z]{2,}(?::\d+)?(?:[/?#]|$)", re.IGNORECASE)
_RECORD_PATH_RE = re.compile(r"/(?:api/)?records?/(\d+)(?:/|$)", re.IGNORECASE)
_DOI_PATH_RE = re.compile(r"/doi/(.+)", re.IGNORECASE)
_BADGE_RE = re.compile(r"/badge/doi/(.+?)(?:\.svg)?", re.IGNORECASE)
_LATESTDOI_RE = re.compile(r"/badge/latestdoi/", re.IGNORECASE)
_QUOTES = "\"'“”‘’„«»"
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


@dataclass(frozen=True)
class RecordRef:
    """A record reference resolved without any upstream call.

    Attributes:
        input_kind: how ``id`` was written: ``record_id`` (digits), ``zenodo_doi``
            (``10.5281/zenodo.N`` or ``zenodo.N``), ``external_doi`` (another DOI) or ``url``
            (a zenodo.org or doi.org link, whatever it named).
        recid: the Zenodo record id (a version or a concept recid; only the record GET can tell),
            or ``None`` for an external DOI.
        doi: the external DOI as given, ASCII-lowercased (the store's ``doi/{doi}`` key), or ``None``
            when ``recid`` is set. It keeps trailing ``.``/``,``/``;`` because a DOI suffix may end
            in them; see ``stripped_doi``.
        stripped_doi: ``doi`` without trailing ``.``/``,``/``;``, set only when that differs from
            ``doi`` and is still a DOI. The anchor tries ``doi`` first and this form only on a miss.
        normalized_from: the DOI as written when look-alike folding changed it (a U+2010-U+2015 or
            U+2212 dash...), as :attr:`syncd.normalize.doi.ParsedDOI.written`; else ``None``.
    """

    input_kind: InputKind
    recid: str | None
    doi: str | None
    stripped_doi: str | None = None
    normalized_from: str | None = None


def _invalid(message: str) -> InvalidInput:
    return InvalidInput(
        message,
        reason="invalid_identifier",
        hint=(
            "Pass a Zenodo record id (22705923), a DOI (10.5281/zenodo.22705923), or a "
            "zenodo.org/records URL as id; for a title or keyword, use zenodo_search_records."
        ),
    )


def _echo(raw: str) -> str:
    """The input as quoted in an error message: trimmed, at most 120 characters."""
    text = raw.strip()
    return text if len(text) <= 120 else text[:120] + "…"


def _is_wrapped(s: str) -> bool:
    if len(s) < 2:
        return False
    return (s[0] == "<" and s[-1] == ">") or (s[0] in _QUOTES and s[-1] in _QUOTES)


def _strip_wrapping(raw: str) -> str:
    """Remove ``<…>``/quote wrappers and surrounding whitespace, repeatedly, in any nesting order.

    Trailing ``.``/``,``/``;`` after a closing wrapper (an id copied out of a sentence, such as
    ``<https://doi.org/…>.``) goes with the wrapper; punctuation with no wrapper around it is left
    for the per-form rules.
    """
    s = raw.strip()
    while True:
        unpunctuated = _TRAILING_PUNCT_RE.sub("", s).rstrip()
        if not _is_wrapped(unpunctuated):
            return s
        s = unpunctuated[1:-1].strip()


def _lower(doi: str) -> str:
    return doi.translate(_ASCII_LOWER)


def _classify_doi(doi: str, input_kind: InputKind, raw: str) -> RecordRef:
    """Classify a bare DOI (no ``doi:``, no URL) as a Zenodo recid or an external DOI.

    The DOI is read by the parser every slice shares (:func:`syncd.normalize.doi.parse_doi`: look-alike
    dashes folded, a trailing ``%23`` read as ``#``); a trailing ``.``/``,``/``;`` it drops stays in
    ``doi`` (tried first) with ``stripped_doi`` the form without it.
    """
    try:
        parsed = parse_doi(doi)
    except InvalidInput:
        raise _invalid(f'"{_echo(doi)}" is not a well-formed DOI (expected 10.NNNN/suffix).') from None
    zenodo = _ZENODO_DOI_RE.fullmatch(parsed.key)
    kind: InputKind = "url" if input_kind == "url" else "external_doi"
    if zenodo:
        return RecordRef("url" if input_kind == "url" else "zenodo_doi", zenodo.group(1), None)
    whole = _lower(fold_lookalikes(trim_pasted(doi)))
    tail = whole[len(parsed.key) :] if whole.startswith(parsed.key) else ""
    if tail and _TRAILING_PUNCT_RE.fullmatch(tail) and _DOI_RE.fullmatch(whole):
        return RecordRef(kind, None, whole, parsed.key, parsed.written)
    return RecordRef(kind, None, parsed.key, None, parsed.written)


def _parse_url(url: str, raw: str) -> RecordRef:
    """Parse a zenodo.org or doi.org URL; every other host is refused."""
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").rstrip(".").lower()
    except ValueError:
        raise _invalid(f'"{_echo(raw)}" is not a valid URL.') from None
    if not host:
        raise _invalid(f'"{_echo(raw)}" is not a valid URL.')

    if host in _DOI_HOSTS:
        return _classify_doi(unquote(parts.path.lstrip("/")), "url", raw)

    if host not in _ZENODO_HOSTS:
        if host.endswith(".zenodo.org"):
            raise _invalid(f"{host} is a different Zenodo instance; only zenodo.org records are served.")
        raise _invalid(f"{host} is not zenodo.org or doi.org; only zenodo.org and doi.org links are read.")

    path = _TRAILING_PUNCT_RE.sub("", parts.path)
    if _LATESTDOI_RE.match(path):
        raise _invalid(
            "A zenodo.org/badge/latestdoi URL carries a GitHub repository id, not a Zenodo record id."
        )
    record = _RECORD_PATH_RE.match(path)
    if record:
        return RecordRef("url", record.group(1), None)
    doi_path = _DOI_PATH_RE.fullmatch(path)
    if doi_path:
        return _classify_doi(unquote(doi_path.group(1)), "url", raw)
    badge = _BADGE_RE.fullmatch(path)
    if badge:
        return _classify_doi(unquote(badge.group(1)), "url", raw)
    raise _invalid(f"The zenodo.org path {_echo(parts.path or '/')} does not name a record.")


def parse_record_ref(raw: str) -> RecordRef:
    """Parse a record reference (the ``id`` input of get_record, list_versions, list_files, read_file).

    Args:
        raw: the id as the caller typed it.

    Returns:
        The :class:`RecordRef`: a recid for digits, ``zenodo.N``, Zenodo DOIs and zenodo.org/doi.org
        links to Zenodo DOIs; an external DOI (lower-cased) otherwise.

    Raises:
        InvalidInput: ``reason="invalid_identifier"`` when ``raw`` is empty, longer than 500
            characters after trimming, or matches no accepted form. The message says why.
    """
    if not isinstance(raw, str):
        raise _invalid("The id must be a string.")
    if len(raw.strip()) > MAX_ID_LENGTH:
        raise _invalid(f"The id is longer than {MAX_ID_LENGTH} characters.")
    s = _strip_wrapping(trim_pasted(raw))
    if not s:
        raise _invalid("The id is empty.")

    if _SCHEME_RE.match(s):
        if not s.lower().startswith(("http://", "https://")):
            raise _invalid(f'"{_echo(raw)}" is not a zenodo.org or doi.org http(s) URL.')
        return _parse_url(s, raw)
    if not s.startswith("10.") and _SCHEMELESS_URL_RE.match(s) and not _ZENODO_SUFFIX_RE.fullmatch(s):
        return _parse_url("https://" + s, raw)

    bare = _DOI_PREFIX_RE.sub("", s, count=1) if _DOI_PREFIX_RE.match(s) else s
    stripped = _TRAILING_PUNCT_RE.sub("", bare)
    if bare == s and _DIGITS_RE.fullmatch(stripped):
        return RecordRef("record_id", stripped, None)
    suffix = _ZENODO_SUFFIX_RE.fullmatch(stripped)
    if suffix:
        return RecordRef("zenodo_doi", suffix.group(1), None)
    if bare.startswith("10."):
        return _classify_doi(bare, "external_doi", raw)
    raise _invalid(f'"{_echo(raw)}" is not a Zenodo record id, DOI, or zenodo.org/doi.org URL.')
