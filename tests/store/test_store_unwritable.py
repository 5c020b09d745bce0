"""Stored entries are served when the store cannot be written (issue 17 items 2 and 3).

A stale lookup must answer from the store within the call's deadline when another connection holds
SQLite's write lock, when the database is read-only, and at once when the pool is blocked by a 429.
Entries are made stale with a tiny ``ttl.crossref_work``.

No clock is read here: "within the deadline" is the bounded work the store asked of SQLite (every
``BEGIN IMMEDIATE`` of the call waits at most the ``busy_timeout`` set just before it, read from the
connections' statement trace, and those waits add up to the deadline plus the write floor), and "at once"
is no write lock tried (full disk) or no budget wait asked (blocked pool, the injected clock's record).
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import event

from syncd.config import Settings
from syncd.crossref import lookups as crossref
from syncd.crossref.names import CROSSREF_WORK
from syncd.errors import StoreError
from syncd.normalize.doi import parse_doi
from syncd.registry import open_services
from syncd.road.services import Services
from syncd.store.engine import BUSY_TIMEOUT_MS
from syncd.store.repo import WRITE_WAIT_FLOOR_S, Store, write_cause
from tests.conftest import Clock
from tests.corpus_path import CORPUS

DOI = "10.1038/srep16696"
WORK_BODY = (CORPUS / "crossref" / "work" / "10.1038_srep16696.json").read_text(encoding="utf-8")
DEADLINE_S = 2.0


class Counting:
    """Crossref answering the srep16696 work; requests counted."""

    def __init__(self) -> None:
        self.requests = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        return httpx.Response(200, text=WORK_BODY, headers={"content-type": "application/json"})


def _settings(url: str) -> Settings:
    return Settings(
        database_url=url,
        crossref={"base_url": "https://api.crossref.test", "mailto": "ci@example.org"},
        zenodo={"base_url": "https://zenodo.test/api"},
        doi={"base_url": "https://doi.test"},
        deadline_s=DEADLINE_S,
        ttl={"crossref_work": 0.001},  # every stored work is stale at once
    )


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A database holding the srep16696 work (stored through the lookup, then closed)."""
    path = tmp_path / "unwritable.db"
    settings = _settings(f"sqlite:///{path}")
    store = Store.open(settings.database_url)
    svc = open_services(settings, store, transport=httpx.MockTransport(Counting()))
    try:
        crossref.get_work(svc, parse_doi(DOI))
    finally:
        svc.close()
        store.close()
    return path


@pytest.fixture
def upstream() -> Counting:
    """A fresh request counter."""
    return Counting()


def _services(url: str, upstream: Counting, clock: Clock | None = None) -> Iterator[Services]:
    settings = _settings(url)
    store = Store.open(settings.database_url, upgrade=False)
    svc = open_services(
        settings,
        store,
        transport=httpx.MockTransport(upstream),
        clock=clock,
        sleep=clock.sleep if clock is not None else None,
    )
    try:
        yield svc
    finally:
        svc.close()
        store.close()


@contextmanager
def lock_waits(store: Store) -> Iterator[list[int]]:
    """The lock wait (``busy_timeout``, ms) each ``BEGIN IMMEDIATE`` of ``store`` ran under, in order.

    Every connection of the store is traced from here on (sqlite3's trace callback, set as each
    connection is made; the pool is emptied first); a connection's wait is its last ``PRAGMA
    busy_timeout``, else the engine's default :data:`BUSY_TIMEOUT_MS`.
    """
    waits: list[int] = []
    current: dict[int, int] = {}

    def on_connect(dbapi_conn: sqlite3.Connection, _record: Any) -> None:
        key = id(dbapi_conn)
        current[key] = BUSY_TIMEOUT_MS

        def trace(statement: str) -> None:
            if match := re.fullmatch(r"PRAGMA busy_timeout=(\d+)", statement.strip()):
                current[key] = int(match.group(1))
            elif statement.strip().upper().startswith("BEGIN IMMEDIATE"):
                waits.append(current[key])

        dbapi_conn.set_trace_callback(trace)

    event.listen(store.engine, "connect", on_connect)
    store.engine.dispose()
    try:
        yield waits
    finally:
        event.remove(store.engine, "connect", on_connect)


