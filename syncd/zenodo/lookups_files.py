"""Zenodo file lookups: a record's full file list and kept file previews.

The files endpoint (``/records/{id}/files``, paged by ``links.next``) completes a record body that
lists fewer files than it counts; previews (byte ranges of a file or of a ZIP member) are kept in the
``blobs`` table (kind ``zenodo_preview``) and serve offline. Records and pages: :mod:`syncd.zenodo.lookups`.
"""

from __future__ import annotations

import contextlib
import json
import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from syncd.errors import BudgetExhausted, InvalidInput, NotFound, StoreError, UpstreamError
from syncd.road import policy
from syncd.road.policy import Provenance
from syncd.road.services import Services
from syncd.store import blobs
from syncd.upstream.http import Deadline, current_deadline
from syncd.zenodo import views as zenodo_norm
from syncd.zenodo.client import LEGACY_JSON
from syncd.zenodo.contracts import FileEntry
from syncd.zenodo.lookups_pages import get_page
from syncd.zenodo.names import ZENODO_CONTAINER, ZENODO_PREVIEW
from syncd.zenodo.settings import SECTION

log = logging.getLogger(__name__)

__all__ = ["FILES_PAGES_MAX", "FilesListing", "files_url", "preview_key", "read_preview", "record_files"]


# --------------------------------------------------------------------------------------------------
# A record's complete file list, when its body lists fewer files than it counts.

FILES_PAGES_MAX = 40
"""Most pages of ``/records/{id}/files`` followed (``links.next``) for one record."""


@dataclass(frozen=True)
class FilesListing:
    """A record's files as Zenodo's files endpoint lists them.

    ``files``: every entry read (upstream order); ``provenance``: of the pages read (None when
    none could be); ``error``: the reason the listing stopped short (a page could not be read), or None.
    """

    files: list[FileEntry]
    provenance: Provenance | None
    error: str | None


def files_url(recid: str) -> str:
    """Public API URL listing every file of record ``recid`` (``/api/records/{id}/files``)."""
    return f"https://zenodo.org/api/records/{recid}/files"


def _listed_file(recid: str, raw: Any) -> FileEntry | None:
    if not isinstance(raw, dict):
        return None
    key = raw.get("key") or raw.get("filename")
    if not isinstance(key, str) or not key:
        return None
    size = raw.get("size", raw.get("filesize"))
    mimetype = raw.get("mimetype")
    checksum = raw.get("checksum")
    md5 = checksum[4:] if isinstance(checksum, str) and checksum.startswith("md5:") else None
    return FileEntry(
        key=key,
        size=size if isinstance(size, int) and not isinstance(size, bool) else None,
        mimetype=mimetype if isinstance(mimetype, str) else None,
        md5=md5 or None,
        download_url=zenodo_norm.download_url(recid, key),
    )


def record_files(svc: Services, recid: str, deadline: Deadline | None = None) -> FilesListing:
    """Every file of record ``recid`` from ``/records/{id}/files``, local-first.

    Pages are stored as ``zenodo_container`` entries (``ttl.zenodo_record``); ``links.next`` is
    followed when Zenodo pages the listing (at most :data:`FILES_PAGES_MAX` pages). Used when a
    record body lists fewer entries than its ``files.count`` (Zenodo lists at most 1,000 files in a
    record answer). Never raises for an upstream failure: the listing then stops
    with ``error`` set and the files read so far.
    """
    deadline = deadline or current_deadline(svc.settings.deadline_s)
    path = f"/records/{recid}/files"
    params: dict[str, str] = {}
    files: list[FileEntry] = []
    provs: list[Provenance] = []
    for _ in range(FILES_PAGES_MAX):
        try:
            page = get_page(svc, ZENODO_CONTAINER, path, params, deadline, accept=LEGACY_JSON)
        except (UpstreamError, BudgetExhausted) as exc:
            return FilesListing(files, policy.merged(*provs) if provs else None, exc.reason)
        provs.append(page.provenance)
        if page.body is None:
            return FilesListing(files, policy.merged(*provs), "not_found")
        entries = page.body.get("entries")
        if isinstance(entries, dict):  # keyed by file key in some answers
            entries = list(entries.values())
        files.extend(f for f in (_listed_file(recid, raw) for raw in entries or []) if f is not None)
        nxt = (page.body.get("links") or {}).get("next") if isinstance(page.body.get("links"), dict) else None
        if not isinstance(nxt, str) or "?" not in nxt:
            break
        following = dict(parse_qsl(urlsplit(nxt).query))
        if following == params:
            break
        params = following
    log.info("event=files_listed recid=%s files=%d pages=%d", recid, len(files), len(provs))
    return FilesListing(files, policy.merged(*provs), None)


