"""Reading ``retraction_watch.csv`` as Crossref exports it (pure: bytes in, rows out).

Parsing is the standard library's :mod:`csv` (RFC 4180 quoting: quoted fields with commas, doubled
quotes and line breaks). What the export needs beyond that, handled here:

- the header ends with a comma (an empty 21st column, ignored); columns are found by name, so a
  reordered or extended header still reads; a file lacking a required column is refused;
- the file is not valid UTF-8 throughout: bytes that are not UTF-8 are read as Windows-1252
  (Latin-1 for the five bytes it leaves undefined), counted in :attr:`ParsedFile.replaced_bytes`;
  a UTF-8 byte-order mark is dropped;
- dates are ``M/D/YYYY 0:00`` (also ``M/D/YYYY`` and ISO ``YYYY-MM-DD``), kept as ISO 8601 dates;
- DOIs may be blank, ``unavailable`` or in any case (stored lower-cased, None when not a DOI);
  PubMed ids may be ``0`` (None);
- ``Subject``, ``Institution``, ``Author``, ``ArticleType``, ``Reason``, ``Country``, ``URLS`` are
  ``;``-separated lists (reasons start with ``+``, dropped);
- ``RetractionNature`` is one of ``Retraction``, ``Correction``, ``Expression of concern``,
  ``Reinstatement`` (:data:`~syncd.retractions.names.NATURES`; another value is kept lower-cased);
- a row without a record id, or a record id seen before in the file, is skipped and counted.

The file is read strictly, because a cut download must never pass for a smaller export
(:class:`RefusedFile`, naming the row): a quoted field still open at the end of the file, a last row
without its line break, and a row with fewer cells than the header are refused, and so is a file
with a header and no rows.

Each row also gets the SHA-256 of its raw cells (:func:`cells_hash`), stored beside it: the next
version's rows whose raw cells hash to the stored value are unchanged and are not parsed at all
(``known`` of :func:`parse_bytes`), so importing a daily version costs about the standard library's
``csv.reader`` over the file, not a full parse of every row (BENCHMARKS.md, 23.1).
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from functools import cached_property

from syncd.errors import InvalidInput
from syncd.retractions.names import NATURES

__all__ = [
    "REQUIRED",
    "ParsedFile",
    "RefusedFile",
    "RetractionWatchRow",
    "cells_hash",
    "parse_bytes",
    "parse_date",
    "parse_doi",
]

REQUIRED = ("Record ID", "RetractionNature", "OriginalPaperDOI", "OriginalPaperPubMedID")
"""Columns without which a file is not the Retraction Watch export."""

_ERRORS = "syncd-cp1252"
_DATE = re.compile(r"^\s*(\d{1,2})/(\d{1,2})/(\d{4})(?:\s+\d{1,2}:\d{2}(?::\d{2})?)?\s*$")
_ISO = re.compile(r"^\s*(\d{4})-(\d{2})-(\d{2})")
_SPACE = re.compile(r"\s")
_CELL_SEPARATOR = "\x1f"  # ASCII unit separator: cannot end one cell and start the next ambiguously
_DOI_URL = re.compile(r"^(?:https?://)?(?:dx\.)?doi\.org/", re.IGNORECASE)
csv.field_size_limit(16 * 1024 * 1024)  # a long author or notes field is one field, not an error


class RefusedFile(InvalidInput):
    """A Retraction Watch file (or version) refused whole: nothing of it is stored.

    ``refusal`` (also ``data["refusal"]``) names the rule it broke: ``empty`` (no rows),
    ``open_quote`` (a quoted field open at the end of the file), ``cut_row`` (the last row lacks its
    line break), ``short_row`` (a row with fewer cells than the header), ``not_csv``, or ``shrink``
    (the version would remove more than ``retractions.max_removed_share`` of the rows held,
    :mod:`syncd.retractions.importer`). Reason ``invalid_parameter``.
    """

    def __init__(self, message: str, refusal: str, **data: object) -> None:
        super().__init__(message, reason="invalid_parameter", refusal=refusal, **data)
        self.refusal = refusal


def _cp1252_fallback(exc: UnicodeError) -> tuple[str, int]:
    """Decode error handler: the offending bytes as Windows-1252 (Latin-1 where it has no character)."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    bad = exc.object[exc.start : exc.end]
    text = "".join(
        bytes([b]).decode("cp1252", errors="strict") if b not in (0x81, 0x8D, 0x8F, 0x90, 0x9D) else chr(b)
        for b in bad
    )
    return text, exc.end


codecs.register_error(_ERRORS, _cp1252_fallback)


