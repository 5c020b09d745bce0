"""Pure input rules of the Crossref list tools (anchors §1a).

Pure input rules of the Crossref list tools: blank handling, bounds, conflicts, and the Crossref query
parameters they become (anchors §1a). Every refusal is an :class:`~syncd.errors.InvalidInput` with the
declared ``reason``, raised before any request.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from syncd.crossref.contracts_lists import SELECT_FIELDS, SORT_FIELDS, SearchWorksInput
from syncd.errors import InvalidInput, NotFound
from syncd.normalize.issn import CHECK_DIGIT_HINT, ISSN_RE, issn_check_digit, issn_key

__all__ = [
    "FUNDER_LIST_CEILING",
    "ISSN_RE",
    "WORKS_OFFSET_CEILING",
    "SearchWorksRequest",
    "funder_id",
    "issn_check_digit",
    "issn_key",
    "journal_issn",
    "journal_works_params",
    "search_works_request",
]

WORKS_OFFSET_CEILING = 10_000
"""Crossref's offset window on works lists: ``offset + rows`` may not pass it."""
FUNDER_LIST_CEILING = 100_000
"""Offset window of the journal and funder name searches."""

_FUNDER_RE = re.compile(r"^(?:(?:https?://(?:dx\.)?doi\.org/|doi:)?10\.13039/)?(\d+)$", re.IGNORECASE)
_PUB_DATE_SORTS = frozenset({"published", "published-print", "published-online"})
_TERMS = (
    ("query", "query"),
    ("queryBibliographic", "query.bibliographic"),
    ("queryTitle", "query.title"),
    ("queryAuthor", "query.author"),
    ("queryContainerTitle", "query.container-title"),
)
FACET_MAX = 1000


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _bad(
    message: str, reason: str = "invalid_parameter", hint: str | None = None, **data: Any
) -> InvalidInput:
    return InvalidInput(message, reason=reason, hint=hint, **data)


def journal_issn(value: str) -> str:
    """The ``issn`` of ``crossref_search_journals`` as :func:`issn_key`, a wrong check digit a miss.

    No journal can hold an ISSN whose check digit is wrong, so it is refused before any request, with
    the contract's reason for that input (``issn_not_found``: ``/journals/{issn}`` would answer 404)
    and the right check digit in the message.

    Raises:
        InvalidInput: ``invalid_parameter`` when ``value`` does not have an ISSN's shape.
        NotFound: ``issn_not_found`` when its check digit is wrong (``expectedCheckDigit`` in data).
    """
    try:
        return issn_key(value)
    except InvalidInput as err:
        expected = err.data.get("expectedCheckDigit")
        if expected is None:
            raise
        shaped = value.strip().replace("-", "").upper()
        raise NotFound(
            f"no Crossref journal with ISSN {shaped[:4]}-{shaped[4:]}: its check digit should be {expected}",
            reason="issn_not_found",
            hint=CHECK_DIGIT_HINT,
            issn=f"{shaped[:4]}-{shaped[4:]}",
            expectedCheckDigit=expected,
        ) from None


def funder_id(value: str) -> str:
    """Registry id from a bare id, ``10.13039/<id>``, or either behind ``doi:`` / a doi.org URL.

    Raises:
        InvalidInput: ``invalid_parameter`` for anything else.
    """
    m = _FUNDER_RE.match(value.strip())
    if not m:
        raise _bad(
            f"{value!r} is not a funder registry id or funder DOI",
            hint="Pass a registry id (100000001) or funder DOI (10.13039/100000001).",
        )
    return m.group(1)


@dataclass(frozen=True)
class SearchWorksRequest:
    """A validated ``crossref_search_works`` call.

    A validated ``crossref_search_works`` call: the normalized input, the Crossref parameters, whether
    every supplied term was blank (unfiltered listing), and notices about clamped values.
    """

    input: SearchWorksInput
    params: dict[str, str]
    blank_listing: bool
    notices: tuple[str, ...]
    text: str


