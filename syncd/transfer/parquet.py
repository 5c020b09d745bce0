"""``syncd cache export --format parquet DIR``: the store as Parquet files, one directory per table.

Written with DuckDB's own Parquet writer (the optional ``syncd[parquet]`` extra, loaded only here): rows
are encoded as JSON Lines (msgspec) into a scratch file of at most :data:`PART_ROWS` rows, which DuckDB
reads with the declared column types and copies to one ``part-NNNNN.parquet`` (zstd), so memory stays
bounded whatever the store's size. The export is built in ``.<DIR>.part`` beside ``DIR`` and renamed to
``DIR`` when complete: a ``DIR`` that exists is a finished export (its ``schema.json`` says what it holds).

Tables (``DIR/<table>/part-*.parquet``; DuckDB reads one with ``read_parquet('DIR/<table>/*.parquet')``)::

    <kind table>      one per kind with an ``export`` hook (:class:`syncd.kinds.ExportRows`): the
                      Crossref works, Zenodo records, DataCite works (``crossref_works``,
                      ``zenodo_records``, ``datacite_works``): :data:`ENTRY_COLUMNS`, then the kind's
                      own columns, then ``body``
    references        the reference index (``work_references``): :data:`REFERENCE_COLUMNS`
    retraction_rows   the Retraction Watch rows held (``retraction_rows``): :data:`RETRACTION_COLUMNS`
    changes           the change feed (``changes``), partitioned by the entry's kind
                      (``changes/kind=<kind>/part-*.parquet``, Hive style): :data:`CHANGE_COLUMNS`

Times are ``TIMESTAMP`` in UTC (the store's epoch seconds); ``body``, ``summary`` and ``fields`` are
``JSON`` (DuckDB's ``->>`` reads into them). ``schema.json`` lists every table with its columns (name,
type, source), rows and files.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import msgspec
from sqlalchemy import select

from syncd import __version__
from syncd.errors import InvalidInput
from syncd.kinds import ExportColumn, ExportRows
from syncd.lazy import load
from syncd.store.maintenance import iter_entries
from syncd.store.models import Change, Entry, RetractionRow, WorkReference
from syncd.store.repo import Store, StoredEntry

__all__ = [
    "CHANGE_COLUMNS",
    "ENTRY_COLUMNS",
    "PART_ROWS",
    "REFERENCE_COLUMNS",
    "RETRACTION_COLUMNS",
    "ParquetReport",
    "export_parquet",
]

PART_ROWS: Final = 100_000
"""Rows per Parquet file (and per scratch file): what one DuckDB copy holds at a time."""

READ_BATCH: Final = 5_000
"""Rows read from the store per query for the tables other than the entries."""

ENTRY_COLUMNS: Final = (
    ExportColumn("key", "VARCHAR", "the store's key: the DOI lower-cased, or Zenodo's record id"),
    ExportColumn("status", "VARCHAR", "ok, or the miss stored: not_found, gone (a tombstone), restricted"),
    ExportColumn("doi", "VARCHAR", "the entry's DOI (lower-cased), as the store indexes it"),
    ExportColumn("title", "VARCHAR", "the title as the store indexes it (markup removed)"),
    ExportColumn("watched", "BOOLEAN", "a DOI watch (`syncd watch add doi`) names this entry"),
    ExportColumn("fetched_at", "TIMESTAMP", "when this body was fetched (UTC)"),
    ExportColumn("validated_at", "TIMESTAMP", "when upstream last confirmed it (UTC)"),
    ExportColumn("content_hash", "VARCHAR", "SHA-256 of the normalized content (changes when content does)"),
)
"""The first columns of every kind table (from ``entries`` and ``validations``); ``body`` comes last."""

BODY_COLUMN: Final = ExportColumn("body", "JSON", "the upstream body exactly as stored (NULL for a miss)")

REFERENCE_COLUMNS: Final = (
    ExportColumn("citing_kind", "VARCHAR", "the kind of the citing entry (crossref_work, ...)"),
    ExportColumn("citing_key", "VARCHAR", "the citing entry's key (joins a kind table's `key`)"),
    ExportColumn("citing_doi", "VARCHAR", "the citing entry's DOI, lower-cased"),
    ExportColumn("cited_doi", "VARCHAR", "a DOI its reference list cites, lower-cased"),
)
"""The ``references`` table: one row per (stored entry, DOI its reference list cites)."""

RETRACTION_COLUMNS: Final = (
    ExportColumn("record_id", "VARCHAR", "Retraction Watch `Record ID`"),
    ExportColumn("nature", "VARCHAR", "retraction, expression_of_concern, correction, reinstatement, ..."),
    ExportColumn("original_doi", "VARCHAR", "`OriginalPaperDOI`, lower-cased"),
    ExportColumn("original_pmid", "VARCHAR", "`OriginalPaperPubMedID`"),
    ExportColumn("notice_doi", "VARCHAR", "`RetractionDOI`, lower-cased"),
    ExportColumn("notice_pmid", "VARCHAR", "`RetractionPubMedID`"),
    ExportColumn("notice_date", "DATE", "`RetractionDate`"),
    ExportColumn("original_date", "DATE", "`OriginalPaperDate`"),
    ExportColumn("title", "VARCHAR", "`Title`"),
    ExportColumn(
        "fields",
        "JSON",
        "every column as parsed: journal, publisher, subjects, countries, reasons, article_types, ...",
    ),
    ExportColumn("dataset_id", "INTEGER", "the imported version that last added or changed the row"),
)
"""The ``retraction_rows`` table: the rows of the newest Retraction Watch version imported."""

CHANGE_COLUMNS: Final = (
    ExportColumn("id", "BIGINT", "the change's id (newer is larger)"),
    ExportColumn("key", "VARCHAR", "the changed entry's key"),
    ExportColumn("doi", "VARCHAR", "its DOI, lower-cased"),
    ExportColumn("series", "VARCHAR", "Zenodo concept record id of the record's series"),
    ExportColumn("detected_at", "TIMESTAMP", "when syncd saw the change (UTC)"),
    ExportColumn("types", "VARCHAR[]", "change types: retraction, correction, new_version, title, ..."),
    ExportColumn("summary", "JSON", "what changed, field by field"),
)
"""The ``changes`` table (partition column ``kind``: the changed entry's kind)."""

_READ_AS: Final = {"INTEGER": "BIGINT", "TIMESTAMP": "DOUBLE", "DATE": "VARCHAR"}
"""How a column is read from the scratch file when its declared type is converted afterwards."""


@dataclass
class ParquetReport:
    """What :func:`export_parquet` wrote: ``rows`` and ``files`` per table, bytes in all, seconds taken."""

    directory: str
    rows: dict[str, int] = field(default_factory=dict)
    files: dict[str, int] = field(default_factory=dict)
    bytes: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-ready values (``syncd cache export --json``)."""
        return {
            "directory": self.directory,
            "rows": dict(self.rows),
            "files": dict(self.files),
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
        }


def _quote(text: str) -> str:
    """A SQL string literal of ``text``."""
    return "'" + text.replace("'", "''") + "'"


def _select_list(columns: Sequence[ExportColumn]) -> str:
    """The projection that gives each scratch-file column its declared type."""
    out = []
    for c in columns:
        name = f'"{c.name}"'
        if c.type == "TIMESTAMP":
            out.append(f"make_timestamp(CAST(round({name} * 1000000) AS BIGINT)) AS {name}")
        elif c.type in _READ_AS:
            out.append(f"TRY_CAST({name} AS {c.type}) AS {name}")
        else:
            out.append(name)
    return ", ".join(out)


class _TableWriter:
    """Rows of one table (one partition) to ``part-NNNNN.parquet`` files, :data:`PART_ROWS` at a time."""

    def __init__(self, con: Any, directory: Path, columns: Sequence[ExportColumn]) -> None:
        self._con = con
        self._dir = directory
        self._columns = tuple(columns)
        self._scratch = directory / ".rows.jsonl"
        self._encoder = msgspec.json.Encoder()
        self._pending: list[dict[str, Any]] = []
        self._in_scratch = 0
        self.rows = 0
        self.files = 0
        types = ", ".join(f"{c.name}: {_quote(_READ_AS.get(c.type, c.type))}" for c in self._columns)
        self._read = (
            "read_json(@PATH@, format='newline_delimited', maximum_object_size=1073741824, "
            f"columns={{{types}}})"
        )
        directory.mkdir(parents=True, exist_ok=True)

    def add(self, row: dict[str, Any]) -> None:
        """Queue one row (a dict by column name; a missing name is NULL)."""
        self._pending.append(row)
        if len(self._pending) >= 5_000:
            self._spill()
        if self._in_scratch >= PART_ROWS:
            self._copy()

    def _spill(self) -> None:
        """Append the queued rows to the scratch file."""
        if not self._pending:
            return
        with self._scratch.open("ab") as fh:
            fh.write(self._encoder.encode_lines(self._pending))
        self._in_scratch += len(self._pending)
        self._pending = []

    def _copy(self) -> None:
        """Copy the scratch file's rows to the next Parquet file and empty it."""
        self._spill()
        if not self._scratch.exists():
            self._scratch.write_bytes(b"")
        target = self._dir / f"part-{self.files:05d}.parquet"
        source = self._read.replace("@PATH@", _quote(str(self._scratch)))
        self._con.execute(
            f"COPY (SELECT {_select_list(self._columns)} FROM {source}) "
            f"TO {_quote(str(target))} (FORMAT parquet, COMPRESSION zstd)"
        )
        self.rows += self._in_scratch
        self.files += 1
        self._in_scratch = 0
        self._scratch.unlink()

    def close(self) -> None:
        """Write what is left (one empty file for an empty table, so its schema is readable)."""
        self._spill()
        if self._in_scratch or not self.files:
            self._copy()


def _body_value(entry: StoredEntry) -> tuple[Any, Any]:
    """``(decoded body, body as written)``: the body as JSON as it is stored, where JSON Lines allows.

    A body on one line goes into the row unchanged (``msgspec.Raw``); one spread over lines is written
    compact (same values); a body that is not JSON is written as a JSON string; a miss as NULL.
    """
    if not entry.body:
        return None, None
    try:
        decoded = msgspec.json.decode(entry.body)
    except msgspec.DecodeError:
        return None, entry.body
    if "\n" in entry.body or "\r" in entry.body:
        return decoded, msgspec.Raw(msgspec.json.encode(decoded))
    return decoded, msgspec.Raw(entry.body.encode("utf-8"))


def _entry_rows(
    store: Store,
    kind: str,
    export: ExportRows,
    watched: frozenset[tuple[str, str]],
    on_entry: Callable[[StoredEntry], None] | None,
) -> Iterator[dict[str, Any]]:
    """The rows of the kind table of ``kind``: the common columns, the kind's own, the body."""
    for entry in iter_entries(store, kind):
        decoded, body = _body_value(entry)
        row = {
            "key": entry.key,
            "status": entry.status,
            "doi": entry.doi,
            "title": entry.title,
            "watched": (kind, entry.key) in watched,
            "fetched_at": entry.fetched_at,
            "validated_at": entry.validated_at,
            "content_hash": entry.content_hash,
        }
        row.update(export.row(decoded, entry))
        row["body"] = body
        if on_entry is not None:
            on_entry(entry)
        yield row


def _reference_rows(store: Store) -> Iterator[dict[str, Any]]:
    """The rows of the ``references`` table, by citing entry then cited DOI."""
    cols = (Entry.kind, Entry.key, Entry.doi, WorkReference.entry_id, WorkReference.cited_doi)
    query = select(*cols).join(Entry, Entry.id == WorkReference.entry_id)
    last: tuple[int, str] | None = None
    while True:
        page = query.order_by(WorkReference.entry_id, WorkReference.cited_doi).limit(READ_BATCH)
        if last is not None:
            page = page.where(
                (WorkReference.entry_id > last[0])
                | ((WorkReference.entry_id == last[0]) & (WorkReference.cited_doi > last[1]))
            )
        with store.read() as conn:
            rows = list(conn.execute(page))
        if not rows:
            return
        for r in rows:
            yield {"citing_kind": r.kind, "citing_key": r.key, "citing_doi": r.doi, "cited_doi": r.cited_doi}
        last = (rows[-1].entry_id, rows[-1].cited_doi)


def _json_raw(text: str | None) -> Any:
    """A stored JSON text column as written to the scratch file (a string when it is not one line)."""
    if text is None:
        return None
    if "\n" in text or "\r" in text:
        try:
            return msgspec.Raw(msgspec.json.encode(msgspec.json.decode(text)))
        except msgspec.DecodeError:
            return text
    try:
        msgspec.json.decode(text)
    except msgspec.DecodeError:
        return text
    return msgspec.Raw(text.encode("utf-8"))


def _retraction_rows(store: Store) -> Iterator[dict[str, Any]]:
    """The rows of the ``retraction_rows`` table, by record id."""
    t = RetractionRow
    cols = (
        t.record_id,
        t.nature,
        t.original_doi,
        t.original_pmid,
        t.notice_doi,
        t.notice_pmid,
        t.notice_date,
        t.original_date,
        t.title,
        t.fields,
        t.dataset_id,
    )
    last: str | None = None
    while True:
        page = select(*cols).order_by(t.record_id).limit(READ_BATCH)
        if last is not None:
            page = page.where(t.record_id > last)
        with store.read() as conn:
            rows = list(conn.execute(page))
        if not rows:
            return
        for r in rows:
            row = dict(r._mapping)
            row["fields"] = _json_raw(row["fields"])
            yield row
        last = rows[-1].record_id


def _change_rows(store: Store) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(kind, row)`` of every change, by kind then id (the ``changes`` table and its partition)."""
    t = Change
    cols = (t.kind, t.id, t.key, t.doi, t.series, t.detected_at, t.types, t.summary)
    last: tuple[str, int] | None = None
    while True:
        page = select(*cols).order_by(t.kind, t.id).limit(READ_BATCH)
        if last is not None:
            page = page.where((t.kind > last[0]) | ((t.kind == last[0]) & (t.id > last[1])))
        with store.read() as conn:
            rows = list(conn.execute(page))
        if not rows:
            return
        for r in rows:
            yield (
                r.kind,
                {
                    "id": r.id,
                    "key": r.key,
                    "doi": r.doi,
                    "series": r.series,
                    "detected_at": r.detected_at,
                    "types": [x for x in r.types.split(",") if x],
                    "summary": _json_raw(r.summary),
                },
            )
        last = (rows[-1].kind, rows[-1].id)


def _write(writer: _TableWriter, rows: Iterable[dict[str, Any]]) -> None:
    """Every row of ``rows`` through ``writer``, then its last file."""
    for row in rows:
        writer.add(row)
    writer.close()


def _duckdb() -> Any:
    """The ``duckdb`` module (the ``syncd[parquet]`` extra).

    Raises:
        InvalidInput: DuckDB is not installed (reason ``invalid_parameter``, naming the extra).
    """
    try:
        return load(__name__, "duckdb")
    except ImportError as exc:
        raise InvalidInput(
            "the Parquet export needs DuckDB: pip install 'syncd[parquet]'", reason="invalid_parameter"
        ) from exc


def _target(directory: Path) -> Path:
    """Check ``directory`` may be written (absent or empty) and return its scratch sibling, made empty.

    Raises:
        InvalidInput: it is a file, or a directory that holds something (``invalid_parameter``).
    """
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise InvalidInput(
            f"{directory} exists and is not an empty directory: export to a new one",
            reason="invalid_parameter",
        )
    part = directory.parent / f".{directory.name}.part"
    if part.exists():
        shutil.rmtree(part)
    try:
        part.mkdir(parents=True)
    except OSError as exc:
        raise InvalidInput(f"cannot write {directory}: {exc}", reason="invalid_parameter") from exc
    return part


def _schema(tables: Mapping[str, Sequence[ExportColumn]], report: ParquetReport) -> dict[str, Any]:
    """The ``schema.json`` document: every table's columns, partition, rows and files."""
    return {
        "format": "syncd-parquet-export/1",
        "syncd_version": __version__,
        "written_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "tables": {
            name: {
                "path": f"{name}/**/*.parquet" if name == "changes" else f"{name}/*.parquet",
                "partitioned_by": ["kind"] if name == "changes" else [],
                "rows": report.rows.get(name, 0),
                "files": report.files.get(name, 0),
                "columns": [{"name": c.name, "type": c.type, "doc": c.doc} for c in columns],
            }
            for name, columns in tables.items()
        },
    }


