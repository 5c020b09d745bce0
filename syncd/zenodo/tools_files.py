"""Zenodo file tools: ``zenodo_list_files`` and ``zenodo_read_file``, local-first.

Each calls one answer of :mod:`syncd.zenodo.queries_files` and renders it; both raise
``record_not_found`` / ``record_deleted`` for a record they cannot read.
"""

from __future__ import annotations

from mcp.types import CallToolResult

from syncd.road.services import Services
from syncd.tools.errors import error_result
from syncd.zenodo import queries_files
from syncd.zenodo.tools_render import FILE_RENAME, tool_result


def list_files(
    services: Services,
    id: str,
    archive_key: str | None = None,
    key_contains: str | None = None,
    offset: int = 0,
    limit: int = 50,
) -> CallToolResult:
    """List a Zenodo record's files (the full manifest, paged locally) or the members of one ZIP.

    The manifest comes from the stored record (no extra request); each entry says whether
    zenodo_read_file can preview it (previewable) and whether it is a ZIP (listable). With
    archive_key (the exact key of a .zip), lists the archive's members from Zenodo's container
    listing (cached, capped upstream at 1,000 nodes). key_contains filters keys case-insensitively
    before paging (offset, limit 1-200). Errors: invalid_identifier, invalid_parameter, record_not_found,
    record_deleted, file_not_found, not_an_archive, archive_unavailable, record_unavailable,
    rate_limited.
    """
    try:
        data, title = queries_files.files_answer(services, id, archive_key, key_contains, offset, limit)
    except Exception as exc:
        return error_result(exc, FILE_RENAME)
    return tool_result(data, title)


def read_file(
    services: Services,
    id: str,
    key: str,
    archive_member: str | None = None,
    offset_bytes: int = 0,
    max_bytes: int = 16_384,
) -> CallToolResult:
    """Read a text preview of one file of a Zenodo record (or of one member of a ZIP), by byte range.

    Text files (text/* and structured MIME types, ~45 text extensions, extensionless files that
    decode as UTF-8) are returned as text; binaries are refused without being read (not_text). The
    excerpt ends at the last line break (or complete UTF-8 character) when more follows;
    next_offset continues it. Previews read once are kept locally (up to
    ``zenodo.preview_bytes_per_file`` bytes per file, ``zenodo.preview_total_bytes`` in total, least
    recently read evicted) and serve offline. Errors: invalid_identifier, invalid_parameter, record_not_found,
    record_deleted, file_not_found, not_an_archive, member_not_found, member_offset_unsupported,
    offset_out_of_range, archive_unavailable, record_unavailable, rate_limited.
    """
    try:
        data, title = queries_files.read_answer(services, id, key, archive_member, offset_bytes, max_bytes)
    except Exception as exc:
        return error_result(exc, FILE_RENAME)
    return tool_result(data, title)
