"""What a stored body must carry, and when a new body looks like a hollow or shrunk answer (pure).

DESIGN.md's "nothing lost": a partial answer never overwrites a stored record. Two checks, both on
the upstream JSON text exactly as it is about to be stored:

* :func:`missing` names the keys a body lacks that every real answer of its kind carries. The lists
  (:data:`REQUIRED`) were derived from the recorded corpus (``tests/corpus/``): all 92 Crossref
  ``/works/{doi}`` messages carry ``DOI`` and ``type`` (and ``title``, which is not required: a
  ``journal-issue`` or ``component`` work may have none, e.g. 10.1002/humu.2018.39.issue-6 in the
  recorded member-98 works page); all 23
  Zenodo records carry ``id`` and ``metadata.title`` (and ``metadata.creators``). A body missing one
  is refused as ``malformed_response`` and never stored.
* :func:`shrink` names the suspicion when a valid new body drops most of what the stored one had:
  less than :data:`SHRINK_RATIO` of its bytes, or the reference list (Crossref) / the creators
  (Zenodo) gone. Such a body is stored only when a later revalidation confirms it.

Only record bodies are checked (Crossref works with ``message-type: work``, Zenodo records); search
pages, entities and list items (``work-list-item``) legitimately vary in size and shape.
"""

from __future__ import annotations

import json
from typing import Any

from syncd.kinds import CROSSREF_WORK, ZENODO_RECORD

__all__ = ["REQUIRED", "SHRINK_RATIO", "SUSPICIOUS_SHRINK", "missing", "shrink"]

REQUIRED: dict[str, tuple[tuple[str, ...], ...]] = {
    CROSSREF_WORK: (("DOI",), ("type",)),
    ZENODO_RECORD: (("id",), ("metadata", "title")),
}
"""Kind -> key paths every real ``ok`` body carries (Crossref: inside ``message``), from the corpus."""

SHRINK_RATIO = 0.5
"""A new body under this share of the stored body's bytes is suspicious."""

SUSPICIOUS_SHRINK = "suspicious_shrink"
"""Reason code of a body held back until a second answer confirms it (``cache.upstream_error``)."""

_RECORD_KEYS = frozenset({"id", "recid", "metadata", "links", "files", "doi", "conceptrecid"})
"""Top-level keys of a Zenodo record: a body with none of them (and not empty) is not checked."""

_LISTS = {CROSSREF_WORK: ("reference",), ZENODO_RECORD: ("metadata", "creators")}
"""Kind -> the list whose loss alone is suspicious (Crossref references, Zenodo creators)."""


def _object(kind: str, body: str | None) -> dict[str, Any] | None:
    """The checked object of a record body (Crossref: its ``message`` when ``message-type`` is ``work``).

    None when the body is not a record of ``kind`` that the checks apply to (not JSON, a list item,
    another shape: other layers decide about those).
    """
    if kind not in REQUIRED or not body:
        return None
    try:
        parsed: Any = json.loads(body)
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    if kind == CROSSREF_WORK:
        message = parsed.get("message")
        if parsed.get("message-type") != "work" or not isinstance(message, dict):
            return None
        return message
    if parsed and not _RECORD_KEYS.intersection(parsed):
        return None  # not shaped like a Zenodo record at all (other layers decide)
    return parsed


def _at(obj: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = obj
    for part in path:
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def missing(kind: str, status: str, body: str | None) -> list[str]:
    """The dotted key paths an ``ok`` record body of ``kind`` lacks (``[]`` when complete or not checked).

    Example: ``missing("crossref_work", "ok", '{"message-type":"work","message":{"DOI":"10.1/x"}}')``
    is ``["type", "title"]``.
    """
    if status != "ok":
        return []
    obj = _object(kind, body)
    if obj is None:
        return []
    return [".".join(path) for path in REQUIRED[kind] if _at(obj, path) is None]


def shrink(kind: str, old_body: str | None, new_body: str | None) -> str | None:
    """:data:`SUSPICIOUS_SHRINK` when ``new_body`` drops most of ``old_body`` (both ``ok`` records).

    Suspicious: fewer than :data:`SHRINK_RATIO` x the old body's bytes (UTF-8), or a non-empty
    reference list (Crossref) / creators list (Zenodo) gone or empty. None otherwise, and when
    either body is not a checked record.
    """
    old, new = _object(kind, old_body), _object(kind, new_body)
    if old is None or new is None or old_body is None or new_body is None:
        return None
    if len(new_body.encode("utf-8")) < SHRINK_RATIO * len(old_body.encode("utf-8")):
        return SUSPICIOUS_SHRINK
    path = _LISTS[kind]
    if _at(old, path) and not _at(new, path):
        return SUSPICIOUS_SHRINK
    return None
