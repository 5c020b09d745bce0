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

Every item is stored through :func:`syncd.crossref.lookups.work_content` /
:func:`syncd.zenodo.lookups.record_content` and ``Store.put_content``, so hashes, the FTS index and
volatile counters stay consistent. Nothing lost: an imported item never replaces a stored entry
that is as new or newer (Crossref: ``indexed`` stamp; syncd exports: ``validated_at``), and an
imported entry keeps its age (a Crossref work from a data file counts as validated at its
``indexed`` time), so the daemon revalidates it on schedule instead of trusting it as fresh.
"""

from __future__ import annotations

import datetime as dt
import gc
import gzip
import io
import itertools
import json
import multiprocessing as mp
import os
import queue
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, NamedTuple

import msgspec

from syncd.crossref import views as crossref_norm
from syncd.crossref.lookups import WORK, work_content
from syncd.errors import InvalidInput, MalformedResponse
from syncd.normalize.doi import parse_doi
from syncd.policy import iso
from syncd.proc import die_with_parent
from syncd.registry import KINDS
from syncd.store.bulk import BulkItem, Held, put_many
from syncd.store.content import ExactDecoder, content_hash_exact, volatile_json
from syncd.store.maintenance import iter_entries
from syncd.store.repo import EntryContent, Store, StoredEntry

__all__ = [
    "ENVELOPE",
    "ImportReport",
    "default_workers",
    "export_entries",
    "import_item",
    "import_paths",
    "open_text",
    "prepare_line",
]


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


_JSON_LINES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz")


def _open_binary(path: Path) -> IO[bytes]:
    """``path`` opened for reading bytes, through gzip when it ends in ``.gz``."""
    if path.suffix == ".gz":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


_RAW_OBJECT = msgspec.json.Decoder(dict[str, msgspec.Raw])
_RAW_LIST = msgspec.json.Decoder(list[msgspec.Raw])
"""Decoders that find a document's members without decoding them (the items stay raw bytes)."""


def _raw_items(data: bytes) -> list[bytes] | None:
    """The raw items of ``{"items": [...]}`` or ``{"message": {"items": [...]}}``; None for another object.

    Raises:
        msgspec.DecodeError: ``data`` is not one JSON object (or is one only ``json`` reads).
    """
    top = _RAW_OBJECT.decode(data)
    if "items" not in top and "message" in top:
        try:
            top = _RAW_OBJECT.decode(top["message"])
        except msgspec.ValidationError:
            return None
    try:
        return [bytes(item) for item in _RAW_LIST.decode(top["items"])] if "items" in top else None
    except msgspec.ValidationError:
        return None


def _document_items(path: Path) -> Iterator[Any]:
    """The items of a file that is not JSON Lines, as raw bytes (prepared like JSON Lines) or objects.

    ``{"items": [...]}`` (each item's bytes as in the file), a ``message.items`` list, one object, or
    (despite the name) JSON Lines. A document only ``json`` reads (``NaN``...) is decoded whole and its
    items take the exact path.

    Raises:
        ValueError: the file is one JSON document that does not parse.
    """
    with _open_binary(path) as fh:
        data = fh.read()
    stripped = data.lstrip()
    if not (stripped.startswith(b"{") and b"\n{" not in stripped.strip()):
        yield from data.splitlines()
        return
    try:
        items = _raw_items(data)
    except msgspec.DecodeError:  # NaN, Infinity, a lone surrogate: json reads them, msgspec does not
        doc = json.loads(data)
        if isinstance(doc, dict) and isinstance(doc.get("items"), list):
            exact = doc["items"]
        elif (
            isinstance(doc, dict)
            and isinstance(doc.get("message"), dict)
            and isinstance(doc["message"].get("items"), list)
        ):
            exact = doc["message"]["items"]
        else:
            exact = [doc]
        for item in exact:
            yield _Slow(item)
        return
    yield from items if items is not None else [data]


