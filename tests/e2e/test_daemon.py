"""Daemon scheduling (first runs after a restart, no burst), sd_notify, and journald-friendly logging."""

from __future__ import annotations

import asyncio
import datetime as dt
import io
import logging
import os
import re
import socket
from pathlib import Path

import pytest
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.interval import IntervalTrigger
from freezegun import freeze_time

from syncd.config import Settings
from syncd.daemon.ops.activity import Activity
from syncd.daemon.run import (
    AFTER_READY_JOBS,
    JOB_DEFAULTS,
    STARTUP_DELAY_S,
    plan_jobs,
    schedule_watchers,
    start_after_ready,
)
from syncd.daemon.sdnotify import notify, watchdog_interval_s
from syncd.logsetup import mask_email, setup_logging
from syncd.passes import watches as watch_mod
from syncd.store.repo import Store
from syncd.store.watches import save_sync_state
from syncd.zenodo.walk_specs import zenodo_spec

NOW = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)


def _settings(settings: Settings, **kw: float) -> Settings:
    return settings.model_copy(update={"sync_interval_s": 3600.0, "revalidate_interval_s": 300.0, **kw})


def test_jobs_coalesce_and_never_overlap() -> None:
    """Every job coalesces missed runs and never runs twice at once."""
    assert JOB_DEFAULTS["coalesce"] is True and JOB_DEFAULTS["max_instances"] == 1


def test_first_runs_without_watches(settings: Settings, store: Store) -> None:
    """No watches: the sweep runs 5 s after start, the sync one interval later."""
    plan = plan_jobs(_settings(settings), store, NOW)
    assert plan["revalidate"]["next_run_time"] == NOW + dt.timedelta(seconds=STARTUP_DELAY_S)
    assert plan["sync"]["next_run_time"] == NOW + dt.timedelta(hours=1)


def test_restart_keeps_the_sync_rhythm_without_a_burst(settings: Settings, store: Store) -> None:
    """Synced 10 min before a restart: the next sync is 50 min after start (its normal slot);
    synced 5 h before (4 missed runs): exactly one run, 5 s after start, then hourly.
    """
    w, _ = watch_mod.add(store, "crossref_query", {"filter": "orcid:0000-0002-1825-0097"})
    name = f"watch:{w.id}"
    save_sync_state(store, name, status="ok", last_success_at=(NOW - dt.timedelta(minutes=10)).timestamp())
    plan = plan_jobs(_settings(settings), store, NOW)
    assert plan["sync"]["next_run_time"] == NOW + dt.timedelta(minutes=50)

    save_sync_state(store, name, status="ok", last_success_at=(NOW - dt.timedelta(hours=5)).timestamp())
    plan = plan_jobs(_settings(settings), store, NOW)
    first = plan["sync"]["next_run_time"]
    assert first == NOW + dt.timedelta(seconds=STARTUP_DELAY_S)
    trigger = IntervalTrigger(seconds=plan["sync"]["seconds"], start_date=first, timezone=dt.UTC)
    fires = [trigger.get_next_fire_time(None, NOW)]
    for _ in range(2):
        fires.append(trigger.get_next_fire_time(fires[-1], fires[-1] + dt.timedelta(microseconds=1)))
    assert fires == [first, first + dt.timedelta(hours=1), first + dt.timedelta(hours=2)]


def test_interrupted_or_new_walk_runs_soon(settings: Settings, store: Store) -> None:
    """A walk left with a cursor (crash mid-walk) or a watch never synced makes the sync run right
    after the startup delay, to resume from its checkpoint.
    """
    w, _ = watch_mod.add(store, "zenodo_community", zenodo_spec(community="frictionless"))
    assert plan_jobs(_settings(settings), store, NOW)["sync"]["next_run_time"] == NOW + dt.timedelta(
        seconds=5
    )
    save_sync_state(
        store,
        f"watch:{w.id}",
        cursor={"windows": [["2013-01-01T00:00:00", "2026-11-29T11:00:00"]], "page": 7, "started_at": 0},
        last_success_at=(NOW - dt.timedelta(minutes=1)).timestamp(),
    )
    assert plan_jobs(_settings(settings), store, NOW)["sync"]["next_run_time"] == NOW + dt.timedelta(
        seconds=5
    )


