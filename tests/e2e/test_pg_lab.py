"""A lab on one PostgreSQL database: two `syncd daemon` processes with different local settings.

Shows one upstream fetch serving both, one budget held across them (a 429 seen by one blocks the
other), and the daemon lock failing over when the refreshing daemon is killed.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from syncd.store.engine import make_engine
from syncd.store.leader import lock_holder
from tests.fakeupstream import FakeUpstream

pytestmark = [pytest.mark.anyio, pytest.mark.serial]  # real processes

ROOT = Path(__file__).resolve().parents[2]
RAPTOR = "10.1101/598821"
OTHER = "10.1002/jor.1100150407"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _daemon(fake: FakeUpstream, db_url: str, home: Path, port: int, **extra: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCD_")}
    env.update(
        {
            "PYTHONPATH": str(ROOT),
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_DATA_HOME": str(home / "data"),
            "SYNCD_DATABASE_URL": db_url,
            "SYNCD_CROSSREF__BASE_URL": fake.crossref_url,
            "SYNCD_ZENODO__BASE_URL": fake.zenodo_url,
            "SYNCD_DOI__BASE_URL": fake.doi_url,
            "SYNCD_DATACITE__BASE_URL": fake.datacite_url,
            "SYNCD_HTTP__PORT": str(port),
            "SYNCD_REVALIDATE_INTERVAL_S": "3600",
            "SYNCD_CHECK_UPSTREAMS_AT_START": "false",  # request counts below are the tools' alone
            **extra,
        }
    )
    log = (home / "daemon.log").open("w")
    return subprocess.Popen(
        [sys.executable, "-m", "syncd", "daemon"],
        env=env,
        cwd=str(ROOT),
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _wait_listening(port: int, proc: subprocess.Popen[str], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"daemon on port {port} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"daemon on port {port} did not listen")


async def _call(port: int, name: str, args: dict[str, Any]) -> Any:
    async with Client(f"http://127.0.0.1:{port}/mcp") as client:
        return await client.call_tool(name, args)


def _holder_pid(engine: Any) -> int | None:
    name = lock_holder(engine)
    return int(name.rsplit(" ", 1)[1]) if name else None


async def test_two_workstations_share_one_mirror_one_budget_one_refresher(
    fake: FakeUpstream, pg_url: str, tmp_path: Path
) -> None:
    """Workstation A fetches, B answers from the store; A's 429 blocks B; killing the refresher fails over."""
    port_a, port_b = _free_port(), _free_port()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = _daemon(
        fake, pg_url, tmp_path / "a", port_a, SYNCD_CROSSREF__MAILTO="a@lab.example", SYNCD_DEADLINE_S="3"
    )
    b = _daemon(
        fake,
        pg_url,
        tmp_path / "b",
        port_b,
        SYNCD_CROSSREF__MAILTO="b@lab.example",
        SYNCD_DEADLINE_S="4",
        SYNCD_TTL__CROSSREF_WORK="86400",
        SYNCD_LOG_LEVEL="DEBUG",
    )
    engine = make_engine(pg_url)
    try:
        _wait_listening(port_a, a)
        _wait_listening(port_b, b)

        # one mirror: A fetches once, B is served from the shared store
        first = await _call(port_a, "crossref_get_work", {"doi": RAPTOR})
        assert first.structured_content["cache"]["source"] == "upstream"
        second = await _call(port_b, "crossref_get_work", {"doi": f"https://doi.org/{RAPTOR}"})
        assert second.structured_content["cache"]["source"] == "store"
        assert second.structured_content["title"] == first.structured_content["title"]
        assert fake.count("/works", service="crossref") == 1

        # one budget: a 429 answered to A blocks the pool for B too, without any request from B
        fake.fault("rate_limit", service="crossref", times=1, retry_after=300)
        limited = await _call(port_a, "crossref_get_work", {"doi": OTHER})
        assert limited.structured_content["error"]["data"]["reason"] == "rate_limited"
        requests = fake.count(service="crossref")
        blocked = await _call(port_b, "crossref_get_work", {"doi": OTHER})
        data = blocked.structured_content["error"]["data"]
        assert data["reason"] == "rate_limited" and 0 < data["retry_after_s"] <= 300  # A's block, in B
        assert fake.count(service="crossref") == requests  # B asked nobody

        # one refresher: exactly one daemon holds the lock; kill it, the other takes over
        deadline = time.monotonic() + 60  # liveness bounds on a busy machine, not timed claims
        while _holder_pid(engine) is None and time.monotonic() < deadline:
            time.sleep(0.1)
        holder = _holder_pid(engine)
        assert holder in (a.pid, b.pid)
        leader, standby = (a, b) if holder == a.pid else (b, a)
        leader.send_signal(signal.SIGKILL)
        leader.wait(10)
        deadline = time.monotonic() + 60
        while _holder_pid(engine) != standby.pid and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _holder_pid(engine) == standby.pid  # the standby took the refresher's lock over
        # the survivor still serves
        again = await _call(port_a if standby is a else port_b, "crossref_get_work", {"doi": RAPTOR})
        assert again.structured_content["cache"]["source"] == "store"
    finally:
        for proc in (a, b):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in (a, b):
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
        engine.dispose()
    logs = (tmp_path / "a" / "daemon.log").read_text() + (tmp_path / "b" / "daemon.log").read_text()
    assert "role=standby" in logs and logs.count("role=active") == 2
