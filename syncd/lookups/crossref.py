"""Crossref lookups through the local-first path: works by DOI (``/works/{doi}``).

Functions here take the :class:`~syncd.cache.Cache` and store what upstream answers as entries of
kind ``crossref_work`` (key: the ASCII-lowercased DOI; body: the raw ``/works/{doi}`` JSON).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from syncd.cache import CROSSREF_WORK, Cache, Lookup, content_hash, register_kind, volatile_json
from syncd.errors import NotFound
from syncd.normalize import crossref as crossref_norm
from syncd.normalize.doi import ParsedDOI
from syncd.store.repo import EntryContent, StoredEntry
from syncd.upstream.http import Deadline

__all__ = ["fetch_work", "get_work", "work_content"]

log = logging.getLogger("syncd.lookups.crossref")


def get_work(
    cache: Cache, doi: ParsedDOI, deadline: Deadline | None = None, *, force: bool = False
) -> Lookup:
    """The Crossref work for ``doi``: from the store when fresh, else from ``/works/{doi}``.

    Raises:
        NotFound: Crossref holds no record (reason ``doi_not_found``), stored or just fetched.
        UpstreamError, BudgetExhausted: nothing stored and upstream could not be used.
    """
    deadline = deadline or Deadline(cache.settings.deadline_s)
    stored, prov = cache.local_first(
        CROSSREF_WORK,
        doi.key,
        "crossref_single",
        deadline,
        force,
        lambda e: fetch_work(cache, doi, e, deadline),
    )
    if stored.status != "ok":
        raise NotFound(
            f"no Crossref record for DOI {doi.doi}",
            reason="doi_not_found",
            doi=doi.doi,
            cache=prov.as_dict(),
        )
    return Lookup(stored, prov)


def fetch_work(cache: Cache, doi: ParsedDOI, entry: StoredEntry | None, deadline: Deadline) -> StoredEntry:
    """Ask Crossref for ``doi`` now (conditionally when ``entry`` holds validators) and store the answer.

    A 304 bumps ``validated_at`` only; a 404 stores a ``not_found`` miss (never over a stored work).

    Raises:
        UpstreamError, BudgetExhausted: upstream could not be used; nothing was written.
    """
    answer = cache.crossref.get_work(
        doi.doi,
        deadline,
        etag=entry.etag if entry else None,
        last_modified=entry.last_modified if entry else None,
    )
    if answer.status == "not_modified" and entry is not None:
        cache.store.mark_validated(entry.id, etag=answer.etag, last_modified=answer.last_modified)
        return cache.reload(entry)
    if answer.status != "ok" or answer.message is None:
        content = EntryContent(CROSSREF_WORK, doi.key, "not_found", None, None, doi=doi.key)
    else:
        content = work_content(doi.key, answer.message, answer.text, answer.etag, answer.last_modified)
    stored, changed = cache.store.put_content(content)
    log.debug("event=stored kind=crossref_work key=%s changed=%s", doi.key, changed)
    return stored


def work_content(
    key: str,
    message: dict[str, Any],
    raw: str | None,
    etag: str | None = None,
    last_modified: str | None = None,
) -> EntryContent:
    """Build the stored form of a Crossref work ``message`` (raw body kept as received)."""
    view = crossref_norm.work_view(message, offset=0, limit=1)
    names = " ".join(
        " ".join(str(a.get(k)) for k in ("given", "family", "name") if a.get(k))
        for a in message.get("author") or []
        if isinstance(a, dict)
    )
    search_text = " ".join(filter(None, (view.containerTitle, names, view.abstract, view.publisher)))
    indexed = (message.get("indexed") or {}).get("date-time")
    return EntryContent(
        kind=CROSSREF_WORK,
        key=key,
        status="ok",
        body=raw
        if raw is not None
        else json.dumps({"status": "ok", "message-type": "work", "message": message}),
        content_hash=content_hash(crossref_norm.content_hash_projection(message)),
        upstream_version=str(indexed) if indexed else None,
        doi=key,
        title=view.title,
        search_text=search_text or None,
        etag=etag,
        last_modified=last_modified,
        volatile=volatile_json({k: message[k] for k in crossref_norm.VOLATILE_FIELDS if k in message}),
    )


def _refetch(cache: Cache, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    doi = ParsedDOI(doi=entry.doi or entry.key, key=entry.key, input_form="bare")
    return fetch_work(cache, doi, entry, deadline)


register_kind(CROSSREF_WORK, "crossref_work", _refetch)
