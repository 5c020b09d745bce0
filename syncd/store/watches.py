"""Store functions for watch lists (``watches``) and durable sync progress (``sync_state``).

A watch's ``spec`` is canonical JSON (keys sorted, no whitespace), so the unique ``(kind, spec)``
constraint makes adding the same watch twice a no-op. ``sync_state`` rows are named ``watch:<id>``:
``cursor`` holds the position inside the running walk (rewritten after every stored page),
``checkpoint`` the point a finished walk reached (only advanced when a walk completes, or when a
Zenodo time window completes).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select

from syncd.store.dialect import insert_ignore, upsert
from syncd.store.models import SyncState, Watch
from syncd.store.repo import Store

__all__ = [
    "StoredWatch",
    "SyncRow",
    "add_watch",
    "canonical_spec",
    "delete_sync_state",
    "get_sync_state",
    "get_watch",
    "list_sync_states",
    "list_watches",
    "remove_watch",
    "save_sync_state",
]


@dataclass(frozen=True)
class StoredWatch:
    """One row of ``watches``: ``spec`` decoded, ``label`` free text (``config`` for config watches)."""

    id: int
    kind: str
    spec: dict[str, Any]
    label: str | None
    created_at: float


@dataclass(frozen=True)
class SyncRow:
    """One row of ``sync_state`` with ``cursor``/``checkpoint`` decoded from JSON (None when unset)."""

    name: str
    cursor: dict[str, Any] | None
    checkpoint: dict[str, Any] | None
    status: str | None
    started_at: float | None
    updated_at: float
    last_success_at: float | None


def canonical_spec(spec: dict[str, Any]) -> str:
    """Canonical JSON of a watch spec (sorted keys, None values dropped)."""
    clean = {k: v for k, v in spec.items() if v is not None}
    return json.dumps(clean, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _watch(row: Any) -> StoredWatch:
    return StoredWatch(row.id, row.kind, json.loads(row.spec), row.label, row.created_at)


def add_watch(
    store: Store, kind: str, spec: dict[str, Any], label: str | None = None, now: float | None = None
) -> tuple[StoredWatch, bool]:
    """Add a watch; returns ``(watch, created)`` (``created`` False when it already existed)."""
    now = time.time() if now is None else now
    text = canonical_spec(spec)
    with store.write() as conn:
        values = {"kind": kind, "spec": text, "label": label, "created_at": now}
        created = bool(insert_ignore(conn, Watch.__table__, values))
        row = conn.execute(select(Watch).where(Watch.kind == kind, Watch.spec == text)).one()
    return _watch(row), created


def list_watches(store: Store, kind: str | None = None) -> list[StoredWatch]:
    """Every watch (optionally of one ``kind``), oldest first."""
    query = select(Watch).order_by(Watch.id)
    if kind:
        query = query.where(Watch.kind == kind)
    with store.read() as conn:
        return [_watch(r) for r in conn.execute(query)]


def get_watch(store: Store, watch_id: int) -> StoredWatch | None:
    """The watch with ``watch_id``, or None."""
    with store.read() as conn:
        row = conn.execute(select(Watch).where(Watch.id == watch_id)).first()
    return _watch(row) if row else None


def remove_watch(store: Store, watch_id: int) -> bool:
    """Delete a watch and its sync progress; True when it existed. Stored entries are kept."""
    with store.write() as conn:
        gone = conn.execute(delete(Watch).where(Watch.id == watch_id)).rowcount
        conn.execute(delete(SyncState).where(SyncState.name == f"watch:{watch_id}"))
    return bool(gone)


def _sync(row: Any) -> SyncRow:
    return SyncRow(
        name=row.name,
        cursor=json.loads(row.cursor) if row.cursor else None,
        checkpoint=json.loads(row.checkpoint) if row.checkpoint else None,
        status=row.status,
        started_at=row.started_at,
        updated_at=row.updated_at,
        last_success_at=row.last_success_at,
    )


def get_sync_state(store: Store, name: str) -> SyncRow | None:
    """The sync progress named ``name`` (e.g. ``watch:3``), or None before the first walk."""
    with store.read() as conn:
        row = conn.execute(select(SyncState).where(SyncState.name == name)).first()
    return _sync(row) if row else None


def list_sync_states(store: Store) -> dict[str, SyncRow]:
    """Every sync progress row by name."""
    with store.read() as conn:
        return {r.name: _sync(r) for r in conn.execute(select(SyncState))}


_UNSET: Any = object()


def save_sync_state(
    store: Store,
    name: str,
    *,
    cursor: dict[str, Any] | None = _UNSET,
    checkpoint: dict[str, Any] | None = _UNSET,
    status: str | None = _UNSET,
    started_at: float | None = _UNSET,
    last_success_at: float | None = _UNSET,
    now: float | None = None,
) -> None:
    """Upsert the named progress row; only the arguments given are written (one transaction)."""
    now = time.time() if now is None else now
    values: dict[str, Any] = {"updated_at": now}
    if cursor is not _UNSET:
        values["cursor"] = json.dumps(cursor, sort_keys=True) if cursor is not None else None
    if checkpoint is not _UNSET:
        values["checkpoint"] = json.dumps(checkpoint, sort_keys=True) if checkpoint is not None else None
    if status is not _UNSET:
        values["status"] = status
    if started_at is not _UNSET:
        values["started_at"] = started_at
    if last_success_at is not _UNSET:
        values["last_success_at"] = last_success_at
    with store.write() as conn:
        upsert(conn, SyncState.__table__, {"name": name, **values}, ["name"])


def delete_sync_state(store: Store, name: str) -> None:
    """Forget the named progress (the next walk starts from scratch)."""
    with store.write() as conn:
        conn.execute(delete(SyncState).where(SyncState.name == name))
