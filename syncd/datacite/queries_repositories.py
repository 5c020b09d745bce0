"""``datacite_search_repositories``: DataCite's repository registry (``GET /repositories``), local-first.

The request takes only the keys set (``ids``, ``query``, ``repository-type``, ``certificate``,
``software``, ``client-type``, ``provider-id``, ``page[size]``, ``page[number]``); ``query`` ANDs the
caller's query and the field-of-science subjects clause. ``repository_ids`` alone is an ``ids=``
lookup (``page[size]`` at least the number of ids); combined with a query or another filter it is
``conflicting_lookup`` before any request, since DataCite's ``ids=`` silently ignores them. Pages are
stored as ``datacite_search`` entries (:func:`syncd.datacite.lookups.list_page`), so a repeated
search is answered from the store and served stale when DataCite is down.
"""

from __future__ import annotations

import math
from typing import Any

from syncd.datacite import lookups
from syncd.datacite.params import flatten, phrase
from syncd.datacite.queries_search import rejected_error
from syncd.datacite.views import as_object
from syncd.datacite.views_reference import fos_labels
from syncd.errors import InvalidInput, UpstreamRejected
from syncd.road.services import Services

__all__ = ["repositories_answer", "repository_row"]


def _strings(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value] if value else []
    return [str(v).strip() for v in items if isinstance(v, str | int) and str(v).strip()]


def repository_row(record: dict[str, Any]) -> dict[str, Any]:
    """One ``repositories[]`` row of a ``/repositories`` record (the registry's name order kept)."""
    a = as_object(record.get("attributes"))
    provider = ((record.get("relationships") or {}).get("provider") or {}).get("data") or {}
    row: dict[str, Any] = {
        "repositoryId": str(record.get("id")),
        "name": (a.get("name") or "").strip() or str(record.get("id")),
        "repositoryTypes": _strings(a.get("repositoryType")),
        "certificates": _strings(a.get("certificate")),
        "subjects": [
            str(s["subject"]) for s in a.get("subjects") or [] if isinstance(s, dict) and s.get("subject")
        ],
        "language": _strings(a.get("language")),
    }
    optional = {
        "alternateName": a.get("alternateName"),
        "providerId": provider.get("id"),
        "clientType": a.get("clientType"),
        "software": a.get("software"),
        "url": a.get("url"),
        "re3data": a.get("re3data"),
        "opendoar": a.get("opendoar"),
        "description": a.get("description"),
        "year": a.get("year") if isinstance(a.get("year"), int) else None,
        "isActive": a.get("isActive") if isinstance(a.get("isActive"), bool) else None,
    }
    for key, value in optional.items():
        if isinstance(value, str):
            value = value.strip() or None
        if value is not None:
            row[key] = value
    return row


def _request(args: dict[str, Any]) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """``(params, appliedFilters, ids)`` of one call.

    Raises:
        InvalidInput: ``conflicting_lookup`` (ids with a query or a filter).
    """
    params: dict[str, str] = {}
    applied: dict[str, str] = {}
    clauses = [f"({flatten(args['query'])})"] if args.get("query") else []
    if args.get("field_of_science"):
        labels = [label.removeprefix("FOS: ") for label in fos_labels(args["field_of_science"])]
        clauses.append("subjects.subject:(" + " OR ".join(phrase(label) for label in labels) + ")")
        applied["field_of_science"] = clauses[-1]
    for name, key, lower in (
        ("repository_types", "repository-type", True),
        ("certificates", "certificate", False),
    ):
        values = list(dict.fromkeys(v.lower() if lower else v for v in args.get(name) or []))
        if values:
            params[key] = ",".join(values)
            applied[name] = f"{key}={params[key]}"
    for name, key in (
        ("software", "software"),
        ("client_type", "client-type"),
        ("provider_id", "provider-id"),
    ):
        if args.get(name):
            value = args[name].lower() if name != "client_type" else args[name]
            params[key] = value
            applied[name] = f"{key}={value}"
    ids = list(dict.fromkeys(i.lower() for i in args.get("repository_ids") or []))
    if ids and (clauses or params):
        raise InvalidInput(
            "repository_ids cannot be combined with query or filters (DataCite's ids= lookup ignores them)",
            reason="conflicting_lookup",
            hint="Pass repository_ids alone, or search with query and filters.",
        )
    if clauses:
        params["query"] = " AND ".join(clauses)
    limit = int(args.get("limit") or 20)
    if ids:
        params["ids"] = ",".join(ids)
        applied["repository_ids"] = f"ids={params['ids']}"
        limit = max(limit, len(ids))
    params["page[size]"] = str(limit)
    params["page[number]"] = str(int(args.get("page") or 1))
    return params, applied, ids


def repositories_answer(svc: Services, args: dict[str, Any]) -> dict[str, Any]:
    """``datacite_search_repositories``' structured content for the validated ``args``.

    Raises:
        InvalidInput: ``conflicting_lookup``; ``invalid_query`` (DataCite could not parse the query).
        UpstreamError, BudgetExhausted: nothing stored and DataCite could not be used.
    """
    params, applied, ids = _request(args)
    try:
        page = lookups.list_page(svc, "/repositories", params)
    except UpstreamRejected as exc:
        raise rejected_error(exc, bool(args.get("query"))) from None
    body = page.body
    meta = as_object(body.get("meta"))
    rows = [repository_row(r) for r in body.get("data") or [] if isinstance(r, dict)]
    total, size, number = int(meta.get("total") or 0), int(params["page[size]"]), int(params["page[number]"])
    data: dict[str, Any] = {
        "repositories": rows,
        "totalCount": total,
        "orderApplied": "name",
        "appliedFilters": applied,
    }
    if number * size < total:
        data["nextPage"] = number + 1
    notices: list[str] = []
    if not rows and not total:
        notices.append("No repository matched.")
        if args.get("software"):
            notices.append(
                "software is a free-form slug (see software_platforms in datacite_list_reference)."
            )
        if args.get("query"):
            notices.append(
                "query searches repository names, alternate names and descriptions only; to find where "
                "works on a subject are deposited, use datacite_search_works with include_facets."
            )
    elif not rows and total:
        notices.append(f"This page is past the end: the last page is {math.ceil(total / size)}.")
    if ids and number == 1:
        missing = [i for i in ids if i not in {r["repositoryId"] for r in rows}]
        if missing:
            notices.append("No repository has the id " + ", ".join(missing) + ".")
    if notices:
        data["notice"] = " ".join(notices)
    data["cache"] = page.provenance.as_dict()
    return data