# --------------------------------------------------------------------------------------------------
# File previews (blobs)


def preview_key(recid: str, key: str, md5: str | None, member: str | None = None) -> str:
    """Blob key of a file's kept preview; the MD5 makes a replaced file never serve old bytes."""
    return json.dumps([recid, key, md5 or "", member or ""], separators=(",", ":"))


def read_preview(
    svc: Services,
    recid: str,
    path: str,
    blob_key: str,
    *,
    offset: int,
    length: int,
    file_size: int | None,
    ranged: bool,
    deadline: Deadline | None = None,
) -> tuple[bytes, int | None, str, str | None]:
    """Bytes ``[offset, offset+length)`` of a file, from the kept preview when it covers them.

    Returns ``(data, total_size, source, upstream_error)`` with ``source`` ``store`` or ``upstream``.
    A read from offset 0 keeps its first ``zenodo.preview_bytes_per_file`` bytes as the preview
    (LRU-bounded by ``zenodo.preview_total_bytes``; not kept when the store cannot be written, the
    bytes are answered all the same). When upstream fails, whatever part of the range the kept
    preview holds is answered (``store`` with the reason). A kept preview is read without the write
    lock, so it serves under another process's write lock and on a full disk.

    Raises:
        NotFound: ``file_not_found`` (404) or ``restricted`` is signalled by the status in data (see
            the tool); ``offset_out_of_range`` (416) as InvalidInput.
        UpstreamError, BudgetExhausted: nothing kept covers the range and upstream failed.
    """
    deadline = deadline or current_deadline(svc.settings.deadline_s)
    kept = blobs.get_blob(svc.store, ZENODO_PREVIEW, blob_key)
    if kept is not None and policy.preview_covers(kept.size, file_size, offset, length):
        return kept.data[offset : offset + length], file_size, "store", None
    try:
        answer = svc.upstreams.zenodo.read_bytes(
            path, deadline, start=offset if ranged else None, length=length
        )
    except (UpstreamError, BudgetExhausted) as exc:
        if kept is not None and policy.preview_rescues(kept.size, offset):
            return kept.data[offset : offset + length], file_size, "store", exc.reason
        raise
    if answer.status == 404:
        raise NotFound(f"file not found in record {recid}", reason="file_not_found")
    if answer.status == 403:
        raise NotFound(f"file access restricted in record {recid}", reason="restricted")
    if answer.status == 416:
        raise InvalidInput("offset_bytes is past the end of the file", reason="offset_out_of_range")
    total = answer.total_size if answer.total_size is not None else file_size
    per_file = SECTION.of(svc.settings).preview_bytes_per_file
    if offset == 0 and per_file > 0 and answer.data:
        keep = answer.data[:per_file]
        if (kept is None or len(keep) > kept.size) and svc.store.write_problem() is None:
            # keeping the preview is a bonus: the bytes read are answered whether or not it is kept
            with svc.store.waits_within(deadline.remaining), contextlib.suppress(StoreError):
                blobs.put_blob(
                    svc.store,
                    ZENODO_PREVIEW,
                    blob_key,
                    keep,
                    answer.content_type,
                    SECTION.of(svc.settings).preview_total_bytes,
                )
    return answer.data, total, "upstream", None
