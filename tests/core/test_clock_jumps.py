"""Clocks that jump (issue 27.3): after the machine clock ran 30 days ahead and was corrected, what was
written "in the future" is clamped when read: a work validated in the future is stale now (the first
call revalidates, and the daemon's sweep picks it up), no block outlasts ``max_block_s``, the bucket
refills from now, a lease or an announcement dated ahead is void, and ``syncd cache budget --reset``
gives a full bucket.
"""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from freezegun import freeze_time

from syncd.budget.buckets import BREAKER_COOLDOWN_S, BREAKER_THRESHOLD, Announcement, Budget, Outcome
from syncd.cli import cli
from syncd.config import Settings
from syncd.crossref import lookups as crossref
from syncd.crossref.names import CROSSREF_WORK
from syncd.normalize.doi import parse_doi
from syncd.passes.refresh import sweep
from syncd.registry import POOLS, open_services
from syncd.store.repo import Store
from tests.conftest import make_settings
from tests.fakeupstream import FakeUpstream

RIGHT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
AHEAD = RIGHT + timedelta(days=30)
POOL = "crossref_single"
DOI = "10.1101/598821"


def _settings(db_url: str) -> Settings:
    return Settings(
        database_url=db_url,
        crossref={"mailto": "ci@example.org"},
        budget={
            POOL: {"per_s": 1.0, "burst": 3, "in_flight": 2},
            "crossref_in_flight": 2,
            "max_block_s": 300,
        },
    )


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store.open(f"sqlite:///{tmp_path / 'clock.db'}")
    yield s
    s.close()


def test_the_budget_written_30_days_ahead_is_clamped_after_the_correction(store: Store) -> None:
    """Clock 30 days ahead: the bucket spent, a slot held, an announcement of 1 per minute, zenodo_general
    blocked 300 s by a 429, doi.org's breaker open. Clock corrected: the slot is free, the announcement
    void, no block or breaker outlasts max_block_s / the cooldown (both were set ahead: void), and the
    buckets refill from now: crossref_single's one more token, zenodo_general's emptied by the 429 one
    1.8 s after the correction at 0.55/s (before: none for 30 days, the monotonic bucket waiting for
    its future timestamp; blocks lasting until the future date).
    """
    settings = _settings(str(store.engine.url))
    with freeze_time(AHEAD) as clock:
        budget = Budget(store, settings, pools=POOLS)
        held = budget.try_acquire(POOL).lease
        answered = budget.try_acquire(POOL).lease
        assert held is not None and answered is not None
        budget.release(answered, Outcome.ANSWERED, announced=Announcement(limit=1, interval_s=60.0))
        budget.block("zenodo_general", 86_400)
        for _ in range(BREAKER_THRESHOLD):
            budget.record_failure("doi")
        assert budget.state(POOL).in_flight == 1 and budget.state(POOL).window_limit == 1
        assert budget.offline("doi") and budget.state("zenodo_general").blocked_for(time.time()) == 300

        clock.move_to(RIGHT)
        now = time.time()
        state = budget.state(POOL)
        assert state.in_flight == 0 and state.announced is None and state.window_limit is None
        assert budget.state("zenodo_general").blocked_for(now) == 0.0
        assert not budget.offline("doi")
        first = budget.try_acquire(POOL)  # the bucket's last token, taken ahead, is still there
        assert first.lease is not None
        assert budget.try_acquire(POOL).why == "tokens"
        refused = budget.try_acquire("zenodo_general")  # not blocked: the 429 emptied the bucket only
        assert refused.why == "tokens" and refused.wait_s == pytest.approx(1 / 0.55)
        clock.tick(timedelta(seconds=2))
        assert budget.try_acquire(POOL).lease is not None  # refilled from now
        assert budget.try_acquire("zenodo_general").lease is not None
        probe = budget.try_acquire("doi")  # the breaker's count stands: the next call is its one probe
        assert probe.lease is not None and probe.probe
        assert budget.state("doi").offline_until - time.time() == pytest.approx(BREAKER_COOLDOWN_S)


