"""``syncd cache import``: syncd exports and Crossref public data files into the store.

Every item is stored through its kind: a syncd export line through the kind's ``load`` and
``arrived`` hooks (:class:`syncd.kinds.Kind`), a Crossref work through
:func:`syncd.crossref.lookups.work_content` and ``Store.put_content`` (the exact path), or, for the
works of a data file, prepared in worker processes with the same values and written in bulk
(:func:`syncd.store.bulk.put_many`, the fast path). Nothing lost: an imported item never replaces a
stored entry that is as new or newer (Crossref: ``indexed`` stamp; syncd exports: ``validated_at``),
and an imported entry keeps its age. File reading: :mod:`syncd.transfer.formats`.
"""

from __future__ import annotations

import gc
import json
import multiprocessing as mp
import os
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from syncd.crossref import views as crossref_norm
from syncd.crossref.lookups import WORK, work_content
from syncd.crossref.views_references import cited_dois
from syncd.errors import InvalidInput, MalformedResponse
from syncd.normalize.doi import parse_doi
from syncd.proc import die_with_parent
from syncd.registry import KINDS
from syncd.store.bulk import BulkItem, Held, put_many
from syncd.store.content import ExactDecoder, content_hash_exact, volatile_json
from syncd.store.repo import EntryContent, Store, StoredEntry
from syncd.transfer.formats import (
    Slow,
    Unreadable,
    chunks_of,
    files_of,
    loads_item,
    parse_ts,
    read_ahead,
)

__all__ = [
    "ENVELOPE",
    "IMPORT_BATCH",
    "WORKERS_MAX",
    "ImportReport",
    "Prepared",
    "default_workers",
    "import_item",
    "import_paths",
    "prepare_line",
]


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
    ts = indexed.get("timestamp")
    when = (ts / 1000.0) if isinstance(ts, int | float) else None
    when = min(when or time.time(), time.time())
    content = work_content(key, message, raw)
    _put(store, content, when, report, _work_is_newer(stamp))


def _import_syncd(store: Store, rec: dict[str, Any], report: ImportReport) -> None:
    """Store one ``syncd cache export`` line through its kind's ``load`` and ``arrived`` hooks."""
    name, body = rec.get("kind"), rec.get("body")
    kind = KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise MalformedResponse(f"unknown kind {name!r}")
    when = parse_ts(rec.get("validated_at")) or time.time()
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
        if isinstance(item, Unreadable):
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


class _Bad(NamedTuple):
    """An unreadable item (counted ``invalid``) and why."""

    error: str


Prepared = BulkItem | Slow | _Bad
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
            cites=cited_dois(message),
        )
    except _ITEM_ERRORS as exc:
        return _Bad(str(exc))
    return BulkItem(content, when, stored)


def _prepare_object(doc: Any, line: bytes, floats: int, encode: Callable[[str], Any] | None) -> Prepared:
    """The item ``doc`` decoded from ``line`` (holding ``floats``) ready to store, or the exact path."""
    slow = Slow(line)
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
        return Slow(line)
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
    others: list[tuple[int, Slow | _Bad]] = []
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
            decoded = loads_item(other.item) if isinstance(other.item, bytes) else other.item
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
    chunks = chunks_of(files_of(paths), batch)
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
            with read_ahead(chunks, 2) as ahead:
                for chunk, prepared in _prepared_batches(ahead, pool, 2 * workers):
                    _store_prepared(store, chunk, prepared, report, on_item)
    return report
