"""The list line of a stored work: the fields a ``works[]`` line shows, kept beside the body.

A stored Crossref work carries, beside its body, its *list line* (``entry_lines.line``, migration
0015; :mod:`syncd.store.lines`): the JSON text of the top-level fields of the work ``message`` that a
list line reads (a ``crossref_search_works`` line, :func:`syncd.crossref.views_lists.work_summary`;
a ``crossref_get_works`` item, :func:`syncd.crossref.tools_batch.item_data`), its authors cut at
:data:`LINE_AUTHORS` (the most a search shows, ``authorLimit`` 500) and reduced to their names, with
the full author count under :data:`AUTHOR_TOTAL` when cut. An offline search hit then reads a few
hundred bytes instead of parsing the whole body (one work has 2,932 authors); the line it renders is
the same, byte for byte.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

__all__ = [
    "AUTHOR_TOTAL",
    "LINE_AUTHORS",
    "LINE_KEYS",
    "author_names",
    "item_fields",
    "line_item",
    "list_line",
]

LINE_KEYS = (
    "DOI", "title", "type", "published", "published-print", "published-online", "container-title",
    "volume", "issue", "page", "article-number", "ISSN", "publisher", "is-referenced-by-count", "score",
    "abstract", "updated-by", "update-to", "issued",
)  # fmt: skip
"""The top-level ``message`` fields a list line reads, besides ``author`` (``issued``: the date a
``crossref_get_works`` item falls back to; lines written before migration 0015 lack it, see there)."""

LINE_AUTHORS = 500
"""Authors kept in a list line (``crossref_search_works``' ``authorLimit`` is at most 500)."""

AUTHOR_TOTAL = "syncd:author-count"
"""The key of the full author count in a list line whose authors were cut (no Crossref key has a colon)."""

_NAMES = ("given", "family", "name")
_ENCODE = msgspec.json.Encoder().encode


def _author(value: Any) -> dict[str, Any]:
    return {k: value[k] for k in _NAMES if k in value} if isinstance(value, dict) else {}


def list_line(message: dict[str, Any]) -> str | None:
    """The list line of the work ``message`` as JSON text (None when it has no ``DOI`` string)."""
    if not isinstance(message.get("DOI"), str):
        return None
    line = {k: message[k] for k in LINE_KEYS if k in message}
    authors = message.get("author")
    if isinstance(authors, list):
        line["author"] = [_author(a) for a in authors[:LINE_AUTHORS]]
        if len(authors) > LINE_AUTHORS:
            line[AUTHOR_TOTAL] = len(authors)
    elif "author" in message:
        line["author"] = authors
    try:
        encoded = _ENCODE(line)
    except (TypeError, ValueError, OverflowError):  # e.g. a lone surrogate: json writes it
        encoded = b"null"
    if b"null" in encoded:  # msgspec writes NaN and infinities as null: json keeps them as read
        return json.dumps(line, ensure_ascii=False, separators=(",", ":"))
    return encoded.decode("utf-8")


def item_fields(item: dict[str, Any]) -> dict[str, Any]:
    """``item`` (a list line or a work ``message``) without its ``abstract``: a shallow copy.

    What a ``crossref_get_works`` item and a retraction verdict read of a work: its view is then built
    without turning the JATS abstract into text (the costliest field of a line; neither shows it).
    """
    return {k: v for k, v in item.items() if k != "abstract"}


def line_item(text: str) -> dict[str, Any]:
    """The list line ``text`` (:func:`list_line`) as the item ``work_summary`` reads; ``{}``: unreadable."""
    try:
        item = json.loads(text)
    except ValueError:
        return {}
    return item if isinstance(item, dict) else {}


def author_names(authors: Any) -> str:
    """Each author's ``given``, ``family`` and ``name`` (those set) joined by spaces, authors by spaces.

    The author part of a work's search text (:func:`syncd.crossref.views.work_search_fields`).

    The plain case (``given`` and ``family`` strings, no ``name``) takes one concatenation; one work
    of the data file has 2,932 authors, and this runs for every work of an import.
    """
    out: list[str] = []
    append = out.append
    for a in authors:
        if type(a) is not dict and not isinstance(a, dict):
            continue
        given, family, name = a.get("given"), a.get("family"), a.get("name")
        if not name and type(given) is str and type(family) is str and given and family:
            append(given + " " + family)
        else:
            append(" ".join([str(v) for v in (given, family, name) if v]))
    return " ".join(out)
