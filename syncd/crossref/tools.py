"""Crossref MCP tools, local-first: all seven tools of the Crossref MCP server plus the guide resource.

Tools: ``crossref_get_work``, ``crossref_search_works``, ``crossref_get_references``,
``crossref_search_journals``, ``crossref_search_funders``, ``crossref_get_member``, ``crossref_get_prefix``;
resource ``skill://crossref-guide/SKILL.md`` (and the ``skill://{+path}`` template).

Contract: ``../shared/spec/anchors.md`` §1a (same name, parameters, bounds, output fields and
``reason`` codes as the Crossref MCP server), plus the ``cache`` provenance block.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from mcp.types import CallToolResult, TextContent, ToolAnnotations

from syncd.contracts.common import Normalized, WithCache, note_normalized
from syncd.crossref import queries as crossref_queries
from syncd.crossref import queries_work
from syncd.crossref import tools_fit as fits
from syncd.crossref.args import (
    GetMemberArgs,
    GetPrefixArgs,
    GetReferencesArgs,
    GetWorkArgs,
    SearchFundersArgs,
    SearchJournalsArgs,
    SearchWorksArgs,
)
from syncd.crossref.contracts import ReferencesView, WorkView
from syncd.crossref.contracts_lists import (
    MemberView,
    PrefixView,
    SearchFundersView,
    SearchJournalsView,
    SearchWorksView,
)
from syncd.crossref.tools_render import (
    render_funders,
    render_journals,
    render_member,
    render_prefix,
    render_references,
    render_search_works,
    render_work,
)
from syncd.errors import NotFound
from syncd.normalize.doi import parse_doi
from syncd.road.policy import Provenance
from syncd.road.services import Services
from syncd.tools.errors import error_result
from syncd.tools.params import ToolSpec
from syncd.tools.resource import ResourceSpec

__all__ = [
    "GUIDE_URI",
    "RESOURCES",
    "TOOLS",
    "GetWorkResult",
    "get_member",
    "get_prefix",
    "get_references",
    "get_work",
    "search_funders",
    "search_journals",
    "search_works",
]


class GetWorkResult(WorkView, Normalized, WithCache):
    """``crossref_get_work`` output: the contract's work fields plus ``cache`` provenance."""


class SearchWorksResult(SearchWorksView, WithCache):
    """``crossref_search_works`` output plus ``cache`` provenance."""


class ReferencesResult(ReferencesView, Normalized, WithCache):
    """``crossref_get_references`` output plus ``cache`` provenance."""


class SearchJournalsResult(SearchJournalsView, WithCache):
    """``crossref_search_journals`` output plus ``cache`` provenance."""


class SearchFundersResult(SearchFundersView, WithCache):
    """``crossref_search_funders`` output plus ``cache`` provenance."""


class MemberResult(MemberView, WithCache):
    """``crossref_get_member`` output plus ``cache`` provenance."""


class PrefixResult(PrefixView, WithCache):
    """``crossref_get_prefix`` output plus ``cache`` provenance."""


def get_work(
    services: Services,
    doi: str,
    offset: int = 0,
    limit: int = 25,
) -> CallToolResult:
    """Resolve a DOI to its full Crossref record, from the local store first.

    Returns title, authors (paged by offset/limit, with authorCount and nextOffset), editors,
    corrections and retractions (updatedBy/updateTo, with a notice first), relations, abstract as
    plain text, citation counts, container, locators, ISSN/ISBN, publisher, publication date,
    funders, licenses, links, subjects. ``cache`` says whether it came from the store or from
    Crossref and how fresh it is; when Crossref is unreachable a stored record is still answered,
    flagged stale. Errors: doi_not_found, invalid_parameter, rate_limited, upstream_unavailable,
    malformed_response, request_timeout.
    """
    try:
        parsed = parse_doi(doi)
        data = queries_work.work_answer(services, parsed, offset, limit)
        note_normalized(data, parsed.normalized_from)
    except Exception as exc:
        return error_result(exc)
    return CallToolResult(content=[TextContent(type="text", text=render_work(data))], structured_content=data)


# --------------------------------------------------------------------------------------------------
# shared helpers
# --------------------------------------------------------------------------------------------------

GUIDE_URI = "skill://crossref-guide/SKILL.md"
GUIDE_TEMPLATE = "skill://{+path}"


def _answer(data: dict[str, Any], prov: Provenance, render: Any) -> CallToolResult:
    """Success result: ``data`` plus the ``cache`` block, with ``render(data)`` as the text block."""
    data["cache"] = prov.as_dict()
    return CallToolResult(content=[TextContent(type="text", text=render(data))], structured_content=data)


# --------------------------------------------------------------------------------------------------
# tools
# --------------------------------------------------------------------------------------------------


