"""Repository functions for the ``blobs`` table: bounded payloads kept for offline use.

Zenodo file previews (``kind="zenodo_preview"``) are stored here, one row per ``(kind, key)``,
with their ``size`` in bytes, ``content_type``, ``fetched_at`` and ``accessed_at`` (epoch seconds).
Reading a blob bumps ``accessed_at``; writing one evicts the least recently read blobs of the same
kind until the kind's total ``size`` fits the configured bound (LRU by ``accessed_at``). Every
function runs in one transaction and raises :class:`~syncd.errors.StoreError` when the database
fails.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

from sqlalchemy import delete, func, select, update

from syncd.errors import StoreError
from syncd.store.dialect import upsert
from syncd.store.engine import is_read_only
from syncd.store.models import Blob
from syncd.store.repo import Store

__all__ = ["StoredBlob", "blob_usage", "get_blob", "put_blob"]


@dataclass(frozen=True)
class StoredBlob:
    """One stored payload (``size`` bytes; times in epoch seconds)."""

    kind: str
    key: str
    data: bytes
    size: int
    content_type: str | None
    fetched_at: float
    accessed_at: float


def get_blob(store: Store, kind: str, key: str, now: float | None = None) -> StoredBlob | None:
    """The blob ``(kind, key)`` or None, read without the write lock.

    A hit bumps its ``accessed_at`` (LRU) when the store can be written: bookkeeping only, skipped on
    a read-only store or a full disk (:meth:`~syncd.store.repo.Store.write_problem`), and given up
    (the blob still answered) when another writer holds the lock past the shortest bounded wait
    (:meth:`~syncd.store.repo.Store.waits_within`, the write floor).
    """
    now = time.time() if now is None else now
    with store.read() as conn:
        row = conn.execute(
            select(Blob.data, Blob.size, Blob.content_type, Blob.fetched_at).where(
                Blob.kind == kind, Blob.key == key
            )
        ).first()
    if row is None:
        return None
    if not is_read_only(store.engine) and store.write_problem() is None:
        with contextlib.suppress(StoreError), store.waits_within(lambda: 0.0), store.write() as conn:
            conn.execute(update(Blob).where(Blob.kind == kind, Blob.key == key).values(accessed_at=now))
    return StoredBlob(kind, key, bytes(row.data), row.size, row.content_type, row.fetched_at, now)


def put_blob(
    store: Store,
    kind: str,
    key: str,
    data: bytes,
    content_type: str | None,
    total_cap: int,
    now: float | None = None,
) -> int:
    """Store (or replace) the blob ``(kind, key)`` and evict least recently read ones over ``total_cap``.

    Args:
        store: the store.
        kind: blob kind (``zenodo_preview``).
        key: blob key.
        data: the payload.
        content_type: its MIME type, when known.
        total_cap: most bytes all blobs of ``kind`` may hold together; a blob larger than it is not
            stored at all.
        now: the current time (epoch seconds).

    Returns:
        Number of blobs evicted.
    """
    now = time.time() if now is None else now
    if len(data) > total_cap:
        return 0
    evicted = 0
    with store.write() as conn:
        conn.execute(delete(Blob).where(Blob.kind == kind, Blob.key == key))
        used = conn.execute(
            select(func.coalesce(func.sum(Blob.size), 0)).where(Blob.kind == kind)
        ).scalar_one()
        if used + len(data) > total_cap:
            for old_key, size in conn.execute(
                select(Blob.key, Blob.size).where(Blob.kind == kind).order_by(Blob.accessed_at, Blob.key)
            ).all():
                conn.execute(delete(Blob).where(Blob.kind == kind, Blob.key == old_key))
                used -= size
                evicted += 1
                if used + len(data) <= total_cap:
                    break
        # an upsert: a concurrent writer of the same blob (another workstation) must not fail
        upsert(
            conn,
            Blob.__table__,
            {
                "kind": kind,
                "key": key,
                "data": data,
                "size": len(data),
                "content_type": content_type,
                "fetched_at": now,
                "accessed_at": now,
            },
            ["kind", "key"],
        )
    return evicted


def blob_usage(store: Store, kind: str) -> tuple[int, int]:
    """``(blobs, bytes)`` held for ``kind``."""
    with store.read() as conn:
        count, total = conn.execute(
            select(func.count(), func.coalesce(func.sum(Blob.size), 0)).where(Blob.kind == kind)
        ).one()
    return int(count), int(total)
