"""``syncd cache import``: syncd exports and Crossref public data files into the store.

Every item is stored through its kind: a syncd export line through the kind's ``load`` and
``arrived`` hooks (:class:`syncd.kinds.Kind`); an object of an upstream's data file through the
kind's row builder (:class:`syncd.kinds.DataFileRows`, handed in by the caller: the registry's
``data_files()``), either its ``exact`` entry and ``Store.put_content`` (the exact path) or, prepared in
worker processes with the same values, written in bulk (:func:`syncd.store.bulk.put_many`, the fast
path). This module names no kind. Nothing lost: an imported item never replaces a stored entry that
is as new or newer (data files: the ``upstream_version`` stamp; syncd exports: ``validated_at``), and
an imported entry keeps its age. File reading: :mod:`syncd.transfer.formats`.
"""

from __future__ import annotations

import gc
import json
import multiprocessing as mp
import os
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from syncd.errors import InvalidInput, MalformedResponse
from syncd.kinds import DataFileRows
from syncd.proc import die_with_parent
from syncd.registry import KINDS, hooks_of
from syncd.store.bulk import BulkItem, Held, put_many
from syncd.store.content import ExactDecoder
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


def _is_newer(stamp: str | None) -> Callable[[StoredEntry], bool]:
    """Whether a data-file object stamped ``stamp`` replaces a stored entry (stamps compared)."""

    def newer(existing: StoredEntry) -> bool:
        if existing.status != "ok" or not existing.upstream_version:
            return True
        return bool(stamp) and str(stamp) > existing.upstream_version

    return newer


def _import_data_object(
    store: Store, rows: DataFileRows, message: dict[str, Any], raw: str | None, report: ImportReport
) -> None:
    content, when = rows.exact(message, raw)
    _put(store, content, when, report, _is_newer(content.upstream_version))


def _import_syncd(store: Store, rec: dict[str, Any], report: ImportReport) -> None:
    """Store one ``syncd cache export`` line through its kind's ``load`` and ``arrived`` hooks."""
    name, body = rec.get("kind"), rec.get("body")
    kind = KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise MalformedResponse(f"unknown kind {name!r}")
    when = parse_ts(rec.get("validated_at")) or time.time()
    raw = json.dumps(body, ensure_ascii=False) if isinstance(body, dict | list) else body
    hooks = hooks_of(kind)
    content = kind.load_line(rec, raw, hooks.load)

    def newer(existing: StoredEntry) -> bool:
        return existing.validated_at <= when  # equal: the same export again (counted unchanged)

    _put(store, content, when, report, newer)
    if hooks.arrived is not None:
        hooks.arrived(store, rec, when)


_ITEM_ERRORS = (InvalidInput, MalformedResponse, ValueError, KeyError, TypeError, AttributeError)
"""What one unreadable item raises (counted ``invalid``, the import goes on)."""


def _invalid(report: ImportReport, number: int, error: object) -> None:
    report.invalid += 1
    if len(report.errors) < 5:
        report.errors.append(f"item {number}: {error}")


def _import_one(
    store: Store, item: Any, report: ImportReport, number: int, data_files: Sequence[DataFileRows]
) -> None:
    """Store one decoded item (the exact path), an error counting it ``invalid`` as item ``number``."""
    try:
        if isinstance(item, Unreadable):
            raise MalformedResponse(f"not JSON: {item!s}")
        if not isinstance(item, dict):
            raise MalformedResponse("not a JSON object")
        if "kind" in item and "body" in item:
            _import_syncd(store, item, report)
            return
        for rows in data_files:
            found = rows.find(item)
            if found is not None:
                message, enveloped = found
                raw = json.dumps(item, ensure_ascii=False) if enveloped else None
                _import_data_object(store, rows, message, raw, report)
                return
        labels = "".join(f" nor {rows.label}" for rows in data_files)
        raise MalformedResponse(f"neither a syncd export line{labels}")
    except _ITEM_ERRORS as exc:
        _invalid(report, number, exc)