@dataclass(frozen=True)
class RetractionWatchRow:
    """One row of the export, parsed (the CSV's columns by their meaning).

    ``record_id`` is the ``Record ID`` (as in Crossref's ``updated-by`` ``record-id``);
    ``original_doi``/``notice_doi`` lower-cased DOIs (``OriginalPaperDOI``/``RetractionDOI``; None:
    blank or ``unavailable``); ``original_pmid``/``notice_pmid`` PubMed ids (None for ``0``);
    ``notice_date``/``original_date`` ISO 8601 dates (``RetractionDate``/``OriginalPaperDate``);
    ``nature`` normalized; the list columns as tuples.
    """

    record_id: str
    nature: str
    original_doi: str | None
    original_pmid: str | None
    notice_doi: str | None
    notice_pmid: str | None
    notice_date: str | None
    original_date: str | None
    title: str | None
    journal: str | None = None
    publisher: str | None = None
    subjects: tuple[str, ...] = ()
    institutions: tuple[str, ...] = ()
    countries: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()
    article_types: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    paywalled: str | None = None
    notes: str | None = None

    @cached_property
    def _json(self) -> str:
        values = {name: getattr(self, name) for name in _FIELD_NAMES}
        return json.dumps(values, ensure_ascii=False, sort_keys=True, separators=(",", ":"))

    def fields_json(self) -> str:
        """Canonical JSON of every field (sorted keys, no spaces): what is stored and hashed."""
        return self._json

    def row_hash(self) -> str:
        """SHA-256 (hex) of :meth:`fields_json`: equal for an unchanged row in two versions."""
        return hashlib.sha256(self._json.encode("utf-8")).hexdigest()

    @classmethod
    def from_json(cls, text: str) -> RetractionWatchRow:
        """The row stored as :meth:`fields_json` (lists back as tuples).

        Raises:
            ValueError: ``text`` is not a stored row.
        """
        data = json.loads(text)
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()})


_FIELD_NAMES = tuple(f.name for f in fields(RetractionWatchRow))


@dataclass
class ParsedFile:
    """What :func:`parse_bytes` read from one file.

    ``rows`` parsed (record ids unique, file order), ``hashes`` record id -> :func:`cells_hash` of
    each parsed row, ``unchanged`` record ids whose raw cells hash to the ``known`` value given (not
    parsed; empty without ``known``), ``skipped`` rows, ``replaced_bytes`` read as Windows-1252, and
    the file's ``sha256`` (hex). The file holds ``len(rows) + len(unchanged)`` rows (:attr:`total`).
    """

    sha256: str
    rows: list[RetractionWatchRow] = field(default_factory=list)
    hashes: dict[str, str] = field(default_factory=dict)
    unchanged: list[str] = field(default_factory=list)
    skipped: int = 0
    replaced_bytes: int = 0

    @property
    def total(self) -> int:
        """Rows of the file (parsed and unchanged), the skipped ones not counted."""
        return len(self.rows) + len(self.unchanged)


def cells_hash(cells: list[str]) -> str:
    """SHA-256 (hex) of one CSV row's raw cells as read (file order, unit-separator joined).

    Equal for a row written identically in two versions; a reordered or extended header changes
    every row's value (such rows are then parsed and compared field by field, see
    :func:`syncd.retractions.storage.apply_version`).
    """
    return hashlib.sha256(_CELL_SEPARATOR.join(cells).encode("utf-8", "surrogatepass")).hexdigest()


def parse_date(value: str | None) -> str | None:
    """``M/D/YYYY 0:00`` (or ``M/D/YYYY``, ``YYYY-MM-DD``) -> ``YYYY-MM-DD``; None: blank or unreadable."""
    if not value:
        return None
    m = _DATE.match(value)
    if m:
        month, day, year = int(m.group(1)), int(m.group(2)), int(m.group(3))
    elif m := _ISO.match(value):
        year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
    else:
        return None
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    return f"{year:04d}-{month:02d}-{day:02d}"


def parse_doi(value: str | None) -> str | None:
    """A DOI cell lower-cased (a doi.org URL unwrapped); None for blank, ``unavailable`` or not a DOI."""
    text = (value or "").strip()
    if not text.startswith("10."):
        text = _DOI_URL.sub("", text).strip()
    if not text.startswith("10.") or "/" not in text or _SPACE.search(text):
        return None
    return text.lower()


def _pmid(value: str | None) -> str | None:
    text = (value or "").strip()
    return text if text.isdigit() and int(text) > 0 else None


def _list(value: str | None, strip: str = "") -> tuple[str, ...]:
    if not value:
        return ()
    if strip:
        return tuple(filter(None, [x.strip().lstrip(strip).strip() for x in value.split(";")]))
    return tuple(filter(None, [x.strip() for x in value.split(";")]))


def _text(value: str | None) -> str | None:
    text = (value or "").strip()
    return text or None


def _nature(value: str | None) -> str:
    text = " ".join((value or "").split()).lower()
    return NATURES.get(text, text.replace(" ", "_") or "unknown")


