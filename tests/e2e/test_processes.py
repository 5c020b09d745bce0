"""Real processes: `syncd mcp` over stdio and `syncd daemon` over Streamable HTTP, against the fake."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from mcp import Client, StdioServerParameters

from syncd.store.repo import Store
from tests.fakeupstream import FakeUpstream

pytestmark = [pytest.mark.anyio, pytest.mark.serial]  # real processes

ROOT = Path(__file__).resolve().parents[2]
RAPTOR_TITLE = "Raptor genomes reveal evolutionary signatures of predatory and nocturnal lifestyles"


def _env(fake: FakeUpstream, db_url: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCD_")}
    env.update(
        {
            "PYTHONPATH": str(ROOT),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "SYNCD_DATABASE_URL": db_url,
            "SYNCD_CROSSREF__BASE_URL": fake.crossref_url,
            "SYNCD_CROSSREF__MAILTO": "ci@example.org",
            "SYNCD_ZENODO__BASE_URL": fake.zenodo_url,
            "SYNCD_DOI__BASE_URL": fake.doi_url,
            "SYNCD_DATACITE__BASE_URL": fake.datacite_url,
        }
    )
    env.update(extra)
    return env


def _start_daemon(env: dict[str, str], port: int) -> subprocess.Popen[str]:
    """Start ``syncd daemon`` and wait (at most 60 s: a busy machine) until it answers HTTP on ``port``.

    The daemon binds its socket before anything else starts, so an accepted connection alone does not
    mean it is serving (a SIGTERM then could land before its handlers are installed); any HTTP answer of
    ``/healthz`` (200 or 503) does.
    """
    proc = subprocess.Popen(
        [sys.executable, "-m", "syncd", "daemon"],
        env=env,
        cwd=str(ROOT),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2.0)
            return proc
        except httpx.HTTPError:
            if proc.poll() is not None:
                break
            time.sleep(0.1)
    proc.kill()
    pytest.fail("daemon did not listen")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_stdio_server_answers_from_store_on_second_call(
    fake: FakeUpstream, db_url: str, tmp_path: Path
) -> None:
    """`syncd mcp` as a subprocess: the first call fetches, the second makes no upstream request."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "syncd", "mcp"], env=_env(fake, db_url, tmp_path), cwd=str(ROOT)
    )
    async with Client(params) as client:
        first = await client.call_tool("crossref_get_work", {"doi": "10.1101/598821"})
        assert first.structured_content["title"] == RAPTOR_TITLE
        assert first.structured_content["cache"]["source"] == "upstream"
        second = await client.call_tool("crossref_get_work", {"doi": "doi:10.1101/598821"})
        assert second.structured_content["cache"]["source"] == "store"
    assert fake.count("/works", service="crossref") == 1


async def test_daemon_serves_http_refuses_foreign_host_and_sweeps(
    fake: FakeUpstream, db_url: str, tmp_path: Path
) -> None:
    """`syncd daemon`: HTTP tools on loopback, foreign Host refused, stale entries swept, clean SIGTERM."""
    port = _free_port()
    env = _env(
        fake,
        db_url,
        tmp_path,
        SYNCD_HTTP__PORT=str(port),
        SYNCD_REVALIDATE_INTERVAL_S="1",
        SYNCD_TTL__CROSSREF_WORK="0.5",
    )
    proc = _start_daemon(env, port)
    try:
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            res = await client.call_tool("crossref_get_work", {"doi": "10.1101/598821"})
        assert res.structured_content["title"] == RAPTOR_TITLE
        foreign = httpx.post(
            f"http://127.0.0.1:{port}/mcp",
            headers={
                "Host": "evil.example",
                "Content-Type": "application/json",
                "Accept": "application/json",
            },
            content=b"{}",
        )
        assert foreign.status_code in (400, 403, 421)
        # the stored work goes stale after 0.5 s; the 1 s sweep revalidates it (unchanged)
        store = Store.open(db_url)
        try:
            end = time.monotonic() + 60  # polled
            while time.monotonic() < end:
                entry = store.get("crossref_work", "10.1101/598821")
                if entry is not None and entry.checks >= 2:
                    break
                time.sleep(0.2)
            assert entry is not None and entry.checks >= 2 and entry.changes == 1
        finally:
            store.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out
    assert "event=ready" in out
    assert "event=sweep checked=" in out and "unchanged=1" in out
    assert "event=stopped" in out


