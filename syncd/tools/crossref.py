"""Crossref MCP tools, local-first: all seven tools of the Crossref MCP server plus the guide resource.

Tools: ``crossref_get_work``, ``crossref_search_works``, ``crossref_get_references``,
``crossref_search_journals``, ``crossref_search_funders``, ``crossref_get_member``, ``crossref_get_prefix``;
resource ``skill://crossref-guide/SKILL.md`` (and the ``skill://{+path}`` template).

Contract: ``../shared/spec/anchors.md`` §1a (same name, parameters, bounds, output fields and
``reason`` codes as the Crossref MCP server), plus the ``cache`` provenance block.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from importlib import resources
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, WithJsonSchema, model_validator

from syncd.cache import Lookup
from syncd.contracts.common import CacheInfo, WithCache
from syncd.contracts.crossref import (
    SELECT_FIELDS,
    SORT_FIELDS,
    MemberView,
    PrefixView,
    ReferencesView,
    SearchFundersView,
    SearchJournalsView,
    SearchWorksView,
    WorkView,
)
from syncd.errors import InvalidInput
from syncd.lookups import crossref as lookups_crossref
from syncd.lookups import crossref_queries
from syncd.normalize.crossref import work_view
from syncd.normalize.doi import parse_doi
from syncd.policy import Provenance
from syncd.services import Services
from syncd.store.content import document
from syncd.tools.errors import error_result

__all__ = [
    "GUIDE_URI",
    "GetWorkResult",
    "get_member",
    "get_prefix",
    "get_references",
    "get_work",
    "register",
    "render_work",
    "search_funders",
    "search_journals",
    "search_works",
]

DOI_DESCRIPTION = (
    "The DOI to resolve: bare (10.1038/nphys1170), with a doi: prefix, or as a https://doi.org/ or "
    "dx.doi.org URL; any case. SICI DOIs with <>;()[]# are kept whole."
)


class GetWorkResult(WorkView, WithCache):
    """``crossref_get_work`` output: the contract's work fields plus ``cache`` provenance."""


class SearchWorksResult(SearchWorksView, WithCache):
    """``crossref_search_works`` output plus ``cache`` provenance."""


class ReferencesResult(ReferencesView, WithCache):
    """``crossref_get_references`` output plus ``cache`` provenance."""


class SearchJournalsResult(SearchJournalsView, WithCache):
    """``crossref_search_journals`` output plus ``cache`` provenance."""


class SearchFundersResult(SearchFundersView, WithCache):
    """``crossref_search_funders`` output plus ``cache`` provenance."""


class MemberResult(MemberView, WithCache):
    """``crossref_get_member`` output plus ``cache`` provenance."""


class PrefixResult(PrefixView, WithCache):
    """``crossref_get_prefix`` output plus ``cache`` provenance."""


def render_work(data: dict[str, Any]) -> str:
    """Markdown text for a work answer (the structured content stays the source of truth)."""
    lines = [f"# {data.get('title') or '(untitled)'}", f"DOI: {data['doi']}"]
    for label, key in (("Type", "type"), ("Container", "containerTitle"), ("Publisher", "publisher")):
        if data.get(key):
            lines.append(f"{label}: {data[key]}")
    if data.get("published"):
        p = data["published"]
        parts = [f"{p['year']:04d}"] + [f"{p[k]:02d}" for k in ("month", "day") if p.get(k)]
        lines.append("Published: " + "-".join(parts))
    if data.get("notice"):
        lines.append(f"Notice: {data['notice']}")
    authors = data.get("authors") or []
    if authors:
        names = [
            " ".join(filter(None, (a.get("given"), a.get("family")))) or a.get("name") or "?" for a in authors
        ]
        lines.append(f"Authors ({data.get('authorCount', len(authors))}): " + "; ".join(names))
    if data.get("abstract"):
        lines.append("")
        lines.append(data["abstract"])
    cache = data.get("cache") or {}
    if cache:
        flag = f", upstream_error={cache['upstream_error']}" if cache.get("upstream_error") else ""
        lines.append("")
        lines.append(
            f"[cache: {cache['source']}, validated {cache['validated_at']}, stale={cache['stale']}{flag}]"
        )
    lines.append("")
    lines.append("```json")
    lines.append(json.dumps({k: v for k, v in data.items() if k != "abstract"}, ensure_ascii=False))
    lines.append("```")
    return "\n".join(lines)