def import_item(
    store: Store, item: Any, report: ImportReport, data_files: Sequence[DataFileRows] = ()
) -> None:
    """Store one decoded item (a syncd export line, or an object one of ``data_files`` finds in it)."""
    report.read += 1
    _import_one(store, item, report, report.read, data_files)


# --- the fast path of data-file objects ---------------------------------------------------------------


class _Bad(NamedTuple):
    """An unreadable item (counted ``invalid``) and why."""

    error: str


Prepared = BulkItem | Slow | _Bad
"""What :func:`prepare_line` makes of one line: an entry ready to store, the exact path, or invalid."""


def _prepare_object(
    doc: Any,
    line: bytes,
    floats: int,
    data_files: Sequence[DataFileRows],
    encode: Callable[[str], Any] | None,
) -> Prepared:
    """The item ``doc`` decoded from ``line`` (holding ``floats``) ready to store, or the exact path.

    A complete object of one of ``data_files`` is built by its kind's ``row`` (the stored body: the
    line as given, a bare object in its envelope); anything else goes the exact path, where
    ``put_content``'s guard refuses an incomplete object unless the store holds something newer.
    """
    slow = Slow(line)
    if not isinstance(doc, dict) or ("kind" in doc and "body" in doc):
        return slow
    for rows in data_files:
        found = rows.find(doc)
        if found is None:
            continue
        message, enveloped = found
        if not rows.complete(message):
            return slow
        text = line.decode("utf-8").strip()
        body = text if enveloped else rows.envelope(text)
        try:
            stored = encode(body) if encode is not None else None  # in a worker: the stored form goes back
            content, when = rows.row(message, body, floats)
        except _ITEM_ERRORS as exc:
            return _Bad(str(exc))
        if stored is not None:
            content = replace(content, body=None)
        return BulkItem(content, when, stored)
    return slow


def prepare_line(
    line: bytes,
    decoder: ExactDecoder,
    data_files: Sequence[DataFileRows],
    encode: Callable[[str], Any] | None = None,
) -> Prepared | None:
    """One line of a data file (or a syncd export) made ready to store; None when blank.

    An object of one of ``data_files`` is built by its kind's row builder, stored as given (a bare
    object in its envelope; no re-serialization). Anything else (a syncd export line, a line msgspec
    refuses where ``json`` reads it) goes the exact path (``json`` and :func:`import_item`).
    ``encode``: the store's body encoder, run here (in a worker) instead of in the writer.
    """
    if not line.strip():
        return None
    try:
        doc = decoder.decode(line)
    except msgspec.DecodeError:
        return Slow(line)
    return _prepare_object(doc, line, decoder.floats, data_files, encode)


class _Worker(NamedTuple):
    """What a worker process prepares with: the data files' row builders and the store's body encoder."""

    data_files: Sequence[DataFileRows]
    encode: Callable[[str], Any]


_WORKER: list[_Worker] = []
"""The :class:`_Worker` of a worker process (set by :func:`_start_worker`; empty here)."""


def _start_worker(worker: _Worker, parent: int) -> None:
    """Worker start: end with the importing process ``parent`` (:func:`syncd.proc.die_with_parent`)."""
    die_with_parent(parent)
    _WORKER[:] = [worker]


def _prepare_chunk(
    chunk: list[Any], data_files: Sequence[DataFileRows], encode: Callable[[str], Any] | None = None
) -> list[Prepared | None]:
    """Prepare a chunk of raw lines (bytes) and decoded items, in this process.

    ``encode``: the store's body encoder; the entries then carry their body in stored form only.
    """
    out: list[Prepared | None] = []
    decoder = ExactDecoder()
    for item in chunk:
        if isinstance(item, bytes):
            out.append(prepare_line(item, decoder, data_files, encode))
        else:
            out.append(item)
    return out


