"""Export and import of stored entries as JSON Lines, and import of Crossref's public data file.

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

Every item is stored through :func:`syncd.lookups.crossref.work_content` /
:func:`syncd.lookups.zenodo.record_content` and ``Store.put_content``, so hashes, the FTS index and
volatile counters stay consistent. Nothing lost: an imported item never replaces a stored entry
that is as new or newer (Crossref: ``indexed`` stamp; syncd exports: ``validated_at``), and an
imported entry keeps its age (a Crossref work from a data file counts as validated at its
``indexed`` time), so the daemon revalidates it on schedule instead of trusting it as fresh.
"""

from __future__ import annotations

import datetime as dt
import gzip
import io
import itertools
import json
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from syncd.errors import InvalidInput, MalformedResponse
from syncd.kinds import CROSSREF_WORK, KINDS, ZENODO_RECORD
from syncd.lookups.crossref import work_content
from syncd.lookups.zenodo import record_content
from syncd.normalize import zenodo as zenodo_norm
from syncd.normalize.doi import parse_doi
from syncd.policy import iso
from syncd.store.content import content_hash
from syncd.store.maintenance import iter_entries
from syncd.store.repo import EntryContent, Store, StoredEntry

__all__ = ["ImportReport", "export_entries", "import_paths", "open_text"]


def open_text(path: str | Path, mode: str = "r") -> IO[str]:
    """Open ``path`` as UTF-8 text, through gzip when it ends in ``.gz``; ``-`` is stdin/stdout."""
    if str(path) == "-":
        return sys.stdout if "w" in mode else sys.stdin
    p = Path(path)
    if p.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(p, mode.replace("t", "") + "b"), encoding="utf-8")  # type: ignore[arg-type]
    return open(p, mode, encoding="utf-8")


def export_line(entry: StoredEntry) -> str:
    """One export line for ``entry``."""
    body: Any = None
    if entry.body:
        try:
            body = json.loads(entry.body)
        except ValueError:
            body = entry.body
    record = {
        "kind": entry.kind,
        "key": entry.key,
        "status": entry.status,
        "fetched_at": iso(entry.fetched_at),
        "validated_at": iso(entry.validated_at),
        "etag": entry.etag,
        "last_modified": entry.last_modified,
        "body": body,
    }
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def export_entries(
    store: Store,
    out: IO[str],
    *,
    kind: str | None = None,
    on_entry: Callable[[StoredEntry], None] | None = None,
) -> int:
    """Write every stored entry (optionally of one ``kind``) to ``out``; returns how many."""
    n = 0
    for entry in iter_entries(store, kind):
        out.write(export_line(entry) + "\n")
        n += 1
        if on_entry is not None:
            on_entry(entry)
    return n


@dataclass
class ImportReport:
    """Counts of one import.

    Items ``read``; ``new``/``changed``/``unchanged`` stored; ``skipped_older`` (the store holds
    something as new or newer); ``invalid`` (unreadable items, the first few in ``errors``).
    """

    read: int = 0
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    skipped_older: int = 0
    invalid: int = 0
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """Plain dict."""
        return asdict(self)


