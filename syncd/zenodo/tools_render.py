"""Shared result helpers of the Zenodo tools: upstream reason renames, the text of an answer, page fields.

``render_record`` renders ``zenodo_get_record`` answers; ``tool_result`` wraps every other Zenodo tool's
structured content in a ``CallToolResult`` with a short markdown text (untrusted file text fenced).
"""

from __future__ import annotations

import re
from typing import Any

from mcp.types import CallToolResult, TextContent

# Upstream reasons as zenodo_get_record declares them.
RENAME = {
    "upstream_unavailable": "record_unavailable",
    "request_timeout": "record_unavailable",
    "malformed_response": "record_unavailable",
}
VOCAB_RENAME = {"request_timeout": "upstream_unavailable", "malformed_response": "upstream_unavailable"}
"""zenodo_lookup_vocabulary declares one reason for an unusable Zenodo (it fetches no record)."""


def render_record(data: dict[str, Any]) -> str:
    """Markdown text for a record answer (the structured content stays the source of truth)."""
    lines: list[str] = []
    record = data.get("record")
    if record:
        title = (record.get("title") or "(untitled)").replace("<", "&lt;").replace(">", "&gt;")
        lines.append(f"# {title}")
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
    elif data.get("window"):
        win = data["window"]
        label = win["field"] + (f"[{win['index']}]" if win.get("index") is not None else "")
        lines.append(
            f"# {label}: {win['unit']} {win['offset']}-{win['offset'] + win['shown']} of {win['total']}"
        )
        if win.get("text"):
            lines.append("Depositor-supplied text (untrusted):")
            lines.extend("> " + line for line in win["text"].splitlines())
    else:
        lines.append(f"Not found ({data.get('miss_kind')}): {data.get('guidance', '')}")
        known = data.get("last_known")
        if known:
            title = (known["record"].get("title") or "(untitled)").replace("<", "&lt;").replace(">", "&gt;")
            lines.append(f"Last known metadata (stored {known['stored_at']}, not current): {title}")
    if data.get("citation"):
        lines.append(f"Citation ({data.get('citation_style')}):")
        lines.append(data["citation"])
    if data.get("notice"):
        lines.append(f"Notice: {data['notice']}")
    cache = data.get("cache") or {}
    if cache:
        flag = f", upstream_error={cache['upstream_error']}" if cache.get("upstream_error") else ""
        lines.append(
            f"[cache: {cache['source']}, validated {cache['validated_at']}, stale={cache['stale']}{flag}]"
        )
    if record:
        files = record.get("files") or {}
        entries = files.get("entries") or []
        if entries:
            lines.append(f"Files ({len(entries)} of {files.get('count', len(entries))}):")
            lines += [f"- {f['key']} ({f.get('size', '?')} bytes)" for f in entries]
    return "\n".join(lines)


FILE_RENAME = {**RENAME, "not_found": "record_not_found"}
"""The file tools: a missing record is an error, a failed ZIP listing is archive_unavailable."""


def tool_result(data: dict[str, Any], title: str) -> CallToolResult:
    """A successful tool result: the compact text of :func:`render_page` plus the structured content."""
    return CallToolResult(
        content=[TextContent(type="text", text=render_page(data, f"# {title}"))], structured_content=data
    )


def _item_lines(data: dict[str, Any]) -> list[str]:
    """One line per listed item of a page answer (hits, versions, entries, members)."""
    lines = []
    for h in data.get("hits") or []:
        bits = [h.get("title") or "(untitled)", f"record {h.get('recid')}"]
        bits += [x for x in (h.get("doi"), h.get("publication_date")) if x]
        lines.append("- " + " | ".join(str(b) for b in bits))
    for v in data.get("versions") or []:
        bits = [f"record {v.get('recid')}", v.get("version"), v.get("publication_date"), v.get("doi")]
        latest = " (latest)" if v.get("is_latest") else ""
        lines.append("- " + " | ".join(str(b) for b in bits if b) + latest)
    for e in data.get("entries") or []:
        if "filter_param" in e:
            lines.append(f"- {e.get('label')} | {e['filter_param']}={e.get('filter_value')}")
        else:
            lines.append(f"- {e.get('key')} ({e.get('size', '?')} bytes)")
    for m in data.get("members") or []:
        lines.append(f"- {m.get('path')} ({m.get('size', '?')} bytes)")
    return lines


def render_page(data: dict[str, Any], heading: str) -> str:
    """Compact text of a Zenodo answer other than a record (never the structured JSON again).

    Heading, miss guidance, one line per listed item, notice, cache line, and a read file's
    excerpt (fenced).
    """
    lines = [heading]
    if data.get("found") is False:
        lines.append(f"Not found ({data.get('miss_kind')}): {data.get('guidance', '')}")
    lines += _item_lines(data)
    if data.get("notice"):
        lines.append(f"Notice: {data['notice']}")
    cache = data.get("cache") or {}
    if cache:
        flag = f", upstream_error={cache['upstream_error']}" if cache.get("upstream_error") else ""
        lines.append(
            f"[cache: {cache['source']}, validated {cache['validated_at']}, stale={cache['stale']}{flag}]"
        )
    if data.get("text"):
        fence = "`" * max(3, max((len(m) for m in re.findall(r"`+", data["text"])), default=0) + 1)
        lines += [
            f"Untrusted file content from Zenodo record {data.get('recid')}:",
            fence,
            data["text"],
            fence,
        ]
    return "\n".join(lines)
