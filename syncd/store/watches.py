"""Store functions for watch lists (``watches``) and durable sync progress (``sync_state``).

A watch's ``spec`` is canonical JSON (keys sorted, no whitespace), so the unique ``(kind, spec)``
constraint makes adding the same watch twice a no-op. ``sync_state`` rows are named ``watch:<id>``:
``cursor`` holds the position inside the running walk (rewritten after every stored page),
``checkpoint`` the point a finished walk reached (only advanced when a walk completes, or when a
Zenodo time window completes); ``watermark``, ``seen`` and ``total`` how far the walk got
(:class:`Progress`, written with the position).

A walk names its walker (``pid``, ``host``) when it starts and writes ``heartbeat_at`` after every
page (:func:`page_done`), which is also where it learns it must stop: ``stop_requested`` (set by
:func:`request_stop`) or its row deleted (``syncd watch rm``). A ``running`` row whose walker is gone
(:func:`walk_status`) reads as ``interrupted`` and resumes from its cursor.
"""

from __future__ import annotations

import enum
import json
import os
import socket
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select, update

from syncd.proc import pid_alive
from syncd.store.dialect import insert_ignore, upsert
from syncd.store.models import SyncState, Watch
from syncd.store.repo import Store

__all__ = [
    "HEARTBEAT_STALE_S",
    "PageVerdict",
    "Progress",
    "StoredWatch",
    "SyncRow",
    "add_watch",
    "canonical_spec",
    "delete_sync_state",
    "get_sync_state",
    "get_watch",
    "list_sync_states",
    "list_watches",
    "page_done",
    "remove_watch",
    "request_stop",
    "save_sync_state",
    "start_walk",
    "walk_status",
    "walked_elsewhere",
]

HEARTBEAT_STALE_S = 180.0
"""A ``running`` walk whose last page ended longer ago than this (seconds) is ``interrupted``.

One page is one request of at most ``syncd.walks.walker.REQUEST_DEADLINE_S`` (60 s) plus storing its items."""
HOST = socket.gethostname()[:255]
"""This machine's name, as walkers record it."""


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
    pid: int | None = None
    host: str | None = None
    heartbeat_at: float | None = None
    stop_requested: bool = False
    watermark: str | None = None
    seen: int | None = None
    total: int | None = None


@dataclass(frozen=True)
class Progress:
    """How far a walk got, written with its position (``sync_state`` columns of migration 0009).

    ``watermark``: ``indexed`` time (ISO 8601 UTC, milliseconds) of the last work stored, None before
    the first or when upstream does not page in ``indexed`` order; ``seen``: works the walk has seen;
    ``total``: the ``total-results`` upstream answered for the walk (None before its first page).
    """

    watermark: str | None
    seen: int
    total: int | None

    def columns(self) -> dict[str, Any]:
        """The ``sync_state`` column values."""
        return {"watermark": self.watermark, "seen": self.seen, "total": self.total}


class PageVerdict(enum.Enum):
    """What a walk does after a page (:func:`page_done`)."""

    GO = "go"
    """Walk on."""
    STOP = "stop"
    """``syncd watch stop`` asked: the position is saved, the walk ends ``stopped``."""
    GONE = "gone"
    """The watch was removed (``syncd watch rm``): nothing is saved, the walk ends."""


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
        pid=row.pid,
        host=row.host,
        heartbeat_at=row.heartbeat_at,
        stop_requested=bool(row.stop_requested),
        watermark=row.watermark,
        seen=row.seen,
        total=row.total,
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
    progress: Progress | None = None,
    now: float | None = None,
) -> None:
    """Upsert the named progress row; only the arguments given are written (one transaction).

    ``progress``: the walk's ``watermark``, ``seen`` and ``total`` (written together, None values too).
    """
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
    if progress is not None:
        values.update(progress.columns())
    with store.write() as conn:
        upsert(conn, SyncState.__table__, {"name": name, **values}, ["name"])


def delete_sync_state(store: Store, name: str) -> None:
    """Forget the named progress (the next walk starts from scratch)."""
    with store.write() as conn:
        conn.execute(delete(SyncState).where(SyncState.name == name))


def _encode(value: dict[str, Any] | None) -> str | None:
    return json.dumps(value, sort_keys=True) if value is not None else None


def start_walk(store: Store, name: str, *, cursor: dict[str, Any], started_at: float, now: float) -> None:
    """Record a walk starting or resuming at ``cursor``: ``running``, this process the walker, no stop."""
    values = {
        "cursor": _encode(cursor),
        "status": "running",
        "started_at": started_at,
        "updated_at": now,
        "pid": os.getpid(),
        "host": HOST,
        "heartbeat_at": time.time(),
        "stop_requested": False,
    }
    with store.write() as conn:
        upsert(conn, SyncState.__table__, {"name": name, **values}, ["name"])


def page_done(
    store: Store,
    name: str,
    *,
    cursor: dict[str, Any] | None,
    checkpoint: dict[str, Any] | None = _UNSET,
    progress: Progress | None = None,
    shutdown: bool = False,
) -> PageVerdict:
    """After a stored page: save the position (and ``checkpoint``), beat the heart, learn whether to stop.

    One write transaction. A deleted row (the watch was removed) is not recreated: GONE. A stop asked
    by ``syncd watch stop``, or ``shutdown`` (SIGTERM/SIGINT of this process), saves the position and
    ends the walk: the row reads ``stopped`` (or ``interrupted`` for a shutdown) and resumes later.
    """
    now = time.time()
    with store.write() as conn:
        row = conn.execute(select(SyncState.stop_requested).where(SyncState.name == name)).first()
        if row is None:
            return PageVerdict.GONE
        values: dict[str, Any] = {"cursor": _encode(cursor), "updated_at": now, "heartbeat_at": now}
        if checkpoint is not _UNSET:
            values["checkpoint"] = _encode(checkpoint)
        if progress is not None:
            values.update(progress.columns())
        verdict = PageVerdict.GO
        if row.stop_requested or shutdown:
            values.update(status="stopped" if row.stop_requested else "interrupted", stop_requested=False)
            verdict = PageVerdict.STOP
        conn.execute(update(SyncState).where(SyncState.name == name).values(**values))
    return verdict


def request_stop(store: Store, name: str) -> bool:
    """Ask the walk of ``name`` to stop at its next page; True when a walk was running (the flag is set)."""
    with store.write() as conn:
        return bool(
            conn.execute(
                update(SyncState)
                .where(SyncState.name == name, SyncState.status == "running")
                .values(stop_requested=True)
            ).rowcount
        )


def walk_status(row: SyncRow | None, now: float | None = None) -> str:
    """The status to show for ``row`` (``never`` without one).

    A ``running`` walk whose walker is gone (heartbeat older than :data:`HEARTBEAT_STALE_S`, or its
    process ended on this host) is ``interrupted``; otherwise the stored status.
    """
    if row is None:
        return "never"
    status = row.status or "never"
    if status != "running":
        return status
    now = time.time() if now is None else now
    beat = row.heartbeat_at if row.heartbeat_at is not None else row.updated_at
    if now - beat > HEARTBEAT_STALE_S:
        return "interrupted"
    if row.pid is not None and row.host == HOST and os.name == "posix" and not pid_alive(row.pid):
        return "interrupted"
    return status


def walked_elsewhere(row: SyncRow | None, now: float | None = None) -> bool:
    """True when another live process walks ``row``'s watch now (:func:`walk_status` ``running``)."""
    if row is None or walk_status(row, now) != "running":
        return False
    return not (row.pid == os.getpid() and row.host == HOST)
