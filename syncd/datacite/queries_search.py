"""``datacite_search_works``'s answer: one page, local-first, or the mirror's matches when DataCite is down.

The page is a stored ``datacite_search`` entry (:func:`syncd.datacite.lookups.list_page`); the
enrichment (``totalCount``, ``effectiveQuery``, ``sortApplied``, ``appliedFilters``, ``notice``) is
on every path. When DataCite cannot be reached and no page is stored, the words of the search
(``text``, ``query``, ``creator``, ``subject``) are looked up in the store's full-text index of the
DataCite works it holds, the same offline search the Crossref and Zenodo tools use: ``local: true``,
syncd's ranking, the filters not applied, said in the notice.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import urllib.parse
from typing import Any

from syncd.datacite import lookups
from syncd.datacite.client import parse_error
from syncd.datacite.params_search import PAGE_CEILING, Cursor, SearchRequest, encode_cursor, search_request
from syncd.datacite.rules import WORK_RULES
from syncd.datacite.views import as_object
from syncd.datacite.views_search import facets, row, rows
from syncd.errors import BudgetExhausted, InvalidInput, SyncdError, UpstreamError, UpstreamRejected
from syncd.road.services import Services
from syncd.store.content import document

__all__ = ["rejected_error", "search_works_answer"]

_WORD_FIELD = re.compile(r"(?:^|[\s(])([A-Za-z]\w*):")
_KNOWN_FIELDS = frozenset(
    {
        "doi",
        "titles",
        "creators",
        "publicationYear",
        "types",
        "subjects",
        "descriptions",
        "publisher",
        "language",
        "relatedIdentifiers",
        "fundingReferences",
        "geoLocations",
        "client_id",
        "provider_id",
        "contributors",
        "dates",
        "rightsList",
        "version",
        "url",
        "created",
        "updated",
        "registered",
        "citationCount",
        "viewCount",
        "downloadCount",
        "identifiers",
        "formats",
        "sizes",
        "prefix",
        "suffix",
    }
)


def _created_ms(value: Any) -> float | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000
    except ValueError:
        return None


def rejected_error(exc: UpstreamRejected, query_given: bool) -> SyncdError:
    """A DataCite 400: ``invalid_query`` for the caller's own query, else no declared reason."""
    message = parse_error(exc)
    if message is not None and query_given:
        where = re.search(r"line \d+, column \d+", message)
        return InvalidInput(
            "DataCite could not parse query" + (f" ({where.group(0)})" if where else ""),
            reason="invalid_query",
            hint="Fix the query-string syntax (quotes, brackets, field:value), or pass the words as text.",
        )
    if message is not None:
        return SyncdError("DataCite could not parse the query syncd composed")
    return UpstreamRejected("DataCite returned HTTP 400.", status=400)


def _zero_notice(req: SearchRequest) -> str:
    parts = ["Nothing matched this search at DataCite."]
    words = {m.group(1) for m in _WORD_FIELD.finditer(str(req.named.get("query") or ""))}
    unknown = sorted(w for w in words if w not in _KNOWN_FIELDS and "." not in w)
    if unknown:
        parts.append(
            f"'{unknown[0]}:' in query is read as a field DataCite does not have: pass plain words as "
            "text (query_syntax in datacite_list_reference)."
        )
    if req.named.get("licenses"):
        parts.append("Licence ids must equal DataCite's lower-case SPDX ids (cc-by-4.0, cc0-1.0).")
    if req.named.get("repository_ids") or req.named.get("provider_ids"):
        parts.append("Check the repository and provider ids with datacite_search_repositories.")
    creator = str(req.named.get("creator") or "")
    if creator and "nameIdentifier" not in req.applied_filters.get("creator", ""):
        parts.append(
            "A creator name needs all its words in one creator field: try the surname or the ORCID iD."
        )
    if len(req.applied_filters) >= 3:
        parts.append("Drop the filters one at a time to see which one excludes everything.")
    return " ".join(parts)


