"""Zenodo MCP tools, local-first: ``zenodo_get_record``.

Contract: ``../shared/seeds/zenodo_get_record.txt`` and ``../shared/spec/anchors.md`` §1b (same
name, id forms, output fields, caps and ``reason`` codes), plus the ``cache`` provenance block.
Misses (unknown id, deleted record with its tombstone, restricted, DOI not on Zenodo) are answers
with ``found: false``, not errors.
"""

from __future__ import annotations

import inspect
import json
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from syncd.cache import Cache, document
from syncd.contracts.common import CacheInfo
from syncd.contracts.zenodo import GetRecordView
from syncd.errors import NotFound
from syncd.lookups import zenodo as lookups_zenodo
from syncd.normalize.zenodo import miss_guidance, record_view, tombstone_view
from syncd.normalize.zenodo_id import parse_record_ref
from syncd.tools.errors import error_result

__all__ = ["GetRecordResult", "get_record", "register", "render_record"]

ID_DESCRIPTION = (
    "The deposit to resolve: a record id (22705923), a Zenodo DOI (10.5281/zenodo.22705923, doi: prefix "
    "and any case accepted), a concept DOI or concept record id (resolves to the latest version), another "
    "DOI registered to a Zenodo record, or a zenodo.org/records or doi.org URL."
)
# Upstream reasons as zenodo_get_record declares them.
RENAME = {
    "upstream_unavailable": "record_unavailable",
    "request_timeout": "record_unavailable",
    "malformed_response": "record_unavailable",
}
FILE_CAP = 25


class GetRecordResult(GetRecordView):
    """``zenodo_get_record`` output: the contract's fields plus ``cache`` provenance."""

    cache: CacheInfo | None = Field(None, description="Where this answer came from and how fresh it is.")


def render_record(data: dict[str, Any]) -> str:
    """Markdown text for a record answer (the structured content stays the source of truth)."""
    lines: list[str] = []
    record = data.get("record")
    if record:
        lines.append(f"# {record.get('title') or '(untitled)'}")
        lines.append(f"Record {record['recid']}" + (f", DOI {record['doi']}" if record.get("doi") else ""))
        creators = record.get("creators") or []
        if creators:
            lines.append(
                f"Creators ({record.get('creator_count', len(creators))}): "
                + "; ".join(c.get("name", "?") for c in creators)
            )
        if record.get("description"):
            lines.append("")
            lines.append("Depositor-supplied text (untrusted):")
            lines.extend("> " + line for line in record["description"].splitlines())
    else:
        lines.append(f"Not found ({data.get('miss_kind')}): {data.get('guidance', '')}")
    if data.get("notice"):
        lines.append(f"Notice: {data['notice']}")
    cache = data.get("cache") or {}
    if cache:
        flag = f", upstream_error={cache['upstream_error']}" if cache.get("upstream_error") else ""
        lines.append(
            f"[cache: {cache['source']}, validated {cache['validated_at']}, stale={cache['stale']}{flag}]"
        )
    lines.append("")
    lines.append("```json")
    slim = {k: v for k, v in data.items() if k != "record"}
    if record:
        slim["record"] = {k: v for k, v in record.items() if k != "description"}
    lines.append(json.dumps(slim, ensure_ascii=False))
    lines.append("```")
    return "\n".join(lines)


def _miss(kind: str, input_kind: str, ident: str, tombstone_body: str | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"found": False, "input_kind": input_kind, "miss_kind": kind}
    tomb = None
    if kind == "deleted":
        try:
            parsed = json.loads(tombstone_body) if tombstone_body else None
        except ValueError:
            parsed = None
        tomb = tombstone_view(parsed if isinstance(parsed, dict) else None)
        data["tombstone"] = tomb.model_dump(mode="json", exclude_none=True)
    data["guidance"] = miss_guidance(kind, ident, tomb)
    return data


def get_record(
    cache: Cache,
    id: Annotated[str, Field(min_length=1, max_length=500, description=ID_DESCRIPTION)],
) -> Annotated[CallToolResult, GetRecordResult]:
    """Resolve one Zenodo deposit and return its full metadata, from the local store first.

    Accepts a record id, a Zenodo DOI, a concept DOI or concept record id (resolves to the latest
    version), another DOI deposited on Zenodo, or a zenodo.org / doi.org URL. Returns description,
    creators with ORCIDs and affiliations, license, access and embargo, funding, related
    identifiers, communities, version position, usage counts and the first 25 files; long fields
    are cut at display caps with their totals. A miss returns found: false with guidance (and the
    removal tombstone for a deleted record). ``cache`` says where the answer came from and how fresh
    it is. Errors: invalid_identifier, record_unavailable, rate_limited.
    """
    try:
        ref = parse_record_ref(id)
        try:
            lookup = lookups_zenodo.get_record(cache, ref)
        except NotFound as exc:
            if exc.reason != "not_on_zenodo":
                raise
            data = _miss("not_on_zenodo", ref.input_kind, ref.doi or id)
        else:
            entry = lookup.entry
            if entry.status == "ok":
                view = record_view(document(entry))
                record = view.model_dump(mode="json", exclude_none=True)
                data = {
                    "found": True,
                    "input_kind": ref.input_kind,
                    "resolved_from": lookup.resolved_from or "version",
                    "record": record,
                }
                files = record.get("files") or {}
                total = files.get("count")
                shown = files.get("shown", len(files.get("entries") or []))
                data["shown"], data["cap"] = shown, FILE_CAP
                data["truncated"] = bool(
                    (total is not None and total > shown) or record.get("description_truncated")
                )
                access = record.get("access") or {}
                if access.get("files") in ("restricted",) or access.get("embargo_active"):
                    until = access.get("embargo_until")
                    data["notice"] = (
                        f"Files are embargoed until {until}; metadata only."
                        if access.get("embargo_active") and until
                        else "Files are restricted; metadata only."
                    )
                elif total is not None and total > shown:
                    data["notice"] = (
                        f"Showing {shown} of {total} files; page the rest with zenodo_list_files."
                    )
            else:
                kind = {"gone": "deleted", "not_found": "not_found", "restricted": "restricted"}[entry.status]
                data = _miss(kind, ref.input_kind, entry.key, entry.body)
            data["cache"] = lookup.provenance.as_dict()
    except Exception as exc:
        return error_result(exc, RENAME)
    return CallToolResult(
        content=[TextContent(type="text", text=render_record(data))], structured_content=data
    )


def register(server: MCPServer, cache: Cache, annotations: ToolAnnotations) -> None:
    """Register the Zenodo tools on ``server``, answering through ``cache``."""

    @server.tool(
        name="zenodo_get_record",
        title="Get a Zenodo record",
        description=inspect.cleandoc(get_record.__doc__ or ""),
        annotations=annotations,
    )
    def zenodo_get_record(
        id: Annotated[str, Field(min_length=1, max_length=500, description=ID_DESCRIPTION)],
    ) -> Annotated[CallToolResult, GetRecordResult]:
        return get_record(cache, id)
