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
from syncd.normalize import zenodo_pages as pages
from syncd.normalize import zenodo_params
from syncd.normalize.zenodo_params import blank, window_check
from syncd.policy import Provenance
from syncd.services import Services
from syncd.store.content import document
from syncd.store.repo import StoredEntry
from syncd.tools.errors import error_result
from syncd.tools.zenodo_render import RENAME, VOCAB_RENAME, tool_result
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


def _search_params(
    services: Services,
    req: zenodo_params.SearchRequest,
    filters: tuple[str | None, str | None],
    all_versions: bool,
    window: tuple[int, int],
) -> tuple[str | None, dict[str, str]]:
    """Zenodo's ``q`` and the request parameters; ``filters`` (funder, community) are looked up."""
    funder, community = filters
    funder_id = _funder_ror(services, funder) if blank(funder) else None
    q = lists.compose_query(
        req.query,
        resource_types=req.types,
        funder=funder_id,
        award=req.award,
        creator_orcid=req.orcid,
        file_types=req.file_types,
        license=req.license,
        access_status=req.access,
        published_from=req.published_from,
        published_to=req.published_to,
    )
    params = {"sort": req.sort, "page": str(window[0]), "size": str(window[1])}
    if q:
        params["q"] = q
    if all_versions:
        params["all_versions"] = "true"
    if blank(community):
        params["communities"] = _community_uuid(services, community or "")
    return q, params


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
        try:
            q, params = _search_params(services, req, (funder, community), all_versions, (page, size))
            found = lookups_zenodo.get_page(services, ZENODO_SEARCH, "/records", params)
        except (UpstreamError, BudgetExhausted) as exc:
            if isinstance(exc, UpstreamRejected):
                raise
            data = _local_search(services, exc, req, all_versions, page, size)
            return tool_result(data, f"Zenodo search (local mirror): {req.query or 'all stored records'}")
        filters = pages.narrowing_filters(req, award, creator_orcid, community, funder)
        data = pages.search_page(found.body or {}, req, (page, size), all_versions, q, filters)
        data["cache"] = found.provenance.as_dict()
    except Exception as exc:
        return error_result(exc, {**RENAME, "upstream_unavailable": "query_failed"})
    return tool_result(data, f"Zenodo search: {q or 'all records'}")


def _local_search(
    services: Services,
    exc: UpstreamError | BudgetExhausted,
    req: zenodo_params.SearchRequest,
    all_versions: bool,
    page: int,
    size: int,
) -> dict[str, Any]:
    """The offline answer: stored records from the full-text index, filtered locally, paged."""
    entries: list[StoredEntry] = []
    hits: list[Any] = []
    for entry in lookups_zenodo.local_search(services.store, req.query or ""):
        try:
            hit = lists.search_hit(document(entry))
        except Exception:  # a stored body that does not normalize is skipped
            continue
        entries.append(entry)
        hits.append(hit)
    matched = [
        (entries[i], hits[i].model_dump(mode="json", exclude_none=True))
        for i in pages.local_matches(hits, req, all_versions)
    ]
    if req.sort in ("newest", "oldest"):
        matched.sort(key=lambda m: m[1].get("publication_date") or "", reverse=req.sort == "newest")
    window = matched[(page - 1) * size : page * size]
    data = pages.page_fields(len(matched), page, size, [h for _, h in window], "hits")
    data.update(appliedSort=req.sort, allVersions=bool(all_versions), local=True)
    data["notice"] = pages.local_notice(exc.reason, len(matched))
    now = time.time()
    validated = min((e.validated_at for e, _ in window), default=now)
    fetched = min((e.fetched_at for e, _ in window), default=now)
    data["cache"] = Provenance("store-stale", fetched, validated, True, exc.reason).as_dict(now)
    return data


# ----------------------------------------------------------------------------------- lookup_vocabulary


def _vocabulary_page(
    services: Services, vocab: str, query: str | None, funder: str | None, window: tuple[int, int]
) -> tuple[int, list[Any], dict[str, Any]]:
    """``(total, entries, cache)`` of one page of a vocabulary: the local table or a cached Zenodo page."""
    page, size = window
    if vocab == "resource_types":
        rows = pages.resource_type_rows(query)
        now = time.time()
        return (
            len(rows),
            rows[(page - 1) * size : page * size],
            Provenance("store", now, now, stale=False).as_dict(now),
        )
    params = {"page": str(page), "size": str(size)}
    if query:
        params["q"] = pages.escape_vocabulary_query(query)
    if blank(funder):
        params["funders"] = _funder_ror(services, funder or "")
    found = lookups_zenodo.get_page(
        services, ZENODO_VOCAB, pages.VOCAB_PATHS[vocab], params, accept=LEGACY_JSON
    )
    body = found.body or {}
    hits = [h for h in (body.get("hits") or {}).get("hits") or [] if isinstance(h, dict)]
    entries = [lists.vocabulary_entry(vocab, h) for h in hits]
    return pages.hits_total(body), entries, found.provenance.as_dict()


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
        vocab = pages.VOCABS.get(lists.fold(vocabulary))
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
        total, entries, provenance = _vocabulary_page(services, vocab, query, funder, (page, size))
        paged = pages.page_fields(total, page, size, entries, "entries")
        paged.pop("reachable")
        data.update(paged)
        notice = pages.vocabulary_notice(vocab, total, query, len(entries), page, data["has_more"])
        if notice:
            data["notice"] = notice
        data["cache"] = provenance
    except Exception as exc:
        return error_result(exc, VOCAB_RENAME)
    return tool_result(data, f"Zenodo {data.get('vocabulary', vocabulary)}: {query or 'browse'}")
