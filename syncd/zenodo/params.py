"""Zenodo tool parameters, validated before any request (pure; Crossref's are in :mod:`crossref_params`).

Every function here either returns the normalized value or raises :class:`~syncd.errors.InvalidInput`
with the contract's reason code (``invalid_parameter``, ``invalid_date_range``,
``result_window_exceeded``, ``query_is_identifier``, ``query_syntax``). Checks that need Zenodo
(community slugs, funder ids) stay with the tools.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from syncd.errors import InvalidInput
from syncd.zenodo import views_lists as lists
from syncd.zenodo.params_id import parse_record_ref

__all__ = [
    "EC_ROR",
    "WINDOW_LIMIT",
    "SearchRequest",
    "TermRef",
    "award_ref",
    "blank",
    "cordis_award_id",
    "funder_ref",
    "listish",
    "orcid",
    "query_checks",
    "resource_type",
    "search_request",
    "window_check",
]

WINDOW_LIMIT = 10_000
"""Zenodo's result window: ``page x size`` may not pass it."""

_ORCID = re.compile(r"^\d{4}-\d{4}-\d{4}-\d{3}[\dX]$")
_FILE_TYPE = re.compile(r"^[a-z0-9]{1,16}$")
_LICENSE = re.compile(r"^[a-z0-9][a-z0-9.+-]{0,63}$")


def blank(value: str | None) -> str | None:
    """Optional string inputs: blank or whitespace reads as unset (else stripped)."""
    return value.strip() if isinstance(value, str) and value.strip() else None


def listish(value: str | list[str] | None) -> list[str]:
    """A lone string where a list is expected, blanks dropped, items stripped."""
    if value is None:
        return []
    items = [value] if isinstance(value, str) else list(value)
    return [v.strip() for v in items if isinstance(v, str) and v.strip()]


def window_check(page: int, size: int) -> None:
    """Refuse a page past Zenodo's 10,000-result window (``result_window_exceeded``), naming the last page.

    Raises:
        InvalidInput: ``page * size`` > 10,000; the message names the last page reachable at ``size``.
    """
    if page * size > WINDOW_LIMIT:
        last = WINDOW_LIMIT // size
        raise InvalidInput(
            f"page {page} x size {size} passes Zenodo's 10,000-result window: use page {last:,} or lower "
            f"at size {size}",
            reason="result_window_exceeded",
            hint="Narrow the query or filters; Zenodo serves only the first 10,000 results.",
        )


EC_ROR = "00k4n6c32"
"""ROR id of the European Commission, the funder of every CORDIS award (DOI prefix ``10.3030``)."""
_ROR = re.compile(r"^0[a-z0-9]{6}\d{2}$")
_ROR_URL = re.compile(r"^(?:https?://)?(?:www\.)?ror\.org/", re.IGNORECASE)
_DOI_FORM = re.compile(r"^(?:doi:\s*|https?://(?:dx\.|www\.)?doi\.org/)", re.IGNORECASE)
_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
_REGISTRY_ID = re.compile(r"^\d{9,12}$")


@dataclass(frozen=True)
class TermRef:
    """A funder or award as given: ``kind`` says how Zenodo's vocabulary must be asked.

    ``id``: Zenodo's own id (a ROR id; an award id ``<ror>::<number>``), fetched by id.
    ``identifier``: a DOI (lowercased; a Funder DOI, an award DOI) or a URL, resolved through the
    vocabulary's ``identifiers.identifier``. ``name``: a funder name (never picked automatically).
    ``number``: a bare grant number (matched as ``award.number``).
    """

    kind: Literal["id", "identifier", "name", "number"]
    value: str