def _work_data(lookup: Lookup, offset: int, limit: int) -> dict[str, Any]:
    view = work_view(document(lookup.entry), offset=offset, limit=limit)
    data = view.model_dump(mode="json", exclude_none=True)
    data["cache"] = lookup.provenance.as_dict()
    return data


def get_work(
    cache: Services,
    doi: Annotated[str, Field(min_length=1, max_length=2000, description=DOI_DESCRIPTION)],
    offset: Annotated[int, Field(ge=0, description="Authors to skip (pages the author list only).")] = 0,
    limit: Annotated[int, Field(ge=1, le=500, description="Authors per page.")] = 25,
) -> Annotated[CallToolResult, GetWorkResult]:
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
        lookup = lookups_crossref.get_work(cache, parsed)
        data = _work_data(lookup, offset, limit)
    except Exception as exc:
        return error_result(exc)
    return CallToolResult(content=[TextContent(type="text", text=render_work(data))], structured_content=data)


# --------------------------------------------------------------------------------------------------
# shared helpers
# --------------------------------------------------------------------------------------------------

GUIDE_URI = "skill://crossref-guide/SKILL.md"
GUIDE_TEMPLATE = "skill://{+path}"

_WITH_CACHE = {"cache": (CacheInfo | None, Field(None, description="Where this answer came from."))}


def _bounded(description: str, minimum: int, maximum: int | None = None) -> Any:
    """An int parameter with schema-declared bounds, checked by the tool.

    An int parameter whose bounds are declared in the schema and checked by the tool (so a bad value
    is an ``invalid_parameter`` tool error with a recovery hint, not a bare validation failure).
    """
    schema: dict[str, Any] = {"type": "integer", "minimum": minimum, "description": description}
    if maximum is not None:
        schema["maximum"] = maximum
    return Annotated[int, Field(description=description), WithJsonSchema(schema)]


def _check(name: str, value: int, minimum: int, maximum: int | None = None) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or value < minimum
        or (maximum is not None and value > maximum)
    ):
        bound = f"from {minimum} to {maximum}" if maximum is not None else f">= {minimum}"
        raise InvalidInput(f"{name} must be an integer {bound}, got {value!r}", reason="invalid_parameter")
    return value


def _answer(data: dict[str, Any], prov: Provenance, title: str, lines: list[str]) -> CallToolResult:
    """Success result: ``data`` plus the ``cache`` block, with a short Markdown text and the JSON."""
    data["cache"] = prov.as_dict()
    text = [f"# {title}", *lines]
    if data.get("notice"):
        text.append(f"Notice: {data['notice']}")
    c = data["cache"]
    flag = f", upstream_error={c['upstream_error']}" if c.get("upstream_error") else ""
    text += ["", f"[cache: {c['source']}, validated {c['validated_at']}, stale={c['stale']}{flag}]"]
    text += ["", "```json", json.dumps(data, ensure_ascii=False), "```"]
    return CallToolResult(content=[TextContent(type="text", text="\n".join(text))], structured_content=data)


def _work_line(w: dict[str, Any]) -> str:
    year = (w.get("published") or {}).get("year")
    bits = [w.get("title") or "(untitled)", f"doi:{w['doi']}"]
    if year:
        bits.append(str(year))
    if w.get("containerTitle"):
        bits.append(w["containerTitle"])
    if w.get("updatedBy"):
        bits.append("UPDATED: " + ", ".join(u["type"] for u in w["updatedBy"]))
    return "- " + " | ".join(bits)


# --------------------------------------------------------------------------------------------------
# tools
# --------------------------------------------------------------------------------------------------