def _parse_ts(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _items(path: Path) -> Iterator[Any]:
    name = path.name.lower()
    with open_text(path) as fh:
        if name.endswith((".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz")):
            for line in fh:
                if line.strip():
                    yield _loads(line)
            return
        text = fh.read()
    stripped = text.lstrip()
    if stripped.startswith("{") and "\n{" not in stripped.strip():
        doc = json.loads(text)
        if isinstance(doc, dict) and isinstance(doc.get("items"), list):
            yield from doc["items"]
        elif (
            isinstance(doc, dict)
            and isinstance(doc.get("message"), dict)
            and isinstance(doc["message"].get("items"), list)
        ):
            yield from doc["message"]["items"]
        else:
            yield doc
        return
    for line in text.splitlines():
        if line.strip():
            yield _loads(line)


class _Unreadable(str):
    """A line that is not JSON (counted as ``invalid``)."""


def _loads(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return _Unreadable(line[:80])


def _put(
    store: Store,
    content: EntryContent,
    when: float,
    report: ImportReport,
    newer: Callable[[StoredEntry], bool],
) -> None:
    existing = store.get(content.kind, content.key)
    if existing is not None and not newer(existing):
        report.skipped_older += 1
        return
    _, changed = store.put_content(content, now=when)
    if existing is None:
        report.new += 1
    elif changed:
        report.changed += 1
    else:
        report.unchanged += 1


def _import_crossref_work(
    store: Store, message: dict[str, Any], raw: str | None, report: ImportReport
) -> None:
    key = parse_doi(str(message.get("DOI", ""))).key
    indexed = message.get("indexed") or {}
    stamp = indexed.get("date-time")
    when = (indexed.get("timestamp") / 1000.0) if isinstance(indexed.get("timestamp"), int | float) else None
    when = min(when or time.time(), time.time())
    content = work_content(key, message, raw)

    def newer(existing: StoredEntry) -> bool:
        if existing.status != "ok" or not existing.upstream_version:
            return True
        return bool(stamp) and str(stamp) > existing.upstream_version

    _put(store, content, when, report, newer)


def _import_syncd(store: Store, rec: dict[str, Any], report: ImportReport) -> None:
    kind, status, body = rec.get("kind"), rec.get("status", "ok"), rec.get("body")
    when = _parse_ts(rec.get("validated_at")) or time.time()
    raw = json.dumps(body, ensure_ascii=False) if isinstance(body, dict | list) else body
    if kind == CROSSREF_WORK:
        if status == "ok":
            message = body.get("message") if isinstance(body, dict) and "message" in body else body
            if not isinstance(message, dict):
                raise MalformedResponse("crossref work without a message")
            content = work_content(parse_doi(str(message.get("DOI", rec.get("key", "")))).key, message, raw)
        else:
            key = parse_doi(str(rec.get("key", ""))).key
            content = EntryContent(CROSSREF_WORK, key, status, None, None, doi=key)
    elif kind == ZENODO_RECORD:
        if status == "ok":
            if not isinstance(body, dict):
                raise MalformedResponse("zenodo record without a body")
            content = record_content(body, raw, rec.get("etag"), rec.get("last_modified"))
        else:
            key = str(rec.get("key", ""))
            if not key.isdigit():
                raise MalformedResponse(f"bad Zenodo record id {key!r}")
            content = EntryContent(ZENODO_RECORD, key, status, raw if status == "gone" else None,
                                   content_hash(raw) if raw and status == "gone" else None)  # fmt: skip
    elif isinstance(kind, str) and kind in KINDS:  # pages, entities, RA lookups: stored as exported
        key = str(rec.get("key", ""))
        if not key:
            raise MalformedResponse(f"{kind} entry without a key")
        content = EntryContent(
            kind, key, str(status), raw, content_hash(raw) if raw else None, title=rec.get("title")
        )
    else:
        raise MalformedResponse(f"unknown kind {kind!r}")

    def newer(existing: StoredEntry) -> bool:
        return existing.validated_at <= when  # equal: the same export again (counted unchanged)

    _put(store, content, when, report, newer)
    if kind == ZENODO_RECORD and status == "ok" and isinstance(body, dict):
        keys = zenodo_norm.record_keys(body)
        if keys.concept_recid and keys.is_latest:
            store.set_concept(keys.concept_recid, keys.recid, now=when)


def import_item(store: Store, item: Any, report: ImportReport) -> None:
    """Store one decoded item (a syncd export line, a Crossref work, or a work envelope)."""
    report.read += 1
    try:
        if isinstance(item, _Unreadable):
            raise MalformedResponse(f"not JSON: {item!s}")
        if not isinstance(item, dict):
            raise MalformedResponse("not a JSON object")
        if "kind" in item and "body" in item:
            _import_syncd(store, item, report)
        elif item.get("message-type") == "work" and isinstance(item.get("message"), dict):
            _import_crossref_work(store, item["message"], json.dumps(item, ensure_ascii=False), report)
        elif isinstance(item.get("DOI"), str):
            _import_crossref_work(store, item, None, report)
        else:
            raise MalformedResponse("neither a syncd export line nor a Crossref work")
    except (InvalidInput, MalformedResponse, ValueError, KeyError, TypeError, AttributeError) as exc:
        report.invalid += 1
        if len(report.errors) < 5:
            report.errors.append(f"item {report.read}: {exc}")


IMPORT_BATCH = 1000
"""Items stored per transaction by :func:`import_paths`."""


def import_paths(
    store: Store, paths: list[Path], *, on_item: Callable[[], None] | None = None
) -> ImportReport:
    """Import every file in ``paths`` (directories: their ``*.json[l][.gz]`` files, sorted).

    Raises:
        InvalidInput: a path does not exist or a file is not JSON at all.
    """
    report = ImportReport()
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files.extend(
                sorted(
                    f for f in p.iterdir() if f.name.endswith((".json", ".jsonl", ".json.gz", ".jsonl.gz"))
                )
            )
        elif p.is_file():
            files.append(p)
        else:
            raise InvalidInput(f"no such file: {p}", reason="invalid_parameter")
    for f in files:
        try:
            items = _items(f)
            while chunk := list(itertools.islice(items, IMPORT_BATCH)):
                with store.batch():  # one commit per IMPORT_BATCH items instead of one per item
                    for item in chunk:
                        import_item(store, item, report)
                        if on_item is not None:
                            on_item()
        except (ValueError, OSError, EOFError) as exc:
            raise InvalidInput(f"{f}: not JSON / JSON Lines ({exc})", reason="invalid_parameter") from exc
    return report
