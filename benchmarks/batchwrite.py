"""Batched writes for building benchmark stores: the store's own bulk path, as ``syncd cache import`` uses it.

``put_many(store, contents)`` stores many entries with :func:`syncd.store.bulk.put_many` (one write
transaction: new entries inserted with ``executemany``, the search index through the store's
triggers) and every entry that path hands back (an existing key with other content) with
``Store.put_content``, so the "nothing lost" rules are the store's own.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from syncd.store import bulk
from syncd.store.repo import EntryContent, Store


def _never_keep(held: bulk.Held, content: EntryContent) -> bool:
    return False


def put_many(store: Store, contents: Sequence[EntryContent], now: float | None = None) -> int:
    """Store ``contents`` (each validated at ``now``); returns how many were inserted new."""
    now = time.time() if now is None else now
    by_kind: dict[str, list[bulk.BulkItem]] = {}
    for c in contents:
        by_kind.setdefault(c.kind, []).append(bulk.BulkItem(c, now))
    new = 0
    for items in by_kind.values():
        result = bulk.put_many(store, items, _never_keep)
        new += result.new
        for item in result.deferred:
            store.put_content(item.content, item.when)
    return new
