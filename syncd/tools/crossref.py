"""Crossref MCP tools, local-first: ``crossref_get_work``.

Contract: ``../shared/spec/anchors.md`` §1a (same name, parameters, bounds, output fields and
``reason`` codes as the Crossref MCP server), plus the ``cache`` provenance block.
"""

from __future__ import annotations

import inspect
import json
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from syncd.cache import Cache, Lookup, document
from syncd.contracts.common import CacheInfo
from syncd.contracts.crossref import WorkView
from syncd.lookups import crossref as lookups_crossref
from syncd.normalize.crossref import work_view
from syncd.normalize.doi import parse_doi
from syncd.tools.errors import error_result

__all__ = ["GetWorkResult", "get_work", "register", "render_work"]

DOI_DESCRIPTION = (
    "The DOI to resolve: bare (10.1038/nphys1170), with a doi: prefix, or as a https://doi.org/ or "
    "dx.doi.org URL; any case. SICI DOIs with <>;()[]# are kept whole."
)


class GetWorkResult(WorkView):
    """``crossref_get_work`` output: the contract's work fields plus ``cache`` provenance."""

    cache: CacheInfo | None = Field(None, description="Where this answer came from and how fresh it is.")


def render_work(data: dict[str, Any]) -> str:
    """Markdown text for a work answer (the structured content stays the source of truth)."""
    lines = [f"# {data.get('title') or '(untitled)'}", f"DOI: {data['doi']}"]
    for label, key in (("Type", "type"), ("Container", "containerTitle"), ("Publisher", "publisher")):
        if data.get(key):
            lines.append(f"{label}: {data[key]}")
    if data.get("published"):
        p = data["published"]
        lines.append("Published: " + "-".join(str(p[k]) for k in ("year", "month", "day") if p.get(k)))
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
    cache: Cache,
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


def register(server: MCPServer, cache: Cache, annotations: ToolAnnotations) -> None:
    """Register the Crossref tools on ``server``, answering through ``cache``."""

    @server.tool(
        name="crossref_get_work",
        title="Get a Crossref work by DOI",
        description=inspect.cleandoc(get_work.__doc__ or ""),
        annotations=annotations,
    )
    def crossref_get_work(
        doi: Annotated[str, Field(min_length=1, max_length=2000, description=DOI_DESCRIPTION)],
        offset: Annotated[int, Field(ge=0, description="Authors to skip (pages the author list only).")] = 0,
        limit: Annotated[int, Field(ge=1, le=500, description="Authors per page (1-500).")] = 25,
    ) -> Annotated[CallToolResult, GetWorkResult]:
        return get_work(cache, doi, offset, limit)