def test_a_block_set_now_never_lasts_past_max_block_s(store: Store) -> None:
    """With the right clock a 429 asking 86,400 s blocks for max_block_s (300 s) and no longer, and a
    block left by an older, longer max_block_s (3,600 s) is cut to 300 s after it was set.
    """
    settings = _settings(str(store.engine.url))
    with freeze_time(RIGHT) as clock:
        Budget(
            store,
            settings.model_copy(update={"budget": settings.budget.model_copy(update={"max_block_s": 3600})}),
            pools=POOLS,
        ).block(POOL, 3600)
        budget = Budget(store, settings, pools=POOLS)
        assert budget.state(POOL).blocked_for(time.time()) == 300
        clock.tick(timedelta(seconds=299))
        assert budget.try_acquire(POOL).why == "blocked"
        clock.tick(timedelta(seconds=2))
        assert budget.try_acquire(POOL).lease is not None


def test_reset_gives_a_full_bucket_after_the_clock_ran_ahead(
    fake: FakeUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bucket spent and blocked with the clock ahead; corrected, `syncd cache budget --reset` reports the
    pool with a full bucket (3 of burst 3), no block and no breaker, and it grants 3 takes at once.
    """
    db_url = f"sqlite:///{tmp_path / 'reset.db'}"
    for key in list(os.environ):
        if key.startswith("SYNCD_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("SYNCD_DATABASE_URL", db_url)
    monkeypatch.setenv("SYNCD_CROSSREF__MAILTO", "ci@example.org")
    monkeypatch.setenv("SYNCD_BUDGET__CROSSREF_SINGLE__BURST", "3")
    monkeypatch.setenv("SYNCD_BUDGET__CROSSREF_SINGLE__PER_S", "0.01")
    store = Store.open(db_url)
    settings = Settings(
        database_url=db_url,
        crossref={"mailto": "ci@example.org"},
        budget={POOL: {"per_s": 0.01, "burst": 3}},
    )
    try:
        with freeze_time(AHEAD) as clock:
            budget = Budget(store, settings, pools=POOLS)
            for _ in range(3):
                budget.try_acquire(POOL)
            budget.block(POOL, 120)
            clock.move_to(RIGHT)
            res = CliRunner().invoke(cli, ["cache", "budget", "--reset", POOL, "--json"], obj={})
            assert res.exit_code == 0, res.output
            row = next(r for r in json.loads(res.stdout) if r["pool"] == POOL)
            assert (row["tokens"], row["burst"], row["blocked_until"], row["failures"]) == (3.0, 3.0, None, 0)
            assert sum(1 for _ in range(3) if budget.try_acquire(POOL).lease is not None) == 3
    finally:
        store.close()


def test_a_work_validated_in_the_future_is_revalidated_after_the_correction(
    fake: FakeUpstream, tmp_path: Path
) -> None:
    """A work fetched while the clock ran 30 days ahead (validated_at in the future): once the clock is
    corrected, the first lookup asks Crossref again instead of answering it fresh for 30 days, and the
    daemon's sweep (which lists stale entries) picks such an entry up too.
    """
    db_url = f"sqlite:///{tmp_path / 'fresh.db'}"
    settings = make_settings(fake, db_url)
    store = Store.open(db_url)
    svc = open_services(settings, store)
    path = f"/works/{DOI}"
    try:
        with freeze_time(AHEAD, tick=True) as clock:
            first = crossref.get_work(svc, parse_doi(DOI))
            assert first.provenance.source == "upstream" and fake.count(path, service="crossref") == 1
            clock.move_to(RIGHT)
            again = crossref.get_work(svc, parse_doi(DOI))
            assert again.provenance.source == "upstream" and fake.count(path, service="crossref") == 2
            assert again.provenance.validated_at <= time.time() + 5
            stored = store.get(CROSSREF_WORK, DOI)
            assert (
                stored is not None
                and stored.title is not None
                and stored.title.startswith("Raptor genomes reveal")
            )
        with freeze_time(AHEAD, tick=True) as clock:  # validated ahead again; the sweep after the correction:
            crossref.get_work(svc, parse_doi(DOI), force=True)
            clock.move_to(RIGHT)
            daemon = open_services(settings, store, interactive=False)
            try:
                report = sweep(daemon, 10)
            finally:
                daemon.close()
        assert report.checked == 1 and report.failed == 0
        assert fake.count(path, service="crossref") == 4
    finally:
        svc.close()
        store.close()
