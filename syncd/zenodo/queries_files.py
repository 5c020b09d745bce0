"""Zenodo file answers, assembled: the ``zenodo_list_files`` and ``zenodo_read_file`` contracts.

Both raise ``record_not_found`` / ``record_deleted`` for a record they cannot read. File previews
read once are kept in the ``blobs`` table and serve offline. The file tools
(:mod:`syncd.zenodo.tools_files`) call :func:`files_answer` or :func:`read_answer` and render.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from syncd.errors import (
    InvalidInput,
    NotFound,
    UpstreamError,
    UpstreamUnavailable,
)
from syncd.road import policy
from syncd.road.policy import Provenance
from syncd.road.services import Services
from syncd.store.content import document
from syncd.store.repo import StoredEntry
from syncd.zenodo import lookups, lookups_files, lookups_pages
from syncd.zenodo import views_files as views
from syncd.zenodo import views_lists as lists
from syncd.zenodo.client import LEGACY_JSON
from syncd.zenodo.names import ZENODO_CONTAINER
from syncd.zenodo.params import blank
from syncd.zenodo.params_id import RecordRef, parse_record_ref
from syncd.zenodo.queries import doi_elsewhere, named_doi
from syncd.zenodo.views import (
    download_url,
    record_parts,
)

# ------------------------------------------------------------------------------ the record and its files


def _resolve_ok(services: Services, ref: RecordRef) -> tuple[StoredEntry, Any]:
    """The stored record for ``ref`` or NotFound (record_not_found / record_deleted) for the file tools.

    A DOI no Zenodo record holds is ``record_not_found`` whose hint names the call that reads it.
    """
    try:
        lookup = lookups.get_record(services, ref)
    except NotFound as exc:
        if exc.reason != "not_on_zenodo" or ref.doi is None:
            raise
        doi = named_doi(ref, ref.doi)
        raise NotFound(
            f"DOI {doi} is not registered to a Zenodo record.",
            reason="record_not_found",
            hint=doi_elsewhere(services, doi),
        ) from exc
    entry = lookup.entry
    if entry.status == "gone":
        raise NotFound(
            f"Record {entry.key} was deleted from Zenodo; only its tombstone remains.",
            reason="record_deleted",
            hint=f"Call zenodo_get_record with id {entry.key!r} for the removal date and reason, then find a "
            "replacement deposit with zenodo_search_records.",
        )
    if entry.status != "ok":
        message = (
            f"Record {entry.key} exists but its metadata is restricted and cannot be read anonymously."
            if entry.status == "restricted"
            else f"No Zenodo record has id {entry.key}."
        )
        raise NotFound(
            message,
            reason="record_not_found",
            hint=f"Check the id with zenodo_get_record (id {entry.key!r}), or find the deposit with "
            "zenodo_search_records.",
        )
    return entry, lookup


# ---------------------------------------------------------------------------------------- list_files


def _file_by_key(services: Services, parts: Any, key: str) -> Any:
    """The file ``key`` of the record, from its body or else from Zenodo's files endpoint.

    The endpoint (stored) is read only when the body lists fewer files than it counts; raises
    ``file_not_found`` when neither lists ``key``.
    """
    found = next((f for f in parts.files or [] if f.key == key), None)
    if found is None and parts.files_count is not None and parts.files_count > len(parts.files or []):
        listed = lookups_files.record_files(services, parts.recid).files
        found = next((f for f in listed if f.key == key), None)
    if found is None:
        raise NotFound(
            views.no_file_message(parts, key),
            reason="file_not_found",
            hint=f"Call zenodo_list_files with id {parts.recid!r} to see the record's exact file keys.",
        )
    return found


def _container(services: Services, recid: str, key: str) -> Any:
    path = download_url(recid, key).split("/api", 1)[1].removesuffix("/content") + "/container"
    try:
        page = lookups_pages.get_page(services, ZENODO_CONTAINER, path, {}, accept=LEGACY_JSON)
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
    listing = lookups_files.record_files(services, parts.recid)
    if len(listing.files) > len(files):
        files = listing.files
        data["listed_from"] = "files_endpoint"
        provenance = policy.merged(provenance, listing.provenance)
    else:
        data["listed_from"] = "record"
    if len(files) < count:
        missing = count - len(files)
        url = lookups_files.files_url(parts.recid)
        data.update(unlisted=missing, files_list_url=url)
        why = f" (the files endpoint could not be read: {listing.error})" if listing.error else ""
        notes.append(
            f"{missing:,} of the record's {count:,} files are not listed here{why}: Zenodo's record answer "
            f"lists {len(parts.files or []):,}. The full list is at {url}."
        )
    return files, provenance


# ------------------------------------------------------------------------------------------ read_file


def _read_target(
    services: Services, parts: Any, file: Any, key: str, member: str | None, offset_bytes: int
) -> views.ReadTarget:
    """The file itself, or the archive member (its size and type from the container listing)."""
    if not member:
        return views.file_target(file)
    views.check_member_request(file, key, offset_bytes)
    listing = _container(services, parts.recid, key).body or {}
    return views.member_target(file, key, member, listing)


def _preview(
    services: Services,
    parts: Any,
    file: Any,
    member: str | None,
    target: views.ReadTarget,
    window: tuple[int, int],
    mode: str,
    provenance: Provenance,
    data: dict[str, Any],
) -> tuple[views.Excerpt, Provenance]:
    """Read ``window`` (offset, max bytes) of the target through the kept previews and decode it.

    Returns the excerpt and the provenance of the bytes shown (``provenance``, the record's, when
    Zenodo refused the file with 403); records in ``data`` the file size Zenodo reported when it
    was unknown.
    """
    offset_bytes, max_bytes = window
    blob_key = lookups_files.preview_key(parts.recid, file.key, file.md5, member)
    try:
        raw, total, source, upstream_error = lookups_files.read_preview(
            services,
            parts.recid,
            target.path,
            blob_key,
            offset=offset_bytes,
            length=max_bytes,
            file_size=target.size,
            ranged=not member,
        )
    except NotFound as exc:
        name = member or file.key
        if exc.reason != "restricted":  # the record lists it: Zenodo failed to serve it, it exists
            raise UpstreamUnavailable(
                f"Zenodo lists {name} in record {parts.recid} but did not serve its content (HTTP 404); "
                "the file exists, its download failed upstream",
                reason="upstream_unavailable",
                hint=f"Retry later, or download it from {file.download_url}.",
                status=404,
            ) from exc
        refused = (
            f"Zenodo refused anonymous access to {name} (HTTP 403) although the record's files are "
            "public; its content cannot be previewed here. zenodo_get_record shows the record's access "
            "details."
        )
        return views.Excerpt("restricted", refused), provenance
    if total is not None and "file_size" not in data:
        data["file_size"] = total
    ex = views.excerpt(raw, total, offset_bytes, max_bytes, mode)
    notice = views.excerpt_notice(ex, source, upstream_error, member, total, offset_bytes)
    return replace(ex, notice=notice), policy.of_bytes(provenance, source, upstream_error, time.time())


def files_answer(
    services: Services,
    id: str,
    archive_key: str | None = None,
    key_contains: str | None = None,
    offset: int = 0,
    limit: int = 50,
) -> tuple[dict[str, Any], str]:
    """The ``zenodo_list_files`` answer (one page of the manifest, or of a ZIP's members) and its heading.

    Raises:
        SyncdError: a declared failure (record_not_found, record_deleted, not_an_archive, ...).
    """
    ref = parse_record_ref(id)
    entry, lookup = _resolve_ok(services, ref)
    parts, _ = record_parts(document(entry))
    needle = (blank(key_contains) or "").lower()
    shown_filter = key_contains if needle else None
    data = views.list_header(parts, bool(blank(archive_key)), shown_filter)
    notes: list[str] = []
    provenance = lookup.provenance
    if views.files_closed(parts):  # no manifest is visible: the access status, no file request
        data.update(views.closed_list_fields(parts, bool(blank(archive_key)), limit))
        data["cache"] = provenance.as_dict()
        return data, f"Files of record {data['recid']}"
    if blank(archive_key):
        key = blank(archive_key) or ""
        file = _file_by_key(services, parts, key)
        if not lists.is_listable(file.key, file.mimetype):
            raise InvalidInput(
                f"{key!r} is not a .zip file; only ZIP archives can be listed",
                reason="not_an_archive",
                hint=f"Read it with zenodo_read_file (key {key!r}) if it is text, or download it from "
                f"{file.download_url}.",
            )
        page = _container(services, parts.recid, key)
        provenance = page.provenance
        fields, matched, shown, notes = views.archive_fields(
            file, key, page.body or {}, needle, offset, limit
        )
        data.update(fields)
    else:
        data.update(views.manifest_counts(parts))
        files, provenance = _manifest(services, parts, provenance, data, notes)
        found = [f for f in files if needle in f.key.lower()]
        window = found[offset : offset + limit]
        data["entries"] = [lists.file_entry(f).model_dump(mode="json", exclude_none=True) for f in window]
        matched, shown = len(found), len(window)
        notes += views.manifest_notes(parts)
    unlisted = bool(data.get("unlisted"))
    data.update(views.page_tail(offset, limit, matched, shown, shown_filter, unlisted, notes))
    data["cache"] = provenance.as_dict()
    return data, f"Files of record {data['recid']}"


def read_answer(
    services: Services,
    id: str,
    key: str,
    archive_member: str | None = None,
    offset_bytes: int = 0,
    max_bytes: int = 16_384,
) -> tuple[dict[str, Any], str]:
    """The ``zenodo_read_file`` answer (one byte range of a file or ZIP member, decoded) and its heading.

    Raises:
        SyncdError: a declared failure (record_not_found, file_not_found, offset_out_of_range, ...).
    """
    ref = parse_record_ref(id)
    entry, lookup = _resolve_ok(services, ref)
    parts, _ = record_parts(document(entry))
    member = blank(archive_member)
    if views.files_closed(parts):  # no manifest is visible: the access status, no file request
        data = views.closed_read_fields(parts, key, member, offset_bytes)
        data["cache"] = lookup.provenance.as_dict()
        return data, f"{key}{' :: ' + member if member else ''} (record {data['recid']})"
    file = _file_by_key(services, parts, key)
    target = _read_target(services, parts, file, key, member, offset_bytes)
    data, base = views.read_header(parts, file, key, member, target)
    mode = lists.preview_mode(member or key, target.mimetype)
    ex = views.Excerpt(*views.read_precheck(mode, target, offset_bytes, member or key))
    provenance = lookup.provenance
    if ex.status == "text":
        window = (offset_bytes, max_bytes)
        ex, provenance = _preview(services, parts, file, member, target, window, mode, provenance, data)
    data.update(views.read_tail(ex, offset_bytes, data.get("file_size"), member))
    data.update(base)
    if ex.notice:
        data["notice"] = ex.notice
    data["cache"] = provenance.as_dict()
    return data, f"{key}{' :: ' + member if member else ''} (record {data['recid']})"
