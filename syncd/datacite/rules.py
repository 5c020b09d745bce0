"""The store rules of the DataCite slice's kinds (:class:`~syncd.store.rules.StoreRules`; pure).

A stored DataCite work is ``{"data": <record>, "included": [<client>]}`` (:func:`syncd.datacite.views.
stored_body`). Every recorded record (``tests/corpus/datacite/work/``, ``work-list/``) carries
``id`` and ``attributes.doi``; a body without them (``{}``, ``{"data": {}}``, ``{"data": []}``) is
refused as hollow and the stored copy kept. A record that loses most of its bytes, or its creators,
is held back (``shrinks``, ``kept_list``). A list page carries ``data`` and ``meta``.

DataCite sends no validators (no ``Last-Modified``, no 304, no ETag since June 2026): freshness is
the content hash over :func:`~syncd.datacite.views.content_hash_projection` (counters, the XML copy
and the ``updated`` stamp left out). A replaced record's change summary uses the change types of
:mod:`syncd.normalize.changes` (``title``, ``authors``, ``date``, ``found``, ``metadata``).
"""

from __future__ import annotations

import json
from typing import Any

from syncd.datacite.views import content_hash_projection, document, first_title, publication_year
from syncd.store.rules import ChangeSummary, Side, StoreRules

__all__ = ["LIST_RULES", "WORK_RULES", "record_of", "summarize"]

_COMPARED = ("version", "state", "url", "rightsList", "relatedIdentifiers", "types", "publisher")
"""Fields a ``metadata`` change names when they differ (besides title, creators and year)."""


def record_of(body: Any) -> dict[str, Any] | None:
    """The record object the guard checks: ``data`` (``{}`` when absent or empty; None for a non-object)."""
    if not isinstance(body, dict):
        return None
    data = body.get("data")
    if isinstance(data, list):
        data = data[0] if data else {}
    return data if isinstance(data, dict) else {}


def _list_page(body: Any) -> dict[str, Any] | None:
    return body if isinstance(body, dict) else None


def _doc(side: Side) -> dict[str, Any]:
    if side.status != "ok" or not side.body:
        return {}
    try:
        return document(json.loads(side.body)) or {}
    except ValueError:
        return {}


def _names(doc: dict[str, Any]) -> list[str]:
    return [str(c.get("name")) for c in doc.get("creators") or [] if isinstance(c, dict) and c.get("name")]


def summarize(old: Side, new: Side) -> ChangeSummary | None:
    """What changed between two stored bodies of one DataCite work (None: nothing to record)."""
    before, after = _doc(old), _doc(new)
    if not after:
        return None
    doi = str(after.get("doi") or "").lower() or None
    title = first_title(after)
    if not before:
        if old.status == "ok":
            return None
        return ChangeSummary(("found",), ({"type": "found"},), doi=doi, title=title)
    types: list[str] = []
    items: list[dict[str, Any]] = []
    if first_title(before) != title:
        types.append("title")
        items.append({"type": "title", "from": first_title(before), "to": title})
    old_names, new_names = _names(before), _names(after)
    if old_names != new_names:
        types.append("authors")
        items.append(
            {
                "type": "authors",
                "from_count": len(old_names),
                "to_count": len(new_names),
                "added": [n for n in new_names if n not in old_names][:10],
                "removed": [n for n in old_names if n not in new_names][:10],
            }
        )
    old_year, new_year = (
        publication_year(before.get("publicationYear")),
        publication_year(after.get("publicationYear")),
    )
    if old_year != new_year:
        types.append("date")
        items.append({"type": "date", "from": old_year, "to": new_year})
    fields = [f for f in _COMPARED if before.get(f) != after.get(f)]
    if fields:
        types.append("metadata")
        items.append({"type": "metadata", "fields": fields})
    if not types:
        return None
    return ChangeSummary(tuple(types), tuple(items), doi=doi, title=title)


def _document(body: Any) -> Any:
    doc = document(body)
    return doc if doc is not None else body


WORK_RULES = StoreRules(
    checked=record_of,
    required=(("id",), ("attributes", "doi")),
    shrinks=True,
    kept_list=("attributes", "creators"),
    summarize=summarize,
    projection=content_hash_projection,
    document=_document,
    bulk=True,
)
"""``datacite_work``: refused without ``id``/``attributes.doi``, held back when it loses its creators."""

LIST_RULES = StoreRules(checked=_list_page, required=(("data",), ("meta",)))
"""``datacite_search``: a list page carries ``data`` and ``meta``."""