def _paging(data: dict[str, Any], req: SearchRequest, body: dict[str, Any], total: int, shown: int) -> None:
    """``nextPage`` / ``nextCursor`` and the paging notices of one answered page."""
    notices: list[str] = []
    if req.cursor is None:
        if req.page * req.limit < total and (req.page + 1) * req.limit <= PAGE_CEILING:
            data["nextPage"] = req.page + 1
        elif shown and req.page * req.limit < total:
            notices.append(
                f"Ranked paging stops here: DataCite serves only the first {PAGE_CEILING:,} of the "
                f'{total:,} matches; walk them all with cursor "*".'
            )
        if not shown and total:
            notices.append(
                f"This page is past the end: at limit {req.limit}, the last page is "
                f"{math.ceil(total / req.limit)}."
            )
    else:
        token = urllib.parse.parse_qs(
            urllib.parse.urlparse(str((body.get("links") or {}).get("next") or "")).query
        )
        upstream_token = next(iter(token.get("page[cursor]") or []), None)
        delivered = req.cursor.delivered + shown
        last = (
            _created_ms((body.get("data") or [{}])[-1].get("attributes", {}).get("created"))
            if shown
            else None
        )
        if upstream_token and shown and (not total or delivered < total):
            data["nextCursor"] = encode_cursor(
                Cursor(upstream_token, req.cursor.fingerprint, last or req.cursor.created_ms, delivered)
            )
    if notices:
        data["notice"] = " ".join(filter(None, [data.get("notice"), *notices]))


def _check_walk(req: SearchRequest, body: dict[str, Any]) -> None:
    """A page whose first row was created before the cursor's last one: DataCite restarted the walk."""
    if req.cursor is None or req.cursor.token is None or not body.get("data"):
        return
    first = _created_ms(((body["data"][0] or {}).get("attributes") or {}).get("created"))
    if first is not None and first < req.cursor.created_ms:
        raise InvalidInput(
            "DataCite restarted the walk (its cursor expired or was not recognized)",
            reason="invalid_cursor",
            hint='Start the walk again with cursor "*".',
        )


def _offline(svc: Services, req: SearchRequest, exc: SyncdError) -> dict[str, Any]:
    """The mirror's answer: stored DataCite works matching the search's words (``local: true``)."""
    entries, total, prov = lookups.mirror_search(
        svc, req.terms, offset=(req.page - 1) * req.limit, rows=req.limit
    )
    if prov is None and not total:
        raise exc
    data = _enrichment(req, total)
    data["works"] = [row(document(e, WORK_RULES)) for e in entries]
    data["local"] = True
    data["notice"] = (
        f"DataCite could not be asked now ({exc.reason}): these are the stored DataCite works matching "
        f"the words of the search ({total:,} in syncd's store), ranked by syncd's own index, not DataCite's; "
        "filters and sort were not applied."
    )
    if prov is not None:
        data["cache"] = prov.as_dict()
    return data


def _enrichment(req: SearchRequest, total: int) -> dict[str, Any]:
    return {
        "totalCount": total,
        "effectiveQuery": req.effective_query,
        "sortApplied": req.sort_applied,
        "appliedFilters": dict(req.applied_filters),
    }


def search_works_answer(svc: Services, args: dict[str, Any], sorts: dict[str, str]) -> dict[str, Any]:
    """``datacite_search_works``'s structured content for the validated ``args``.

    Raises:
        InvalidInput: ``invalid_filter``, ``page_ceiling``, ``conflicting_paging``, ``invalid_cursor``,
            ``invalid_query`` (DataCite could not parse the caller's query).
        UpstreamError, BudgetExhausted: nothing stored, no stored work matches, DataCite unusable.
    """
    req = search_request(args, sorts)
    try:
        page = lookups.list_page(svc, "/dois", req.params)
    except UpstreamRejected as exc:
        raise rejected_error(exc, req.query_given) from None
    except (UpstreamError, BudgetExhausted) as exc:
        if not req.terms:
            raise
        return _offline(svc, req, exc)
    body = page.body
    meta = as_object(body.get("meta"))
    asked = meta.get("page")
    if req.cursor is None and isinstance(asked, int) and asked != req.page:
        raise InvalidInput(
            f"DataCite served page {asked} for page {req.page}: ranked pages reach only the first "
            f"{PAGE_CEILING:,} matches",
            reason="page_ceiling",
            hint='Narrow the search, or walk every match with cursor "*".',
        )
    _check_walk(req, body)
    total = int(meta.get("total") or 0)
    data = _enrichment(req, total)
    data["works"] = rows(body)
    if args.get("include_facets"):
        data["facets"] = facets(meta)
    if not data["works"] and not total:
        data["notice"] = _zero_notice(req)
    _paging(data, req, body, total, len(data["works"]))
    data["cache"] = page.provenance.as_dict()
    return data
