"""``datacite_search_works``'s request: the composed query, its filters, paging and the walk cursor (pure).

The composed query ANDs, in this order, the clauses of ``query`` (verbatim, line breaks flattened),
``text`` (escaped: :func:`~syncd.datacite.params.escape_text`), ``creator`` (ORCID iD or name
tokens), ``affiliation`` (a name; a ROR id is the ``affiliation-id`` filter), ``funder`` (a name or a
Crossref Funder ID; a ROR id is ``funded-by``), ``subject``, ``fields_of_science``, ``language``,
``place`` and the publication years; ``*`` when none (``../shared/spec/datacite.md`` §2). Ranked
pages reach only the first 10,000 matches; past them a cursor walk (``page[cursor]``, by ``created``
ascending) goes on, its position kept in syncd's own envelope bound to the query (:func:`encode_cursor`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from syncd.datacite.params import escape_text, flatten, orcid_checked, phrase
from syncd.datacite.views_reference import fos_labels
from syncd.errors import InvalidInput

__all__ = [
    "FIELDS",
    "PAGE_CEILING",
    "Cursor",
    "SearchRequest",
    "decode_cursor",
    "encode_cursor",
    "search_request",
]

PAGE_CEILING = 10_000
"""Ranked pages reach only the first 10,000 matches (DataCite re-serves the last reachable page past them)."""

FIELDS = (
    "doi,titles,creators,publicationYear,types,publisher,version,rightsList,descriptions,url,"
    "citationCount,viewCount,downloadCount,versionCount,created,client"
)
"""``fields[dois]`` of a search page: what a row needs."""

_ROR = re.compile(r"^(?:https?://)?(?:ror\.org/)?(0[a-z0-9]{6}\d{2})/?$", re.IGNORECASE)
_FUNDER = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/)?(?:10\.13039/)?([1-9]\d*)$")
_TOKEN = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass(frozen=True)
class Cursor:
    """A walk's position: DataCite's ``token`` (None: the first page) and the query ``fingerprint``.

    Also the epoch ms of the last row's ``created`` (``created_ms``) and the rows ``delivered`` so far.
    """

    token: str | None
    fingerprint: str
    created_ms: float = 0.0
    delivered: int = 0


@dataclass(frozen=True)
class SearchRequest:
    """One search as sent: ``params`` of ``GET /dois``, the enrichment and the paging it answers."""

    params: dict[str, str]
    effective_query: str
    sort_applied: str
    applied_filters: dict[str, str]
    limit: int
    page: int
    cursor: Cursor | None = None
    terms: str = ""
    query_given: bool = False
    named: dict[str, Any] = field(default_factory=dict)


def _invalid(message: str, field_name: str, reason: str = "invalid_filter") -> InvalidInput:
    return InvalidInput(
        message, reason=reason, hint=f"Correct {field_name}; see datacite_list_reference.", field=field_name
    )


def _tokens(value: str, field_name: str) -> list[str]:
    words = [w for w in re.split(r"[\s,]+", value) if w]
    if not any(ch.isalnum() for w in words for ch in w):
        raise _invalid(f"{field_name} must contain a letter or digit", field_name)
    return [escape_text(w) for w in words]


def _creator(value: str) -> str:
    orcid = orcid_checked(value)
    if orcid is not None:
        return f'creators.nameIdentifiers.nameIdentifier:("{orcid}" OR "https://orcid.org/{orcid}")'
    if re.match(r"^(?:https?://)?(?:orcid\.org/)?\d{4}-?\d{4}-?\d{4}-?\d{3}[\dXx]/?$", value.strip()):
        raise _invalid("creator looks like an ORCID iD but its check digit is wrong", "creator")
    return "creators.name:(" + " AND ".join(_tokens(value, "creator")) + ")"


def fingerprint(query: str, filters: dict[str, str]) -> str:
    """A short hash of the composed query and the named filters (a walk cursor is bound to it)."""
    blob = json.dumps([query, sorted(filters.items())], separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def encode_cursor(cursor: Cursor) -> str:
    """Unpadded base64url of ``{v: 1, t, q, c, n}`` (the envelope a client passes back)."""
    blob = json.dumps(
        {"v": 1, "t": cursor.token, "q": cursor.fingerprint, "c": cursor.created_ms, "n": cursor.delivered},
        separators=(",", ":"),
    )
    return base64.urlsafe_b64encode(blob.encode()).decode().rstrip("=")


def decode_cursor(value: str, expected: str) -> Cursor:
    """The walk position of a cursor from :func:`encode_cursor`, checked against the query ``expected``.

    Raises:
        InvalidInput: ``invalid_cursor``: not an envelope (forged counts, non-finite stamps), or one
            made for another query or filter set.
    """
    bad = InvalidInput(
        "cursor is not a cursor this search issued",
        reason="invalid_cursor",
        hint='Start a walk with cursor "*"; pass nextCursor back unchanged, with the same query and filters.',
    )
    if not _TOKEN.match(value):
        raise bad
    try:
        env = json.loads(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))
    except (ValueError, binascii.Error):
        raise bad from None
    if not isinstance(env, dict) or env.get("v") != 1 or not isinstance(env.get("t"), str):
        raise bad
    count, created = env.get("n"), env.get("c")
    if not (isinstance(count, int) and count >= 0) or not isinstance(created, int | float):
        raise bad
    if not math.isfinite(created):
        raise bad
    if env.get("q") != expected:
        raise InvalidInput(
            "cursor belongs to another query or filter set",
            reason="invalid_cursor",
            hint="Pass the cursor back with the query and filters of the call that issued it, or restart.",
        )
    return Cursor(env["t"], expected, float(created), count)


def _clauses(args: dict[str, Any], applied: dict[str, str], params: dict[str, str]) -> list[str]:
    """The query clauses in the contract's order; filters that are parameters go to ``params``."""
    clauses: list[str] = []
    if args.get("query"):
        clauses.append(f"({flatten(args['query'])})")
    if args.get("text"):
        clauses.append(f"({escape_text(args['text'])})")
    if args.get("creator"):
        clauses.append(_creator(args["creator"]))
        applied["creator"] = clauses[-1]
    if args.get("affiliation"):
        ror = _ROR.match(args["affiliation"].strip())
        if ror:
            params["affiliation-id"] = ror.group(1).lower()
            applied["affiliation"] = f"affiliation-id={params['affiliation-id']}"
        else:
            name = phrase(flatten(args["affiliation"]))
            clauses.append(f"(creators.affiliation.name:{name} OR contributors.affiliation.name:{name})")
            applied["affiliation"] = clauses[-1]
    if args.get("funder"):
        _funder(args, applied, params, clauses)
    elif args.get("include_child_funders"):
        raise _invalid("include_child_funders needs a ROR funder", "include_child_funders")
    if args.get("subject"):
        clauses.append("subjects.subject:" + phrase(flatten(args["subject"])))
        applied["subject"] = clauses[-1]
    if args.get("fields_of_science"):
        labels = [label for ident in dict.fromkeys(args["fields_of_science"]) for label in fos_labels(ident)]
        clauses.append("subjects.subject:(" + " OR ".join(phrase(label) for label in labels) + ")")
        applied["fields_of_science"] = clauses[-1]
    if args.get("language"):
        clauses.append(f"language:{args['language'].lower()}")
        applied["language"] = clauses[-1]
    if args.get("place"):
        clauses.append("geoLocations.geoLocationPlace:" + phrase(flatten(args["place"])))
        applied["place"] = clauses[-1]
    low, high = args.get("published_from"), args.get("published_to")
    if low is not None and high is not None and low > high:
        raise _invalid("published_from is after published_to", "published_from")
    if low is not None or high is not None:
        clauses.append(
            f"publicationYear:[{low if low is not None else '*'} TO {high if high is not None else '*'}]"
        )
        applied["published"] = clauses[-1]
    return clauses


