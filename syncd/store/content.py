"""What decides "changed" and how a stored body reads back: content hash, volatile fields, document.

"Changed" is decided by a hash of the normalized upstream content with the volatile parts left out
(:func:`content_hash`); an unchanged answer only bumps ``validated_at``. The volatile fields
(usage stats, ``indexed`` stamps) are kept beside the body (:func:`volatile_json`) and laid over it
when read (:func:`document`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import msgspec

from syncd.store.repo import StoredEntry
from syncd.store.rules import PLAIN, StoreRules

__all__ = ["ExactDecoder", "content_hash", "content_hash_exact", "document", "volatile_json"]


def volatile_json(fields: dict[str, Any]) -> str | None:
    """JSON of the volatile upstream fields to refresh in place (None when there are none)."""
    return json.dumps(fields, sort_keys=True, separators=(",", ":")) if fields else None


def document(entry: StoredEntry, rules: StoreRules = PLAIN) -> dict[str, Any]:
    """The stored upstream object of ``entry`` by its kind's ``rules``, volatile fields laid over it.

    ``rules.document`` picks the object (a Crossref work's ``message``; a Zenodo record's whole body,
    the default). Raises ``ValueError`` when the stored body is not JSON (it always is: only parsed
    JSON is stored).
    """
    body: Any = rules.document(json.loads(entry.body or "{}"))
    if entry.volatile and isinstance(body, dict):
        body.update(json.loads(entry.volatile))
    return body if isinstance(body, dict) else {}


def content_hash(projection: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of ``projection`` (keys sorted, no whitespace)."""
    blob = json.dumps(projection, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


_CANONICAL = msgspec.json.Encoder(order="sorted")
"""Writes what :func:`content_hash` hashes (keys sorted, no whitespace, UTF-8) for a float-free value."""


class ExactDecoder:
    """Decodes JSON to the values ``json.loads`` gives, at msgspec's speed, noting the floats.

    The same values: objects, arrays, strings, integers of any size, floats through ``float()``. What
    ``json.loads`` takes and this refuses (``NaN``, ``Infinity``, a lone surrogate escape) raises
    ``msgspec.DecodeError`` (a ``ValueError``). One instance per thread.
    """

    def __init__(self) -> None:
        self.floats = 0
        """Floats in the last document decoded (:func:`content_hash_exact` needs none)."""
        self._decoder = msgspec.json.Decoder(float_hook=self._float)

    def _float(self, text: str) -> float:
        self.floats += 1
        return float(text)

    def decode(self, data: bytes | str) -> Any:
        """The value of the JSON document ``data``.

        Raises:
            msgspec.DecodeError: not JSON, or JSON that only ``json.loads`` reads.
        """
        self.floats = 0
        return self._decoder.decode(data)


def content_hash_exact(projection: Any, *, floats: bool) -> str:
    """:func:`content_hash` of ``projection`` (the same hex digest), about 5x faster when it holds no float.

    ``floats``: whether ``projection`` may hold a float (:attr:`ExactDecoder.floats` of the document it
    came from); msgspec writes some floats differently from ``json.dumps`` (``1e-05``), so then the
    hash is :func:`content_hash`'s own. Every other JSON value (escapes, key order by code point,
    integers) msgspec writes byte for byte as ``json.dumps(..., sort_keys=True, separators=(",", ":"),
    ensure_ascii=False)`` does.
    """
    if floats:
        return content_hash(projection)
    return hashlib.sha256(_CANONICAL.encode(projection)).hexdigest()
