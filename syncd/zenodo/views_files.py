"""Pure views of the Zenodo file tools: ``zenodo_list_files`` pages and ``zenodo_read_file`` parts.

Inputs are the record's :class:`~syncd.zenodo.views.RecordParts` (``parts``), its file entries and
Zenodo's container listing (``{"entries": [...], "truncated": bool, "directories": [...]}``, the legacy
``/files/<key>/container`` answer). No I/O: the tools fetch, these functions build the contract dicts
(``../shared/spec/anchors.md`` §1b) and raise the declared errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from syncd.errors import InvalidInput, NotFound
from syncd.zenodo import views_lists as lists
from syncd.zenodo.views import download_url, record_url

__all__ = [
    "Excerpt",
    "ReadTarget",
    "archive_fields",
    "check_member_request",
    "closed_list_fields",
    "closed_read_fields",
    "excerpt",
    "excerpt_notice",
    "file_target",
    "files_closed",
    "list_header",
    "manifest_counts",
    "manifest_notes",
    "member_target",
    "no_file_message",
    "page_tail",
    "read_header",
    "read_precheck",
    "read_tail",
]


# ------------------------------------------------------------------------------- access before existence


def files_closed(parts: Any) -> bool:
    """True when the record's files cannot be read anonymously (restricted, or under an active embargo).

    Such a record exposes no manifest, so no key can be checked against it: the file tools answer
    with the access status instead of ``file_not_found`` and make no request for content.
    """
    access = parts.access
    return access is not None and (access.files == "restricted" or access.embargo_active)


def _closed_status(parts: Any) -> str:
    """``Files are restricted`` / ``Files are embargoed until 2035-08-31``, from the record's access."""
    access = parts.access
    until = f" until {access.embargo_until}" if access.embargo_until else ""
    return f"Files are {access.status}{until}"


def closed_list_fields(parts: Any, archive: bool, limit: int) -> dict[str, Any]:
    """The page of a ``zenodo_list_files`` call on a record whose files are closed: nothing listed.

    ``entries`` (manifest) or ``members`` (archive mode) is empty, ``matched`` 0, the envelope
    present, and the notice gives the access status and embargo date (anchors.md §1b list_files).
    """
    return {
        "offset": 0,
        "limit": limit,
        "matched": 0,
        "has_more": False,
        "members" if archive else "entries": [],
        "truncated": False,
        "shown": 0,
        "cap": limit,
        "totalCount": 0,
        "notice": f"{_closed_status(parts)}; only metadata is available. zenodo_get_record shows the "
        "access details.",
    }


def closed_read_fields(parts: Any, key: str, member: str | None, offset_bytes: int) -> dict[str, Any]:
    """The ``zenodo_read_file`` answer for a record whose files are closed: ``status: restricted``.

    The key is not checked (no manifest is visible); ``rights`` are the record's licenses, which the
    file would carry; ``download_url`` is built from the key (anchors.md §1b read_file).
    """
    data: dict[str, Any] = {"recid": parts.recid, "key": key}
    if member:
        data["archive_member"] = member
    data.update(
        status="restricted",
        offset_bytes=offset_bytes,
        bytes_returned=0,
        has_more=False,
        replacement_chars=0,
        rights=_rights(parts),
        record_url=record_url(parts.recid),
        download_url=download_url(parts.recid, key),
    )
    if parts.access.files:
        data["files_access"] = parts.access.files
    data["notice"] = f"{_closed_status(parts)}; content is not available anonymously."
    return data


def _rights(parts: Any) -> list[dict[str, Any]]:
    """The record's licenses as ``[{id?, title}]``."""
    return [{k: v for k, v in {"id": r.id, "title": r.title}.items() if v} for r in parts.rights or []]


# ---------------------------------------------------------------------------------------- list_files


