"""A stored Zenodo record as a row of the ``zenodo_records`` Parquet table (pure; ``syncd cache export``).

The columns come from the record view the tools answer with (:func:`syncd.zenodo.views.record_view`,
either body shape, its caps included: the first 25 creators and communities, the first 50 funding
entries); the whole body stays in the table's ``body`` column. A tombstone (``gone``) or a miss has
NULLs here.
"""

from __future__ import annotations

from typing import Any

from syncd.errors import SyncdError
from syncd.kinds import ExportColumn, ExportRows
from syncd.store.repo import StoredEntry
from syncd.zenodo.views import record_view

__all__ = ["COLUMNS", "EXPORT", "record_row"]

COLUMNS: tuple[ExportColumn, ...] = (
    ExportColumn(
        "concept_recid", "VARCHAR", "concept record id of the version series (`parent.id`, `conceptrecid`)"
    ),
    ExportColumn("concept_doi", "VARCHAR", "the series' concept DOI, lower-cased"),
    ExportColumn(
        "resource_type", "VARCHAR", "resource type id (dataset, software, publication-article, ...)"
    ),
    ExportColumn("publication_date", "VARCHAR", "`publication_date` as deposited (ISO 8601)"),
    ExportColumn("publication_year", "INTEGER", "the year of `publication_date`"),
    ExportColumn("version", "VARCHAR", "`version` as deposited"),
    ExportColumn("publisher", "VARCHAR", "`publisher`"),
    ExportColumn("creators", "VARCHAR[]", "creator names (first 25)"),
    ExportColumn("creator_count", "INTEGER", "all creators"),
    ExportColumn("keywords", "VARCHAR[]", "subject keywords (first 50)"),
    ExportColumn("communities", "VARCHAR[]", "community slugs (first 25)"),
    ExportColumn("licenses", "VARCHAR[]", "license ids of `rights`/`license`"),
    ExportColumn("access_status", "VARCHAR", "access status (open, embargoed, restricted, metadata-only)"),
    ExportColumn("funder_names", "VARCHAR[]", "funder names of the funding entries (first 50)"),
    ExportColumn("is_latest", "BOOLEAN", "whether this record is the newest version of its series"),
)
"""The columns of the ``zenodo_records`` table after the ones every entry table has."""


def _year(date: str | None) -> int | None:
    """The year of an ISO 8601 date (``2021-08-26``, ``2021``), or None."""
    head = (date or "")[:4]
    return int(head) if len(head) == 4 and head.isdigit() else None


def record_row(body: Any, entry: StoredEntry) -> dict[str, Any]:
    """The :data:`COLUMNS` of one stored ``zenodo_record`` entry (``body``: its decoded JSON, or None).

    Through the tools' record view (``GET /api/records/{id}`` body, RDM or legacy shape); a tombstone,
    a miss or a body the view cannot read gives NULLs, never an error.
    """
    if not isinstance(body, dict) or entry.status != "ok":
        return {}
    try:
        view = record_view(body)
    except (SyncdError, ValueError, TypeError, AttributeError, KeyError):
        return {}
    return {
        "concept_recid": view.concept_recid,
        "concept_doi": view.concept_doi,
        "resource_type": view.resource_type.id if view.resource_type is not None else None,
        "publication_date": view.publication_date,
        "publication_year": _year(view.publication_date),
        "version": view.version,
        "publisher": view.publisher,
        "creators": [p.name for p in view.creators],
        "creator_count": int(view.creator_count),
        "keywords": list(view.keywords),
        "communities": [c.slug for c in view.communities],
        "licenses": [r.id for r in view.rights if r.id],
        "access_status": view.access.status,
        "funder_names": [f.funder_name for f in view.funding if f.funder_name],
        "is_latest": view.versions.is_latest,
    }


EXPORT = ExportRows(table="zenodo_records", columns=COLUMNS, row=record_row)
"""The ``zenodo_records`` table: every stored Zenodo record (``GET /api/records/{id}``), misses too."""
