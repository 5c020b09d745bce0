"""Pure views of Zenodo's paged answers: search hits, the offline search, vocabulary entries.

Inputs are decoded search bodies (``{"hits": {"hits": [...], "total": N | {"value": N}},
"aggregations": {...}}``) or search hits already built; outputs are the contract dicts of
``zenodo_search_records`` and ``zenodo_lookup_vocabulary`` (``../shared/spec/anchors.md`` §1b) with
their paging fields and notices. No I/O: the tools fetch and add ``cache``.
"""

from __future__ import annotations

import re
from typing import Any

from syncd.zenodo import views_lists as lists
from syncd.zenodo.params import WINDOW_LIMIT, SearchRequest, blank

__all__ = [
    "VOCABS",
    "VOCAB_PATHS",
    "escape_vocabulary_query",
    "hits_total",
    "local_matches",
    "local_notice",
    "narrowing_filters",
    "no_versions_fields",
    "page_fields",
    "resource_type_rows",
    "search_notice",
    "search_page",
    "series_fields",
    "versions_fields",
    "vocabulary_notice",
]

_FACET_NAMES = ("resource_type", "access_status", "file_type", "subject", "publication_year")


def hits_total(body: dict[str, Any]) -> int:
    """``hits.total`` of a Zenodo search body (a number or ``{"value": N}``), 0 when absent or odd."""
    total = (body.get("hits") or {}).get("total", 0)
    if isinstance(total, dict):
        total = total.get("value", 0)
    return int(total) if isinstance(total, int | float) else 0


def page_fields(total: int, page: int, size: int, items: list[Any], name: str) -> dict[str, Any]:
    """The paging fields of one page of ``items`` (under ``name``) of ``total``.

    ``reachable`` is ``total`` cut at Zenodo's 10,000-hit window; ``next_page`` only when more is
    reachable; ``truncated``/``shown``/``cap``/``totalCount`` as every list answer carries them.
    """
    reachable = min(total, WINDOW_LIMIT)
    has_more = page * size < reachable
    data: dict[str, Any] = {
        "total": total,
        "reachable": reachable,
        "page": page,
        "size": size,
        "has_more": has_more,
    }
    if has_more:
        data["next_page"] = page + 1
    data[name] = items
    data.update(truncated=has_more, shown=len(items), cap=size, totalCount=total)
    return data


# ----------------------------------------------------------------------------------- search_records


def narrowing_filters(
    req: SearchRequest,
    award: str | None,
    creator_orcid: str | None,
    community: str | None,
    funder: str | None,
) -> list[str]:
    """The narrowing parameters given, most specific first, as ``name=value`` (lists comma-joined).

    ``award``, ``creator_orcid``, ``community`` and ``funder`` as the caller gave them.
    """
    narrowing: dict[str, str | list[str] | None] = {
        "award": award,
        "creator_orcid": creator_orcid,
        "community": community,
        "funder": funder,
        "file_type": req.file_types,
        "license": req.license,
        "access_status": req.access,
        "resource_type": req.types,
        "published_from": req.published_from,
        "published_to": req.published_to,
    }
    return [
        f"{n}={blank(v) if isinstance(v, str) else ','.join(v)}"
        for n, v in narrowing.items()
        if (blank(v) if isinstance(v, str) else v)
    ]


def search_page(
    body: dict[str, Any],
    req: SearchRequest,
    window: tuple[int, int],
    all_versions: bool,
    q: str | None,
    filters: list[str],
) -> dict[str, Any]:
    """One page (``window`` = page, size) of Zenodo's search answer.

    Hits, paging fields, applied sort, facets (empty counts on zero hits), effective query, notice.
    """
    page, size = window
    raw_hits = (body.get("hits") or {}).get("hits") or []
    hits = [
        lists.search_hit(h).model_dump(mode="json", exclude_none=True)
        for h in raw_hits
        if isinstance(h, dict)
    ]
    total = hits_total(body)
    data = page_fields(total, page, size, hits, "hits")
    data.update(appliedSort=req.sort, allVersions=bool(all_versions))
    facets = lists.search_facets(body)
    if facets is not None:
        data["facets"] = facets.model_dump(mode="json", exclude_none=True)
    elif total == 0:  # the same envelope as a page with hits: empty counts
        data["facets"] = {name: [] for name in _FACET_NAMES}
    if q:
        data["effectiveQuery"] = q
    notice = search_notice(total, page, size, len(hits), req.query, filters, all_versions)
    if notice:
        data["notice"] = notice
    return data