class _Unreadable(str):
    """A line that is not JSON (counted as ``invalid``)."""


def _loads(line: str | bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        text = line if isinstance(line, str) else line.decode("utf-8", "replace")
        return _Unreadable(text.strip()[:80])


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


def _work_is_newer(stamp: Any) -> Callable[[StoredEntry], bool]:
    """Whether a data-file work indexed at ``stamp`` replaces a stored entry (``indexed`` stamps compared)."""

    def newer(existing: StoredEntry) -> bool:
        if existing.status != "ok" or not existing.upstream_version:
            return True
        return bool(stamp) and str(stamp) > existing.upstream_version

    return newer


def _import_crossref_work(
    store: Store, message: dict[str, Any], raw: str | None, report: ImportReport
) -> None:
    key = parse_doi(str(message.get("DOI", ""))).key
    indexed = message.get("indexed") or {}
    stamp = indexed.get("date-time")
    when = (indexed.get("timestamp") / 1000.0) if isinstance(indexed.get("timestamp"), int | float) else None
    when = min(when or time.time(), time.time())
    content = work_content(key, message, raw)
    _put(store, content, when, report, _work_is_newer(stamp))


def _import_syncd(store: Store, rec: dict[str, Any], report: ImportReport) -> None:
    """Store one ``syncd cache export`` line through its kind's ``load`` and ``arrived`` hooks."""
    name, body = rec.get("kind"), rec.get("body")
    kind = KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise MalformedResponse(f"unknown kind {name!r}")
    when = _parse_ts(rec.get("validated_at")) or time.time()
    raw = json.dumps(body, ensure_ascii=False) if isinstance(body, dict | list) else body
    content = kind.load_line(rec, raw)

    def newer(existing: StoredEntry) -> bool:
        return existing.validated_at <= when  # equal: the same export again (counted unchanged)

    _put(store, content, when, report, newer)
    if kind.arrived is not None:
        kind.arrived(store, rec, when)


_ITEM_ERRORS = (InvalidInput, MalformedResponse, ValueError, KeyError, TypeError, AttributeError)
"""What one unreadable item raises (counted ``invalid``, the import goes on)."""


def _invalid(report: ImportReport, number: int, error: object) -> None:
    report.invalid += 1
    if len(report.errors) < 5:
        report.errors.append(f"item {number}: {error}")


def _import_one(store: Store, item: Any, report: ImportReport, number: int) -> None:
    """Store one decoded item (the exact path), an error counting it ``invalid`` as item ``number``."""
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
    except _ITEM_ERRORS as exc:
        _invalid(report, number, exc)


def import_item(store: Store, item: Any, report: ImportReport) -> None:
    """Store one decoded item (a syncd export line, a Crossref work, or a work envelope)."""
    report.read += 1
    _import_one(store, item, report, report.read)


# --- the fast path of Crossref works ------------------------------------------------------------------

ENVELOPE = '{"status":"ok","message-type":"work","message":'
"""The ``/works/{doi}`` envelope a bare data-file work is stored in (compact, as Crossref sends it)."""


class _Slow(NamedTuple):
    """An item for the exact path: raw bytes (decoded with ``json``) or an object decoded exactly."""

    item: Any


class _Bad(NamedTuple):
    """An unreadable item (counted ``invalid``) and why."""

    error: str


Prepared = BulkItem | _Slow | _Bad
"""What :func:`prepare_line` makes of one line: a work ready to store, the exact path, or invalid."""


def _lacking(message: dict[str, Any]) -> bool:
    """Whether ``message`` lacks a key every real work carries (the work kind's ``rules.required``)."""
    for path in WORK.rules.required:
        value: Any = message
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        if value is None:
            return True
    return False


def _prepare_work(
    message: dict[str, Any], body: str, floats: int, encode: Callable[[str], Any] | None
) -> Prepared:
    """A Crossref work ``message`` (stored as ``body``) ready to store, or why it is unreadable.

    The same values as :func:`work_content`: hash of the same canonical projection (serialized by msgspec
    unless it may hold a float, :func:`~syncd.store.content.content_hash_exact`), title and search text from
    :func:`~syncd.crossref.views.work_search_fields`. A work lacking ``DOI``/``type``/``title`` goes
    the exact path, where ``put_content``'s guard refuses it unless the store holds something newer.
    """
    try:
        stored = encode(body) if encode is not None else None  # in a worker: only the stored form goes back
        key = parse_doi(str(message.get("DOI", ""))).key
        indexed = message.get("indexed") or {}
        stamp = indexed.get("date-time")
        ts = indexed.get("timestamp")
        now = time.time()
        when = min(((ts / 1000.0) if isinstance(ts, int | float) else None) or now, now)
        title, search_text = crossref_norm.work_search_fields(message)
        volatile = sum(isinstance(message.get(k), float) for k in crossref_norm.VOLATILE_FIELDS)  # "score"
        content = WORK.content(
            key=key,
            status="ok",
            body=None if stored is not None else body,
            content_hash=content_hash_exact(
                crossref_norm.content_hash_projection(message), floats=floats > volatile
            ),
            upstream_version=str(stamp) if stamp else None,
            doi=key,
            title=title,
            search_text=search_text,
            volatile=volatile_json({k: message[k] for k in crossref_norm.VOLATILE_FIELDS if k in message}),
        )
    except _ITEM_ERRORS as exc:
        return _Bad(str(exc))
    return BulkItem(content, when, stored)


def _prepare_object(doc: Any, line: bytes, floats: int, encode: Callable[[str], Any] | None) -> Prepared:
    """The item ``doc`` decoded from ``line`` (holding ``floats``) ready to store, or the exact path."""
    slow = _Slow(line)
    if not isinstance(doc, dict) or ("kind" in doc and "body" in doc):
        return slow
    if doc.get("message-type") == "work" and isinstance(doc.get("message"), dict):
        message: dict[str, Any] = doc["message"]
    elif isinstance(doc.get("DOI"), str):
        message = doc
    else:
        return slow
    if not isinstance(message.get("DOI"), str) or _lacking(message):
        return slow
    text = line.decode("utf-8").strip()
    return _prepare_work(message, ENVELOPE + text + "}" if message is doc else text, floats, encode)


def prepare_line(
    line: bytes, decoder: ExactDecoder, encode: Callable[[str], Any] | None = None
) -> Prepared | None:
    """One line of a Crossref data file (or a syncd export) made ready to store; None when blank.

    A bare work is stored in the ``/works/{doi}`` envelope around its line as given, an envelope line as
    given (no re-serialization). Anything else (a syncd export line, a line msgspec refuses where
    ``json`` reads it) goes the exact path (``json`` and :func:`import_item`).
    ``encode``: the store's body encoder, run here (in a worker) instead of in the writer.
    """
    if not line.strip():
        return None
    try:
        doc = decoder.decode(line)
    except msgspec.DecodeError:
        return _Slow(line)
    return _prepare_object(doc, line, decoder.floats, encode)


_WORKER: dict[str, Callable[[str], Any]] = {}
"""The body encoder of a worker process (``encode``, set by :func:`_start_worker`; empty here)."""


def _start_worker(encode: Callable[[str], Any], parent: int) -> None:
    """Worker start: end with the importing process ``parent`` (:func:`syncd.proc.die_with_parent`)."""
    die_with_parent(parent)
    _WORKER["encode"] = encode


def _prepare_chunk(chunk: list[Any], encode: Callable[[str], Any] | None = None) -> list[Prepared | None]:
    """Prepare a chunk of raw lines (bytes) and decoded items, in this process.

    ``encode``: the store's body encoder; the works then carry their body in stored form only.
    """
    out: list[Prepared | None] = []
    decoder = ExactDecoder()
    for item in chunk:
        if isinstance(item, bytes):
            out.append(prepare_line(item, decoder, encode))
        else:
            out.append(item)
    return out


def _prepare_in_worker(chunk: list[Any]) -> list[Prepared | None]:
    """:func:`_prepare_chunk` in a worker process, bodies encoded there (``_WORKER["encode"]``)."""
    with _gc_paused():
        return _prepare_chunk(chunk, _WORKER.get("encode"))


@contextmanager
def _gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off meanwhile, back as it was afterwards.

    Decoded JSON holds no cycle; with the collector on, half the parse time went to collections walking
    the heap of a started CLI.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _keep(held: Held, content: EntryContent) -> bool:
    """The store's copy is as new or newer than a data-file work (the negation of :func:`_work_is_newer`)."""
    if held.status != "ok" or not held.upstream_version:
        return False
    return not (content.upstream_version and content.upstream_version > held.upstream_version)


def _store_prepared(
    store: Store,
    chunk: list[Any],
    prepared: list[Prepared | None],
    report: ImportReport,
    on_item: Callable[[], None] | None,
) -> None:
    """Store one batch of prepared items.

    Works in bulk (:func:`syncd.store.bulk.put_many`), the rest one by one (the exact path; a body that
    changes goes through ``Store.put_content``).
    """
    works: list[BulkItem] = []
    numbers: dict[int, tuple[int, Any]] = {}
    others: list[tuple[int, _Slow | _Bad]] = []
    for raw, p in zip(chunk, prepared, strict=True):
        if p is None:
            continue
        report.read += 1
        if isinstance(p, BulkItem):
            numbers[id(p)] = (report.read, raw)
            works.append(p)
        else:
            others.append((report.read, p))
    result = put_many(store, works, _keep)
    report.new += result.new
    report.unchanged += result.unchanged
    report.skipped_older += result.skipped
    for item in result.deferred:
        number, raw = numbers[id(item)]
        if item.content.body is None:  # encoded in a worker: prepared again here, with its text
            again = _prepare_chunk([raw])[0]
            item = again if isinstance(again, BulkItem) else item
        try:
            _put(store, item.content, item.when, report, _work_is_newer(item.content.upstream_version))
        except _ITEM_ERRORS as exc:
            _invalid(report, number, exc)
    for number, other in others:
        if isinstance(other, _Bad):
            _invalid(report, number, other.error)
        else:
            decoded = _loads(other.item) if isinstance(other.item, bytes) else other.item
            _import_one(store, decoded, report, number)
    if on_item is not None:
        for _ in range(len(works) + len(others)):
            on_item()


IMPORT_BATCH = 1000
"""Items stored per transaction by :func:`import_paths` (and lines per worker task)."""

WORKERS_MAX = 8
"""Most worker processes :func:`import_paths` starts."""


def default_workers() -> int:
    """Worker processes for an import on this machine: the CPUs this process may use (at most 8)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(WORKERS_MAX, cpus))


def _chunks(files: list[Path], batch: int) -> Iterator[tuple[Path, list[Any]]]:
    """``(file, chunk)`` of at most ``batch`` raw lines or decoded items, file by file."""
    for f in files:
        try:
            if f.name.lower().endswith(_JSON_LINES):
                with _open_binary(f) as fh:
                    while chunk := list(itertools.islice(fh, batch)):
                        yield f, chunk
            else:
                items = _document_items(f)
                while chunk := list(itertools.islice(items, batch)):
                    yield f, chunk
        except (ValueError, OSError, EOFError) as exc:
            raise InvalidInput(f"{f}: not JSON / JSON Lines ({exc})", reason="invalid_parameter") from exc


def _files(paths: list[Path]) -> list[Path]:
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
    return files


def _prepared_batches(
    chunks: Iterator[tuple[Path, list[Any]]], pool: ProcessPoolExecutor | None, ahead: int
) -> Iterator[tuple[list[Any], list[Prepared | None]]]:
    """``(chunk, prepared)`` of ``chunks`` in order: in ``pool`` (at most ``ahead`` in flight) or here."""
    if pool is None:
        for _, chunk in chunks:
            yield chunk, _prepare_chunk(chunk)
        return
    pending: deque[tuple[list[Any], Future[list[Prepared | None]]]] = deque()
    for _, chunk in chunks:
        pending.append((chunk, pool.submit(_prepare_in_worker, chunk)))
        if len(pending) >= ahead:
            done, future = pending.popleft()
            yield done, future.result()
    while pending:
        done, future = pending.popleft()
        yield done, future.result()


class _Failed(NamedTuple):
    """What the reading thread of :func:`_read_ahead` raised (raised again in the consumer)."""

    error: BaseException


_END = _Failed(StopIteration())
"""The reading thread's last item when ``chunks`` ran out."""


@contextmanager
def _read_ahead(chunks: Iterator[Any], depth: int) -> Iterator[Iterator[Any]]:
    """``chunks`` read by a thread at most ``depth`` ahead of the consumer.

    Reading a ``.gz`` file is mostly zlib inflating, which runs without the GIL: beside the writer's
    SQLite calls (also without it) the file is read on another core. An error of the reader is raised
    in the consumer; leaving the context stops the reader.
    """
    ready: queue.Queue[Any] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def hand(item: Any) -> bool:
        while not stop.is_set():
            try:
                ready.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def read() -> None:
        try:
            for chunk in chunks:
                if not hand(chunk):
                    return
        except BaseException as exc:  # handed to the consumer, raised there
            hand(_Failed(exc))
            return
        hand(_END)

    def consume() -> Iterator[Any]:
        while True:
            item = ready.get()
            if item is _END:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield item

    reader = threading.Thread(target=read, name="syncd-import-reader", daemon=True)
    reader.start()
    try:
        yield consume()
    finally:
        stop.set()
        reader.join()


def import_paths(
    store: Store,
    paths: list[Path],
    *,
    on_item: Callable[[], None] | None = None,
    workers: int = 1,
    batch: int = IMPORT_BATCH,
) -> ImportReport:
    """Import every file in ``paths`` (directories: their ``*.json[l][.gz]`` files, sorted).

    Crossref works are parsed (msgspec), hashed, indexed and their bodies encoded in ``workers``
    processes (1: in this process; more only where processes can be forked, after the first batch is
    stored here so that a new store trains its body dictionary first) and written ``batch`` (default
    :data:`IMPORT_BATCH`) per transaction with :func:`syncd.store.bulk.put_many`; every other item
    takes the exact path (:func:`import_item`). Unreadable items are counted ``invalid`` and skipped.

    Raises:
        InvalidInput: a path does not exist or a file is not JSON at all.
    """
    report = ImportReport()
    chunks = _chunks(_files(paths), batch)
    with _gc_paused():
        if workers <= 1 or "fork" not in mp.get_all_start_methods():
            for chunk, prepared in _prepared_batches(chunks, None, 0):
                _store_prepared(store, chunk, prepared, report, on_item)
            return report
        first = next(chunks, None)  # stored here: its bodies let the store train a dictionary if it has none
        if first is None:
            return report
        _store_prepared(store, first[1], _prepare_chunk(first[1]), report, on_item)
        encode = store.encode_body
        encode("{}")  # the store's body encoding is settled before the workers are forked
        with ProcessPoolExecutor(
            workers,
            mp_context=mp.get_context("fork"),
            initializer=_start_worker,
            initargs=(encode, os.getpid()),
        ) as pool:
            pool.submit(len, ()).result()  # every worker forked now, before the reading thread starts
            with _read_ahead(chunks, 2) as ahead:
                for chunk, prepared in _prepared_batches(ahead, pool, 2 * workers):
                    _store_prepared(store, chunk, prepared, report, on_item)
    return report