def search_works_request(raw: Mapping[str, Any]) -> SearchWorksRequest:
    """Validate a ``crossref_search_works`` call and build its ``/works`` query parameters.

    Blank or whitespace-only query terms and filter values are dropped; ``sort``/``order`` of ``""`` are
    omitted. ``rows`` is sent only when not Crossref's default 20, ``offset`` only when > 0; ``DOI`` is
    always in ``select``. Facet counts above 1,000 are applied as 1,000 with a notice.

    Raises:
        InvalidInput: ``cursor_offset_conflict``, ``offset_too_large``, ``sort_cursor_conflict`` (a
            publication-date sort with a cursor), ``invalid_parameter`` (bounds, unknown field or sort,
            malformed ``issn`` filter value, bad facet).
    """
    terms_supplied, values = _query_terms(raw)
    filters_supplied, filters = _works_filters(raw)
    paging = _works_paging(raw)
    select = _works_select(raw.get("fields"))
    facets, notices = _works_facets(raw)
    inp = SearchWorksInput(
        **values,
        filter=filters or None,
        fields=select,
        rows=paging.rows,
        authorLimit=paging.author_limit,
        offset=paging.offset,
        cursor=paging.cursor,
        sort=paging.sort,
        order=paging.order,
        facets=facets or None,
    )
    return SearchWorksRequest(
        input=inp,
        params=_works_params(values, filters, select, paging, facets),
        blank_listing=terms_supplied + filters_supplied > 0 and not values and not filters,
        notices=tuple(notices),
        text=" ".join(values.values()),
    )


@dataclass(frozen=True)
class _WorksPaging:
    """The paging and order of a works search, validated (``rows`` 0-100, ``authorLimit`` 1-500)."""

    rows: int
    author_limit: int
    offset: int
    cursor: str | None
    sort: str | None
    order: str | None


def _stripped(value: Any) -> str | None:
    return None if _blank(value) else str(value).strip()


def _query_terms(raw: Mapping[str, Any]) -> tuple[int, dict[str, str]]:
    """How many query terms were supplied, and the non-blank ones (argument name -> whitespace-collapsed)."""
    supplied = 0
    values: dict[str, str] = {}
    for name, _param in _TERMS:
        v = raw.get(name)
        if v is not None:
            supplied += 1
            if not _blank(v):
                values[name] = " ".join(str(v).split())
    return supplied, values


def _works_filters(raw: Mapping[str, Any]) -> tuple[int, dict[str, str]]:
    """How many filters were supplied, and the non-blank ones (name -> value, both stripped).

    Raises:
        InvalidInput: ``invalid_parameter`` for an ``issn`` filter value that is not an ISSN (or whose
            check digit is wrong): Crossref answers a malformed one with a 500.
    """
    supplied = 0
    filters: dict[str, str] = {}
    for k, v in (raw.get("filter") or {}).items():
        supplied += 1
        if _blank(v) or _blank(k):
            continue
        key, val = str(k).strip(), str(v).strip()
        if key == "issn":
            for part in val.split(","):
                if not ISSN_RE.match(part.strip()):
                    raise _bad(
                        f"filter issn value {part!r} is not an ISSN (NNNN-NNNX)",
                        hint="Pass ISSNs such as 1932-6203; Crossref answers a malformed one with a 500.",
                    )
                issn_key(part)
        filters[key] = val
    return supplied, filters


def _works_paging(raw: Mapping[str, Any]) -> _WorksPaging:
    """``rows``, ``authorLimit``, ``offset``, ``cursor``, ``sort`` and ``order`` of a works search, checked.

    Raises:
        InvalidInput: ``invalid_parameter`` (bounds, unknown sort or order), ``cursor_offset_conflict``,
            ``offset_too_large`` (past :data:`WORKS_OFFSET_CEILING`), ``sort_cursor_conflict``.
    """
    rows = raw.get("rows", 20)
    rows = 20 if rows is None else rows
    author_limit = raw.get("authorLimit", 25) or 25
    offset = raw.get("offset") or 0
    cursor, sort, order = (
        _stripped(raw.get("cursor")),
        _stripped(raw.get("sort")),
        _stripped(raw.get("order")),
    )
    if not isinstance(rows, int) or not 0 <= rows <= 100:
        raise _bad(f"rows must be an integer from 0 to 100, got {rows!r}")
    if not isinstance(author_limit, int) or not 1 <= author_limit <= 500:
        raise _bad(f"authorLimit must be an integer from 1 to 500, got {author_limit!r}")
    if not isinstance(offset, int) or offset < 0:
        raise _bad(f"offset must be an integer >= 0, got {offset!r}")
    if sort is not None and sort not in SORT_FIELDS:
        raise _bad(f"sort {sort!r} is not one of {', '.join(SORT_FIELDS)}")
    if order is not None and order not in ("asc", "desc"):
        raise _bad(f"order must be asc or desc, got {order!r}")
    if cursor is not None and offset > 0:
        raise _bad(
            "cursor and offset cannot be combined",
            "cursor_offset_conflict",
            hint="Use cursor paging (pass nextCursor back) or offset paging, not both.",
        )
    if cursor is None and offset + rows > WORKS_OFFSET_CEILING:
        raise _bad(
            f"offset + rows = {offset + rows:,} passes Crossref's {WORKS_OFFSET_CEILING:,} offset window: "
            f"use offset {max(0, WORKS_OFFSET_CEILING - rows):,} or lower with rows {rows}",
            "offset_too_large",
            hint='Use cursor="*" for deep paging past ~10,000 results.',
        )
    if cursor is not None and sort in _PUB_DATE_SORTS:
        raise _bad(
            f"sort={sort} cannot be walked by cursor (Crossref refuses publication-date sorts with a cursor)",
            "sort_cursor_conflict",
            hint="Use offset paging for a publication-date sort, or sort by created for a cursor walk.",
        )
    return _WorksPaging(rows, author_limit, offset, cursor, sort, order)