def search_works(services: Services, args: dict[str, Any]) -> CallToolResult:
    """Search the Crossref works index, from the local store first.

    Free text (query) plus field-scoped queryBibliographic (citation -> DOI), queryTitle, queryAuthor and
    queryContainerTitle, which combine; Crossref's own names (query.bibliographic, query.title,
    query.author, query.container-title, select) are accepted as aliases. filter is an object of
    Crossref's hyphenated keys with string values (from-pub-date, type, funder, issn, has-abstract,
    license.url...). fields narrows each work (Crossref select names; DOI always returned). rows 0-100
    (default 20; 0 returns counts and facets only), authorLimit 1-500 per work (default 25; authorCount
    gives the full total). Offset paging stops at offset + rows <= 10,000; cursor="*" starts a deep walk
    (pass nextCursor back; the walk ends on the first empty page, which carries no nextCursor). sort
    (relevance, score, is-referenced-by-count, published, ... ; publication-date sorts page by offset only)
    and order (asc/desc). facets counts values per facet name ({"type-name": "*", "publisher-name": 10}).
    An empty page's notice says why (nothing matched, offset past the end, or cursor walk complete).
    The same query answered before comes from the store; when Crossref is unreachable, works syncd holds
    are searched locally and the notice says it is a local-mirror answer. Errors: unknown_filter
    (with suggestion), sort_cursor_conflict, invalid_cursor, invalid_parameter, cursor_offset_conflict,
    offset_too_large, rate_limited, upstream_unavailable, malformed_response, request_timeout.
    """
    try:
        data, prov = crossref_queries.search_works(services, args)
    except Exception as exc:
        return error_result(exc)
    return _answer(data, prov, render_search_works)


def get_references(services: Services, doi: str, offset: int, limit: int) -> CallToolResult:
    """Return the outgoing reference list of a work (the works it cites), from the local store first.

    The DOI is bare or resolver-wrapped (https://doi.org/..., doi:...). Each reference carries its
    citation string (markup stripped, character references decoded), structured parts as deposited, and,
    when Crossref has one, a DOI for crossref_get_work with doiAssertedBy (publisher or crossref). Paged by
    offset/limit (default 100, 1-500); referenceCount is the full deposited total and nextOffset continues.
    The record is shared with crossref_get_work: no second request for a DOI already looked up. Coverage
    varies by publisher (a notice says when no list is indexed). Incoming citations are not available.
    Errors: doi_not_found (naming the registration agency), invalid_parameter, rate_limited,
    upstream_unavailable, malformed_response, request_timeout.
    """
    try:
        parsed = parse_doi(doi)
        data, prov = crossref_queries.get_references(services, parsed, offset, limit)
    except Exception as exc:
        return error_result(exc)
    return _answer(note_normalized(data, parsed.normalized_from), prov, render_references)


def search_journals(services: Services, args: dict[str, Any]) -> CallToolResult:
    """Find Crossref journals by ISSN or title, from the local store first.

    Find Crossref journal records by ISSN or title query, from the local store first; optionally a page
    of the journal's works.

    issn (NNNN-NNNX) is an exact lookup that supersedes query and also returns DOI counts by issued year.
    include_works=true adds recentWorks (newest published first by works_offset; newest registered first
    on a works_cursor walk, "*" to start) and needs an unambiguous journal: a title query matching more
    than one returns ambiguous_journal naming the candidates and their ISSNs. rows 1-100 (journals, or
    works with include_works); offset + rows <= 100,000; works_offset + rows <= 10,000. Returns title,
    publisher, ISSNs with their form, subjects, DOI counts and deposit coverage (current/backfile).
    Errors: issn_not_found, ambiguous_journal, offset_too_large, works_offset_too_large,
    works_cursor_offset_conflict, invalid_cursor, invalid_parameter, rate_limited, upstream_unavailable,
    malformed_response, request_timeout.
    """
    try:
        data, prov = crossref_queries.search_journals(services, args)
    except Exception as exc:
        return error_result(exc)
    return _answer(data, prov, render_journals)


def search_funders(services: Services, args: dict[str, Any]) -> CallToolResult:
    """Find funders in the Open Funder Registry, from the local store first.

    Find funders in the Open Funder Registry by name, registry id or funder DOI, from the local store
    first; optionally a page of funded works.

    funder_doi accepts 100000001, 10.13039/100000001, or either behind doi: or a doi.org URL, and returns
    the funder's registry descendants (every depth). include_works=true adds fundedWorks from the funder's
    works list, which also counts its descendants' works (a crossref_search_works funder filter does not);
    it needs an unambiguous funder (ambiguous_funder lists candidates and ids). A deprecated entry's
    notice names its successor (replacedBy); it is never followed automatically. rows 1-100; offset +
    rows <= 100,000; works_offset + rows <= 10,000; works_cursor="*" walks with no ceiling.
    Errors: funder_not_found, ambiguous_funder, offset_too_large, works_offset_too_large,
    works_cursor_offset_conflict, invalid_cursor, invalid_parameter, rate_limited, upstream_unavailable,
    malformed_response, request_timeout.
    """
    try:
        data, prov = crossref_queries.search_funders(services, args)
    except Exception as exc:
        return error_result(exc)
    return _answer(data, prov, render_funders)