def test_sd_notify_reaches_the_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """READY/STATUS go to $NOTIFY_SOCKET as one datagram; the watchdog interval is half WATCHDOG_USEC
    and only for this process; without NOTIFY_SOCKET nothing is sent.
    """
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    try:
        monkeypatch.setenv("NOTIFY_SOCKET", str(path))
        assert notify("READY=1", "STATUS=serving") is True
        assert sock.recv(1024) == b"READY=1\nSTATUS=serving"
    finally:
        sock.close()
    monkeypatch.setenv("WATCHDOG_USEC", "60000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert watchdog_interval_s() == 30.0
    monkeypatch.setenv("WATCHDOG_PID", "1")
    assert watchdog_interval_s() is None
    monkeypatch.delenv("NOTIFY_SOCKET")
    assert notify("STOPPING=1") is False


def test_logging_redacts_secrets_and_masks_mailto(settings: Settings) -> None:
    """Log lines are `TIME LEVEL logger event=... k=v` (TIME in UTC, ms) outside the journal; the Zenodo
    token never appears, mailto only partly.
    """
    secret = "zt-0123456789abcdef"
    s = settings.model_copy(
        update={
            "zenodo": settings.zenodo.model_copy(update={"token": __import__("pydantic").SecretStr(secret)}),
        }
    )
    buf = io.StringIO()
    handler = setup_logging("INFO", s, stream=buf)
    try:
        log = logging.getLogger("syncd.test")
        log.info(
            "event=start mailto=%s token=%s url=%s", "ci@example.org", secret, "https://x/?access_token=abc"
        )
        log.warning("event=upstream header=%s", f"Authorization: Bearer {secret}")
    finally:
        logging.getLogger().removeHandler(handler)
    out = buf.getvalue()
    assert secret not in out and "ci@example.org" not in out and "access_token=abc" not in out
    lines = [line.split(" ", 1) for line in out.splitlines()]  # outside the journal: a UTC time first
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp) for stamp, _ in lines)
    assert (
        lines[0][1]
        == "INFO syncd.test event=start mailto=c***@example.org token=*** url=https://x/?access_token=***"
    )
    assert lines[1][1] == "WARNING syncd.test event=upstream header=Authorization: Bearer ***"
    assert mask_email(None) == "-"


def test_logging_on_the_journal_prefixes_syslog_levels(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When stderr is the journal stream ($JOURNAL_STREAM = its device:inode), lines carry <N> priorities."""
    f = (tmp_path / "journal").open("w+")
    st = os.fstat(f.fileno())
    monkeypatch.setenv("JOURNAL_STREAM", f"{st.st_dev}:{st.st_ino}")
    handler = setup_logging("INFO", settings, stream=f)
    try:
        logging.getLogger("syncd.test").warning("event=x")
        logging.getLogger("syncd.test").info("event=y")
    finally:
        logging.getLogger().removeHandler(handler)
    f.seek(0)
    assert f.read().splitlines() == ["<4>WARNING syncd.test event=x", "<6>INFO syncd.test event=y"]
    f.close()


@freeze_time("2026-11-29 12:00:00")
def test_plan_uses_the_wall_clock_under_freezegun(settings: Settings, store: Store) -> None:
    """With the clock frozen at noon, a sweep planned at start fires at 12:00:05 UTC."""
    now = dt.datetime.now(dt.UTC)
    assert now == NOW
    plan = plan_jobs(_settings(settings), store, now)
    assert plan["revalidate"]["next_run_time"].isoformat() == "2026-11-29T12:00:05+00:00"


class _Jobs:
    """The three scheduled coroutines schedule_watchers adds, doing nothing."""

    async def file_check(self) -> None: ...

    async def alerts(self) -> None: ...

    async def slice_job(self, job: object) -> None: ...


def test_start_up_passes_wait_for_ready(settings: Settings) -> None:
    """The alert pass and the retractions read are added paused (no first run before READY=1); after
    READY, start_after_ready runs both at once, then on their intervals; the heartbeat starts at once.
    """

    async def run() -> tuple[dict[str, object], dict[str, object], dt.datetime, dt.datetime]:
        scheduler = AsyncIOScheduler(timezone=dt.UTC, job_defaults=JOB_DEFAULTS)
        schedule_watchers(scheduler, settings, _Jobs(), Activity())  # type: ignore[arg-type]
        scheduler.start(paused=True)
        try:
            before = {job.id: job.next_run_time for job in scheduler.get_jobs()}
            called = dt.datetime.now(dt.UTC)
            start_after_ready(scheduler)
            returned = dt.datetime.now(dt.UTC)
            after = {job.id: job.next_run_time for job in scheduler.get_jobs()}
        finally:
            scheduler.shutdown(wait=False)
        return before, after, called, returned

    before, after, called, returned = asyncio.run(run())
    assert AFTER_READY_JOBS == ("alerts", "retractions")
    assert before["alerts"] is None and before["retractions"] is None
    assert before["heartbeat"] is not None and before["file_watch"] is not None
    # both due at the moment start_after_ready ran (set then, one instant for both), not an interval later
    assert after["alerts"] == after["retractions"]
    for job_id in AFTER_READY_JOBS:
        when = after[job_id]
        assert isinstance(when, dt.datetime) and called <= when <= returned, (called, when, returned)
