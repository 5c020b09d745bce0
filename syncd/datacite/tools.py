"""DataCite MCP tools, local-first: the tools of the DataCite anchor (``cyanheads/datacite-mcp-server``).

Contract: ``../shared/spec/datacite.md`` (names, inputs, output fields, typed misses, reason codes,
text rules), plus the ``cache`` provenance block. Records are stored as ``datacite_work`` entries,
searches as ``datacite_search`` pages (answered from the store's full-text index of stored works
when DataCite cannot be reached), citations are rendered locally with CSL when the record is stored.

This module declares the tools once (result models and :data:`TOOLS`); the bodies build their
answers through :mod:`syncd.datacite.lookups` and :mod:`syncd.datacite.queries`, their text through
:mod:`syncd.datacite.tools_render`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from mcp.types import CallToolResult, ToolAnnotations

from syncd.contracts.common import Normalized, WithCache, note_normalized
from syncd.datacite import lookups, queries
from syncd.datacite.args import (
    SORTS,
    GetCitationArgs,
    GetWorkArgs,
    ListReferenceArgs,
    SearchRepositoriesArgs,
    SearchWorksArgs,
    TraceRelationsArgs,
)
from syncd.datacite.contracts import (
    CitationView,
    ReferenceView,
    RepositoriesView,
    SearchWorksView,
    TraceView,
    WorkView,
)
from syncd.datacite.params import parse_datacite_doi
from syncd.datacite.queries_citation import citation_answer
from syncd.datacite.queries_repositories import repositories_answer
from syncd.datacite.queries_search import search_works_answer
from syncd.datacite.queries_trace import trace_answer
from syncd.datacite.tools_render import (
    render_citation,
    render_reference,
    render_repositories,
    render_search,
    render_trace,
    render_work,
    result,
)
from syncd.datacite.views_reference import reference
from syncd.errors import SyncdError
from syncd.road.services import Services
from syncd.tools.errors import error_result
from syncd.tools.fit import Cut, Fit, Resume, dropped, plain
from syncd.tools.params import ToolSpec

__all__ = [
    "TOOLS",
    "GetCitationResult",
    "GetWorkResult",
    "ListReferenceResult",
    "SearchRepositoriesResult",
    "SearchWorksResult",
    "TraceRelationsResult",
    "get_citation",
    "get_work",
    "list_reference",
    "search_repositories",
    "search_works",
    "trace_relations",
]


def _error(exc: Exception) -> CallToolResult:
    """The tool error of ``exc``; a ``rate_limited`` one carries ``retryAfter`` as the contract gives it.

    ``error.data.retryAfter``: the wait in whole seconds (rounded up, at least 1), from the upstream's
    ``Retry-After`` (or the budget's own wait) that syncd holds as ``retry_after_s``.
    """
    if isinstance(exc, SyncdError) and exc.reason == "rate_limited":
        wait = exc.data.get("retry_after_s")
        if isinstance(wait, int | float) and not isinstance(wait, bool):
            exc.data.setdefault("retryAfter", max(1, math.ceil(wait)))
    return error_result(exc)


class GetWorkResult(WorkView, Normalized, WithCache):
    """``datacite_get_work`` output: the contract's fields plus ``cache`` provenance."""


def get_work(services: Services, doi: str) -> CallToolResult:
    """Get one DataCite record (dataset, software, preprint, ...) by DOI, from the local store first.

    Returns titles, creators and contributors with ORCID iDs and ROR affiliations, publisher,
    publication year, resource type, version, dates, subjects, descriptions, funding, geolocations,
    rights, related identifiers (with counts by relation type), related items, usage and citation
    counts, the repository and its provider. Long lists are capped with their totals
    (truncatedLists). A DOI DataCite holds no public record of returns found: false with missReason
    (not_public, other_agency, does_not_exist, unclassified), the registrationAgency doi.org names
    and guidance. ``cache`` says where the answer came from and how fresh it is. Errors:
    invalid_doi, rate_limited.
    """
    try:
        parsed = parse_datacite_doi(doi)
        data = note_normalized(queries.work_answer(lookups.get_work(services, parsed)), parsed.written)
    except Exception as exc:
        return _error(exc)
    return result(data, render_work(data))


class SearchWorksResult(SearchWorksView, WithCache):
    """``datacite_search_works`` output plus ``cache`` provenance."""


class GetCitationResult(CitationView, WithCache):
    """``datacite_get_citation`` output plus ``cache`` provenance (of the record it was rendered from)."""


class TraceRelationsResult(TraceView, WithCache):
    """``datacite_trace_relations`` output plus ``cache`` provenance (of the root's record)."""


def trace_relations(
    services: Services,
    doi: str,
    depth: int = 1,
    relation_types: list[str] | None = None,
    include_event_data: bool = True,
    max_nodes: int = 50,
) -> CallToolResult:
    """Trace the relations around a DOI (any agency's): versions, parts, citations, supplements, ...

    Reads the DOI's own DataCite metadata (its related identifiers and items), the DataCite records
    that name it (reverse metadata) and DataCite Event Data citations, and returns nodes (hydrated
    with title, type, year, repository, counts where DataCite holds them) and edges (from, to,
    relationType as asserted, sources), with the coverage of each source. relation_types narrows
    the graph from the traced DOI's side. Errors: invalid_doi, rate_limited.
    """
    try:
        data = trace_answer(services, doi, depth, relation_types, include_event_data, max_nodes)
    except Exception as exc:
        return _error(exc)
    return result(data, render_trace(data))


def _trace_cut(noun: str) -> Resume:
    """The size-budget cut of a trace's edges or nodes: how many stay, and the calls that show the rest."""

    def resume(data: dict[str, Any], args: Mapping[str, Any], kept: int, total: int) -> str:
        data["truncated"] = True
        if noun == "Nodes":
            data["shown"] = kept
        return (
            f"{noun} cut to {kept:,} of {total:,} to fit the answer size: lower max_nodes, narrow "
            "relation_types or trace a node on its own to see the rest"
        )

    return resume


class SearchRepositoriesResult(RepositoriesView, WithCache):
    """``datacite_search_repositories`` output plus ``cache`` provenance."""


def search_repositories(services: Services, arguments: dict[str, Any]) -> CallToolResult:
    """Search DataCite's repository registry (about 4,500 repositories and journals minting DOIs).

    By query (names, alternate names, descriptions), field_of_science, repository_types,
    certificates (CoreTrustSeal, WDS, ...), software, client_type and provider_id, or look up
    repository_ids (alone). Each row: id, name, alternate name, provider, client type, repository
    types, certificates, software, subjects, languages, URL, re3data and OpenDOAR ids, description,
    year, whether active; in the registry's name order. Errors: invalid_query, conflicting_lookup,
    rate_limited.
    """
    try:
        data = repositories_answer(services, arguments)
    except Exception as exc:
        return _error(exc)
    return result(data, render_repositories(data))


class ListReferenceResult(ReferenceView, WithCache):
    """``datacite_list_reference`` output (no request; ``cache`` absent)."""


def search_works(services: Services, arguments: dict[str, Any]) -> CallToolResult:
    """Search DataCite works (datasets, software, preprints, ...) by text, query syntax and filters.

    Filters: resource_types, creator (name or ORCID iD), affiliation (name or ROR id),
    affiliation_country, funder (name, Crossref Funder ID or ROR id, include_child_funders), subject,
    fields_of_science, repository_ids, provider_ids, licenses, language, place, published_from/to,
    min_citations. Sorts: relevance, newest, oldest, recently_updated, most_cited, most_viewed,
    most_downloaded. Ranked pages (limit, page) reach the first 10,000 matches; cursor "*" walks all
    of them (pass nextCursor back). Each row: DOI, title, first 5 creators with the count, year,
    type, publisher, repository and provider, version, licences, counts, landing page, a description
    snippet. Pages are cached; when DataCite cannot be reached the stored DataCite works matching
    the words are answered (local: true). Errors: invalid_query, invalid_filter, page_ceiling,
    invalid_cursor, conflicting_paging, rate_limited.
    """
    try:
        data = search_works_answer(services, arguments, SORTS)
    except Exception as exc:
        return _error(exc)
    return result(data, render_search(data))


def get_citation(
    services: Services, doi: str, format: str = "text", style: str | None = None, locale: str | None = None
) -> CallToolResult:
    """Format a DataCite DOI as a citation.

    Formats: text (a CSL style and locale; default apa), CSL JSON, BibTeX, RIS, DataCite JSON or
    XML, Schema.org, Codemeta or JATS.

    Every format is DataCite's own rendering (content negotiation, one request); when DataCite cannot be
    reached, text in the common CSL styles and CSL JSON are rendered from the stored record. A DOI
    DataCite holds no public record of returns found: false with missReason, registrationAgency and
    where it can be formatted. Errors: invalid_doi, unsupported_style, unsupported_locale,
    style_requires_text, format_unavailable, render_failed, rate_limited.
    """
    try:
        data = citation_answer(services, doi, format, style, locale)
    except Exception as exc:
        return _error(exc)
    return result(data, render_citation(data))


def list_reference(services: Services, topic: str) -> CallToolResult:
    """List a DataCite vocabulary or reference topic (no request).

    Topics: resource_types, relation_types (with inverses and groups), identifier_types,
    date_types, contributor_types, fields_of_science, licenses, repository_types, certificates,
    software_platforms, client_types, sort_orders, query_syntax, citation_formats,
    citation_styles, citation_locales, identifier_formats, coverage.
    """
    data = reference(topic)
    return result(data, render_reference(data))


_WORK_LISTS = ("relatedIdentifiers", "creators", "contributors", "subjects")
"""datacite_get_work's lists cut, in this order, when an answer passes the budget."""


def _limit_pages(noun: str) -> Any:
    """A list of a ``limit``/``page`` page: ``truncated``/``shown`` set, the next call named."""

    def resume(data: dict[str, Any], args: Mapping[str, Any], kept: int, total: int) -> str:
        data.update(truncated=True, shown=kept)
        start = (int(args.get("page") or 1) - 1) * int(args.get("limit") or total)
        if kept and start % kept == 0:
            return (
                f"Showing {kept} of this page's {total} {noun}; call again with limit={kept} and "
                f"page={start // kept + 2} for the next ones"
            )
        return f"Showing {kept} of this page's {total} {noun}; call again with limit={max(kept, 1)}"

    return resume


_ANNOTATIONS = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=True)

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "datacite_get_work",
        "Get a DataCite work",
        GetWorkArgs,
        GetWorkResult,
        get_work,
        _ANNOTATIONS,
        fit=Fit(tuple(Cut(n, dropped(n)) for n in _WORK_LISTS), plain(render_work)),
    ),
    ToolSpec(
        "datacite_search_works",
        "Search DataCite works",
        SearchWorksArgs,
        SearchWorksResult,
        search_works,
        _ANNOTATIONS,
        fit=Fit((Cut("works", _limit_pages("works")),), plain(render_search)),
        pass_dict=True,
    ),
    ToolSpec(
        "datacite_trace_relations",
        "Trace a DOI's relations",
        TraceRelationsArgs,
        TraceRelationsResult,
        trace_relations,
        _ANNOTATIONS,
        fit=Fit((Cut("edges", _trace_cut("Edges")), Cut("nodes", _trace_cut("Nodes"))), plain(render_trace)),
    ),
    ToolSpec(
        "datacite_search_repositories",
        "Search DataCite repositories",
        SearchRepositoriesArgs,
        SearchRepositoriesResult,
        search_repositories,
        _ANNOTATIONS,
        fit=Fit((Cut("repositories", _limit_pages("repositories")),), plain(render_repositories)),
        pass_dict=True,
    ),
    ToolSpec(
        "datacite_get_citation",
        "Format a DataCite citation",
        GetCitationArgs,
        GetCitationResult,
        get_citation,
        _ANNOTATIONS,
        fit=Fit((), plain(render_citation)),
    ),
    ToolSpec(
        "datacite_list_reference",
        "List DataCite reference values",
        ListReferenceArgs,
        ListReferenceResult,
        list_reference,
        ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
        fit=Fit((Cut("entries", dropped("Entries")),), plain(render_reference)),
    ),
)
"""The DataCite tools (input models in :mod:`syncd.datacite.args`)."""
