"""``syncd cache export``: stored entries as JSON Lines, one entry per line (no kind named).

Each line: ``{"kind", "key", "status", "fetched_at", "validated_at", "etag", "last_modified", "body"}``,
times in ISO 8601 UTC, ``body`` the upstream body exactly as stored (parsed JSON; the text itself
when it is not JSON; ``null`` for a miss). :mod:`syncd.transfer.imports` reads it back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import IO, Any

from syncd.road.policy import iso
from syncd.store.maintenance import iter_entries
from syncd.store.repo import Store, StoredEntry

__all__ = ["export_entries", "export_line"]


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
