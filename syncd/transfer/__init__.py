"""Export and import of stored entries as JSON Lines, and import of Crossref's public data file.

Four modules, one job each: :mod:`syncd.transfer.export` (``syncd cache export``),
:mod:`syncd.transfer.parquet` (``syncd cache export --format parquet DIR``: the store as Parquet tables,
written with DuckDB, the optional ``syncd[parquet]`` extra), :mod:`syncd.transfer.imports`
(``syncd cache import``, its exact and bulk paths) and :mod:`syncd.transfer.formats` (gzip, JSON Lines,
JSON documents, chunked reading ahead).

Export format (one JSON object per line, optionally gzip-compressed when the file name ends in
``.gz``)::

    {"kind": "crossref_work", "key": "10.1101/598821", "status": "ok",
     "fetched_at": "2026-...Z", "validated_at": "2026-...Z", "etag": null, "last_modified": null,
     "body": {...the raw upstream JSON as stored...}}

``body`` is the upstream body exactly as stored (``/works/{doi}`` envelope for Crossref, the record
for Zenodo, the tombstone for ``gone``; ``null`` for ``not_found``/``restricted``).

Import reads, line by line or file by file:
* syncd exports (objects with ``kind`` and ``body``);
* Crossref public data files: ``.jsonl.gz`` / ``.jsonl`` with one work per line, and ``.json.gz`` /
  ``.json`` holding ``{"items": [...]}`` (older snapshots); a work may also come wrapped in a
  ``/works/{doi}`` envelope (``{"message-type": "work", "message": {...}}``).

Every item is stored through its kind (the ``load`` hook of an exported line, the row builder of a
data file's object, :class:`syncd.kinds.DataFileRows`, which the caller hands in) and
``Store.put_content`` or the bulk writer, so hashes, the FTS index and volatile counters stay
consistent. Nothing lost: an imported item never replaces a stored entry
that is as new or newer (Crossref: ``indexed`` stamp; syncd exports: ``validated_at``), and an
imported entry keeps its age (a Crossref work from a data file counts as validated at its
``indexed`` time), so the daemon revalidates it on schedule instead of trusting it as fresh.
"""

from __future__ import annotations

from syncd.transfer.export import export_entries, export_line
from syncd.transfer.formats import open_text
from syncd.transfer.imports import (
    IMPORT_BATCH,
    WORKERS_MAX,
    ImportReport,
    default_workers,
    import_item,
    import_paths,
    prepare_line,
)
from syncd.transfer.parquet import ParquetReport, export_parquet

__all__ = [
    "IMPORT_BATCH",
    "WORKERS_MAX",
    "ImportReport",
    "ParquetReport",
    "default_workers",
    "export_entries",
    "export_line",
    "export_parquet",
    "import_item",
    "import_paths",
    "open_text",
    "prepare_line",
]
