"""Zenodo file tools: ``zenodo_list_files`` and ``zenodo_read_file``, local-first.

Both raise ``record_not_found`` / ``record_deleted`` for a record they cannot read. File previews
read once are kept in the ``blobs`` table and serve offline.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

from mcp.types import CallToolResult

from syncd import policy
from syncd.errors import (
    InvalidInput,
    NotFound,
    UpstreamError,
)
from syncd.kinds import (
    ZENODO_CONTAINER,
)
from syncd.lookups import zenodo as lookups_zenodo
from syncd.normalize import zenodo_lists as lists
from syncd.normalize.zenodo import (
    download_url,
    record_parts,
    record_url,
)
from syncd.normalize.zenodo_id import RecordRef, parse_record_ref
from syncd.normalize.zenodo_params import blank
from syncd.policy import Provenance
from syncd.services import Services
from syncd.store.content import document
from syncd.store.repo import StoredEntry
from syncd.tools.errors import error_result
from syncd.tools.zenodo_render import FILE_RENAME, _result
from syncd.upstream.zenodo import LEGACY_JSON

# ------------------------------------------------------------------------------------- list_versions


def _resolve_ok(services: Services, ref: RecordRef) -> tuple[StoredEntry, Any]:
    """The stored record for ``ref`` or NotFound (record_not_found / record_deleted) for the file tools."""
    lookup = lookups_zenodo.get_record(services, ref)
    entry = lookup.entry
    if entry.status == "gone":
        raise NotFound(f"record {entry.key} was deleted from Zenodo", reason="record_deleted")
    if entry.status != "ok":
        raise NotFound(f"no readable Zenodo record {entry.key} ({entry.status})", reason="record_not_found")
    return entry, lookup


# ---------------------------------------------------------------------------------------- list_files


def _file_by_key(services: Services, parts: Any, key: str) -> Any:
    """The file ``key`` of the record, from its body or else from Zenodo's files endpoint.

    The endpoint (stored) is read only when the body lists fewer files than it counts; raises
    ``file_not_found`` when neither lists ``key``.
    """
    found = next((f for f in parts.files or [] if f.key == key), None)
    if found is None and parts.files_count is not None and parts.files_count > len(parts.files or []):
        listed = lookups_zenodo.record_files(services, parts.recid).files
        found = next((f for f in listed if f.key == key), None)
    if found is None:
        raise NotFound(
            f"record {parts.recid} has no file {key!r}",
            reason="file_not_found",
            hint="List the exact keys with zenodo_list_files.",
        )
    return found


def _container(services: Services, recid: str, key: str) -> Any:
    path = download_url(recid, key).split("/api", 1)[1].removesuffix("/content") + "/container"
    try:
        page = lookups_zenodo.get_page(services, ZENODO_CONTAINER, path, {}, accept=LEGACY_JSON)
    except UpstreamError as exc:
        if exc.reason in ("rate_limited",):
            raise
        raise UpstreamError(
            f"Zenodo could not list the archive {key!r} ({exc.reason}); "
            f"download it from {download_url(recid, key)}",
            reason="archive_unavailable",
        ) from exc
    if page.body is None:
        raise NotFound(f"Zenodo has no listing of {key!r}", reason="file_not_found")
    return page


def _manifest(
    services: Services, parts: Any, provenance: Provenance, data: dict[str, Any], notes: list[str]
) -> tuple[list[Any], Provenance]:
    """The record's files, completed from Zenodo's files endpoint when the body lists fewer than it counts.

    Sets ``listed_from`` and, when files stay unlisted, ``unlisted``, ``files_list_url`` and a notice,
    so the totals never contradict ``file_count``.
    """
    files = list(parts.files or [])
    count = parts.files_count
    if count is None or len(files) >= count:
        return files, provenance
    listing = lookups_zenodo.record_files(services, parts.recid)
    if len(listing.files) > len(files):
        files = listing.files
        data["listed_from"] = "files_endpoint"
        provenance = policy.merged(provenance, listing.provenance)
    else:
        data["listed_from"] = "record"
    if len(files) < count:
        missing = count - len(files)
        url = lookups_zenodo.files_url(parts.recid)
        data.update(unlisted=missing, files_list_url=url)
        why = f" (the files endpoint could not be read: {listing.error})" if listing.error else ""
        notes.append(
            f"{missing:,} of the record's {count:,} files are not listed here{why}: Zenodo's record answer "
            f"lists {len(parts.files or []):,}. The full list is at {url}."
        )
    return files, provenance


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
        ref = parse_record_ref(id)
        entry, lookup = _resolve_ok(services, ref)
        parts, _ = record_parts(document(entry))
        access = parts.access
        needle = (blank(key_contains) or "").lower()
        data: dict[str, Any] = {
            "recid": parts.recid,
            "kind": "archive" if blank(archive_key) else "manifest",
            "access_status": access.status if access else "unknown",
        }
        if access and access.files:
            data["files_access"] = access.files
        if access and access.embargo_until:
            data["embargo_until"] = access.embargo_until
        data["files_enabled"] = parts.files_enabled
        if needle:
            data["key_contains"] = key_contains
        notes: list[str] = []
        provenance = lookup.provenance
        if blank(archive_key):
            key = blank(archive_key) or ""
            file = _file_by_key(services, parts, key)
            if not lists.is_listable(file.key, file.mimetype):
                raise InvalidInput(f"{key!r} is not a ZIP archive", reason="not_an_archive")
            page = _container(services, parts.recid, key)
            provenance = page.provenance
            listing = page.body or {}
            members_all = [m for m in listing.get("entries") or [] if isinstance(m, dict) and m.get("key")]
            matched = [m for m in members_all if needle in str(m["key"]).lower()]
            window = matched[offset : offset + limit]
            data["archive"] = {
                "key": key,
                **({"size": file.size} if file.size is not None else {}),
                "download_url": file.download_url,
                "listed_members": len(members_all),
                "upstream_truncated": bool(listing.get("truncated")),
                "directory_count": len(listing.get("directories") or []),
            }
            data["members"] = [
                {
                    k: v
                    for k, v in {
                        "path": m["key"],
                        "size": m.get("size"),
                        "compressed_size": m.get("compressed_size"),
                        "mimetype": m.get("mimetype"),
                        "previewable": lists.preview_mode(str(m["key"]), m.get("mimetype")) != "binary",
                    }.items()
                    if v is not None
                }
                for m in window
            ]
            if listing.get("truncated"):
                notes.append(
                    "Zenodo lists at most 1,000 entries of an archive; read a member by its path directly "
                    "with zenodo_read_file archive_member."
                )
        else:
            if parts.files_count is not None:
                data["file_count"] = parts.files_count
            if parts.files_total_bytes is not None:
                data["total_bytes"] = parts.files_total_bytes
            files, provenance = _manifest(services, parts, provenance, data, notes)
            matched = [f for f in files if needle in f.key.lower()]
            window = matched[offset : offset + limit]
            data["entries"] = [lists.file_entry(f).model_dump(mode="json", exclude_none=True) for f in window]
            if access and (access.files == "restricted" or access.embargo_active):
                notes.append(
                    f"Files are embargoed until {access.embargo_until}; only their names may be listed."
                    if access.embargo_active and access.embargo_until
                    else "Files are restricted; their content cannot be read anonymously."
                )
            elif not parts.files_enabled:
                notes.append("This is a metadata-only deposit: it has no files.")
        has_more = offset + len(window) < len(matched)
        data.update(offset=offset, limit=limit, matched=len(matched), has_more=has_more)
        if has_more:
            data["next_offset"] = offset + len(window)
            notes.append(
                f"Showing {len(window)} of {len(matched)}; call again with offset {offset + len(window)}."
            )
        if needle and not matched:
            notes.append(f"No key contains {key_contains!r}.")
        elif matched and offset >= len(matched):
            notes.append(f"offset {offset} is past the last entry ({len(matched)}).")
        truncated = has_more or bool(data.get("unlisted"))  # files Zenodo did not list are missing too
        data.update(truncated=truncated, shown=len(window), cap=limit, totalCount=len(matched))
        if notes:
            data["notice"] = " ".join(notes)
        data["cache"] = provenance.as_dict()
    except Exception as exc:
        return error_result(exc, FILE_RENAME)
    return _result(data, f"Files of record {data['recid']}")


# ------------------------------------------------------------------------------------------ read_file


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
        ref = parse_record_ref(id)
        entry, lookup = _resolve_ok(services, ref)
        parts, _ = record_parts(document(entry))
        file = _file_by_key(services, parts, key)
        member = blank(archive_member)
        access = parts.access
        data: dict[str, Any] = {"recid": parts.recid, "key": key}
        if member:
            data["archive_member"] = member
        rights = [{k: v for k, v in {"id": r.id, "title": r.title}.items() if v} for r in parts.rights or []]
        base = {
            "rights": rights,
            "record_url": record_url(parts.recid),
            "download_url": file.download_url,
        }
        if access and access.files:
            base["files_access"] = access.files
        size, mimetype, md5 = file.size, file.mimetype, file.md5
        path = file.download_url.split("/api", 1)[1]
        if member:
            if offset_bytes:
                raise InvalidInput(
                    "offset_bytes must be 0 with archive_member", reason="member_offset_unsupported"
                )
            if not lists.is_listable(file.key, file.mimetype):
                raise InvalidInput(f"{key!r} is not a ZIP archive", reason="not_an_archive")
            listing = _container(services, parts.recid, key).body or {}
            found = next((m for m in listing.get("entries") or [] if m.get("key") == member), None)
            if found is None and not listing.get("truncated"):
                raise NotFound(f"{key!r} has no member {member!r}", reason="member_not_found")
            size = found.get("size") if found else None
            mimetype = found.get("mimetype") if found else None
            md5 = None
            path = (
                path.removesuffix("/content")
                + "/container/"
                + "/".join(quote(s, safe="") for s in member.split("/"))
            )
        if md5:
            data["md5"] = md5
        if mimetype:
            data["mimetype"] = mimetype
        if size is not None:
            data["file_size"] = size
        provenance = lookup.provenance
        mode = lists.preview_mode(member or key, mimetype)
        restricted = access is not None and (access.files == "restricted" or access.embargo_active)
        status, notice, text, kept, replacement = "text", None, None, 0, 0
        if restricted:
            status, notice = (
                "restricted",
                "File access is restricted or embargoed; its content cannot be read.",
            )
        elif mode == "binary":
            status, notice = (
                "not_text",
                f"{member or key} is not a text file ({mimetype or 'unknown type'}); download it.",
            )
        elif size == 0:
            status, notice = "empty", "The file is empty."
        elif size is not None and offset_bytes >= size:
            raise InvalidInput(
                f"offset_bytes {offset_bytes} is at or past the file size {size}",
                reason="offset_out_of_range",
            )
        if status == "text":
            blob_key = lookups_zenodo.preview_key(parts.recid, key, file.md5, member)
            try:
                raw, total, source, upstream_error = lookups_zenodo.read_preview(
                    services,
                    parts.recid,
                    path,
                    blob_key,
                    offset=offset_bytes,
                    length=max_bytes,
                    file_size=size,
                    ranged=not member,
                )
            except NotFound as exc:
                if exc.reason != "restricted":
                    raise
                raw, total, source, upstream_error = b"", size, "upstream", None
                status, notice = "restricted", "Zenodo refused the file (HTTP 403)."
            if status == "text":
                if total is not None and "file_size" not in data:
                    data["file_size"] = total
                end = offset_bytes + len(raw)
                more = end < total if total is not None else len(raw) >= max_bytes
                if mode == "sniff" and offset_bytes == 0 and not lists.sniff_is_text(raw):
                    status, notice = (
                        "not_text",
                        "The file has no text extension and does not decode as UTF-8.",
                    )
                else:
                    text, kept, replacement = lists.decode_excerpt(raw, offset_bytes, more)
                    if text is None:
                        status, notice = "not_text", "The file holds NUL bytes: it is binary."
                    elif not raw:
                        status = "empty"
                provenance = policy.of_bytes(provenance, source, upstream_error, time.time())
                if source != "upstream" and upstream_error:
                    notice = (
                        f"Served from the locally kept preview; Zenodo could not be used ({upstream_error})."
                    )
                if status == "text" and more:
                    hint = (
                        f"The member is {total} bytes; pass max_bytes {min(total, 65_536)} or download it."
                        if member and total
                        else f"More follows; call again with offset_bytes {offset_bytes + kept}."
                    )
                    notice = f"{notice} {hint}" if notice else hint
        data["status"] = status
        if text is not None and status == "text":
            data["text"] = text
        data["offset_bytes"] = offset_bytes
        data["bytes_returned"] = kept
        has_more = (
            status == "text"
            and kept > 0
            and (data.get("file_size") is not None and offset_bytes + kept < data["file_size"])
        )
        if has_more and not member:
            data["next_offset"] = offset_bytes + kept
        data["has_more"] = bool(has_more)
        data["replacement_chars"] = replacement
        data.update(base)
        if notice:
            data["notice"] = notice
        data["cache"] = provenance.as_dict()
    except Exception as exc:
        return error_result(exc, FILE_RENAME)
    return _result(data, f"{key}{' :: ' + member if member else ''} (record {data['recid']})")
