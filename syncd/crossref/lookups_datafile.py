"""Crossref's public data file of works as entries (the work kind's bulk-import row builder).

``syncd cache import`` of a data file (``.jsonl.gz`` lines of bare work messages, or ``/works/{doi}``
envelopes) reads each line through :data:`DATA_FILE`, a :class:`~syncd.kinds.DataFileRows` the
registry lists: :func:`row` (the fast path, in the import's worker processes) makes the same entry
as :func:`exact` (the fetch path's :func:`~syncd.crossref.lookups.work_content`) without the work
view, hashing with msgspec when the line holds no float. A work counts as validated at its
``indexed`` stamp (``indexed.timestamp``, milliseconds), never later than now.
"""

from __future__ import annotations

import time
from typing import Any

from syncd.crossref import views as crossref_norm
from syncd.crossref.kinds import WORK
from syncd.crossref.lookups import work_content
from syncd.crossref.views_lines import list_line
from syncd.crossref.views_references import cited_dois
from syncd.kinds import Built, DataFileRows
from syncd.normalize.doi import parse_doi
from syncd.store.content import content_hash_exact, volatile_json

__all__ = ["DATA_FILE", "ENVELOPE", "complete", "envelope", "exact", "find", "row"]

ENVELOPE = '{"status":"ok","message-type":"work","message":'
"""The ``/works/{doi}`` envelope a bare data-file work is stored in (compact, as Crossref sends it)."""


def find(doc: Any) -> tuple[dict[str, Any], bool] | None:
    """The work of a data-file item: ``(message, enveloped)``, or None when ``doc`` holds no work.

    A ``/works/{doi}`` envelope (``message-type`` ``work``) or a bare message with a ``DOI`` string.
    """
    if not isinstance(doc, dict):
        return None
    if doc.get("message-type") == "work" and isinstance(doc.get("message"), dict):
        return doc["message"], True
    if isinstance(doc.get("DOI"), str):
        return doc, False
    return None


def complete(message: dict[str, Any]) -> bool:
    """Whether ``message`` has a ``DOI`` string and every key a real work carries (``rules.required``)."""
    if not isinstance(message.get("DOI"), str):
        return False
    for path in WORK.rules.required:
        value: Any = message
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        if value is None:
            return False
    return True


def envelope(text: str) -> str:
    """The stored body of the bare work line ``text`` (its ``/works/{doi}`` envelope, compact)."""
    return ENVELOPE + text + "}"


def _when(message: dict[str, Any]) -> float:
    """When a data-file work counts as validated: its ``indexed.timestamp`` (ms), at most now."""
    ts = (message.get("indexed") or {}).get("timestamp")
    now = time.time()
    return min(((ts / 1000.0) if isinstance(ts, int | float) else None) or now, now)


def exact(message: dict[str, Any], raw: str | None) -> Built:
    """The entry of ``message`` as a fetch stores it (:func:`~syncd.crossref.lookups.work_content`).

    Raises:
        InvalidInput: ``DOI`` is not a DOI.
        MalformedResponse: the work view cannot read ``message``.
    """
    key = parse_doi(str(message.get("DOI", ""))).key
    return work_content(key, message, raw), _when(message)


def row(message: dict[str, Any], body: str, floats: int) -> Built:
    """The fast path's entry of ``message`` stored as ``body`` (the same values as :func:`exact`).

    The hash covers the same canonical projection (serialized by msgspec unless it may hold a float,
    :func:`~syncd.store.content.content_hash_exact`); title and search text from
    :func:`~syncd.crossref.views.work_search_fields`, the list line from
    :func:`~syncd.crossref.views_lists.list_line`; no work view.

    Raises:
        InvalidInput: ``DOI`` is not a DOI.
        TypeError, AttributeError, ValueError: a field of an unexpected shape.
    """
    key = parse_doi(str(message.get("DOI", ""))).key
    stamp = (message.get("indexed") or {}).get("date-time")
    title, search_text = crossref_norm.work_search_fields(message)
    volatile = sum(isinstance(message.get(k), float) for k in crossref_norm.VOLATILE_FIELDS)  # "score"
    content = WORK.content(
        key=key,
        status="ok",
        body=body,
        content_hash=content_hash_exact(
            crossref_norm.content_hash_projection(message), floats=floats > volatile
        ),
        upstream_version=str(stamp) if stamp else None,
        doi=key,
        title=title,
        search_text=search_text,
        volatile=volatile_json({k: message[k] for k in crossref_norm.VOLATILE_FIELDS if k in message}),
        cites=cited_dois(message),
        summary=list_line(message),
    )
    return content, _when(message)


DATA_FILE = DataFileRows(
    kind=WORK, label="a Crossref work", find=find, complete=complete, envelope=envelope, row=row, exact=exact
)
"""Crossref works of the public data file (listed in :data:`syncd.crossref.kinds_hooks.DATA_FILES`, read
through the registry's :func:`~syncd.registry.data_files`)."""
