"""A batched variant of :meth:`syncd.store.repo.Store.put_content` for bulk loads (benchmark-owned).

``put_many(store, contents)`` stores many *new* entries in one ``BEGIN IMMEDIATE`` transaction with
``executemany`` (entries, validations; the FTS triggers fire as for single puts). Entries whose
``(kind, key)`` already exists go through ``Store.put_content`` one by one, so the "nothing lost" and
"unchanged only bumps validated_at" rules are the store's own. Ids are assigned under the write lock.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from syncd.store.repo import EntryContent, Store

_INS_ENTRY = (
    "INSERT INTO entries (id, kind, key, status, body, content_hash, upstream_version, doi, concept_key, "
    "title, search_text, fetched_at, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
_INS_VALID = (
    "INSERT INTO validations (entry_id, validated_at, etag, last_modified, checks, changes, volatile) "
    "VALUES (?,?,?,?,1,1,?)"
)


def put_many(store: Store, contents: Sequence[EntryContent], now: float | None = None) -> int:
    """Store ``contents``; returns how many were inserted new (the rest went through put_content)."""
    now = time.time() if now is None else now
    existing: list[EntryContent] = []
    with store.write() as conn:
        cur = conn.connection.driver_connection.cursor()
        keys = {(c.kind, c.key) for c in contents}
        found: set[tuple[str, str]] = set()
        by_kind: dict[str, list[str]] = {}
        for kind, key in keys:
            by_kind.setdefault(kind, []).append(key)
        for kind, ks in by_kind.items():
            for i in range(0, len(ks), 500):
                chunk = ks[i : i + 500]
                q = f"SELECT key FROM entries WHERE kind=? AND key IN ({','.join('?' * len(chunk))})"
                found.update((kind, r[0]) for r in cur.execute(q, [kind, *chunk]))
        fresh: list[EntryContent] = []
        seen: set[tuple[str, str]] = set()
        for c in contents:
            k = (c.kind, c.key)
            if k in found or k in seen:
                existing.append(c)
            else:
                seen.add(k)
                fresh.append(c)
        next_id = (cur.execute("SELECT COALESCE(MAX(id), 0) FROM entries").fetchone()[0]) + 1
        rows = []
        vrows = []
        for n, c in enumerate(fresh):
            eid = next_id + n
            rows.append(
                (
                    eid,
                    c.kind,
                    c.key,
                    c.status,
                    c.body,
                    c.content_hash,
                    c.upstream_version,
                    c.doi,
                    c.concept_key,
                    c.title,
                    c.search_text,
                    now,
                    now,
                )
            )
            vrows.append((eid, now, c.etag, c.last_modified, c.volatile))
        cur.executemany(_INS_ENTRY, rows)
        cur.executemany(_INS_VALID, vrows)
        cur.close()
    for c in existing:
        store.put_content(c, now)
    return len(fresh)