def export_parquet(
    store: Store,
    directory: Path,
    exports: Mapping[str, ExportRows],
    *,
    watched: Iterable[tuple[str, str]] = (),
    on_entry: Callable[[StoredEntry], None] | None = None,
) -> ParquetReport:
    """Write the store as Parquet files into ``directory`` (absent or empty; see the module's tables).

    ``exports``: kind name -> its ``export`` hook (:class:`syncd.kinds.ExportRows`), one kind table
    each, from the registry (the CLI hands them in); ``watched``: ``(kind, key)`` of the entries a DOI
    watch names (the ``watched`` column); ``on_entry`` is told each entry written (a progress bar).

    Returns:
        The :class:`ParquetReport` (rows and files per table, bytes written, seconds).

    Raises:
        InvalidInput: DuckDB is not installed, or ``directory`` cannot be written or is not empty
            (``invalid_parameter``).
        StoreError: the store could not be read.
    """
    duckdb = _duckdb()
    started = time.perf_counter()
    part = _target(directory)
    report = ParquetReport(directory=str(directory))
    tables: dict[str, Sequence[ExportColumn]] = {}
    seen = frozenset(watched)
    con = duckdb.connect()
    try:
        for kind, export in exports.items():
            columns = (*ENTRY_COLUMNS, *export.columns, BODY_COLUMN)
            tables[export.table] = columns
            writer = _TableWriter(con, part / export.table, columns)
            _write(writer, _entry_rows(store, kind, export, seen, on_entry))
            report.rows[export.table], report.files[export.table] = writer.rows, writer.files
        for name, columns, rows in (
            ("references", REFERENCE_COLUMNS, _reference_rows(store)),
            ("retraction_rows", RETRACTION_COLUMNS, _retraction_rows(store)),
        ):
            tables[name] = columns
            writer = _TableWriter(con, part / name, columns)
            _write(writer, rows)
            report.rows[name], report.files[name] = writer.rows, writer.files
        tables["changes"] = CHANGE_COLUMNS
        report.rows["changes"] = report.files["changes"] = 0
        current: tuple[str, _TableWriter] | None = None
        for kind, row in _change_rows(store):
            if current is None or current[0] != kind:
                if current is not None:
                    current[1].close()
                    report.rows["changes"] += current[1].rows
                    report.files["changes"] += current[1].files
                current = (kind, _TableWriter(con, part / "changes" / f"kind={kind}", CHANGE_COLUMNS))
            current[1].add(row)
        if current is not None:
            current[1].close()
            report.rows["changes"] += current[1].rows
            report.files["changes"] += current[1].files
        else:  # no change yet: one empty partition, so the table and its columns can be read
            empty = next(iter(exports), "none")
            _TableWriter(con, part / "changes" / f"kind={empty}", CHANGE_COLUMNS).close()
            report.files["changes"] = 1
    except BaseException:
        con.close()
        shutil.rmtree(part, ignore_errors=True)
        raise
    con.close()
    (part / "schema.json").write_text(json.dumps(_schema(tables, report), indent=2) + "\n", encoding="utf-8")
    report.bytes = sum(p.stat().st_size for p in part.rglob("*") if p.is_file())
    if directory.exists():
        directory.rmdir()
    os.replace(part, directory)
    report.seconds = time.perf_counter() - started
    return report