def _funder(
    args: dict[str, Any], applied: dict[str, str], params: dict[str, str], clauses: list[str]
) -> None:
    value = args["funder"].strip()
    ror = _ROR.match(value)
    if ror:
        params["funded-by"] = ror.group(1).lower()
        child = " (+ child organizations)" if args.get("include_child_funders") else ""
        if child:
            params["include-funder-child-organizations"] = "true"
        applied["funder"] = f"funded-by={params['funded-by']}{child}"
        return
    if args.get("include_child_funders"):
        raise _invalid("include_child_funders needs a ROR funder", "include_child_funders")
    funder = _FUNDER.match(value)
    if funder:
        fid = f"10.13039/{funder.group(1)}"
        clauses.append(f'fundingReferences.funderIdentifier:("{fid}" OR "https://doi.org/{fid}")')
    elif value.startswith("10.13039/"):
        raise _invalid("funder is not a Crossref Funder ID (10.13039/<digits>)", "funder")
    else:
        clauses.append("fundingReferences.funderName:(" + " AND ".join(_tokens(value, "funder")) + ")")
    applied["funder"] = clauses[-1]


def _list_filters(args: dict[str, Any], applied: dict[str, str], params: dict[str, str]) -> None:
    for name, key in (
        ("resource_types", "resource-type-id"),
        ("repository_ids", "client-id"),
        ("provider_ids", "provider-id"),
        ("licenses", "license"),
    ):
        values = list(dict.fromkeys(v.lower() for v in args.get(name) or [] if v and v.strip()))
        if values:
            params[key] = ",".join(values)
            applied[name] = f"{key}={params[key]}"
    if args.get("affiliation_country"):
        params["affiliation-country"] = args["affiliation_country"].upper()
        applied["affiliation_country"] = f"affiliation-country={params['affiliation-country']}"
    if args.get("min_citations"):
        params["has-citations"] = str(args["min_citations"])
        applied["min_citations"] = f"has-citations={params['has-citations']}"


