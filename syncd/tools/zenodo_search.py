"""Zenodo search tools: ``zenodo_search_records`` and ``zenodo_lookup_vocabulary``, local-first.

A search Zenodo cannot answer is answered from the full-text index over stored records
(``local: true`` and a notice); vocabulary pages are cached entries.
"""

from __future__ import annotations

import re
import time
from typing import Any
from urllib.parse import quote

from mcp.types import CallToolResult

from syncd.errors import (
    BudgetExhausted,
    InvalidInput,
    UpstreamError,
    UpstreamRejected,
)
from syncd.kinds import (
    ZENODO_ENTITY,
    ZENODO_SEARCH,
    ZENODO_VOCAB,
)
from syncd.lookups import zenodo as lookups_zenodo
from syncd.normalize import zenodo_lists as lists
from syncd.normalize import zenodo_params
from syncd.normalize.zenodo_params import WINDOW_LIMIT, blank, window_check
from syncd.policy import Provenance
from syncd.services import Services
from syncd.store.content import document
from syncd.store.repo import StoredEntry
from syncd.tools.errors import error_result
from syncd.tools.zenodo_render import RENAME, VOCAB_RENAME, _page_fields, _result, _total
from syncd.upstream.zenodo import LEGACY_JSON

# ------------------------------------------------------------------------------------ search_records

_ROR = re.compile(r"^0[a-z0-9]{6}\d{2}$")
_COMMUNITY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")


def _community_uuid(services: Services, raw: str) -> str:
    slug = re.sub(r"^(?:https?://)?(?:www\.)?zenodo\.org/communities/", "", raw.strip()).strip("/")
    if not _COMMUNITY.match(slug):
        raise InvalidInput(
            f"community {raw!r} is not a slug, UUID or community URL", reason="invalid_parameter"
        )
    for candidate in dict.fromkeys((slug, slug.lower())):
        page = lookups_zenodo.get_page(
            services, ZENODO_ENTITY, f"/communities/{quote(candidate)}", {}, accept=LEGACY_JSON
        )
        if page.body and page.body.get("id"):
            return str(page.body["id"])
    raise InvalidInput(
        f"no Zenodo community {raw!r}",
        reason="unknown_community",
        hint="Find the slug with zenodo_lookup_vocabulary vocabulary=communities.",
    )


def _funder_ror(services: Services, raw: str) -> str:
    value = raw.strip()
    ror = re.sub(r"^(?:https?://)?(?:www\.)?ror\.org/", "", value, flags=re.IGNORECASE).lower()
    if _ROR.match(ror):
        page = lookups_zenodo.get_page(services, ZENODO_ENTITY, f"/funders/{ror}", {}, accept=LEGACY_JSON)
        if page.body and page.body.get("id"):
            return str(page.body["id"])
    else:
        doi = re.sub(r"^(?:doi:|https?://(?:dx\.)?doi\.org/)", "", value, flags=re.IGNORECASE).lower()
        if not doi.startswith("10.13039/"):
            raise InvalidInput(
                f"funder {raw!r} is not a ROR id, ROR URL or Crossref Funder DOI", reason="invalid_parameter"
            )
        page = lookups_zenodo.get_page(
            services,
            ZENODO_VOCAB,
            "/funders",
            {"q": f"identifiers.identifier:{doi}", "size": "1"},
            accept=LEGACY_JSON,
        )
        hits = ((page.body or {}).get("hits") or {}).get("hits") or []
        if hits and hits[0].get("id"):
            return str(hits[0]["id"])
    raise InvalidInput(
        f"no Zenodo funder {raw!r}",
        reason="unknown_funder",
        hint="Find the funder with zenodo_lookup_vocabulary vocabulary=funders "
        "(names are never auto-picked).",
    )


