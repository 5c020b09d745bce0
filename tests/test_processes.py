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

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[1]
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
        }
    )
    env.update(extra)
    return env


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
    proc = subprocess.Popen(
        [sys.executable, "-m", "syncd", "daemon"],
        env=env,
        cwd=str(ROOT),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("daemon did not listen")
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
            end = time.monotonic() + 15
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