def test_sigkill_mid_walk_resumes_from_checkpoint(fake: FakeUpstream, db_url: str, tmp_path: Path) -> None:
    """`syncd watch sync` killed with SIGKILL after its first or second stored page (90 works, rows 30,
    10 indexed a day, rotating cursors): the next run never starts over at page 1 and stores all 90.
    After two pages the saved cursor is known to rotate and is sent again (1 request left); after one,
    its kind is unknown (it could be a scroll id upstream already moved on), so the walk resumes from
    its watermark's day: the 10 works of that day again plus the 60 left (3 requests).
    """
    import json

    from syncd.store.watches import add_watch, get_sync_state
    from tests.core.test_walk_resume import works

    store = Store.open(db_url)
    try:
        watch, _ = add_watch(store, "crossref_query", {"route": "/funders/100000001/works", "rows": 30})
    finally:
        store.close()
    fake.serve_cursor_walk("/funders/100000001/works", works(90, per_day=10), style="rotating")
    fake.fault("latency", path_prefix="/funders", service="crossref", delay_s=0.6)
    env = _env(fake, db_url, tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "syncd", "watch", "sync", "--json"], env=env, cwd=str(ROOT),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    store = Store.open(db_url)
    try:
        end = time.monotonic() + 120  # polled: a loaded machine takes long to start the walker
        state = None
        while time.monotonic() < end:
            state = get_sync_state(store, f"watch:{watch.id}")
            if state is not None and state.cursor and state.cursor.get("pages", 0) >= 1:
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        state = get_sync_state(store, f"watch:{watch.id}")
        assert state is not None and state.cursor is not None and state.checkpoint is None
        done_pages = state.cursor["pages"]
        assert done_pages in (1, 2)
        asked = [r.query.get("cursor") for r in fake.requests]
        assert asked.count("*") == 1
        fake.clear_faults()
        fake.reset_log()
        res = subprocess.run(
            [sys.executable, "-m", "syncd", "watch", "sync", "--json"], env=env, cwd=str(ROOT),
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert res.returncode == 0, res.stdout + res.stderr
        report = json.loads(res.stdout)[0]
        assert report["resumed"] is True and report["complete"] is True
        assert (report["seen"], report["total"]) == (90, 90)
        resumed = [(r.query.get("cursor"), r.query.get("filter")) for r in fake.requests]
        if done_pages == 2:
            assert resumed == [(state.cursor["cursor"], None)], report
        else:
            assert resumed[0] == ("*", "from-index-date:2026-11-03") and len(resumed) == 3, report
        assert all(store.get("crossref_work", f"10.5555/walk.{i:05d}") is not None for i in range(90))
        with store.read() as conn:
            assert conn.exec_driver_sql("PRAGMA integrity_check").scalar_one() == "ok"
    finally:
        store.close()
        if proc.poll() is None:
            proc.kill()


def test_daemon_with_token_refuses_requests_without_it(
    fake: FakeUpstream, db_url: str, tmp_path: Path
) -> None:
    """With http.token set, /mcp answers 401 without the bearer token and serves a client that sends it."""
    port = _free_port()
    token = "lab-token-0123456789"
    env = _env(fake, db_url, tmp_path, SYNCD_HTTP__PORT=str(port), SYNCD_HTTP__TOKEN=token)
    proc = _start_daemon(env, port)
    try:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        url = f"http://127.0.0.1:{port}/mcp"
        refused = httpx.post(url, json=init, headers=headers)
        allowed = httpx.post(url, json=init, headers={**headers, "Authorization": f"Bearer {token}"})
        assert refused.status_code == 401
        assert allowed.status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    assert token not in out


def test_daemon_refuses_public_bind_without_token(fake: FakeUpstream, db_url: str, tmp_path: Path) -> None:
    """Binding beyond loopback without a token: exit code 2 and one invalid_config error line."""
    env = _env(fake, db_url, tmp_path, SYNCD_HTTP__HOST="0.0.0.0", SYNCD_HTTP__PORT=str(_free_port()))
    res = subprocess.run(
        [sys.executable, "-m", "syncd", "daemon"],
        env=env,
        cwd=str(ROOT),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 2
    assert "error: invalid_config:" in res.stderr