def search_records(
    services: Services,
    query: str | None = None,
    resource_type: str | list[str] | None = None,
    community: str | None = None,
    funder: str | None = None,
    award: str | None = None,
    creator_orcid: str | None = None,
    file_type: str | list[str] | None = None,
    license: str | None = None,
    access_status: str | None = None,
    published_from: str | None = None,
    published_to: str | None = None,
    all_versions: bool = False,
    sort: str | None = None,
    page: int = 1,
    size: int = 10,
) -> CallToolResult:
    """Search Zenodo records, local-first; offline, from the local mirror's full-text index.

    Filters are composed into Zenodo's ``q`` (so totals agree with them): resource_type (ids such as
    dataset, software, publication-article), community (slug, UUID or URL; checked), funder (ROR id
    or Funder DOI; checked), award (<ror>::<number> or a number), creator_orcid, file_type,
    license, access_status, published_from/published_to (YYYY, YYYY-MM or YYYY-MM-DD; partial dates
    expanded). Up to 25 hits per page; page x size may not pass 10,000. Pages are cached by their
    canonical parameters (``ttl.search``) and their records stored. When Zenodo cannot be used, the
    answer comes from the full-text index over stored records (title, creators, description,
    keywords) with ``local: true`` and a notice. Errors: query_is_identifier, query_syntax,
    invalid_parameter, invalid_date_range, result_window_exceeded, unknown_community,
    unknown_funder, rate_limited (only when nothing local can answer).
    """
    try:
        req = zenodo_params.search_request(
            query, resource_type, file_type, license, access_status, published_from, published_to,
            creator_orcid, award, sort, page, size,
        )  # fmt: skip
        query, types, ftypes, lic, access = req.query, req.types, req.file_types, req.license, req.access
        pf, pt, orcid, sort_value, award_value = (
            req.published_from, req.published_to, req.orcid, req.sort, req.award
        )  # fmt: skip
        try:
            funder_id = _funder_ror(services, funder) if blank(funder) else None
            q = lists.compose_query(
                query,
                resource_types=types,
                funder=funder_id,
                award=award_value,
                creator_orcid=orcid,
                file_types=ftypes,
                license=lic,
                access_status=access,
                published_from=pf,
                published_to=pt,
            )
            params = {"sort": sort_value, "page": str(page), "size": str(size)}
            if q:
                params["q"] = q
            if all_versions:
                params["all_versions"] = "true"
            if blank(community):
                params["communities"] = _community_uuid(services, community or "")
            found = lookups_zenodo.get_page(services, ZENODO_SEARCH, "/records", params)
        except (UpstreamError, BudgetExhausted) as exc:
            if isinstance(exc, UpstreamRejected):
                raise
            data = _local_search(
                services, exc, query, types, lic, access, pf, pt, all_versions, sort_value, page, size
            )
            return _result(data, f"Zenodo search (local mirror): {query or 'all stored records'}")
        body = found.body or {}
        raw_hits = (body.get("hits") or {}).get("hits") or []
        hits = [
            lists.search_hit(h).model_dump(mode="json", exclude_none=True)
            for h in raw_hits
            if isinstance(h, dict)
        ]
        total = _total(body)
        data = _page_fields(total, page, size, hits, "hits")
        data.update(appliedSort=sort_value, allVersions=bool(all_versions))
        facets = lists.search_facets(body)
        if facets is not None:
            data["facets"] = facets.model_dump(mode="json", exclude_none=True)
        elif total == 0:  # the same envelope as a page with hits: empty counts
            names = ("resource_type", "access_status", "file_type", "subject", "publication_year")
            data["facets"] = {name: [] for name in names}
        if q:
            data["effectiveQuery"] = q
        narrowing = {
            "award": award,
            "creator_orcid": creator_orcid,
            "community": community,
            "funder": funder,
            "file_type": ftypes,
            "license": lic,
            "access_status": access,
            "resource_type": types,
            "published_from": pf,
            "published_to": pt,
        }
        given = [
            f"{n}={blank(v) if isinstance(v, str) else ','.join(v)}"
            for n, v in narrowing.items()
            if (blank(v) if isinstance(v, str) else v)
        ]
        data["notice"] = _search_notice(total, page, size, len(hits), query, given, all_versions)
        if not data["notice"]:
            del data["notice"]
        data["cache"] = found.provenance.as_dict()
    except Exception as exc:
        return error_result(exc, {**RENAME, "upstream_unavailable": "query_failed"})
    return _result(data, f"Zenodo search: {q or 'all records'}")