def funder_ref(raw: str) -> TermRef:
    """Parse a funder: ROR id or URL, Crossref Funder DOI (any form), registry number, else a name.

    A Funder DOI may be bare (``10.13039/100000002``), behind ``doi:`` or a doi.org URL, or the bare
    registry number (``100000002``).

    Raises:
        InvalidInput: ``invalid_parameter`` for a DOI or URL that is no Funder DOI or ROR id.
    """
    value = raw.strip()
    ror = _ROR_URL.sub("", value).strip("/").lower()
    if _ROR.match(ror):
        return TermRef("id", ror)
    doi = _DOI_FORM.sub("", value).strip()
    if _REGISTRY_ID.match(doi):
        doi = f"10.13039/{doi}"
    if _DOI.match(doi) and doi.startswith("10.13039/"):
        return TermRef("identifier", doi.lower())
    if _DOI.match(doi) or re.match(r"^(?:https?://|doi:)", value, re.IGNORECASE):
        raise InvalidInput(
            f"funder {raw!r} is not a ROR id, ROR URL or Crossref Funder DOI (10.13039/...)",
            reason="invalid_parameter",
            hint="Find the funder's ROR id with zenodo_lookup_vocabulary vocabulary=funders.",
        )
    return TermRef("name", value)


def award_ref(raw: str) -> TermRef:
    """Parse an award: Zenodo's award id, a DOI or URL (resolved by the vocabulary), else a number.

    Award id: ``<ror>::<number>``; a DOI in any form (CORDIS ``10.3030/...``) or a URL is resolved
    through the awards vocabulary's identifiers; anything else is a bare grant number.
    """
    value = raw.strip()
    if "::" in value:
        return TermRef("id", value)
    doi = _DOI_FORM.sub("", value).strip()
    if _DOI.match(doi):
        return TermRef("identifier", doi.lower())
    if re.match(r"^https?://", value, re.IGNORECASE):
        return TermRef("identifier", value)
    return TermRef("number", value)


def cordis_award_id(doi: str) -> str | None:
    """Zenodo's award id of a CORDIS award DOI (``10.3030/<n>`` -> ``00k4n6c32::<n>``), else None."""
    match = re.fullmatch(r"10\.3030/(\d+)", doi.strip().lower())
    return f"{EC_ROR}::{match.group(1)}" if match else None


def orcid(raw: str) -> str:
    """An ORCID iD (bare or orcid.org URL) with a valid check digit (else ``invalid_parameter``)."""
    value = re.sub(r"^(?:https?://)?(?:www\.)?orcid\.org/", "", raw.strip(), flags=re.IGNORECASE).upper()
    total = 0
    if _ORCID.match(value):
        digits = value.replace("-", "")
        for ch in digits[:-1]:
            total = (total + int(ch)) * 2
        check = (12 - total % 11) % 11
        if digits[-1] == ("X" if check == 10 else str(check)):
            return value
    raise InvalidInput(f"creator_orcid {raw!r} is not a valid ORCID iD", reason="invalid_parameter")


def resource_type(raw: str, table: lists.ResourceTypeTable | None = None) -> str:
    """A resource type id (``dataset``, ``publication-article``; label or ``type::id`` accepted).

    Checked against ``table`` (Zenodo's stored resource-type vocabulary), else the built-in table
    :data:`~syncd.zenodo.views_lists.RESOURCE_TYPE_IDS`.

    Raises:
        InvalidInput: ``invalid_parameter``, an id or label the table does not hold (or a label
            several types share).
    """
    types = table or lists.RESOURCE_TYPE_IDS
    value = raw.split("::", 1)[1] if "::" in raw else raw
    folded = lists.fold(value)
    for rid in types:  # ids first: "other" is an id and the label of three types
        if folded == lists.fold(rid):
            return rid
    labelled = [rid for rid, (_t, _s, label) in types.items() if folded == lists.fold(label)]
    if len(labelled) == 1:
        return labelled[0]
    raise InvalidInput(
        f"unknown resource_type {raw!r}"
        + (" (not in Zenodo's stored resource-type vocabulary)" if table else ""),
        reason="invalid_parameter",
        hint="List the accepted ids with zenodo_lookup_vocabulary vocabulary=resource_types.",
    )