def _works_select(fields: Any) -> list[str] | None:
    """The ``select`` of ``fields`` (``DOI`` first, duplicates dropped), None when no field was asked.

    Raises:
        InvalidInput: ``invalid_parameter`` for a field not in :data:`SELECT_FIELDS`.
    """
    if not fields:
        return None
    unknown = [f for f in fields if f not in SELECT_FIELDS]
    if unknown:
        raise _bad(
            f"unknown fields {unknown}; accepted: {', '.join(SELECT_FIELDS)}",
            hint="Use Crossref select names (case-sensitive), e.g. DOI, title, author, published.",
        )
    return ["DOI", *[f for f in dict.fromkeys(fields) if f != "DOI"]]


def _works_facets(raw: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    """The facets asked (name -> ``"*"`` or a count, counts past :data:`FACET_MAX` clamped) and the notices.

    Raises:
        InvalidInput: ``invalid_parameter`` for a facet count that is neither ``"*"`` nor positive.
    """
    notices: list[str] = []
    facets: dict[str, str] = {}
    for name, value in (raw.get("facets") or {}).items():
        v = str(value).strip()
        if v != "*":
            if not v.isdigit() or int(v) < 1:
                raise _bad(f'facet {name!r} must be "*" or a positive count, got {value!r}')
            if int(v) > FACET_MAX:
                notices.append(f"facet {name} asked for {v} values; Crossref returns at most {FACET_MAX}.")
                v = str(FACET_MAX)
        facets[str(name)] = v
    return facets, notices


def _works_params(
    values: Mapping[str, str],
    filters: Mapping[str, str],
    select: list[str] | None,
    paging: _WorksPaging,
    facets: Mapping[str, str],
) -> dict[str, str]:
    """The ``/works`` query parameters of a validated search (defaults left out: rows 20, offset 0)."""
    params: dict[str, str] = {}
    for name, param in _TERMS:
        if name in values:
            params[param] = values[name]
    if filters:
        params["filter"] = ",".join(f"{k}:{v}" for k, v in filters.items())
    if select:
        params["select"] = ",".join(select)
    if paging.rows != 20:
        params["rows"] = str(paging.rows)
    if paging.offset > 0:
        params["offset"] = str(paging.offset)
    if paging.cursor is not None:
        params["cursor"] = paging.cursor
    if paging.sort is not None:
        params["sort"] = paging.sort
    if paging.order is not None:
        params["order"] = paging.order
    if facets:
        params["facet"] = ",".join(f"{k}:{v}" for k, v in facets.items())
    return params


def journal_works_params(rows: int, works_offset: int, works_cursor: str | None) -> dict[str, str]:
    """Parameters of a journal's or funder's works list.

    Parameters of ``/journals/{issn}/works`` and ``/funders/{id}/works``: offset pages newest published
    first; a cursor walk newest registered first (Crossref refuses publication-date sorts with a cursor).
    """
    if works_cursor is not None:
        return {"rows": str(rows), "cursor": works_cursor, "sort": "created", "order": "desc"}
    params = {"rows": str(rows), "sort": "published", "order": "desc"}
    if works_offset > 0:
        params["offset"] = str(works_offset)
    return params
