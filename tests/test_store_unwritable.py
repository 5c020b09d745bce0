"""Stored entries are served when the store cannot be written (issue 17 items 2 and 3).

A stale lookup must answer from the store within the call's deadline plus a margin when another
connection holds SQLite's write lock, when the database is read-only, and at once when the pool is
blocked by a 429. Entries are made stale with a tiny ``ttl.crossref_work`` (no clock games: the
elapsed times measured here are real).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from syncd.config import Settings
from syncd.crossref.names import CROSSREF_WORK
from syncd.errors import StoreError
from syncd.lookups import crossref
from syncd.normalize.doi import parse_doi
from syncd.services import Services
from syncd.store.repo import Store, write_cause
from tests.corpus_path import CORPUS

DOI = "10.1038/srep16696"
WORK_BODY = (CORPUS / "crossref" / "work" / "10.1038_srep16696.json").read_text(encoding="utf-8")
DEADLINE_S = 2.0
MARGIN_S = 1.0


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
    svc = Services.open(settings, store, transport=httpx.MockTransport(Counting()))
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


def _services(url: str, upstream: Counting) -> Iterator[Services]:
    settings = _settings(url)
    store = Store.open(settings.database_url, upgrade=False)
    svc = Services.open(settings, store, transport=httpx.MockTransport(upstream))
    try:
        yield svc
    finally:
        svc.close()
        store.close()


def test_a_held_write_lock_answers_the_stale_entry_within_the_deadline(db: Path, upstream: Counting) -> None:
    """Another connection holds BEGIN IMMEDIATE: the stale work comes from the store in < deadline + 1 s.

    Before: the budget's write waited busy_timeout (10 s) and the call failed store_unavailable.
    """
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        for svc in _services(f"sqlite:///{db}", upstream):
            start = time.monotonic()
            got = crossref.get_work(svc, parse_doi(DOI))
            elapsed = time.monotonic() - start
            assert got.provenance.source == "store-stale" and got.provenance.stale is True
            assert got.provenance.upstream_error == "store_unavailable"
            assert got.entry.title is not None and got.entry.title.startswith("Single-molecule FRET")
            assert elapsed < DEADLINE_S + MARGIN_S
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
        start = time.monotonic()
        got = crossref.get_work(svc, parse_doi(DOI))
        assert time.monotonic() - start < MARGIN_S
        assert got.provenance.source == "store-stale"
        assert got.provenance.upstream_error == "store_unavailable"
        assert svc.store.write_problem() == "disk_full"
        assert got.entry.body == WORK_BODY and upstream.requests == 0


def test_a_blocked_pool_answers_the_stale_entry_at_once(db: Path, upstream: Counting) -> None:
    """A 429 block shorter than the deadline: the stale work at once, rate_limited, no request.

    Before: the call waited out the block (the budget slept) and revalidated.
    """
    for svc in _services(f"sqlite:///{db}", upstream):
        svc.budget.block("crossref_single", 1.5)
        start = time.monotonic()
        got = crossref.get_work(svc, parse_doi(DOI))
        assert time.monotonic() - start < 0.5
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
        with caplog.at_level(logging.WARNING, logger="syncd.store"):
            for _ in range(3):
                start = time.monotonic()
                with store.waits_within(lambda: 0.2), pytest.raises(StoreError):
                    store.mark_error(entry.id, "upstream_unavailable")
                assert time.monotonic() - start < 0.2 + MARGIN_S
        warnings = [r for r in caplog.records if "store_not_written" in r.getMessage()]
        assert len(warnings) == 1 and "cause=locked" in warnings[0].getMessage()
        assert store.can_write(0.1) == "locked"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        store.close()