TERM = Annotated[str | None, Field(description="Blank is read as omitted.")]


def search_works(cache: Services, args: dict[str, Any]) -> CallToolResult:
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
        data, prov = crossref_queries.search_works(cache, args)
    except Exception as exc:
        return error_result(exc)
    lines = [f"{data['returned']} of {data['totalResults']} results"]
    lines += [_work_line(w) for w in data["works"]]
    if data.get("nextCursor"):
        lines.append(f"nextCursor: {data['nextCursor']}")
    return _answer(data, prov, "Crossref works", lines)


def get_references(cache: Services, doi: str, offset: int, limit: int) -> CallToolResult:
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
        _check("offset", offset, 0)
        _check("limit", limit, 1, 500)
        data, prov = crossref_queries.get_references(cache, parse_doi(doi), offset, limit)
    except Exception as exc:
        return error_result(exc)
    lines = [
        f"DOI: {data['doi']}",
        f"References {data['offset'] + 1}-{data['offset'] + len(data['references'])} "
        f"of {data['referenceCount']}",
    ]
    for r in data["references"]:
        lines.append(
            "- "
            + (r.get("unstructured") or r.get("articleTitle") or r.get("volumeTitle") or "")
            + (f" doi:{r['doi']}" if r.get("doi") else "")
        )
    return _answer(data, prov, "Crossref references", lines)


def search_journals(cache: Services, args: dict[str, Any]) -> CallToolResult:
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
        _check("rows", args["rows"], 1, 100)
        _check("offset", args["offset"], 0)
        _check("works_offset", args["works_offset"], 0)
        data, prov = crossref_queries.search_journals(cache, args)
    except Exception as exc:
        return error_result(exc)
    lines = [f"{data['journalCount']} of {data['journalsTotal']} journals"]
    for j in data["journals"]:
        lines.append(
            f"- {j.get('title')} | ISSN {', '.join(j.get('issn') or [])} | {j.get('publisher') or ''}"
        )
    for w in data.get("recentWorks") or []:
        lines.append(_work_line(w))
    return _answer(data, prov, "Crossref journals", lines)


def search_funders(cache: Services, args: dict[str, Any]) -> CallToolResult:
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
        _check("rows", args["rows"], 1, 100)
        _check("offset", args["offset"], 0)
        _check("works_offset", args["works_offset"], 0)
        data, prov = crossref_queries.search_funders(cache, args)
    except Exception as exc:
        return error_result(exc)
    lines = [f"{data['funderCount']} of {data['fundersTotal']} funders"]
    for f in data["funders"]:
        lines.append(f"- {f.get('name')} | id {f.get('id')} | {f.get('country') or ''}")
    for w in data.get("fundedWorks") or []:
        lines.append(_work_line(w))
    return _answer(data, prov, "Crossref funders", lines)


def _pct(value: float | None) -> str:
    if value is None:
        return "-"
    pct = value * 100
    if pct == 0 or pct >= 10:
        return f"{pct:.0f}%"
    if pct >= 1:
        return f"{pct:.1f}%"
    return f"{pct:.2g}%"


def get_member(cache: Services, member_id: int) -> CallToolResult:
    """Resolve a Crossref member id to its publisher record, from the local store first.

    Resolve a Crossref member id to its publisher record, from the local store first: primary and
    imprint names, owned DOI prefixes, DOI counts (total/current/backfile), works by type, and metadata
    deposit coverage per category (current/backfile fractions 0-1). The member that holds a DOI now is the
    member of its work record; crossref_get_prefix names the prefix's registrant. Errors: member_not_found
    (resolve a prefix with crossref_get_prefix), invalid_parameter, rate_limited, upstream_unavailable,
    malformed_response, request_timeout.
    """
    try:
        _check("member_id", member_id, 1)
        data, prov = crossref_queries.get_member(cache, member_id)
    except Exception as exc:
        return error_result(exc)
    lines = [
        f"Member {data['id']}: {data.get('primaryName')}",
        f"Prefixes: {', '.join(data.get('prefixes') or [])}",
    ]
    for cov in data.get("coverage") or []:
        lines.append(
            f"- {cov['category']}: current {_pct(cov.get('current'))}, backfile {_pct(cov.get('backfile'))}"
        )
    return _answer(data, prov, "Crossref member", lines)


