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

from syncd.kinds import CROSSREF_WORK
from syncd.store.repo import StoredEntry

__all__ = ["content_hash", "document", "volatile_json"]


def volatile_json(fields: dict[str, Any]) -> str | None:
    """JSON of the volatile upstream fields to refresh in place (None when there are none)."""
    return json.dumps(fields, sort_keys=True, separators=(",", ":")) if fields else None


def document(entry: StoredEntry) -> dict[str, Any]:
    """The stored upstream object of ``entry`` with its refreshed volatile fields laid over it.

    For a Crossref work this is the ``message``; for a Zenodo record the record body. Raises
    ``ValueError`` when the stored body is not JSON (it always is: only parsed JSON is stored).
    """
    body: Any = json.loads(entry.body or "{}")
    if entry.kind == CROSSREF_WORK and isinstance(body, dict) and isinstance(body.get("message"), dict):
        body = body["message"]
    if entry.volatile and isinstance(body, dict):
        body.update(json.loads(entry.volatile))
    return body if isinstance(body, dict) else {}


def content_hash(projection: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of ``projection`` (keys sorted, no whitespace)."""
    blob = json.dumps(projection, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
