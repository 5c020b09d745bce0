"""The stored form of a DataCite work: its content, hash and index fields, and the partial marker.

Shared by the lookups (:mod:`syncd.datacite.lookups`) and the batch revalidation
(:mod:`syncd.datacite.lookups_revalidate`); the content carries the kind's store rules
(:data:`~syncd.datacite.rules.WORK_RULES`).
"""

from __future__ import annotations

import json
from typing import Any

from syncd.datacite.names import DATACITE_WORK
from syncd.datacite.rules import WORK_RULES
from syncd.datacite.views import VOLATILE_FIELDS, content_hash_projection, document, search_fields
from syncd.errors import MalformedResponse
from syncd.store.content import content_hash, volatile_json
from syncd.store.repo import EntryContent, StoredEntry

__all__ = ["PARTIAL", "is_partial", "work_content"]

PARTIAL = "search-page"
"""``partial`` marker of a work stored from a search page (a subset of fields; fetched whole when read)."""


def work_content(key: str, body: dict[str, Any], *, partial: bool = False) -> EntryContent:
    """The stored form of one DataCite record body (``{"data", "included"}``), its hash and index fields.

    ``partial``: the record came from a search page (a subset of fields): marked so, its hash kept
    apart from the whole record's, so the whole answer replaces it.

    Raises:
        MalformedResponse: the body holds no record (nothing is stored).
    """
    doc = document(body)
    if not doc:
        raise MalformedResponse("datacite: no record object")
    title, search_text = search_fields(doc)
    projection = content_hash_projection(body)
    volatile = {k: doc[k] for k in VOLATILE_FIELDS if k in doc}
    if partial:
        body = {**body, "partial": PARTIAL}
        projection = [PARTIAL, projection]
    updated = doc.get("updated")
    return EntryContent(
        DATACITE_WORK,
        key,
        "ok",
        json.dumps(body, ensure_ascii=False),
        content_hash(projection),
        doi=key,
        title=title,
        search_text=search_text,
        upstream_version=PARTIAL if partial else (str(updated) if updated else None),
        volatile=volatile_json(volatile),
        rules=WORK_RULES,
    )


def is_partial(entry: StoredEntry | None) -> bool:
    """Whether a stored ``datacite_work`` came from a search page (fetched whole when read)."""
    return bool(entry is not None and entry.status == "ok" and entry.upstream_version == PARTIAL)