def get_prefix(cache: Services, prefix: str) -> CallToolResult:
    """Resolve a DOI prefix to the Crossref member that registered it, from the local store first.

    Resolve a DOI prefix (e.g. 10.1038, no suffix) to the Crossref member that registered it, from the
    local store first; memberId chains into crossref_get_member. A transferred title keeps its prefix, so
    a DOI's current member is the one its work record names. A prefix with no Crossref member returns
    prefix_not_found naming the registration agency (e.g. DataCite for 10.5281). Errors:
    prefix_not_found, invalid_parameter, rate_limited, upstream_unavailable, malformed_response,
    request_timeout.
    """
    try:
        p = (prefix or "").strip()
        if not p or not __import__("re").fullmatch(r"10\.\d+", p):
            raise InvalidInput(
                f"{prefix!r} is not a DOI prefix (10.NNNN, no suffix)",
                reason="invalid_parameter",
                hint="Pass only the prefix, e.g. 10.1038 for 10.1038/nphys1170.",
            )
        data, prov = crossref_queries.get_prefix(cache, p)
    except Exception as exc:
        return error_result(exc)
    return _answer(
        data,
        prov,
        f"Prefix {data['prefix']}",
        [f"Owner: {data.get('ownerName')} (member {data.get('memberId')})"],
    )


def guide_text() -> str:
    """The crossref-guide skill (package data ``syncd/skills/crossref-guide/SKILL.md``)."""
    return (resources.files("syncd") / "skills" / "crossref-guide" / "SKILL.md").read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------------------
# registration
# --------------------------------------------------------------------------------------------------

_ALIASES: dict[str, dict[str, str]] = {
    "crossref_search_works": {
        "query.bibliographic": "queryBibliographic",
        "query.title": "queryTitle",
        "query.author": "queryAuthor",
        "query.container-title": "queryContainerTitle",
        "select": "fields",
        "facet": "facets",
    },
}


def _accept_aliases(server: MCPServer, tool: str, aliases: dict[str, str]) -> None:
    """Let ``tool`` accept Crossref's own parameter names as aliases.

    Let ``tool`` accept Crossref's own parameter names: each alias is renamed to its parameter
    before validation (the parameter wins when both are given).
    """
    registered = server._tool_manager.get_tool(tool)
    if registered is None:
        return
    base = registered.fn_metadata.arg_model

    class WithAliases(base):  # type: ignore[misc, valid-type]
        @model_validator(mode="before")
        @classmethod
        def _rename(cls, value: Any) -> Any:
            if isinstance(value, dict):
                value = dict(value)
                for alias, name in aliases.items():
                    if alias in value:
                        aliased = value.pop(alias)
                        if isinstance(aliased, str) and name == "fields":
                            aliased = [f.strip() for f in aliased.split(",") if f.strip()]
                        value.setdefault(name, aliased)
            return value

    WithAliases.__name__ = base.__name__
    registered.fn_metadata.arg_model = WithAliases


_SORT_SCHEMA = {"anyOf": [{"const": "", "type": "string"}, {"enum": list(SORT_FIELDS), "type": "string"}]}
_ORDER_SCHEMA = {"anyOf": [{"const": "", "type": "string"}, {"enum": ["asc", "desc"], "type": "string"}]}
_INT0 = _bounded("Works per page (0-100, default 20; 0 = counts and facets only).", 0, 100)
_INT1 = _bounded("Authors kept per work (1-500, default 25).", 1, 500)
_INT2 = _bounded("Zero-based offset (offset + rows <= 10,000); not with cursor.", 0)
_INT3 = _bounded("References to skip.", 0)
_INT4 = _bounded("References per page (1-500, default 100).", 1, 500)
_INT5 = _bounded("Journals per page, or works per page with include_works (1-100).", 1, 100)
_INT6 = _bounded("Title-search offset (offset + rows <= 100,000).", 0)
_INT7 = _bounded("Works-list offset (works_offset + rows <= 10,000).", 0)
_INT8 = _bounded("Funders per page, or works per page with include_works (1-100).", 1, 100)
_INT9 = _bounded("Name-search offset (offset + rows <= 100,000).", 0)
_INT11 = _bounded("Crossref member id, e.g. 98 (Hindawi), 297 (Springer).", 1)


