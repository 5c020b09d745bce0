"""Zenodo lookups through the local-first path: records by id, concept id or DOI (``/records/{id}``).

Records are stored as entries of kind ``zenodo_record`` (key: the record id; body: the raw record
JSON, either shape); misses as ``not_found`` / ``gone`` (the tombstone JSON) / ``restricted``;
concept record id -> latest version in the ``concepts`` table.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from syncd.cache import ZENODO_RECORD, Cache, Lookup, content_hash, register_kind, volatile_json
from syncd.errors import NotFound
from syncd.normalize import zenodo as zenodo_norm
from syncd.normalize.zenodo_id import RecordRef
from syncd.store.repo import EntryContent, StoredEntry
from syncd.upstream.http import Deadline

__all__ = ["fetch_record", "get_record", "record_content"]

log = logging.getLogger("syncd.lookups.zenodo")


def get_record(
    cache: Cache, ref: RecordRef, deadline: Deadline | None = None, *, force: bool = False
) -> Lookup:
    """The Zenodo record for ``ref`` (record id, concept id, Zenodo DOI or another DOI).

    Misses (404, 410 tombstone, 403) are answered as stored entries whose ``status`` says so.

    Raises:
        NotFound: ``ref`` is a DOI that no Zenodo record holds (reason ``not_on_zenodo``).
        UpstreamError, BudgetExhausted: nothing stored and upstream could not be used.
    """
    deadline = deadline or Deadline(cache.settings.deadline_s)
    resolved_from = "version"
    recid = ref.recid
    if recid is None and ref.doi is not None:
        resolved_from = "external_doi"
        found = cache.store.find_by_doi(ZENODO_RECORD, ref.doi)
        if found is not None:
            recid = found.key
        else:
            recid = cache.zenodo.find_doi(ref.doi, deadline)
            if recid is None:
                raise NotFound(f"no Zenodo record holds DOI {ref.doi}", reason="not_on_zenodo", doi=ref.doi)
    assert recid is not None
    concept = cache.store.concept_latest(recid)
    target = recid
    if concept is not None:
        target = concept[0]
        resolved_from = "concept_to_latest"
    holder: dict[str, str] = {}

    def fetch(e: StoredEntry | None) -> StoredEntry:
        asked = recid if concept is not None else (e.key if e else recid)
        stored, via = fetch_record(cache, asked, e if asked == target else None, deadline)
        holder["via"] = via
        return stored

    stored, prov = cache.local_first(ZENODO_RECORD, target, "zenodo_general", deadline, force, fetch)
    if holder.get("via") == "concept_to_latest" or (concept is not None and stored.key != recid):
        resolved_from = "concept_to_latest"
    return Lookup(stored, prov, resolved_from=resolved_from)


def fetch_record(
    cache: Cache, recid: str, entry: StoredEntry | None, deadline: Deadline
) -> tuple[StoredEntry, str]:
    """Ask Zenodo for record ``recid`` now and store the answer; returns ``(entry, resolved_from)``.

    ``resolved_from`` is ``concept_to_latest`` when ``recid`` was a concept id that Zenodo redirected
    to its latest version (the mapping is stored), else ``version``.

    Raises:
        UpstreamError, BudgetExhausted: upstream could not be used; nothing was written.
    """
    answer = cache.zenodo.get_record(recid, deadline, etag=entry.etag if entry else None)
    if answer.status == "not_modified" and entry is not None:
        cache.store.mark_validated(entry.id, etag=answer.etag, last_modified=answer.last_modified)
        return cache.reload(entry), "version"
    if answer.status != "ok" or answer.body is None:
        body = answer.text if answer.status == "gone" else None
        content = EntryContent(
            ZENODO_RECORD, recid, answer.status, body, content_hash(body) if body else None
        )
        stored, _ = cache.store.put_content(content)
        return stored, "version"
    keys = zenodo_norm.record_keys(answer.body)
    content = record_content(answer.body, answer.text, answer.etag, answer.last_modified)
    stored, changed = cache.store.put_content(content)
    log.debug("event=stored kind=zenodo_record key=%s changed=%s", keys.recid, changed)
    via = "version"
    if keys.recid != recid:
        # asked for a concept record id: Zenodo redirected to its latest version
        cache.store.set_concept(recid, keys.recid)
        via = "concept_to_latest"
    elif keys.concept_recid and keys.is_latest:
        cache.store.set_concept(keys.concept_recid, keys.recid)
    return stored, via


def record_content(
    body: dict[str, Any],
    raw: str | None,
    etag: str | None = None,
    last_modified: str | None = None,
) -> EntryContent:
    """Build the stored form of a Zenodo record ``body`` (either JSON shape; raw text kept)."""
    keys = zenodo_norm.record_keys(body)
    view = zenodo_norm.record_view(body)
    names = " ".join(c.name for c in (view.creators or []) if c.name)
    search_text = " ".join(filter(None, (names, view.description, " ".join(view.keywords or []), view.doi)))
    return EntryContent(
        kind=ZENODO_RECORD,
        key=keys.recid,
        status="ok",
        body=raw if raw is not None else json.dumps(body),
        content_hash=content_hash(zenodo_norm.content_hash_projection(body)),
        upstream_version=str(keys.revision) if keys.revision is not None else None,
        doi=keys.doi,
        concept_key=keys.concept_recid,
        title=view.title,
        search_text=search_text or None,
        etag=etag,
        last_modified=last_modified,
        volatile=volatile_json({"stats": body["stats"]} if "stats" in body else {}),
    )


def _refetch(cache: Cache, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    stored, _ = fetch_record(cache, entry.key, entry, deadline)
    return stored


register_kind(ZENODO_RECORD, "zenodo_record", _refetch)
