"""A stored Crossref work as a row of the ``crossref_works`` Parquet table (pure; ``syncd cache export``).

The columns are the fields a lab's analytics group by (journal, ISSN, publisher, type, year, funders,
updates), read from the work's ``/works/{doi}`` body (``message``) as stored; the whole body stays in
the table's ``body`` column for everything else. ``cited_by_count`` is the newest
``is-referenced-by-count`` revalidation saw (the entry's volatile fields), else the body's.
"""

from __future__ import annotations

import json
from typing import Any

from syncd.crossref.views_entries import _updates, parse_date_parts
from syncd.crossref.views_flags import update_flags
from syncd.kinds import ExportColumn, ExportRows
from syncd.store.repo import StoredEntry

__all__ = ["COLUMNS", "EXPORT", "work_row"]

COLUMNS: tuple[ExportColumn, ...] = (
    ExportColumn("type", "VARCHAR", "Crossref `type` (journal-article, book-chapter, ...)"),
    ExportColumn("container_title", "VARCHAR", "first `container-title`: the journal, book or proceedings"),
    ExportColumn("issn", "VARCHAR[]", "`ISSN` as deposited (print and electronic)"),
    ExportColumn("publisher", "VARCHAR", "`publisher`"),
    ExportColumn("member", "VARCHAR", "Crossref `member` id of the depositor"),
    ExportColumn("published_year", "INTEGER", "year of `published` (else `issued`) `date-parts`"),
    ExportColumn("published", "VARCHAR", "`published` (else `issued`) date as YYYY, YYYY-MM or YYYY-MM-DD"),
    ExportColumn("references_count", "INTEGER", "`references-count`: references the publisher deposited"),
    ExportColumn("cited_by_count", "INTEGER", "`is-referenced-by-count`, the newest one revalidation saw"),
    ExportColumn("funder_names", "VARCHAR[]", "`funder[].name`"),
    ExportColumn("funder_dois", "VARCHAR[]", "`funder[].DOI` (Open Funder Registry DOIs, lower-cased)"),
    ExportColumn("updated_by_types", "VARCHAR[]", "`updated-by[].type`: notices about this work"),
    ExportColumn("update_to_dois", "VARCHAR[]", "`update-to[].DOI` lower-cased: works this notice updates"),
    ExportColumn(
        "flags", "VARCHAR[]", "retracted, corrected, expression_of_concern, from `updated-by`/`update-to`"
    ),
    ExportColumn("indexed", "VARCHAR", "`indexed.date-time`: when Crossref last indexed the work"),
)
"""The columns of the ``crossref_works`` table after the ones every entry table has."""


def _first(values: Any) -> str | None:
    """The first element of a list of strings, stripped, or None."""
    if isinstance(values, list) and values and isinstance(values[0], str) and values[0].strip():
        return values[0].strip()
    return None


def _strings(values: Any) -> list[str]:
    """The non-blank strings of a list (anything else dropped)."""
    return [v for v in values if isinstance(v, str) and v.strip()] if isinstance(values, list) else []


def _int(value: Any) -> int | None:
    """An integer field (bool and anything else: None)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _date(message: dict[str, Any]) -> tuple[int | None, str | None]:
    """``(year, 'YYYY[-MM[-DD]]')`` of ``published`` (else ``issued``), or Nones.

    Read by the work view's own :func:`~syncd.crossref.views_entries.parse_date_parts`.
    """
    for field in ("published", "issued"):
        date = parse_date_parts(message.get(field))
        if date is not None:
            text = f"{date.year:04d}" + "".join(f"-{n:02d}" for n in (date.month, date.day) if n is not None)
            return date.year, text
    return None, None


def _cited_by(message: dict[str, Any], volatile: str | None) -> int | None:
    """``is-referenced-by-count``: the entry's volatile value (newest), else the body's."""
    if volatile:
        try:
            fields = json.loads(volatile)
        except ValueError:
            fields = None
        if isinstance(fields, dict) and (count := _int(fields.get("is-referenced-by-count"))) is not None:
            return count
    return _int(message.get("is-referenced-by-count"))


def work_row(body: Any, entry: StoredEntry) -> dict[str, Any]:
    """The :data:`COLUMNS` of one stored ``crossref_work`` entry (``body``: its decoded JSON, or None).

    Reads the ``message`` of the ``GET /works/{doi}`` envelope (a bare work too); a miss, a body that
    is not an object or a field of another shape gives NULLs, never an error.
    """
    if not isinstance(body, dict):
        return {}
    inner = body.get("message")
    message: dict[str, Any] = inner if isinstance(inner, dict) else body
    year, published = _date(message)
    funders = [f for f in message.get("funder") or [] if isinstance(f, dict)]
    updated_by = _updates(message.get("updated-by")) or []
    update_to = _updates(message.get("update-to")) or []
    indexed = message.get("indexed")
    member = message.get("member")
    return {
        "type": message.get("type") if isinstance(message.get("type"), str) else None,
        "container_title": _first(message.get("container-title")),
        "issn": _strings(message.get("ISSN")),
        "publisher": message.get("publisher") if isinstance(message.get("publisher"), str) else None,
        "member": str(member) if isinstance(member, (str, int)) and not isinstance(member, bool) else None,
        "published_year": year,
        "published": published,
        "references_count": _int(message.get("references-count")),
        "cited_by_count": _cited_by(message, entry.volatile),
        "funder_names": [f["name"] for f in funders if isinstance(f.get("name"), str)],
        "funder_dois": [f["DOI"].lower() for f in funders if isinstance(f.get("DOI"), str)],
        "updated_by_types": [u.type for u in updated_by],
        "update_to_dois": [u.doi.lower() for u in update_to],
        "flags": update_flags(entry.doi or entry.key, updated_by, update_to),
        "indexed": indexed.get("date-time") if isinstance(indexed, dict) else None,
    }


EXPORT = ExportRows(table="crossref_works", columns=COLUMNS, row=work_row)
"""The ``crossref_works`` table: every stored Crossref work (``GET /works/{doi}``), its misses too."""