def register(server: MCPServer, cache: Services, annotations: ToolAnnotations) -> None:
    """Register the seven Crossref tools and the guide resource on ``server``, answering through ``cache``.

    Annotations follow the anchor: read-only everywhere; idempotent on the get tools; open-world on the
    three searches.
    """
    get_ann = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    search_ann = ToolAnnotations(read_only_hint=True, idempotent_hint=False, open_world_hint=True)
    del annotations  # the server-wide default is replaced by the anchor's per-tool hints

    def doc(fn: Callable[..., Any]) -> str:
        return inspect.cleandoc(fn.__doc__ or "")

    @server.tool(
        name="crossref_get_work",
        title="Get a Crossref work by DOI",
        description=doc(get_work),
        annotations=get_ann,
    )
    def crossref_get_work(
        doi: Annotated[str, Field(min_length=1, max_length=2000, description=DOI_DESCRIPTION)],
        offset: Annotated[int, Field(ge=0, description="Authors to skip (pages the author list only).")] = 0,
        limit: Annotated[int, Field(ge=1, le=500, description="Authors per page (1-500).")] = 25,
    ) -> Annotated[CallToolResult, GetWorkResult]:
        return get_work(cache, doi, offset, limit)

    @server.tool(
        name="crossref_search_works",
        title="Search Crossref works",
        description=doc(search_works),
        annotations=search_ann,
    )
    def crossref_search_works(
        query: Annotated[
            str | None, Field(description='Free-text query, e.g. "CRISPR gene editing".')
        ] = None,
        queryBibliographic: Annotated[
            str | None, Field(description="Whole-citation match to resolve a reference to its DOI.")
        ] = None,
        queryTitle: Annotated[str | None, Field(description="Match against work titles only.")] = None,
        queryAuthor: Annotated[str | None, Field(description="Match against author names only.")] = None,
        queryContainerTitle: Annotated[
            str | None, Field(description="Match against the journal/book title only.")
        ] = None,
        filter: Annotated[
            dict[str, str] | None,
            Field(
                description='Crossref filters, hyphenated keys, string values: {"type": "journal-article", '
                '"from-pub-date": "2023-01-01", "has-abstract": "true"}.'
            ),
        ] = None,
        fields: Annotated[
            list[str] | None,
            Field(description="Crossref select names to return (DOI always included)."),
            WithJsonSchema(
                {
                    "type": "array",
                    "items": {"enum": list(SELECT_FIELDS), "type": "string"},
                    "description": "Crossref select names to return (DOI always included).",
                }
            ),
        ] = None,
        rows: _INT0 = 20,
        authorLimit: _INT1 = 25,
        offset: _INT2 = 0,
        cursor: Annotated[
            str | None, Field(description='"*" starts a cursor walk; then pass nextCursor back.')
        ] = None,
        sort: Annotated[str | None, Field(description="Sort field."), WithJsonSchema(_SORT_SCHEMA)] = None,
        order: Annotated[str | None, Field(description="asc or desc."), WithJsonSchema(_ORDER_SCHEMA)] = None,
        facets: Annotated[
            dict[str, str | int] | None,
            Field(description='Facet name -> "*" or a number of values, e.g. {"type-name": "*"}.'),
        ] = None,
    ) -> Annotated[CallToolResult, SearchWorksResult]:
        return search_works(cache, dict(locals()))

    _accept_aliases(server, "crossref_search_works", _ALIASES["crossref_search_works"])

    @server.tool(
        name="crossref_get_references",
        title="Get the reference list of a Crossref work",
        description=doc(get_references),
        annotations=get_ann,
    )
    def crossref_get_references(
        doi: Annotated[str, Field(min_length=1, max_length=2000, description=DOI_DESCRIPTION)],
        offset: _INT3 = 0,
        limit: _INT4 = 100,
    ) -> Annotated[CallToolResult, ReferencesResult]:
        return get_references(cache, doi, offset, limit)

    @server.tool(
        name="crossref_search_journals",
        title="Find Crossref journals",
        description=doc(search_journals),
        annotations=search_ann,
    )
    def crossref_search_journals(
        query: Annotated[str | None, Field(description="Journal title search.")] = None,
        issn: Annotated[
            str | None,
            Field(description="Exact ISSN lookup (NNNN-NNNX); supersedes query; offset is ignored."),
        ] = None,
        include_works: Annotated[
            bool, Field(description="Also return a page of the journal's works.")
        ] = False,
        rows: _INT5 = 10,
        offset: _INT6 = 0,
        works_offset: _INT7 = 0,
        works_cursor: Annotated[
            str | None, Field(description='"*" starts an uncapped works walk; pass nextWorksCursor back.')
        ] = None,
    ) -> Annotated[CallToolResult, SearchJournalsResult]:
        return search_journals(cache, dict(locals()))

    @server.tool(
        name="crossref_search_funders",
        title="Find funders in the Open Funder Registry",
        description=doc(search_funders),
        annotations=search_ann,
    )
    def crossref_search_funders(
        query: Annotated[str | None, Field(description="Funder name search.")] = None,
        funder_doi: Annotated[
            str | None,
            Field(
                description="Registry id (100000001) or funder DOI (10.13039/100000001, doi:, doi.org URL)."
            ),
        ] = None,
        include_works: Annotated[bool, Field(description="Also return a page of funded works.")] = False,
        rows: _INT8 = 10,
        offset: _INT9 = 0,
        works_offset: _INT7 = 0,
        works_cursor: Annotated[
            str | None, Field(description='"*" starts an uncapped works walk; pass nextWorksCursor back.')
        ] = None,
    ) -> Annotated[CallToolResult, SearchFundersResult]:
        return search_funders(cache, dict(locals()))

    @server.tool(
        name="crossref_get_member",
        title="Get a Crossref member (publisher)",
        description=doc(get_member),
        annotations=get_ann,
    )
    def crossref_get_member(
        member_id: _INT11,
    ) -> Annotated[CallToolResult, MemberResult]:
        return get_member(cache, member_id)

    @server.tool(
        name="crossref_get_prefix",
        title="Get the Crossref member behind a DOI prefix",
        description=doc(get_prefix),
        annotations=get_ann,
    )
    def crossref_get_prefix(
        prefix: Annotated[str, Field(description="DOI prefix such as 10.1038 (no /suffix).")],
    ) -> Annotated[CallToolResult, PrefixResult]:
        return get_prefix(cache, prefix)

    @server.resource(
        GUIDE_URI,
        name="crossref-guide",
        title="Crossref guide (agent skill)",
        description="Judgment for the crossref_* tools: confirming a citation match, journal/funder works "
        "lists vs filtered search, filter syntax, prefix vs current member, deposit-dependent coverage, and "
        "how to read syncd's cache provenance.",
        mime_type="text/markdown",
    )
    def crossref_guide() -> str:
        return guide_text()

    @server.resource(
        GUIDE_TEMPLATE,
        name="skill",
        title="Agent skills shipped with syncd",
        description="Skill files by path, e.g. skill://crossref-guide/SKILL.md.",
        mime_type="text/markdown",
    )
    def skill_file(path: str) -> str:
        if path.strip("/") != "crossref-guide/SKILL.md":
            raise ValueError(f"no skill file {path!r}; available: crossref-guide/SKILL.md")
        return guide_text()