def get_member(services: Services, member_id: int) -> CallToolResult:
    """Resolve a Crossref member id to its publisher record, from the local store first.

    Resolve a Crossref member id to its publisher record, from the local store first: primary and
    imprint names, owned DOI prefixes, DOI counts (total/current/backfile), works by type, and metadata
    deposit coverage per category (current/backfile fractions 0-1). The member that holds a DOI now is the
    member of its work record; crossref_get_prefix names the prefix's registrant. Errors: member_not_found
    (resolve a prefix with crossref_get_prefix), invalid_parameter, rate_limited, upstream_unavailable,
    malformed_response, request_timeout.
    """
    try:
        data, prov = crossref_queries.get_member(services, member_id)
    except Exception as exc:
        return error_result(exc)
    return _answer(data, prov, render_member)


def get_prefix(services: Services, prefix: str) -> CallToolResult:
    """Resolve a DOI prefix to the Crossref member that registered it, from the local store first.

    Resolve a DOI prefix (e.g. 10.1038, no suffix) to the Crossref member that registered it, from the
    local store first; memberId chains into crossref_get_member. A transferred title keeps its prefix, so
    a DOI's current member is the one its work record names. A prefix with no Crossref member returns
    prefix_not_found naming the registration agency (e.g. DataCite for 10.5281). Errors:
    prefix_not_found, invalid_parameter, rate_limited, upstream_unavailable, malformed_response,
    request_timeout.
    """
    try:
        data, prov = crossref_queries.get_prefix(services, prefix.strip())
    except Exception as exc:
        return error_result(exc)
    return _answer(data, prov, render_prefix)


def guide_text() -> str:
    """The crossref-guide skill (package data ``syncd/skills/crossref-guide/SKILL.md``)."""
    return (resources.files("syncd") / "skills" / "crossref-guide" / "SKILL.md").read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------------------
# the tools, each declared once (input models in syncd.crossref.args, cuts in syncd.crossref.tools_fit)
# --------------------------------------------------------------------------------------------------

# openWorldHint: a work, member or prefix not stored (or stale) is asked of Crossref (api.crossref.org)
_GET = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=True)
_SEARCH = ToolAnnotations(read_only_hint=True, idempotent_hint=False, open_world_hint=True)

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "crossref_get_work",
        "Get a Crossref work by DOI",
        GetWorkArgs,
        GetWorkResult,
        get_work,
        _GET,
        fit=fits.GET_WORK,
    ),
    ToolSpec(
        "crossref_search_works",
        "Search Crossref works",
        SearchWorksArgs,
        SearchWorksResult,
        search_works,
        _SEARCH,
        fit=fits.SEARCH_WORKS,
        pass_dict=True,
    ),
    ToolSpec(
        "crossref_get_references",
        "Get the reference list of a Crossref work",
        GetReferencesArgs,
        ReferencesResult,
        get_references,
        _GET,
        fit=fits.GET_REFERENCES,
    ),
    ToolSpec(
        "crossref_search_journals",
        "Find Crossref journals",
        SearchJournalsArgs,
        SearchJournalsResult,
        search_journals,
        _SEARCH,
        fit=fits.SEARCH_JOURNALS,
        pass_dict=True,
    ),
    ToolSpec(
        "crossref_search_funders",
        "Find funders in the Open Funder Registry",
        SearchFundersArgs,
        SearchFundersResult,
        search_funders,
        _SEARCH,
        fit=fits.SEARCH_FUNDERS,
        pass_dict=True,
    ),
    ToolSpec(
        "crossref_get_member",
        "Get a Crossref member (publisher)",
        GetMemberArgs,
        MemberResult,
        get_member,
        _GET,
        fit=fits.GET_MEMBER,
    ),
    ToolSpec(
        "crossref_get_prefix",
        "Get the Crossref member behind a DOI prefix",
        GetPrefixArgs,
        PrefixResult,
        get_prefix,
        _GET,
        fit=fits.GET_PREFIX,
    ),
)
"""The seven Crossref tools. Annotations follow the anchor: read-only everywhere; idempotent on the
get tools; open-world on the three searches."""


def _guide(_deps: object) -> str:
    return guide_text()


def _skill_file(_deps: object, path: str) -> str:
    if path.strip("/") != "crossref-guide/SKILL.md":
        raise NotFound(f"no skill file {path!r}; available: crossref-guide/SKILL.md")
    return guide_text()


RESOURCES: tuple[ResourceSpec, ...] = (
    ResourceSpec(
        GUIDE_URI,
        name="crossref-guide",
        title="Crossref guide (agent skill)",
        description="Judgment for the crossref_* tools: confirming a citation match, journal/funder works "
        "lists vs filtered search, filter syntax, prefix vs current member, deposit-dependent coverage, and "
        "how to read syncd's cache provenance.",
        mime_type="text/markdown",
        read=_guide,
    ),
    ResourceSpec(
        GUIDE_TEMPLATE,
        name="skill",
        title="Agent skills shipped with syncd",
        description="Skill files by path, e.g. skill://crossref-guide/SKILL.md.",
        mime_type="text/markdown",
        read=_skill_file,
    ),
)
"""The crossref-guide skill resource and the ``skill://{+path}`` template."""
