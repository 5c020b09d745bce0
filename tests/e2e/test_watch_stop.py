"""Issue 12 item 10: walks can be stopped, a dead walker's watch is not `running`, a log line per page.

The walk is the recorded three-page Crossref cursor chain of funder 100000001 (30 works a page, 90 in
all), served by the fake with a latency per request so a stop can land while a page is in flight.
Waiting for a page is polling the store (no sleep stands for time logic).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from syncd.cli import cli
from syncd.config import Settings
from syncd.passes.sync import SyncReport, sync_watch
from syncd.road.services import Services
from syncd.store.repo import Store
from syncd.store.watches import (
    HEARTBEAT_STALE_S,
    HOST,
    StoredWatch,
    SyncRow,
    add_watch,
    get_sync_state,
    save_sync_state,
    walk_status,
)
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.conftest import CORPUS
from tests.core.test_sync import serve_chain
from tests.fakeupstream import FakeUpstream

pytestmark = pytest.mark.serial  # real processes

ROOT = Path(__file__).resolve().parents[2]
ROUTE = "/funders/100000001/works"
LATENCY_S = 0.5


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), obj={})


def _chain() -> list[dict[str, Any]]:
    return [
        json.loads(
            (CORPUS / f"crossref/work-list/funders-100000001-works_rows-30_cursor-{p}.json").read_text()
        )
        for p in ("star", "page2", "page3")
    ]


def _slow_chain(fake: FakeUpstream) -> None:
    """The chain of 90 works (its third page accounts for them); every request to it waits LATENCY_S."""
    serve_chain(fake, ROUTE, _chain(), 30, 90)
    fake.fault("latency", path_prefix="/funders", service="crossref", delay_s=LATENCY_S)


def _add(db_url: str) -> StoredWatch:
    store = Store.open(db_url)
    try:
        return add_watch(store, "crossref_query", {"route": ROUTE, "rows": 30})[0]
    finally:
        store.close()


def _wait_pages(store: Store, watch: StoredWatch, pages: int, timeout_s: float = 60) -> SyncRow:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        state = get_sync_state(store, f"watch:{watch.id}")
        if state is not None and state.cursor and state.cursor.get("pages", 0) >= pages:
            return state
        time.sleep(0.02)
    pytest.fail(f"the walk did not store {pages} page(s)")


def _walk_in_thread(cache: Services, watch: StoredWatch) -> tuple[threading.Thread, list[SyncReport]]:
    out: list[SyncReport] = []
    thread = threading.Thread(target=lambda: out.append(sync_watch(cache, watch)), daemon=True)
    thread.start()
    return thread, out


def test_watch_stop_ends_the_walk_after_the_current_page(
    env: Settings,  # noqa: F811
    cache: Services,
    fake: FakeUpstream,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`syncd watch stop ID` from another thread while page 2 is in flight: the walk stores page 2,
    saves its cursor and ends `stopped` (no third request); `watch ls` shows it stopped and
    resumable; `watch sync` resumes at the saved cursor and completes the 90 works. Each page logs
    `event=page watch=ID page=N items=M new=K`.
    """
    _slow_chain(fake)
    watch = add_watch(cache.store, "crossref_query", {"route": ROUTE, "rows": 30})[0]
    with caplog.at_level(logging.INFO, logger="syncd.sync"):
        thread, out = _walk_in_thread(cache, watch)
        _wait_pages(cache.store, watch, 1)
        stopped = run("watch", "stop", str(watch.id))
        thread.join(timeout=20)
    assert stopped.exit_code == 0, stopped.output
    assert "stop requested" in stopped.stdout
    report = out[0]
    assert (report.stopped, report.pages, report.complete, report.requests) == ("stop_requested", 2, False, 2)
    state = get_sync_state(cache.store, f"watch:{watch.id}")
    assert state is not None and state.status == "stopped" and state.cursor is not None
    assert state.cursor["pages"] == 2 and state.stop_requested is False
    assert [r.query.get("cursor") for r in fake.requests].count("*") == 1 and len(fake.requests) == 2
    pages = [r.getMessage() for r in caplog.records if r.getMessage().startswith("event=page ")]
    assert pages == [
        f"event=page watch={watch.id} page=1 items=30 new=30",
        f"event=page watch={watch.id} page=2 items=30 new=30",
    ]
    listed = json.loads(run("watch", "ls", "--json").stdout)
    assert [(r["status"], r["resumable"]) for r in listed] == [("stopped", True)]
    fake.clear_faults()
    fake.reset_log()
    resumed = run("watch", "sync", "--json")
    assert resumed.exit_code == 0, resumed.output
    again = json.loads(resumed.stdout)[0]
    assert (again["resumed"], again["complete"], again["requests"]) == (True, True, 1)
    assert "*" not in [r.query.get("cursor") for r in fake.requests]
    dois = {i["DOI"].lower() for page in _chain() for i in page["message"]["items"]}
    assert len(dois) == 90 and all(cache.store.get("crossref_work", d) is not None for d in dois)


def test_watch_stop_of_an_idle_or_unknown_watch(env: Settings, db_url: str) -> None:  # noqa: F811
    """A watch with no running walk is reported and left alone (exit 0); an unknown id exits 1."""
    watch = _add(db_url)
    idle = run("watch", "stop", str(watch.id))
    assert idle.exit_code == 0 and "no walk running" in idle.stdout
    unknown = run("watch", "stop", "999")
    assert unknown.exit_code == 1 and unknown.stderr.startswith("error: not_found:")


