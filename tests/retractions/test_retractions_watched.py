"""Retraction Watch changes of watched DOIs not stored yet: kept pending, then in the feed and alerted.

The sample's row 11459 retracts 10.1016/j.apsusc.2007.01.131 (notice 10.1016/j.apsusc.2017.07.145,
2017-07-24); the first version imported lacks it, the second adds it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from sqlalchemy import update

from syncd.config import Settings
from syncd.daemon.alerts import run_pass
from syncd.passes.watches import doi_specs
from syncd.retractions.feed import PENDING, PENDING_KEEP_S, pending_changes
from syncd.retractions.fetch import scheduled_pass
from syncd.retractions.importer import import_path
from syncd.store.changes import list_changes
from syncd.store.models import SyncState
from syncd.store.repo import Store
from syncd.store.watches import add_watch, list_watches, remove_watch
from tests.retraction_helpers import SAMPLE, sample_bytes, store_work

APSUSC = "10.1016/j.apsusc.2007.01.131"
NOTICE = "10.1016/j.apsusc.2017.07.145"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store.open(f"sqlite:///{tmp_path / 'store.db'}")
    yield s  # type: ignore[misc]
    s.close()


def watch(store: Store, doi: str) -> None:
    [spec] = doi_specs([doi])
    add_watch(store, "doi", spec, "lab")


def first_version(tmp_path: Path) -> Path:
    """The sample without row 11459 (its retraction of the Applied Surface Science paper)."""
    lines = sample_bytes().split(b"\r\n")
    (tmp_path / "old").mkdir(exist_ok=True)
    (tmp_path / "old" / "retraction_watch.csv").write_bytes(
        b"\r\n".join(x for x in lines if not x.startswith(b"11459,"))
    )
    return tmp_path / "old"


def test_a_watched_doi_not_stored_is_pending_then_fed_and_alerted(
    store: Store, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The new retraction of a watched DOI with no entry is kept pending (no feed row yet); once the work
    is stored the next import writes it to the feed (pending_since kept), and the daemon's alert pass
    raises event=alert type=retraction naming the notice.
    """
    watch(store, APSUSC)
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'store.db'}")
    assert run_pass(store, settings) == 0  # the first pass sets the cursor
    import_path(store, first_version(tmp_path), now=1_800_000_000.0)
    report = import_path(store, SAMPLE, now=1_800_086_400.0)
    assert (report.changes, report.pending) == (0, 1)
    assert list_changes(store) == []
    [pending] = pending_changes(store)
    assert (pending["doi"], pending["types"], pending["pending_since"]) == (
        APSUSC,
        "retraction",
        1_800_086_400.0,
    )
    assert pending["summary"]["items"][0]["doi"] == NOTICE
    store_work(store, APSUSC)
    again = import_path(store, SAMPLE, now=1_800_090_000.0)
    assert again.unchanged and again.flushed == 1 and pending_changes(store) == []
    [change] = list_changes(store)
    assert change.doi == APSUSC and change.types == ("retraction",)
    assert change.summary["pending_since"] == 1_800_086_400.0
    assert change.summary["title"].startswith("RETRACTED: Relative performances of effective medium")
    with caplog.at_level(logging.WARNING, logger="syncd.alerts"):
        assert run_pass(store, settings) == 1
    [line] = [r.getMessage() for r in caplog.records if "event=alert" in r.getMessage()]
    assert "type=retraction" in line and f"doi={APSUSC}" in line and f"notice={NOTICE}" in line


def test_the_daemon_job_flushes_pending_changes(store: Store, tmp_path: Path) -> None:
    """The daemon's hourly Retraction Watch job writes pending changes whose work is now stored, even
    with no source configured (nothing to fetch).
    """
    watch(store, APSUSC)
    import_path(store, first_version(tmp_path))
    assert import_path(store, SAMPLE).pending == 1
    store_work(store, APSUSC)
    scheduled_pass(store, Settings(database_url=f"sqlite:///{tmp_path / 'store.db'}"))
    assert [c.doi for c in list_changes(store)] == [APSUSC] and pending_changes(store) == []


def test_an_unwatched_unstored_doi_records_nothing(store: Store, tmp_path: Path) -> None:
    """A new row for a DOI neither stored nor watched: no feed row, nothing pending."""
    import_path(store, first_version(tmp_path))
    report = import_path(store, SAMPLE)
    assert (report.dataset.added, report.changes, report.pending) == (1, 0, 0)
    assert pending_changes(store) == []


def test_pending_changes_are_dropped_when_unwatched_or_expired(store: Store, tmp_path: Path) -> None:
    """A pending change whose DOI is no longer watched is dropped; one older than PENDING_KEEP_S too."""
    watch(store, APSUSC)
    import_path(store, first_version(tmp_path), now=1_800_000_000.0)
    import_path(store, SAMPLE, now=1_800_000_100.0)
    [w] = list_watches(store, "doi")
    remove_watch(store, w.id)
    assert import_path(store, SAMPLE, now=1_800_000_200.0).flushed == 0
    assert pending_changes(store) == []
    watch(store, APSUSC)
    with store.write() as conn:  # a pending change kept from long ago
        item = {"doi": APSUSC, "types": "retraction", "summary": {}, "pending_since": 1_700_000_000.0}
        conn.execute(
            update(SyncState)
            .where(SyncState.name == PENDING)
            .values(checkpoint=json.dumps({"items": [item]}))
        )
    assert PENDING_KEEP_S < 1_800_000_300.0 - 1_700_000_000.0
    assert import_path(store, SAMPLE, now=1_800_000_300.0).flushed == 0
    assert pending_changes(store) == [] and list_changes(store) == []
