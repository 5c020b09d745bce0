"""Zenodo record tools: ``zenodo_get_record`` and ``zenodo_list_versions``, local-first.

Each parses its arguments, calls one answer of :mod:`syncd.zenodo.queries` and renders it. Both
answer misses with ``found: false`` and guidance. Contracts: ``../shared/seeds/zenodo_get_record.txt``
and ``../shared/spec/anchors.md`` §1b.
"""

from __future__ import annotations

from mcp.types import CallToolResult, TextContent

from syncd.road.services import Services
from syncd.tools.errors import error_result
from syncd.zenodo import queries
from syncd.zenodo.tools_render import RENAME, render_record, tool_result


def get_record(
    services: Services,
    id: str,
    cursor: str | None = None,
    citation_style: str | None = None,
) -> CallToolResult:
    """Resolve one Zenodo deposit and return its full metadata, from the local store first.

    Accepts a record id, a Zenodo DOI, a concept DOI or concept record id (resolves to the latest
    version), another DOI deposited on Zenodo, or a zenodo.org / doi.org URL. Returns description,
    creators with ORCIDs and affiliations, license, access and embargo, funding, related
    identifiers, communities, version position, usage counts and the first 25 files; long fields
    are cut at display caps with their totals. Every cut except the file list (paged with
    zenodo_list_files) is listed in continuations with a cursor and the record id it is bound to;
    passing both back returns the next window of that field (8,000 characters of text, or the next
    page of entries) in place of the record. Optionally includes a formatted citation (bibtex,
    csl-json, apa, chicago-author-date, harvard-cite-them-right, ieee, modern-language-association,
    nature), rendered locally. A miss returns found: false with guidance (and the removal tombstone
    for a deleted record). ``cache`` says where the answer came from and how fresh it is. Errors:
    invalid_identifier, invalid_cursor, invalid_parameter, record_unavailable, rate_limited.
    """
    try:
        data = queries.record_answer(services, id, cursor, citation_style)
    except Exception as exc:
        return error_result(exc, RENAME)
    return CallToolResult(
        content=[TextContent(type="text", text=render_record(data))], structured_content=data
    )


def list_versions(services: Services, id: str, page: int = 1, size: int = 25) -> CallToolResult:
    """List every version of a Zenodo record's series, newest first, from the local store first.

    ``id`` takes any form zenodo_get_record takes (a concept id lists its series). Returns the
    concept id and DOI, total versions, the latest version's id and one page (size 1-25) of versions
    with their DOIs, labels, dates, file counts and this version's unique views/downloads. Version
    pages are cached (``ttl.search``) and their records stored; the concept -> latest mapping is
    refreshed from them. A miss returns found: false with guidance (tombstone for a deleted
    record). Errors: invalid_identifier, invalid_parameter, result_window_exceeded, record_unavailable,
    rate_limited.
    """
    try:
        data, title = queries.versions_answer(services, id, page, size)
    except Exception as exc:
        return error_result(exc, RENAME)
    return tool_result(data, title)