def test_watch_rm_ends_a_running_walk_and_leaves_no_row(
    env: Settings,  # noqa: F811
    cache: Services,
    fake: FakeUpstream,
) -> None:
    """`syncd watch rm ID` while page 2 is in flight: the walk ends after it (watch_removed, no third
    request) and its sync_state row is not recreated.
    """
    _slow_chain(fake)
    watch = add_watch(cache.store, "crossref_query", {"route": ROUTE, "rows": 30})[0]
    thread, out = _walk_in_thread(cache, watch)
    _wait_pages(cache.store, watch, 1)
    removed = run("watch", "rm", str(watch.id))
    thread.join(timeout=20)
    assert removed.exit_code == 0, removed.output
    assert "stops after the current page" in removed.stderr
    assert (out[0].stopped, out[0].requests) == ("watch_removed", 2)
    assert get_sync_state(cache.store, f"watch:{watch.id}") is None


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_walk_status_reads_a_dead_walker_as_interrupted() -> None:
    """A `running` row reads `interrupted` when its heartbeat is older than HEARTBEAT_STALE_S or its
    process (this host) is gone; a live walker with a recent heartbeat stays `running`.
    """
    now = 1_000_000.0

    def row(pid: int, beat: float, host: str = HOST) -> SyncRow:
        return SyncRow("watch:1", {"cursor": "x"}, None, "running", now - 500, beat, None, pid, host, beat)

    assert walk_status(row(os.getpid(), now - 10), now) == "running"
    assert walk_status(row(os.getpid(), now - HEARTBEAT_STALE_S - 1), now) == "interrupted"
    assert walk_status(row(_dead_pid(), now - 10), now) == "interrupted"
    assert walk_status(row(_dead_pid(), now - 10, host="elsewhere"), now) == "running"
    assert walk_status(None, now) == "never"


def _env(fake: FakeUpstream, db_url: str, tmp_path: Path) -> dict[str, str]:
    values = {k: v for k, v in os.environ.items() if not k.startswith("SYNCD_")}
    values.update(
        {
            "PYTHONPATH": str(ROOT),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "SYNCD_DATABASE_URL": db_url,
            "SYNCD_CROSSREF__BASE_URL": fake.crossref_url,
            "SYNCD_CROSSREF__MAILTO": "ci@example.org",
            "SYNCD_ZENODO__BASE_URL": fake.zenodo_url,
            "SYNCD_DOI__BASE_URL": fake.doi_url,
        }
    )
    return values


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["sigkill", "sigint"])
def test_a_walker_killed_or_interrupted_is_not_running(
    env: Settings,  # noqa: F811
    fake: FakeUpstream,
    db_url: str,
    tmp_path: Path,
    sig: signal.Signals,
) -> None:
    """`syncd watch sync` sent SIGKILL or Ctrl-C (SIGINT) after its first page: `watch ls` shows the
    watch `interrupted` (never `running`) and resumable; Ctrl-C ends the process with 130 after the
    page in flight, its state saved.
    """
    _slow_chain(fake)
    watch = _add(db_url)
    proc = subprocess.Popen(
        [sys.executable, "-m", "syncd", "watch", "sync", "--json"],
        env=_env(fake, db_url, tmp_path),
        cwd=str(ROOT),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    store = Store.open(db_url)
    try:
        _wait_pages(store, watch, 1)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=20)
        state = get_sync_state(store, f"watch:{watch.id}")
    finally:
        store.close()
        if proc.poll() is None:
            proc.kill()
    assert state is not None and state.cursor is not None
    listed = json.loads(run("watch", "ls", "--json").stdout)
    assert [(r["status"], r["resumable"]) for r in listed] == [("interrupted", True)]
    assert f"watch {watch.id}: no walk running (interrupted)" in run("watch", "stop", str(watch.id)).stdout
    if sig == signal.SIGINT:
        assert proc.returncode == 130, err
        assert state.status == "interrupted" and state.cursor["pages"] == 2
        assert "stopping after the current page" in err


def test_a_watch_walked_by_another_live_process_is_left_to_it(cache: Services, fake: FakeUpstream) -> None:
    """A `running` row of another live process (pid 1 on this host, fresh heartbeat): sync_watch sends no
    request and reports running_elsewhere; the row is left as it was.
    """
    watch = add_watch(cache.store, "crossref_query", {"route": ROUTE, "rows": 30})[0]
    save_sync_state(cache.store, f"watch:{watch.id}", cursor={"cursor": "*", "pages": 0}, status="running")
    with cache.store.write() as conn:
        conn.exec_driver_sql(
            "UPDATE sync_state SET pid = 1, host = ?, heartbeat_at = ? WHERE name = ?",
            (HOST, time.time(), f"watch:{watch.id}"),
        )
    report = sync_watch(cache, watch)
    assert (report.stopped, report.requests) == ("running_elsewhere", 0)
    assert fake.count() == 0
    state = get_sync_state(cache.store, f"watch:{watch.id}")
    assert state is not None and (state.status, state.pid) == ("running", 1)