def list_header(parts: Any, archive: bool, key_contains: str | None) -> dict[str, Any]:
    """The first fields of a ``zenodo_list_files`` answer: record, kind, access, files_enabled, filter."""
    access = parts.access
    data: dict[str, Any] = {
        "recid": parts.recid,
        "kind": "archive" if archive else "manifest",
        "access_status": access.status if access else "unknown",
    }
    if access and access.files:
        data["files_access"] = access.files
    if access and access.embargo_until:
        data["embargo_until"] = access.embargo_until
    data["files_enabled"] = parts.files_enabled
    if key_contains:
        data["key_contains"] = key_contains
    return data


def archive_fields(
    file: Any, key: str, listing: dict[str, Any], needle: str, offset: int, limit: int
) -> tuple[dict[str, Any], int, int, list[str]]:
    """The ``archive`` and ``members`` fields of one page of a ZIP's members.

    ``needle`` is the lower-cased ``key_contains`` ("" for none). Returns ``(fields, matched,
    shown, notes)``: the members matching ``needle``, how many are on this page, and the notice
    lines (Zenodo's 1,000-entry listing cap).
    """
    members_all = [m for m in listing.get("entries") or [] if isinstance(m, dict) and m.get("key")]
    matched = [m for m in members_all if needle in str(m["key"]).lower()]
    window = matched[offset : offset + limit]
    fields: dict[str, Any] = {
        "archive": {
            "key": key,
            **({"size": file.size} if file.size is not None else {}),
            "download_url": file.download_url,
            "listed_members": len(members_all),
            "upstream_truncated": bool(listing.get("truncated")),
            "directory_count": len(listing.get("directories") or []),
        },
        "members": [_member_row(m) for m in window],
    }
    notes = []
    if listing.get("truncated"):
        notes.append(
            "Zenodo lists at most 1,000 entries of an archive; read a member by its path directly "
            "with zenodo_read_file archive_member."
        )
    return fields, len(matched), len(window), notes


def _member_row(m: dict[str, Any]) -> dict[str, Any]:
    row = {
        "path": m["key"],
        "size": m.get("size"),
        "compressed_size": m.get("compressed_size"),
        "mimetype": m.get("mimetype"),
        "previewable": lists.preview_mode(str(m["key"]), m.get("mimetype")) != "binary",
    }
    return {k: v for k, v in row.items() if v is not None}


def manifest_counts(parts: Any) -> dict[str, Any]:
    """``file_count`` and ``total_bytes`` of the record, when the record says them."""
    data: dict[str, Any] = {}
    if parts.files_count is not None:
        data["file_count"] = parts.files_count
    if parts.files_total_bytes is not None:
        data["total_bytes"] = parts.files_total_bytes
    return data


def manifest_notes(parts: Any) -> list[str]:
    """The notice line of a manifest page of a metadata-only deposit (closed files never get here)."""
    if not parts.files_enabled:
        return ["This record has no files (metadata-only deposit)."]
    return []


def no_file_message(parts: Any, key: str) -> str:
    """The ``file_not_found`` message for ``key``: no such file, or a deposit without files."""
    if not parts.files_enabled:
        return f"Record {parts.recid} is a metadata-only deposit with no files."
    return f"Record {parts.recid} has no file with key {key!r}."


def page_tail(
    offset: int,
    limit: int,
    matched: int,
    shown: int,
    key_contains: str | None,
    unlisted: bool,
    notes: list[str],
) -> dict[str, Any]:
    """The paging fields of a ``zenodo_list_files`` page and its ``notice`` (``notes`` first).

    ``matched`` entries passed the filter, ``shown`` are on this page; ``unlisted`` says Zenodo
    left some files unlisted (the page is then ``truncated`` even without a next page).
    """
    notes = list(notes)
    has_more = offset + shown < matched
    data: dict[str, Any] = {"offset": offset, "limit": limit, "matched": matched, "has_more": has_more}
    if has_more:
        data["next_offset"] = offset + shown
        notes.append(f"Showing {shown} of {matched:,}; call again with offset {offset + shown}.")
    if key_contains and not matched:
        notes.append(f"No key contains {key_contains!r}; call zenodo_list_files again without key_contains.")
    elif matched and offset >= matched:
        last = (matched - 1) // limit * limit
        notes.append(
            f"Offset {offset} is past the last of {matched:,} entries; call again with offset {last} "
            f"for the last page of {limit}."
        )
    truncated = has_more or unlisted  # files Zenodo did not list are missing too
    data.update(truncated=truncated, shown=shown, cap=limit, totalCount=matched)
    if notes:
        data["notice"] = " ".join(notes)
    return data