def search_notice(
    total: int,
    page: int,
    size: int,
    shown: int,
    query: str | None,
    filters: list[str],
    all_versions: bool,
) -> str | None:
    """The search notice naming the next call.

    Zero hits: which filters narrowed it and which to drop first; a page past the last: the page to
    ask for; the 10,000 window; the next page. ``filters`` are the narrowing parameters given, most
    specific first.
    """
    if total == 0:
        versions = "" if all_versions else " Superseded versions are not searched: set all_versions=true."
        if filters:
            return (
                f"No record matched with {', '.join(filters)} (filters AND together"
                + (f" with the query {query!r}" if query else "")
                + f"). Call again without {filters[0].split('=', 1)[0]} first; check filter ids with "
                "zenodo_lookup_vocabulary." + versions
            )
        return (
            f"No record matched the query {query!r}: terms are OR-ed unless joined by AND, so drop AND or "
            f"quotes, or try other words.{versions}"
            if query
            else f"No record matched.{versions}"
        )
    if shown == 0:
        last = -(-min(total, WINDOW_LIMIT) // size)
        return f"Page {page} is past the last page ({last:,} pages of {size}); call again with page {last}."
    notes = []
    if total > WINDOW_LIMIT:
        notes.append(f"Only the first 10,000 of {total:,} hits are reachable; narrow the query.")
    if page * size < min(total, WINDOW_LIMIT):
        notes.append(f"Showing {shown} of {total:,}; call again with page {page + 1}.")
    return " ".join(notes) or None


def local_matches(hits: list[Any], req: SearchRequest, all_versions: bool) -> list[int]:
    """Indexes of the stored search ``hits`` (:class:`SearchHit`) that pass the filters applied offline.

    Resource type (a parent id matches its subtypes), license, access status and the publication
    date range; superseded versions unless ``all_versions``. Community, award, ORCID and file type
    need Zenodo and are not applied; the funder is applied by the tool (from the records' funding).
    """
    kept = []
    for i, hit in enumerate(hits):
        if not all_versions and hit.is_latest is False:
            continue
        rid = hit.resource_type.id if hit.resource_type else ""
        if req.types and not any(rid == t or rid.startswith(t + "-") for t in req.types):
            continue
        if req.license and req.license not in hit.license_ids:
            continue
        if req.access and hit.access.status != req.access:
            continue
        date = hit.publication_date or ""
        if (req.published_from and date[:10] < req.published_from) or (
            req.published_to and date[:10] > req.published_to
        ):
            continue
        kept.append(i)
    return kept


def local_notice(reason: str, matched: int, funder_ror: str | None, unapplied: list[str]) -> str:
    """The notice of an offline search answer: why, what was searched, which filters were applied.

    ``funder_ror``: the funder's ROR id, applied to the stored records' funding; ``unapplied``: the
    filters given that could not be applied offline (``name=value``, with a reason where it helps).
    """
    notice = (
        f"Zenodo could not be used ({reason}); these are {matched} matching records from "
        "syncd's local mirror (full-text index over stored titles, creators, descriptions and "
        "keywords), not Zenodo's search."
    )
    if funder_ror:
        notice += f" The funder filter is applied to the stored records' funding (ROR id {funder_ror})."
    if unapplied:
        notice += (
            f" Not applied offline: {', '.join(unapplied)}; the hits may include records these filters "
            "would exclude. Call again when Zenodo answers for a filtered search."
        )
    return notice


# -------------------------------------------------------------------------------- lookup_vocabulary

VOCABS = {
    "communities": "communities",
    "community": "communities",
    "funders": "funders",
    "funder": "funders",
    "awards": "awards",
    "award": "awards",
    "grants": "awards",
    "grant": "awards",
    "licenses": "licenses",
    "license": "licenses",
    "licences": "licenses",
    "licence": "licenses",
    "resourcetypes": "resource_types",
    "resourcetype": "resource_types",
}
"""Accepted vocabulary names (folded) -> the vocabulary."""

VOCAB_PATHS = {
    "communities": "/communities",
    "funders": "/funders",
    "awards": "/awards",
    "licenses": "/vocabularies/licenses",
}
"""Zenodo API path of each fetched vocabulary (resource_types is a local table)."""

_ESCAPE = re.compile(r"([\\/:\[\]{}()^~!?])")

_NO_MATCH = {
    "communities": "No community matched; try a shorter name or its zenodo.org slug.",
    "funders": "No funder matched; try the acronym, another spelling, or the ROR id.",
    "awards": "No award matched; try the grant number or acronym, or narrow by funder.",
    "licenses": "No license matched; try the SPDX id (cc-by-4.0, mit).",
    "resource_types": "No resource type matched; omit query to list all 43.",
}


def escape_vocabulary_query(query: str) -> str:
    """``query`` with Zenodo's query-syntax characters backslash-escaped (searched as plain words)."""
    return _ESCAPE.sub(r"\\\1", query)


def resource_type_rows(
    query: str | None, table: lists.ResourceTypeTable | None = None
) -> list[dict[str, Any]]:
    """The resource-type entries whose id, label or parent contain every word of ``query``.

    From ``table`` (default: the static one), in its order; ``search_value`` is ``type::id`` for a
    subtype, the id for a top-level type.
    """
    tokens = [lists.fold(t) for t in re.findall(r"\w+", query or "")]
    rows = []
    for rid, (kind, sub, label) in (table or lists.RESOURCE_TYPE_IDS).items():
        hay = {lists.fold(x) for x in re.findall(r"\w+", f"{rid} {label} {kind} {sub or ''}")}
        if all(any(t in h for h in hay) for t in tokens):
            row = {"filter_param": "resource_type", "filter_value": rid, "label": label}
            if sub:
                row["parent_type"] = kind
            row["search_value"] = f"{kind}::{rid}" if sub else rid
            rows.append(row)
    return rows


def _last_page(total: int, size: int) -> int:
    """The last page of ``size`` holding any of ``total`` hits within Zenodo's 10,000-hit window."""
    return max(1, -(-min(total, WINDOW_LIMIT) // size))


def vocabulary_notice(
    vocab: str, total: int, query: str | None, window: tuple[int, int], shown: int, has_more: bool
) -> str | None:
    """The notice of a vocabulary page (``window`` = page, size; ``shown`` entries on it).

    How to widen a miss; a page past the last names the last page to ask for; shared funder names;
    the next page.
    """
    page, size = window
    notice = None
    if total == 0:
        notice = _NO_MATCH[vocab]
    elif shown == 0:
        last = _last_page(total, size)
        entries = "entry" if total == 1 else "entries"
        pages_of = "page" if last == 1 else "pages"
        return (
            f"Page {page} is past the last page ({last:,} {pages_of} of {size} for {total:,} {entries}); "
            f"call again with page {last}."
        )
    elif vocab == "funders" and total > 1 and query:
        notice = "Several funders share names across countries; check country before filtering."
    if has_more:
        more = f"Showing {shown} of {total:,}; call again with page {page + 1}."
        notice = f"{notice} {more}" if notice else more
    return notice


# ------------------------------------------------------------------------------------ list_versions


def series_fields(parts: Any, with_latest: bool) -> dict[str, Any]:
    """``concept_recid`` and ``concept_doi`` of a record's series (from its :class:`RecordParts`).

    With ``with_latest``, also ``latest_recid`` when the record says it is the latest version.
    """
    data: dict[str, Any] = {}
    if parts.concept_recid:
        data["concept_recid"] = parts.concept_recid
    if parts.concept_doi:
        data["concept_doi"] = parts.concept_doi
    if with_latest and parts.versions is not None and parts.versions.is_latest:
        data["latest_recid"] = parts.recid
    return data


def no_versions_fields(page: int, size: int) -> dict[str, Any]:
    """The paging fields of a ``zenodo_list_versions`` miss: an empty page, no totals."""
    data = page_fields(0, page, size, [], "versions")
    for k in ("total", "reachable"):
        data.pop(k)
    return data


def versions_fields(total: int, page: int, size: int, versions: list[Any]) -> dict[str, Any]:
    """The page of a version listing (``versions``: :class:`VersionEntry`) and its notice."""
    paged = page_fields(
        total, page, size, [v.model_dump(mode="json", exclude_none=True) for v in versions], "versions"
    )
    paged.pop("total")
    paged.pop("reachable")
    if not versions and total:
        last = -(-min(total, WINDOW_LIMIT) // size)
        paged["notice"] = (
            f"Page {page} is past the last page: {total} versions make {last} pages of {size}; "
            f"call again with page {last} for the oldest versions, or page 1 for the newest."
        )
    elif paged["has_more"]:
        paged["notice"] = f"Showing {len(versions)} of {total} versions; call again with page {page + 1}."
    return paged