def _search_notice(
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
        return f"Page {page} is past the last page ({last} pages of {size}); call again with page {last}."
    notes = []
    if total > WINDOW_LIMIT:
        notes.append(f"Only the first 10,000 of {total} hits are reachable; narrow the query.")
    if page * size < min(total, WINDOW_LIMIT):
        notes.append(f"Showing {shown} of {total}; call again with page {page + 1}.")
    return " ".join(notes) or None


def _local_search(
    services: Services,
    exc: UpstreamError | BudgetExhausted,
    query: str | None,
    types: list[str],
    lic: str | None,
    access: str | None,
    pf: str | None,
    pt: str | None,
    all_versions: bool,
    sort_value: str,
    page: int,
    size: int,
) -> dict[str, Any]:
    """The offline answer: stored records from the full-text index, filtered locally, paged."""
    matched: list[tuple[StoredEntry, dict[str, Any]]] = []
    for entry in lookups_zenodo.local_search(services.store, query or ""):
        try:
            body = document(entry)
            hit = lists.search_hit(body)
        except Exception:  # a stored body that does not normalize is skipped
            continue
        if not all_versions and hit.is_latest is False:
            continue
        rid = hit.resource_type.id if hit.resource_type else ""
        if types and not any(rid == t or rid.startswith(t + "-") for t in types):
            continue
        if lic and lic not in hit.license_ids:
            continue
        if access and hit.access.status != access:
            continue
        date = hit.publication_date or ""
        if (pf and date[:10] < pf) or (pt and date[:10] > pt):
            continue
        matched.append((entry, hit.model_dump(mode="json", exclude_none=True)))
    if sort_value in ("newest", "oldest"):
        matched.sort(key=lambda m: m[1].get("publication_date") or "", reverse=sort_value == "newest")
    window = matched[(page - 1) * size : page * size]
    data = _page_fields(len(matched), page, size, [h for _, h in window], "hits")
    data.update(appliedSort=sort_value, allVersions=bool(all_versions), local=True)
    data["notice"] = (
        f"Zenodo could not be used ({exc.reason}); these are {len(matched)} matching records from "
        "syncd's local mirror (full-text index over stored titles, creators, descriptions and "
        "keywords), not Zenodo's search. "
        "Community, funder, award, ORCID and file-type filters are not applied offline."
    )
    now = time.time()
    validated = min((e.validated_at for e, _ in window), default=now)
    fetched = min((e.fetched_at for e, _ in window), default=now)
    data["cache"] = Provenance("store-stale", fetched, validated, True, exc.reason).as_dict(now)
    return data


# ----------------------------------------------------------------------------------- lookup_vocabulary

_VOCABS = {
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
_VOCAB_PATHS = {
    "communities": "/communities",
    "funders": "/funders",
    "awards": "/awards",
    "licenses": "/vocabularies/licenses",
}
_ESCAPE = re.compile(r"([\\/:\[\]{}()^~!?])")


def lookup_vocabulary(
    services: Services,
    vocabulary: str,
    query: str | None = None,
    funder: str | None = None,
    page: int = 1,
    size: int = 10,
) -> CallToolResult:
    """Look up the ids that zenodo_search_records filters take.

    Vocabularies: communities, funders, awards, licenses or resource_types (singular forms and
    grant/grants accepted).

    Each entry names the search parameter it feeds (filter_param) and the value to pass
    (filter_value), with a label and per-vocabulary details (slug/uuid; ROR, Funder DOI, country;
    award number, acronym, funder, dates; license URL, OSI approval; resource type parent and
    search value). Pages are cached (``ttl.entity``); resource_types is a static table and makes no
    request. Errors: invalid_parameter, funder_only_for_awards, unknown_funder,
    result_window_exceeded, rate_limited, upstream_unavailable.
    """
    try:
        vocab = _VOCABS.get(lists.fold(vocabulary))
        if vocab is None:
            raise InvalidInput(
                "vocabulary must be communities, funders, awards, licenses or resource_types",
                reason="invalid_parameter",
            )
        query = blank(query)
        if blank(funder) and vocab != "awards":
            raise InvalidInput("funder narrows awards only", reason="funder_only_for_awards")
        window_check(page, size)
        data: dict[str, Any] = {"vocabulary": vocab}
        if query:
            data["query"] = query
        if vocab == "resource_types":
            tokens = [lists.fold(t) for t in re.findall(r"\w+", query or "")]
            rows = []
            for rid, (kind, sub, label) in lists.RESOURCE_TYPE_IDS.items():
                hay = {lists.fold(x) for x in re.findall(r"\w+", f"{rid} {label} {kind} {sub or ''}")}
                if all(any(t in h for h in hay) for t in tokens):
                    row = {"filter_param": "resource_type", "filter_value": rid, "label": label}
                    if sub:
                        row["parent_type"] = kind
                    row["search_value"] = f"{kind}::{rid}"
                    rows.append(row)
            total, entries = len(rows), rows[(page - 1) * size : page * size]
            now = time.time()
            provenance = Provenance("store", now, now, stale=False).as_dict(now)
        else:
            params = {"page": str(page), "size": str(size)}
            if query:
                params["q"] = _ESCAPE.sub(r"\\\1", query)
            if blank(funder):
                params["funders"] = _funder_ror(services, funder or "")
            found = lookups_zenodo.get_page(
                services, ZENODO_VOCAB, _VOCAB_PATHS[vocab], params, accept=LEGACY_JSON
            )
            body = found.body or {}
            hits = [h for h in (body.get("hits") or {}).get("hits") or [] if isinstance(h, dict)]
            total = _total(body)
            entries = [lists.vocabulary_entry(vocab, h) for h in hits]
            provenance = found.provenance.as_dict()
        paged = _page_fields(total, page, size, entries, "entries")
        paged.pop("reachable")
        data.update(paged)
        if total == 0:
            data["notice"] = {
                "communities": "No community matched; try a shorter name or its zenodo.org slug.",
                "funders": "No funder matched; try the acronym, another spelling, or the ROR id.",
                "awards": "No award matched; try the grant number or acronym, or narrow by funder.",
                "licenses": "No license matched; try the SPDX id (cc-by-4.0, mit).",
                "resource_types": "No resource type matched; omit query to list all 43.",
            }[vocab]
        elif vocab == "funders" and total > 1 and query:
            data["notice"] = "Several funders share names across countries; check country before filtering."
        if data["has_more"]:
            more = f"Showing {len(entries)} of {total}; call again with page {page + 1}."
            data["notice"] = f"{data['notice']} {more}" if data.get("notice") else more
        data["cache"] = provenance
    except Exception as exc:
        return error_result(exc, VOCAB_RENAME)
    return _result(data, f"Zenodo {data.get('vocabulary', vocabulary)}: {query or 'browse'}")
