"""Stored bodies: zstd-compressed, with a dictionary trained on the store's own bodies.

Every body the store writes (``entries.body``, ``previous_bodies.body``) goes through
:meth:`BodyCodec.encode` and every body it reads through :func:`decode_body`; nothing above the store
sees the stored form (:class:`~syncd.store.repo.StoredEntry` ``body`` is the JSON text as received).
Content hashes are computed by the callers over the canonical JSON, never over these bytes.

A stored body is one of:

- a zstd frame (it starts with the zstd magic number ``28 B5 2F FD``): the UTF-8 JSON text, compressed
  at :data:`LEVEL` with its size and an XXH64 checksum of the text in the frame header, so a damaged
  body fails to decode instead of reading back wrong. The frame header names the dictionary it was
  compressed with: its zstd dictionary id, the primary key of ``body_dictionaries`` (migration 0008),
  or 0 for none (plain zstd, used while a store holds too few bodies to train one);
- anything else: the UTF-8 text itself (PostgreSQL ``bytea``, or on SQLite a ``BLOB``, or the ``TEXT``
  written before migration 0008), read as it is.

Dictionaries (:func:`train_dictionary`) are kept forever in ``body_dictionaries``: a newer one only
changes what later writes use, so every body stays readable. Their ids are zstd's own (derived from
the dictionary's content), so one process-wide registry serves every store a process opens; a body
naming a dictionary not yet loaded loads it from the stores this process opened (a dictionary another
process trained meanwhile). :func:`convert_bodies` re-encodes stored bodies with the newest dictionary
in batches, one commit per batch (migration 0008 and ``syncd cache vacuum``); it finds what is left
from the bodies themselves, so an interrupted run continues where it stopped.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import zstandard
from sqlalchemy import Connection, Engine, Table, bindparam, func, select, update

from syncd.errors import StoreError
from syncd.store.dialect import insert_ignore
from syncd.store.engine import reader
from syncd.store.fileguard import file_guard
from syncd.store.models import BodyDictionary, Entry, PreviousBody

__all__ = [
    "CONVERT_BATCH",
    "DICTIONARY_BYTES",
    "LEVEL",
    "MAGIC",
    "TRAIN_CHECK_EVERY",
    "TRAIN_MIN_BODIES",
    "TRAIN_SAMPLE",
    "BodyCodec",
    "ConvertReport",
    "CorruptBody",
    "convert_bodies",
    "decode_body",
    "dictionary_of",
    "load_dictionaries",
    "train_dictionary",
]

MAGIC = b"\x28\xb5\x2f\xfd"
"""The first four bytes of every zstd frame (a JSON text never starts with them: 0xB5 is no UTF-8 lead)."""
LEVEL = 3
"""zstd compression level of stored bodies (about 55 µs per 10 KB body on the benchmark machine)."""
BULK_LEVEL = 2
"""zstd level of the bodies of a bulk import (``syncd cache import``): 30% less compression time than
:data:`LEVEL` for 6% larger bodies (Crossref works with the store's dictionary: 48 µs and 1,916 bytes
vs 68 µs and 1,806 bytes per 9 KB body); read back the same."""
DICTIONARY_BYTES = 112_640
"""Size of a trained dictionary (bytes; zstd's own default), smaller when the samples are few."""
TRAIN_MIN_BODIES = 1000
"""Fewest stored bodies a dictionary is trained on; below, bodies are compressed without one."""
TRAIN_SAMPLE = 4000
"""Most bodies sampled (evenly spread over the entry ids) to train a dictionary."""
CONVERT_BATCH = 1000
"""Rows re-encoded per transaction by :func:`convert_bodies`."""
TRAIN_CHECK_EVERY = 1000
"""Bodies a store compresses without a dictionary between two looks at whether one can be trained."""

BODY_TABLES: tuple[Table, ...] = (Entry.__table__, PreviousBody.__table__)  # type: ignore[assignment]
"""The tables holding encoded bodies (each with an integer ``id`` and a ``body`` column)."""


class CorruptBody(StoreError):
    """A stored body does not decode: damaged bytes, a checksum mismatch or an unknown dictionary."""


_DICTS: dict[int, zstandard.ZstdCompressionDict] = {}
"""Process-wide registry: zstd dictionary id -> dictionary (ids are derived from the content)."""
_SOURCES: weakref.WeakSet[Engine] = weakref.WeakSet()
"""Engines of the stores this process opened: where a dictionary missing from the registry is looked up."""
_LOCK = threading.Lock()
_LOCAL = threading.local()
"""Per-thread decompressors by dictionary id (a zstd context must not be used by two threads at once)."""


def _register(dict_id: int, data: bytes) -> zstandard.ZstdCompressionDict:
    """Add dictionary ``data`` under ``dict_id`` to the registry (idempotent) and return it.

    Raises:
        CorruptBody: the bytes are not a zstd dictionary with that id, or another one holds the id.
    """
    with _LOCK:
        known = _DICTS.get(dict_id)
        if known is not None:
            if known.as_bytes() != data:
                raise CorruptBody(f"two different body dictionaries carry the id {dict_id}")
            return known
        try:
            d = zstandard.ZstdCompressionDict(data, dict_type=zstandard.DICT_TYPE_FULLDICT)
            got = d.dict_id()
        except zstandard.ZstdError as exc:
            raise CorruptBody(f"body dictionary {dict_id} is damaged: {exc}") from exc
        if got != dict_id:
            raise CorruptBody(f"body dictionary stored under id {dict_id} carries the id {got}")
        _DICTS[dict_id] = d
        return d


def load_dictionaries(conn: Connection) -> int:
    """Register every dictionary of the store behind ``conn``; returns the newest one's id (0: none)."""
    table = BodyDictionary.__table__
    newest = 0
    for dict_id, data in conn.execute(
        select(table.c.id, table.c.data).order_by(table.c.created_at, table.c.id)
    ):
        _register(int(dict_id), bytes(data))
        newest = int(dict_id)
    return newest


def _dictionary(dict_id: int) -> zstandard.ZstdCompressionDict:
    """The registered dictionary ``dict_id``, loaded from the opened stores when missing.

    Raises:
        CorruptBody: no opened store holds it.
    """
    d = _DICTS.get(dict_id)
    if d is not None:
        return d
    table = BodyDictionary.__table__
    for engine in list(_SOURCES):
        try:
            with reader(engine).connect() as conn:
                row = conn.execute(select(table.c.data).where(table.c.id == dict_id)).first()
        except Exception:  # a store that cannot be read simply does not hold it
            continue
        if row is not None:
            return _register(dict_id, bytes(row[0]))
    raise CorruptBody(f"a stored body names body dictionary {dict_id}, which the store does not hold")


def _decompressor(dict_id: int) -> zstandard.ZstdDecompressor:
    cache: dict[int, zstandard.ZstdDecompressor] | None = getattr(_LOCAL, "dctx", None)
    if cache is None:
        cache = _LOCAL.dctx = {}
    dctx = cache.get(dict_id)
    if dctx is None:
        dctx = (
            zstandard.ZstdDecompressor(dict_data=_dictionary(dict_id))
            if dict_id
            else zstandard.ZstdDecompressor()
        )
        cache[dict_id] = dctx
    return dctx


def dictionary_of(value: bytes | memoryview | str | None) -> int | None:
    """The dictionary id a stored body was compressed with (0: none), or None when it is not compressed."""
    if value is None or isinstance(value, str):
        return None
    data = bytes(value[:18]) if isinstance(value, memoryview) else value[:18]
    if data[:4] != MAGIC:
        return None
    try:
        return int(zstandard.get_frame_parameters(data).dict_id)
    except zstandard.ZstdError:
        return None


def decode_body(value: bytes | memoryview | str | None) -> str | None:
    """The JSON text of a stored body (see the module docstring for the stored forms); None stays None.

    Raises:
        CorruptBody: the bytes are damaged (zstd error, checksum mismatch, not UTF-8) or name a
            dictionary no opened store holds.
    """
    if value is None or isinstance(value, str):
        return value
    data = bytes(value) if isinstance(value, memoryview) else value
    try:
        if data[:4] != MAGIC:
            return data.decode("utf-8", "surrogatepass")
        dict_id = zstandard.get_frame_parameters(data).dict_id
        return _decompressor(dict_id).decompress(data).decode("utf-8", "surrogatepass")
    except (zstandard.ZstdError, UnicodeDecodeError) as exc:
        raise CorruptBody(f"a stored body does not decode: {exc.__class__.__name__}: {exc}") from exc


class BodyCodec:
    """Encoder of one store's bodies: zstd with the store's newest dictionary (or none yet).

    The dictionary is looked up on the first encode and kept; :meth:`use` switches to another one
    (after :func:`train_dictionary`). While there is none, :attr:`due` turns True every
    :data:`TRAIN_CHECK_EVERY` bodies (the store then trains one when it holds enough bodies; see
    :meth:`syncd.store.repo.Store.train_dictionary_when_due`). Thread-safe (one compression context
    per thread).

    Args:
        engine: the store's engine; also registered as a source of dictionaries for decoding.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        _SOURCES.add(engine)
        self._current: int | None = None
        self._local = threading.local()
        self._plain = 0
        guard = file_guard(engine)
        if guard is not None:
            guard.add_listener(self.forget)  # the file was replaced: its newest dictionary is looked up again

    def forget(self) -> None:
        """Look the current dictionary up again at the next encode (the store's file was replaced)."""
        self._current = None
        self._plain = 0

    @property
    def due(self) -> bool:
        """True after :data:`TRAIN_CHECK_EVERY` bodies compressed without a dictionary since the last look."""
        return self._current == 0 and self._plain >= TRAIN_CHECK_EVERY

    def looked(self) -> None:
        """Restart the count of :attr:`due` (a look at training was made)."""
        self._plain = 0

    def current(self, conn: Connection | None = None) -> int:
        """Id of the dictionary new bodies are compressed with (0: none), looked up once (via ``conn``)."""
        if self._current is None:
            if conn is not None:
                self._current = load_dictionaries(conn)
            else:
                with reader(self.engine).connect() as own:
                    self._current = load_dictionaries(own)
        return self._current

    def use(self, dict_id: int) -> None:
        """Compress later bodies with the registered dictionary ``dict_id`` (0: none)."""
        if dict_id:
            _dictionary(dict_id)
        self._current = dict_id

    def encode(self, text: str | None, conn: Connection | None = None, *, bulk: bool = False) -> bytes | None:
        """The stored form of the JSON ``text`` (None stays None): a zstd frame with the current dictionary.

        ``conn``: the transaction being written, used to look the dictionary up on the first call.
        ``bulk``: at :data:`BULK_LEVEL` (a bulk import) instead of :data:`LEVEL`.
        """
        if text is None:
            return None
        dict_id = self.current(conn)
        if not dict_id:
            self._plain += 1
        level = BULK_LEVEL if bulk else LEVEL
        cache: dict[tuple[int, int], zstandard.ZstdCompressor] | None = getattr(self._local, "cctx", None)
        if cache is None:
            cache = self._local.cctx = {}
        cctx = cache.get((dict_id, level))
        if cctx is None:
            cctx = zstandard.ZstdCompressor(
                level=level,
                dict_data=_dictionary(dict_id) if dict_id else None,
                write_checksum=True,
                write_content_size=True,
                write_dict_id=True,
            )
            cache[dict_id, level] = cctx
        return cctx.compress(text.encode("utf-8", "surrogatepass"))


def train_dictionary(
    conn: Connection,
    *,
    min_bodies: int | None = None,
    sample: int | None = None,
    now: float | None = None,
) -> int | None:
    """Train a dictionary on the store's own ``ok`` entry bodies and keep it; returns its id.

    Samples at most ``sample`` bodies evenly spread over the entry ids. Returns None (nothing written)
    when fewer than ``min_bodies`` bodies are stored or zstd cannot train on them. Defaults:
    :data:`TRAIN_MIN_BODIES`, :data:`TRAIN_SAMPLE`.
    """
    min_bodies = TRAIN_MIN_BODIES if min_bodies is None else min_bodies
    sample = TRAIN_SAMPLE if sample is None else sample
    ids = (
        conn.execute(select(Entry.id).where(Entry.status == "ok", Entry.body.is_not(None)).order_by(Entry.id))
        .scalars()
        .all()
    )
    if len(ids) < max(min_bodies, 1):
        return None
    step = max(1, len(ids) // sample)
    chosen = ids[::step][:sample]
    samples: list[bytes] = []
    for i in range(0, len(chosen), 500):
        for (body,) in conn.execute(select(Entry.body).where(Entry.id.in_(chosen[i : i + 500]))):
            text = decode_body(body)
            if text:
                samples.append(text.encode("utf-8", "surrogatepass"))
    total = sum(len(s) for s in samples)
    size = min(DICTIONARY_BYTES, total // 10)
    if size < 1024:
        return None
    try:
        trained = zstandard.train_dictionary(size, samples, k=1024, d=8, steps=4)
    except zstandard.ZstdError:
        return None
    dict_id = int(trained.dict_id())
    data = trained.as_bytes()
    _register(dict_id, data)
    insert_ignore(
        conn,
        BodyDictionary.__table__,
        {
            "id": dict_id,
            "data": data,
            "samples": len(samples),
            "sample_bytes": total,
            "created_at": time.time() if now is None else now,
        },
    )
    return dict_id


@dataclass
class ConvertReport:
    """What :func:`convert_bodies` did: rows read, rows re-encoded, the dictionary used (0: none)."""

    dictionary: int = 0
    trained: bool = False
    scanned: int = 0
    converted: int = 0
    bytes_before: int = 0
    bytes_after: int = 0


def _needs(value: Any, dict_id: int) -> bool:
    """True when a stored body is not yet in its best form: uncompressed, or not with ``dict_id``."""
    used = dictionary_of(value)
    if used is None:
        return True
    return bool(dict_id) and used != dict_id


def convert_bodies(
    conn: Connection,
    commit: Callable[[], None],
    *,
    batch: int | None = None,
    train: bool = True,
    min_bodies: int | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> ConvertReport:
    """Re-encode every stored body not yet compressed with the store's newest dictionary.

    First trains a dictionary when ``train`` and the store holds none (and at least ``min_bodies``
    bodies). Then reads ``entries`` and ``previous_bodies`` in id order, ``batch`` rows at a time,
    re-encodes the bodies that are uncompressed or compressed otherwise, and calls ``commit`` after
    every batch that wrote something (it must commit the transaction of ``conn`` and begin the next).
    Resumable: what is left is found from the bodies themselves. Defaults: :data:`CONVERT_BATCH`,
    :data:`TRAIN_MIN_BODIES`.

    Raises:
        CorruptBody: a stored body does not decode (nothing of that batch is written).
    """
    batch = CONVERT_BATCH if batch is None else batch
    report = ConvertReport(dictionary=load_dictionaries(conn))
    if train and not report.dictionary:
        trained = train_dictionary(conn, min_bodies=min_bodies)
        if trained is not None:
            report.dictionary, report.trained = trained, True
            commit()
    codec = BodyCodec(conn.engine)
    codec.use(report.dictionary)
    for table in BODY_TABLES:
        last = 0
        query = (
            select(table.c.id, table.c.body)
            .where(table.c.id > bindparam("last"), table.c.body.is_not(None))
            .order_by(table.c.id)
            .limit(batch)
        )
        write = update(table).where(table.c.id == bindparam("_id")).values(body=bindparam("_body"))
        while True:
            rows = conn.execute(query, {"last": last}).all()
            if not rows:
                break
            last = rows[-1][0]
            report.scanned += len(rows)
            changes = []
            for row_id, body in rows:
                if _needs(body, report.dictionary):
                    encoded = codec.encode(decode_body(body))
                    changes.append({"_id": row_id, "_body": encoded})
                    report.bytes_before += len(body.encode("utf-8")) if isinstance(body, str) else len(body)
                    report.bytes_after += len(encoded or b"")
            if changes:
                conn.execute(write, changes)
                report.converted += len(changes)
                commit()
            if progress is not None:
                progress(table.name, report.scanned)
    return report


def stored_body_bytes(conn: Connection) -> int:
    """Total bytes of the stored entry bodies, as stored."""
    return int(conn.execute(select(func.coalesce(func.sum(func.length(Entry.body)), 0))).scalar_one())
