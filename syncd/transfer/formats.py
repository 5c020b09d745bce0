"""The file formats of ``syncd cache export`` / ``import`` (no kind named; pure but for reading files).

Files are UTF-8 text, gzip-compressed when the name ends in ``.gz``; ``-`` is stdin/stdout
(:func:`open_text`). An import reads JSON Lines (``.jsonl``, ``.ndjson``, optionally ``.gz``) line by
line as raw bytes, and any other file as one JSON document: ``{"items": [...]}`` (a Crossref public
data file), ``{"message": {"items": [...]}}``, one object, or JSON Lines after all
(:func:`document_items`). Files are cut into chunks (:func:`chunks_of`) read by a thread ahead of the
writer (:func:`read_ahead`).
"""

from __future__ import annotations

import datetime as dt
import gzip
import io
import itertools
import json
import queue
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, NamedTuple

import msgspec

from syncd.errors import InvalidInput

__all__ = [
    "JSON_LINES",
    "Slow",
    "Unreadable",
    "chunks_of",
    "document_items",
    "files_of",
    "loads_item",
    "open_binary",
    "open_text",
    "parse_ts",
    "read_ahead",
]


def open_text(path: str | Path, mode: str = "r") -> IO[str]:
    """Open ``path`` as UTF-8 text, through gzip when it ends in ``.gz``; ``-`` is stdin/stdout."""
    if str(path) == "-":
        return sys.stdout if "w" in mode else sys.stdin
    p = Path(path)
    if p.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(p, mode.replace("t", "") + "b"), encoding="utf-8")  # type: ignore[type-var]
    return open(p, mode, encoding="utf-8")


JSON_LINES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz")


def open_binary(path: Path) -> IO[bytes]:
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


def document_items(path: Path) -> Iterator[Any]:
    """The items of a file that is not JSON Lines, as raw bytes (prepared like JSON Lines) or objects.

    ``{"items": [...]}`` (each item's bytes as in the file), a ``message.items`` list, one object, or
    (despite the name) JSON Lines. A document only ``json`` reads (``NaN``...) is decoded whole and its
    items take the exact path.

    Raises:
        ValueError: the file is one JSON document that does not parse.
    """
    with open_binary(path) as fh:
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
            yield Slow(item)
        return
    yield from items if items is not None else [data]


class Unreadable(str):
    """A line that is not JSON (counted as ``invalid``)."""


def loads_item(line: str | bytes) -> Any:
    """``line`` decoded with ``json``, or an :class:`Unreadable` (its first 80 characters) when not JSON."""
    try:
        return json.loads(line)
    except ValueError:
        text = line if isinstance(line, str) else line.decode("utf-8", "replace")
        return Unreadable(text.strip()[:80])


class Slow(NamedTuple):
    """An item for the exact path: raw bytes (decoded with ``json``) or an object decoded exactly."""

    item: Any


def chunks_of(files: list[Path], batch: int) -> Iterator[tuple[Path, list[Any]]]:
    """``(file, chunk)`` of at most ``batch`` raw lines or decoded items, file by file."""
    for f in files:
        try:
            if f.name.lower().endswith(JSON_LINES):
                with open_binary(f) as fh:
                    while chunk := list(itertools.islice(fh, batch)):
                        yield f, chunk
            else:
                items = document_items(f)
                while chunk := list(itertools.islice(items, batch)):
                    yield f, chunk
        except (ValueError, OSError, EOFError) as exc:
            raise InvalidInput(f"{f}: not JSON / JSON Lines ({exc})", reason="invalid_parameter") from exc


def files_of(paths: list[Path]) -> list[Path]:
    """The files to import: each file of ``paths``, each directory's ``*.json[l][.gz]`` files sorted.

    Raises:
        InvalidInput: a path does not exist.
    """
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


class _Failed(NamedTuple):
    """What the reading thread of :func:`read_ahead` raised (raised again in the consumer)."""

    error: BaseException


_END = _Failed(StopIteration())
"""The reading thread's last item when ``chunks`` ran out."""


@contextmanager
def read_ahead(chunks: Iterator[Any], depth: int) -> Iterator[Iterator[Any]]:
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


def parse_ts(value: Any) -> float | None:
    """An export's ISO 8601 time (``2026-12-01T08:00:00Z``) as epoch seconds, or None when not one."""
    if not isinstance(value, str):
        return None
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