def query_checks(query: str) -> None:
    """Refuse a query Zenodo would answer with an error: a bare identifier, an unpaired ``/``."""
    try:
        ref = parse_record_ref(query)
    except InvalidInput:
        ref = None
    if ref is not None and ref.input_kind != "record_id":
        raise InvalidInput(
            "query is a single identifier; Zenodo answers a bare identifier in q with an error",
            reason="query_is_identifier",
            hint=f'Use zenodo_get_record with id={query!r}, or search doi:"<doi>".',
        )
    unquoted = re.sub(r'"(?:[^"\\]|\\.)*"', "", query)
    if len(re.findall(r"(?<!\\)/", unquoted)) % 2:
        raise InvalidInput(
            "query has an unpaired / (Zenodo reads / as a regular-expression delimiter)",
            reason="query_syntax",
            hint='Quote the term holding the slash ("a/b") or escape it as \\/.',
        )


@dataclass(frozen=True)
class SearchRequest:
    """The validated local part of a ``zenodo_search_records`` call.

    ``types`` resource type ids, ``file_types`` extensions, ``license`` id, ``access`` status,
    ``published_from``/``published_to`` expanded dates, ``orcid``, ``sort`` (one of
    :data:`~syncd.zenodo.views_lists.SORTS`), ``award`` as given (stripped).
    """

    query: str | None
    types: list[str]
    file_types: list[str]
    license: str | None
    access: str | None
    published_from: str | None
    published_to: str | None
    orcid: str | None
    sort: str
    award: str | None


def _access(raw: str | None) -> str | None:
    access = blank(raw)
    if not access:
        return None
    found = next((a for a in lists.ACCESS_STATUSES if lists.fold(a) == lists.fold(access)), None)
    if found is None:
        raise InvalidInput(
            f"access_status must be one of {', '.join(lists.ACCESS_STATUSES)}", reason="invalid_parameter"
        )
    return found


def _dates(published_from: str | None, published_to: str | None) -> tuple[str | None, str | None]:
    pf = (
        lists.expand_date(published_from, end=False, name="published_from") if blank(published_from) else None
    )
    pt = lists.expand_date(published_to, end=True, name="published_to") if blank(published_to) else None
    if pf and pt and pf > pt:
        raise InvalidInput(f"published_from {pf} is after published_to {pt}", reason="invalid_date_range")
    return pf, pt


def search_request(
    query: str | None,
    resource_type_: str | list[str] | None,
    file_type: str | list[str] | None,
    license_: str | None,
    access_status: str | None,
    published_from: str | None,
    published_to: str | None,
    creator_orcid: str | None,
    award: str | None,
    sort: str | None,
    page: int,
    size: int,
    *,
    types_table: lists.ResourceTypeTable | None = None,
) -> SearchRequest:
    """Validate and normalize the search parameters that need no request (see :class:`SearchRequest`).

    Resource types are checked against ``types_table`` (Zenodo's stored vocabulary) when given, else
    the built-in table.

    Raises:
        InvalidInput: ``query_is_identifier``, ``query_syntax``, ``invalid_parameter``,
            ``invalid_date_range``, ``result_window_exceeded``.
    """
    query = blank(query)
    if query:
        query_checks(query)
    types = [resource_type(t, types_table) for t in listish(resource_type_)][:10]
    ftypes = [t.lower().lstrip(".") for t in listish(file_type)][:10]
    for t in ftypes:
        if not _FILE_TYPE.match(t):
            raise InvalidInput(f"file_type {t!r} is not a file extension", reason="invalid_parameter")
    lic = blank(license_)
    lic = lic.lower() if lic else None
    if lic and not _LICENSE.match(lic):
        raise InvalidInput(f"license {lic!r} is not a license id", reason="invalid_parameter")
    access = _access(access_status)
    pf, pt = _dates(published_from, published_to)
    creator = orcid(creator_orcid) if blank(creator_orcid) else None
    sort_name = blank(sort) or ("bestmatch" if query else "newest")
    sort_value = next((s for s in lists.SORTS if lists.fold(s) == lists.fold(sort_name)), None)
    if sort_value is None:
        raise InvalidInput(f"sort must be one of {', '.join(lists.SORTS)}", reason="invalid_parameter")
    window_check(page, size)
    return SearchRequest(query, types, ftypes, lic, access, pf, pt, creator, sort_value, blank(award))