# ----------------------------------------------------------------------------------------- read_file


@dataclass(frozen=True)
class ReadTarget:
    """What ``zenodo_read_file`` reads: API path (after ``/api``), size in bytes, MIME type, MD5."""

    path: str
    size: int | None
    mimetype: str | None
    md5: str | None


def file_target(file: Any) -> ReadTarget:
    """The target of a whole file of the record (its ``/content`` path)."""
    return ReadTarget(file.download_url.split("/api", 1)[1], file.size, file.mimetype, file.md5)


def check_member_request(file: Any, key: str, offset_bytes: int) -> None:
    """Refuse a member read that cannot be served.

    Raises:
        InvalidInput: ``member_offset_unsupported`` (an offset into a member) or ``not_an_archive``.
    """
    if offset_bytes:
        raise InvalidInput(
            "Zenodo serves ZIP members only from their first byte; offset_bytes must be 0 with "
            "archive_member",
            reason="member_offset_unsupported",
            hint="Read the member from offset_bytes 0 with a larger max_bytes (up to 65536), or download the "
            f"archive from {file.download_url}.",
        )
    if not lists.is_listable(file.key, file.mimetype):
        raise InvalidInput(
            f"{key!r} is not a .zip file, so archive_member cannot be read from it",
            reason="not_an_archive",
            hint=f"Drop archive_member to read {key!r} itself, or pick a listable (.zip) key from "
            "zenodo_list_files.",
        )


def member_target(file: Any, key: str, member: str, listing: dict[str, Any]) -> ReadTarget:
    """The target of one member of the ZIP ``file``, its size and type from the container listing.

    A member missing from a listing Zenodo cut at its cap is still read (size unknown).

    Raises:
        NotFound: ``member_not_found`` when the complete listing has no such member.
    """
    found = next((m for m in listing.get("entries") or [] if m.get("key") == member), None)
    if found is None and not listing.get("truncated"):
        raise NotFound(
            f"{key!r} has no member {member!r}",
            reason="member_not_found",
            hint=f"Call zenodo_list_files with archive_key {key!r} to see the member paths.",
        )
    path = (
        file.download_url.split("/api", 1)[1].removesuffix("/content")
        + "/container/"
        + "/".join(quote(s, safe="") for s in member.split("/"))
    )
    size = found.get("size") if found else None
    return ReadTarget(path, size, found.get("mimetype") if found else None, None)