def search_request(args: dict[str, Any], sorts: dict[str, str]) -> SearchRequest:
    """The request of one ``datacite_search_works`` call (``args``: the validated arguments by name).

    Raises:
        InvalidInput: ``invalid_filter`` (``data.field``), ``page_ceiling`` (page x limit past 10,000),
            ``conflicting_paging`` (cursor with page or sort), ``invalid_cursor``; all before any request.
    """
    limit, page, cursor_arg = int(args.get("limit") or 20), args.get("page"), args.get("cursor")
    if cursor_arg is not None and (page is not None or args.get("sort")):
        raise InvalidInput(
            "cursor cannot be combined with page or sort (a walk pages by created, oldest first)",
            reason="conflicting_paging",
            hint="Pass either cursor (a walk) or page/sort (ranked pages), not both.",
        )
    page = int(page or 1)
    if cursor_arg is None and page * limit > PAGE_CEILING:
        raise InvalidInput(
            f"page x limit is {page * limit:,}; ranked pages reach only the first {PAGE_CEILING:,} matches",
            reason="page_ceiling",
            hint='Narrow the search, or walk every match with cursor "*".',
        )
    applied: dict[str, str] = {}
    params: dict[str, str] = {}
    clauses = _clauses(args, applied, params)
    _list_filters(args, applied, params)
    query = " AND ".join(clauses) or "*"
    has_text = bool(args.get("text") or args.get("query"))
    sort = (
        "oldest" if cursor_arg is not None else (args.get("sort") or ("relevance" if has_text else "newest"))
    )
    params.update(query=query, sort=sorts[sort], **{"page[size]": str(limit)})
    params.update({"fields[dois]": FIELDS, "include": "client", "affiliation": "true", "publisher": "true"})
    if args.get("include_facets"):
        params["disable-facets"] = "false"
    cursor = None
    if cursor_arg is not None:
        print_ = fingerprint(query, {k: v for k, v in params.items() if k != "page[size]"})
        cursor = Cursor(None, print_) if cursor_arg == "*" else decode_cursor(cursor_arg, print_)
        params["page[cursor]"] = cursor.token or "1"
        params.pop("sort")
    else:
        params["page[number]"] = str(page)
    terms = " ".join(str(args.get(k) or "") for k in ("text", "query", "creator", "subject")).strip()
    return SearchRequest(
        params, query, sort, applied, limit, page, cursor, terms, bool(args.get("query")), dict(args)
    )
