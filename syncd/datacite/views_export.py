"""A stored DataCite work as a row of the ``datacite_works`` Parquet table (pure; ``syncd cache export``).

The columns are read from the stored ``GET /dois/{doi}`` body's attributes as the tools read them
(:func:`syncd.datacite.views.document`, :func:`~syncd.datacite.views.publication_year`,
:func:`~syncd.datacite.views.client_of`); the whole body stays in the table's ``body`` column.
"""

from __future__ import annotations

import json
from typing import Any

from syncd.datacite.views import as_list, as_object, client_of, document, publication_year
from syncd.kinds import ExportColumn, ExportRows
from syncd.store.repo import StoredEntry

__all__ = ["COLUMNS", "EXPORT", "work_row"]

COLUMNS: tuple[ExportColumn, ...] = (
    ExportColumn("resource_type_general", "VARCHAR", "`types.resourceTypeGeneral` (Dataset, Software, ...)"),
    ExportColumn("resource_type", "VARCHAR", "`types.resourceType` as deposited"),
    ExportColumn("publisher", "VARCHAR", "`publisher` (its `name` when an object)"),
    ExportColumn("publication_year", "INTEGER", "`publicationYear`"),
    ExportColumn("repository_id", "VARCHAR", "the DataCite repository (client) id, `relationships.client`"),
    ExportColumn("provider_id", "VARCHAR", "the repository's provider id, when the body includes the client"),
    ExportColumn("creators", "VARCHAR[]", "`creators[].name`"),
    ExportColumn("subjects", "VARCHAR[]", "`subjects[].subject`"),
    ExportColumn("funder_names", "VARCHAR[]", "`fundingReferences[].funderName`"),
    ExportColumn("version", "VARCHAR", "`version`"),
    ExportColumn("state", "VARCHAR", "`state` (findable, registered)"),
    ExportColumn("registered", "VARCHAR", "`registered`: when the DOI was registered (ISO 8601)"),
    ExportColumn("citation_count", "INTEGER", "`citationCount`, the newest one revalidation saw"),
)
"""The columns of the ``datacite_works`` table after the ones every entry table has."""


def _text(value: Any) -> str | None:
    """A non-blank string, stripped, or None."""
    return value.strip() if isinstance(value, str) and value.strip() else None


def _names(values: Any, field: str) -> list[str]:
    """The non-blank ``field`` strings of a list of objects."""
    return [t for v in as_list(values) if (t := _text(as_object(v).get(field)))]


def _volatile(text: str | None) -> dict[str, Any]:
    """The entry's volatile fields (the newest counters revalidation saw), or ``{}``."""
    try:
        return as_object(json.loads(text)) if text else {}
    except ValueError:
        return {}


def work_row(body: Any, entry: StoredEntry) -> dict[str, Any]:
    """The :data:`COLUMNS` of one stored ``datacite_work`` entry (``body``: its decoded JSON, or None).

    A miss or a body that is not a ``{"data": {...}}`` object gives NULLs, never an error.
    """
    doc = document(body) if entry.status == "ok" else None
    if not doc:
        return {}
    types = as_object(doc.get("types"))
    publisher = doc.get("publisher")
    client = client_of(doc) or {}
    count = _volatile(entry.volatile).get("citationCount", doc.get("citationCount"))
    return {
        "resource_type_general": _text(types.get("resourceTypeGeneral")),
        "resource_type": _text(types.get("resourceType")),
        "publisher": _text(publisher)
        if isinstance(publisher, str)
        else _text(as_object(publisher).get("name")),
        "publication_year": publication_year(doc.get("publicationYear")),
        "repository_id": client.get("repositoryId"),
        "provider_id": client.get("providerId"),
        "creators": _names(doc.get("creators"), "name"),
        "subjects": _names(doc.get("subjects"), "subject"),
        "funder_names": _names(doc.get("fundingReferences"), "funderName"),
        "version": _text(doc.get("version")),
        "state": _text(doc.get("state")),
        "registered": _text(doc.get("registered")),
        "citation_count": count if isinstance(count, int) and not isinstance(count, bool) else None,
    }


EXPORT = ExportRows(table="datacite_works", columns=COLUMNS, row=work_row)
"""The ``datacite_works`` table: every stored DataCite work (``GET /dois/{doi}``), its misses too."""