def read_header(
    parts: Any, file: Any, key: str, member: str | None, target: ReadTarget
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The first fields of a ``zenodo_read_file`` answer and its closing ones (rights and links)."""
    access = parts.access
    data: dict[str, Any] = {"recid": parts.recid, "key": key}
    if member:
        data["archive_member"] = member
    base: dict[str, Any] = {
        "rights": _rights(parts),
        "record_url": record_url(parts.recid),
        "download_url": file.download_url,
    }
    if access and access.files:
        base["files_access"] = access.files
    if target.md5:
        data["md5"] = target.md5
    if target.mimetype:
        data["mimetype"] = target.mimetype
    if target.size is not None:
        data["file_size"] = target.size
    return data, base


def read_precheck(mode: str, target: ReadTarget, offset_bytes: int, name: str) -> tuple[str, str | None]:
    """``(status, notice)`` before any byte is read: ``text`` means go and read.

    Closed files (restricted, embargoed) are answered before this, by :func:`closed_read_fields`.

    Raises:
        InvalidInput: ``offset_out_of_range`` when ``offset_bytes`` is at or past the known size.
    """
    if mode == "binary":
        kind = target.mimetype or "unknown type"
        return "not_text", f"{name} is not a previewable text file ({kind}); download it from download_url."
    size = target.size
    if size == 0:
        return "empty", f"{name} is empty."
    if size is not None and offset_bytes >= size:
        raise InvalidInput(
            f"offset_bytes {offset_bytes} is at or past the file size {size}",
            reason="offset_out_of_range",
            hint=f"Call zenodo_read_file again with an offset_bytes below {size} (0 reads from the start).",
        )
    return "text", None


@dataclass(frozen=True)
class Excerpt:
    """The outcome of reading: status, notice, decoded text, bytes kept, U+FFFD count, more follows."""

    status: str
    notice: str | None = None
    text: str | None = None
    kept: int = 0
    replacement: int = 0
    more: bool = False


def excerpt(raw: bytes, total: int | None, offset_bytes: int, max_bytes: int, mode: str) -> Excerpt:
    """The excerpt of ``raw`` (bytes read at ``offset_bytes`` of a ``total``-byte file, None unknown)."""
    end = offset_bytes + len(raw)
    more = end < total if total is not None else len(raw) >= max_bytes
    if mode == "sniff" and offset_bytes == 0 and not lists.sniff_is_text(raw):
        return Excerpt("not_text", "The file has no text extension and does not decode as UTF-8.", more=more)
    text, kept, replacement = lists.decode_excerpt(raw, offset_bytes, more)
    if text is None:
        return Excerpt("not_text", "The file holds NUL bytes: it is binary.", None, kept, replacement, more)
    return Excerpt("empty" if not raw else "text", None, text, kept, replacement, more)


def _range_shown(offset_bytes: int, kept: int, total: int | None) -> str:
    """``Showing bytes a–b of N.`` (inclusive, 0-based, thousands separated) for a cut excerpt, or ``""``."""
    if kept <= 0:
        return ""
    of = f" of {total:,}" if total is not None else ""
    return f"Showing bytes {offset_bytes:,}–{offset_bytes + kept - 1:,}{of}. "


def excerpt_notice(
    ex: Excerpt,
    source: str,
    upstream_error: str | None,
    member: str | None,
    total: int | None,
    offset_bytes: int,
) -> str | None:
    """The notice of a read: served from the kept preview, and how to read on when more follows."""
    notice = ex.notice
    if source != "upstream" and upstream_error:
        notice = f"Served from the locally kept preview; Zenodo could not be used ({upstream_error})."
    if ex.status == "text" and ex.more:
        hint = (
            f"The member is {total:,} bytes; pass max_bytes {min(total, 65_536)} or download it."
            if member and total
            else f"{_range_shown(offset_bytes, ex.kept, total)}More follows; call again with offset_bytes "
            f"{offset_bytes + ex.kept}."
        )
        notice = f"{notice} {hint}" if notice else hint
    return notice


def read_tail(ex: Excerpt, offset_bytes: int, file_size: int | None, member: str | None) -> dict[str, Any]:
    """The status, text and continuation fields of a ``zenodo_read_file`` answer."""
    data: dict[str, Any] = {"status": ex.status}
    if ex.text is not None and ex.status == "text":
        data["text"] = ex.text
    data["offset_bytes"] = offset_bytes
    data["bytes_returned"] = ex.kept
    has_more = (
        ex.status == "text" and ex.kept > 0 and (file_size is not None and offset_bytes + ex.kept < file_size)
    )
    if has_more and not member:
        data["next_offset"] = offset_bytes + ex.kept
    data["has_more"] = bool(has_more)
    data["replacement_chars"] = ex.replacement
    return data