def _prepare_in_worker(chunk: list[Any]) -> list[Prepared | None]:
    """:func:`_prepare_chunk` in a worker process, bodies encoded there (:data:`_WORKER`)."""
    worker = _WORKER[0]
    with _gc_paused():
        return _prepare_chunk(chunk, worker.data_files, worker.encode)


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
    """The store's copy is as new or newer than a data-file object (the negation of :func:`_is_newer`)."""
    if held.status != "ok" or not held.upstream_version:
        return False
    return not (content.upstream_version and content.upstream_version > held.upstream_version)


def _store_prepared(
    store: Store,
    chunk: list[Any],
    prepared: list[Prepared | None],
    report: ImportReport,
    on_item: Callable[[], None] | None,
    data_files: Sequence[DataFileRows],
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
            again = _prepare_chunk([raw], data_files)[0]
            item = again if isinstance(again, BulkItem) else item
        try:
            _put(store, item.content, item.when, report, _is_newer(item.content.upstream_version))
        except _ITEM_ERRORS as exc:
            _invalid(report, number, exc)
    for number, other in others:
        if isinstance(other, _Bad):
            _invalid(report, number, other.error)
        else:
            decoded = loads_item(other.item) if isinstance(other.item, bytes) else other.item
            _import_one(store, decoded, report, number, data_files)
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
    chunks: Iterator[tuple[Path, list[Any]]],
    pool: ProcessPoolExecutor | None,
    ahead: int,
    data_files: Sequence[DataFileRows],
) -> Iterator[tuple[list[Any], list[Prepared | None]]]:
    """``(chunk, prepared)`` of ``chunks`` in order: in ``pool`` (at most ``ahead`` in flight) or here."""
    if pool is None:
        for _, chunk in chunks:
            yield chunk, _prepare_chunk(chunk, data_files)
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
    data_files: Sequence[DataFileRows] = (),
    on_item: Callable[[], None] | None = None,
    workers: int = 1,
    batch: int = IMPORT_BATCH,
) -> ImportReport:
    """Import every file in ``paths`` (directories: their ``*.json[l][.gz]`` files, sorted).

    ``data_files``: the row builders of the kinds whose upstream data files may be read (the
    registry's ``data_files()``); without them only syncd exports are read. Their objects are parsed
    (msgspec), hashed, indexed and their bodies encoded in ``workers`` processes (1: in this process;
    more only where processes can be forked, after the first batch is stored here so that a new store
    trains its body dictionary first) and written ``batch`` (default :data:`IMPORT_BATCH`) per
    transaction with :func:`syncd.store.bulk.put_many`; every other item takes the exact path
    (:func:`import_item`). Unreadable items are counted ``invalid`` and skipped.

    Raises:
        InvalidInput: a path does not exist or a file is not JSON at all.
    """
    report = ImportReport()
    chunks = chunks_of(files_of(paths), batch)
    with _gc_paused():
        if workers <= 1 or "fork" not in mp.get_all_start_methods():
            for chunk, prepared in _prepared_batches(chunks, None, 0, data_files):
                _store_prepared(store, chunk, prepared, report, on_item, data_files)
            return report
        first = next(chunks, None)  # stored here: its bodies let the store train a dictionary if it has none
        if first is None:
            return report
        _store_prepared(store, first[1], _prepare_chunk(first[1], data_files), report, on_item, data_files)
        encode = partial(store.encode_body, bulk=True)
        encode("{}")  # the store's body encoding is settled before the workers are forked
        with ProcessPoolExecutor(
            workers,
            mp_context=mp.get_context("fork"),
            initializer=_start_worker,
            initargs=(_Worker(data_files, encode), os.getpid()),
        ) as pool:
            pool.submit(len, ()).result()  # every worker forked now, before the reading thread starts
            with read_ahead(chunks, 2) as ahead:
                for chunk, prepared in _prepared_batches(ahead, pool, 2 * workers, data_files):
                    _store_prepared(store, chunk, prepared, report, on_item, data_files)
    return report