def decode(data: bytes) -> tuple[str, int]:
    """``data`` as text (UTF-8, BOM dropped, other bytes as Windows-1252) and the count of such bytes."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors=_ERRORS)
        strict = data.decode("utf-8", errors="ignore")
        return text, len(data) - len(strict.encode("utf-8"))


Columns = dict[str, int]
"""Header name -> its column index in the file."""


def _header(reader: Iterator[list[str]]) -> Columns:
    header = next(reader, None)
    if header is None:
        raise InvalidInput("the Retraction Watch file is empty", reason="invalid_parameter")
    names = [h.strip().lstrip("\ufeff") for h in header]
    missing = [c for c in REQUIRED if c not in names]
    if missing:
        raise InvalidInput(
            f"not the Retraction Watch export: no {', '.join(missing)} column "
            f"(header starts {', '.join(names[:4])})",
            reason="invalid_parameter",
        )
    return {n: i for i, n in reversed(list(enumerate(names))) if n}


def _row(cells: list[str], columns: Columns, record_id: str) -> RetractionWatchRow:
    width = len(cells)

    def cell(name: str) -> str | None:
        i = columns.get(name)
        return cells[i] if i is not None and i < width else None

    return RetractionWatchRow(
        record_id=record_id,
        nature=_nature(cell("RetractionNature")),
        original_doi=parse_doi(cell("OriginalPaperDOI")),
        original_pmid=_pmid(cell("OriginalPaperPubMedID")),
        notice_doi=parse_doi(cell("RetractionDOI")),
        notice_pmid=_pmid(cell("RetractionPubMedID")),
        notice_date=parse_date(cell("RetractionDate")),
        original_date=parse_date(cell("OriginalPaperDate")),
        title=_text(cell("Title")),
        journal=_text(cell("Journal")),
        publisher=_text(cell("Publisher")),
        subjects=_list(cell("Subject")),
        institutions=_list(cell("Institution")),
        countries=_list(cell("Country")),
        authors=_list(cell("Author")),
        urls=_list(cell("URLS")),
        article_types=_list(cell("ArticleType")),
        reasons=_list(cell("Reason"), strip="+"),
        paywalled=_text(cell("Paywalled")),
        notes=_text(cell("Notes")),
    )


def parse_bytes(data: bytes, known: Mapping[str, str] | None = None) -> ParsedFile:
    """Every row of a ``retraction_watch.csv`` file's bytes (see the module docstring).

    ``known``: record id -> the :func:`cells_hash` stored for it; a row whose raw cells hash to it
    is listed in :attr:`ParsedFile.unchanged`, not parsed.

    Raises:
        InvalidInput: reason ``invalid_parameter``: empty, or the header lacks a :data:`REQUIRED`
            column (not the export).
        RefusedFile: the file is cut or damaged (an open quote at the end, a last row without its
            line break, a row with fewer cells than the header, text that is not CSV) or holds no
            rows; the message names the row (1 = the first row after the header) and the line.
    """
    text, replaced = decode(data)
    out = ParsedFile(sha256=hashlib.sha256(data).hexdigest(), replaced_bytes=replaced)
    known = known or {}
    seen: set[str] = set()
    row = 0
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        columns = _header(reader)
        width = max(columns.values()) + 1
        id_column = columns["Record ID"]
        for cells in reader:
            if not cells or not any(cells):
                continue
            row += 1
            if len(cells) < width:
                raise RefusedFile(
                    f"row {row} (line {reader.line_num}) has {len(cells)} cells, the header "
                    f"{width}: the file is cut or damaged",
                    "short_row",
                    row=row,
                )
            record_id = cells[id_column].strip()
            if not record_id or record_id in seen:
                out.skipped += 1
                continue
            seen.add(record_id)
            digest = cells_hash(cells)
            if known.get(record_id) == digest:
                out.unchanged.append(record_id)
                continue
            out.rows.append(_row(cells, columns, record_id))
            out.hashes[record_id] = digest
    except csv.Error as exc:
        if "end of data" in str(exc):
            raise RefusedFile(
                f"row {row + 1} (line {reader.line_num}) opens a quoted field that never closes: "
                "the file is cut inside a quoted field",
                "open_quote",
                row=row + 1,
            ) from exc
        raise RefusedFile(
            f"row {row + 1} (line {reader.line_num}) is not readable CSV: {exc}", "not_csv", row=row + 1
        ) from exc
    if row and not text.endswith(("\n", "\r")):
        raise RefusedFile(
            f"row {row} (line {reader.line_num}), the last, has no line break: the file is cut",
            "cut_row",
            row=row,
        )
    if not out.total:
        raise RefusedFile("the Retraction Watch file holds a header and no rows", "empty", row=0)
    return out