def _within_deadline(waits: list[int]) -> bool:
    """The lock waits (ms) of one call add up to its deadline plus the write floor per wait, no more."""
    return sum(waits) <= (DEADLINE_S + WRITE_WAIT_FLOOR_S * len(waits)) * 1000


def test_a_held_write_lock_answers_the_stale_entry_within_the_deadline(db: Path, upstream: Counting) -> None:
    """Another connection holds BEGIN IMMEDIATE: the stale work comes from the store, its lock waits
    bounded by the deadline (each write tried waits what is left of it, never busy_timeout's 10 s).

    Before: the budget's write waited busy_timeout (10 s) and the call failed store_unavailable.
    """
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        for svc in _services(f"sqlite:///{db}", upstream):
            with lock_waits(svc.store) as waits:
                got = crossref.get_work(svc, parse_doi(DOI))
            assert got.provenance.source == "store-stale" and got.provenance.stale is True
            assert got.provenance.upstream_error == "store_unavailable"
            assert got.entry.title is not None and got.entry.title.startswith("Single-molecule FRET")
            assert waits and _within_deadline(waits), waits
            assert upstream.requests == 0
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_full_disk_answers_the_stale_entry_at_once(
    db: Path, upstream: Counting, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database's filesystem has no space left: the stale work is answered at once, nothing sent.

    Before: the revalidation's writes failed (``database or disk is full``) and the call answered
    store_unavailable instead of the stored work (0/10 stale items answered).
    """
    real = os.statvfs

    def full(path: str) -> os.statvfs_result:
        st = real(path)
        return os.statvfs_result((st.f_bsize, st.f_frsize, st.f_blocks, 0, 0, *tuple(st)[5:]))

    for svc in _services(f"sqlite:///{db}", upstream):
        monkeypatch.setattr(os, "statvfs", full)
        with lock_waits(svc.store) as waits:
            got = crossref.get_work(svc, parse_doi(DOI))
        assert waits == []  # at once: no write lock even tried
        assert got.provenance.source == "store-stale"
        assert got.provenance.upstream_error == "store_unavailable"
        assert svc.store.write_problem() == "disk_full"
        assert got.entry.body == WORK_BODY and upstream.requests == 0


def test_a_blocked_pool_answers_the_stale_entry_at_once(db: Path, upstream: Counting) -> None:
    """A 429 block shorter than the deadline: the stale work at once (no budget wait asked), rate_limited,
    no request.

    Before: the call waited out the block (the budget slept) and revalidated.
    """
    clock = Clock()
    for svc in _services(f"sqlite:///{db}", upstream, clock):
        svc.budget.block("crossref_single", 1.5)
        got = crossref.get_work(svc, parse_doi(DOI))
        assert clock.slept == []
        assert got.provenance.source == "store-stale" and got.provenance.upstream_error == "rate_limited"
        assert upstream.requests == 0


def test_write_failures_are_named_and_warned_once(db: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Full disk and read-only are named causes; a failing write warns once per cause, not per call."""
    assert write_cause(sqlite3.OperationalError("database or disk is full")) == "disk_full"
    assert write_cause(sqlite3.OperationalError("attempt to write a readonly database")) == "read_only"
    assert write_cause(sqlite3.OperationalError("database is locked")) == "locked"
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    store = Store.open(f"sqlite:///{db}", upgrade=False)
    try:
        entry = store.get(CROSSREF_WORK, DOI)
        assert entry is not None
        with caplog.at_level(logging.WARNING, logger="syncd.store"), lock_waits(store) as waits:
            for _ in range(3):
                with store.waits_within(lambda: 0.2), pytest.raises(StoreError):
                    store.mark_error(entry.id, "upstream_unavailable")
        assert waits == [int(WRITE_WAIT_FLOOR_S * 1000)] * 3  # 0.2 s left: the floor, not busy_timeout
        warnings = [r for r in caplog.records if "store_not_written" in r.getMessage()]
        assert len(warnings) == 1 and "cause=locked" in warnings[0].getMessage()
        assert store.can_write(0.1) == "locked"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        store.close()
