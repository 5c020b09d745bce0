r"""Pure parameter forms of the DataCite slice: DOIs, resolver URLs, ORCID iDs, query-string phrases.

The identifier rules are the contract's (``../shared/spec/datacite.md`` §1): a DOI is cleaned by
:func:`syncd.normalize.doi.parse_doi` (prefixes, resolver URLs, percent-encoding, any case) and
stored lower-cased; one that is not ``^10\\.\\d{4,9}/\\S+$`` afterwards is ``invalid_doi``. The
resolver URL percent-encodes every character outside RFC 3986 path characters (UTF-8), keeping
``/`` and ``,`` bare, so it reads back as the same DOI.
"""

from __future__ import annotations

import json
import re
import urllib.parse

from syncd.errors import InvalidInput
from syncd.normalize.doi import ParsedDOI, parse_doi

__all__ = [
    "DOI_SHAPE",
    "doi_query",
    "doi_url",
    "escape_text",
    "list_key",
    "orcid_checked",
    "parse_datacite_doi",
    "phrase",
]

DOI_SHAPE = re.compile(r"^\s*(?:doi:\s*|info:doi/|https?://(?:dx\.)?doi\.org/)?10\.", re.IGNORECASE)
"""What an argument must look like to be a DOI at all (else a schema rejection, ``invalid_arguments``)."""

_PATH_SAFE = "/,!$&'()*+;=:@-._~"
"""RFC 3986 ``pchar`` sub-delimiters and marks kept bare in ``doiUrl`` (``/`` and ``,`` included)."""

_RESERVED = re.compile(r'([+\-=&|!(){}\[\]^"~*?:\\])')
_ANGLE = re.compile(r"[<>]")
_OPERATOR = re.compile(r"\b(AND|OR|NOT)\b")
_BREAKS = re.compile("[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]+")
_ORCID = re.compile(r"^(?:https?://)?(?:orcid\.org/)?(\d{4})-?(\d{4})-?(\d{4})-?(\d{3}[\dXx])/*$")


def parse_datacite_doi(raw: str) -> ParsedDOI:
    """The DOI of a DataCite tool argument, cleaned (``key`` is the lower-cased DOI).

    Raises:
        InvalidInput: ``reason="invalid_doi"``: not a DOI after cleaning (``10.12/x``, ``10.5061/``).
    """
    try:
        return parse_doi(raw)
    except InvalidInput as exc:
        raise InvalidInput(
            "doi is not a DOI: expected 10.<4-9 digit registrant>/<suffix>, e.g. 10.5061/dryad.234",
            reason="invalid_doi",
            hint="Pass a DOI such as 10.5061/dryad.234 (bare, doi: prefix or https://doi.org/ URL).",
        ) from exc


def doi_url(doi: str) -> str:
    """``https://doi.org/`` + ``doi`` with every character outside RFC 3986 path characters encoded.

    ``#`` -> ``%23``, a literal ``%`` -> ``%25``, ``<`` -> ``%3C``; ``/`` and ``,`` stay bare.
    """
    return "https://doi.org/" + urllib.parse.quote(doi, safe=_PATH_SAFE)


def orcid_checked(value: str) -> str | None:
    """The hyphenated ORCID iD of ``value`` when its ISO 7064 mod 11-2 check digit holds, else None.

    Accepts the bare iD (hyphens optional), ``orcid.org/...`` and ``https://orcid.org/...``.
    """
    match = _ORCID.match(value.strip())
    if match is None:
        return None
    digits = "".join(match.groups()).upper()
    total = 0
    for ch in digits[:-1]:
        total = (total + int(ch)) * 2
    check = (12 - total % 11) % 11
    expected = "X" if check == 10 else str(check)
    if digits[-1] != expected:
        return None
    return "-".join(digits[i : i + 4] for i in range(0, 16, 4))


def flatten(text: str) -> str:
    """Every run of line breaks (LF, CR, VT, FF, U+001C-U+001E, NEL, U+2028, U+2029) as one space."""
    return _BREAKS.sub(" ", text)


def escape_text(text: str) -> str:
    """Free text as an OpenSearch query-string clause body that cannot be a syntax error.

    Reserved characters backslash-escaped, ``<``/``>`` removed, standalone ``AND``/``OR``/``NOT``
    lower-cased; ``/`` left bare (DataCite escapes it itself).
    """
    text = _ANGLE.sub("", flatten(text))
    text = _RESERVED.sub(r"\\\1", text)
    return _OPERATOR.sub(lambda m: m.group(1).lower(), text)


def phrase(text: str) -> str:
    r"""``"<text>"`` with ``"`` and ``\\`` backslash-escaped (a query-string phrase)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def doi_query(dois: list[str]) -> str:
    """The ``query`` that finds records by DOI: ``doi:"a"`` or ``doi:("a" OR "b" ...)``."""
    if len(dois) == 1:
        return "doi:" + phrase(dois[0])
    return "doi:(" + " OR ".join(phrase(d) for d in dois) + ")"


def list_key(route: str, params: dict[str, str]) -> str:
    """Canonical JSON key of a list call (``datacite_search``): route and parameters, sorted."""
    return json.dumps(
        {"route": route, "params": dict(sorted(params.items()))}, sort_keys=True, separators=(",", ":")
    )
