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
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field

from syncd.errors import InvalidInput
from syncd.retractions.names import NATURES

__all__ = ["REQUIRED", "ParsedFile", "RetractionWatchRow", "parse_bytes", "parse_date", "parse_doi"]

REQUIRED = ("Record ID", "RetractionNature", "OriginalPaperDOI", "OriginalPaperPubMedID")
"""Columns without which a file is not the Retraction Watch export."""

_ERRORS = "syncd-cp1252"
_DATE = re.compile(r"^\s*(\d{1,2})/(\d{1,2})/(\d{4})(?:\s+\d{1,2}:\d{2}(?::\d{2})?)?\s*$")
_ISO = re.compile(r"^\s*(\d{4})-(\d{2})-(\d{2})")
_DOI_URL = re.compile(r"^(?:https?://)?(?:dx\.)?doi\.org/", re.IGNORECASE)
csv.field_size_limit(16 * 1024 * 1024)  # a long author or notes field is one field, not an error


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

    def fields_json(self) -> str:
        """Canonical JSON of every field (sorted keys, no spaces): what is stored and hashed."""
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True, separators=(",", ":"))

    def row_hash(self) -> str:
        """SHA-256 (hex) of :meth:`fields_json`: equal for an unchanged row in two versions."""
        return hashlib.sha256(self.fields_json().encode("utf-8")).hexdigest()

    @classmethod
    def from_json(cls, text: str) -> RetractionWatchRow:
        """The row stored as :meth:`fields_json` (lists back as tuples).

        Raises:
            ValueError: ``text`` is not a stored row.
        """
        data = json.loads(text)
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()})


@dataclass
class ParsedFile:
    """What :func:`parse_bytes` read from one file.

    ``rows`` (record ids unique, file order), ``skipped`` rows, ``replaced_bytes`` read as
    Windows-1252, and the file's ``sha256`` (hex).
    """

    sha256: str
    rows: list[RetractionWatchRow] = field(default_factory=list)
    skipped: int = 0
    replaced_bytes: int = 0


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
    text = _DOI_URL.sub("", (value or "").strip()).strip()
    if not text.startswith("10.") or "/" not in text or any(c.isspace() for c in text):
        return None
    return text.lower()


def _pmid(value: str | None) -> str | None:
    text = (value or "").strip()
    return text if text.isdigit() and int(text) > 0 else None


def _list(value: str | None, strip: str = "") -> tuple[str, ...]:
    parts = ((p.strip().lstrip(strip).strip()) for p in (value or "").split(";"))
    return tuple(p for p in parts if p)


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


def _records(text: str) -> Iterator[dict[str, str]]:
    reader = csv.reader(io.StringIO(text, newline=""))
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
    for cells in reader:
        if cells and any(c.strip() for c in cells):
            yield {n: c for n, c in zip(names, cells, strict=False) if n}


def _row(rec: dict[str, str]) -> RetractionWatchRow | None:
    record_id = (rec.get("Record ID") or "").strip()
    if not record_id:
        return None
    return RetractionWatchRow(
        record_id=record_id,
        nature=_nature(rec.get("RetractionNature")),
        original_doi=parse_doi(rec.get("OriginalPaperDOI")),
        original_pmid=_pmid(rec.get("OriginalPaperPubMedID")),
        notice_doi=parse_doi(rec.get("RetractionDOI")),
        notice_pmid=_pmid(rec.get("RetractionPubMedID")),
        notice_date=parse_date(rec.get("RetractionDate")),
        original_date=parse_date(rec.get("OriginalPaperDate")),
        title=_text(rec.get("Title")),
        journal=_text(rec.get("Journal")),
        publisher=_text(rec.get("Publisher")),
        subjects=_list(rec.get("Subject")),
        institutions=_list(rec.get("Institution")),
        countries=_list(rec.get("Country")),
        authors=_list(rec.get("Author")),
        urls=_list(rec.get("URLS")),
        article_types=_list(rec.get("ArticleType")),
        reasons=_list(rec.get("Reason"), strip="+"),
        paywalled=_text(rec.get("Paywalled")),
        notes=_text(rec.get("Notes")),
    )


def parse_bytes(data: bytes) -> ParsedFile:
    """Every row of a ``retraction_watch.csv`` file's bytes (see the module docstring).

    Raises:
        InvalidInput: reason ``invalid_parameter``: empty, or the header lacks a :data:`REQUIRED`
            column (not the export), or the text is not CSV (:class:`csv.Error`).
    """
    text, replaced = decode(data)
    out = ParsedFile(sha256=hashlib.sha256(data).hexdigest(), replaced_bytes=replaced)
    seen: set[str] = set()
    try:
        for rec in _records(text):
            row = _row(rec)
            if row is None or row.record_id in seen:
                out.skipped += 1
                continue
            seen.add(row.record_id)
            out.rows.append(row)
    except csv.Error as exc:
        raise InvalidInput(
            f"the Retraction Watch file is not readable CSV: {exc}", reason="invalid_parameter"
        ) from exc
    return out
