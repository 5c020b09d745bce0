"""Serving other machines: the Host check accepts the names clients use (issue 12.3), blank tokens refused."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from syncd.config import HttpSettings
from syncd.daemon.httpauth import allowed_host_headers, machine_hosts, transport_security
from syncd.errors import InvalidInput
from tests.e2e.test_processes import ROOT, _env, _free_port, _start_daemon
from tests.fakeupstream import FakeUpstream

TOKEN = "lab-token-0123456789"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "Authorization": f"Bearer {TOKEN}",
}


def _post(address: str, port: int, host_header: str | None = None) -> int:
    headers = dict(HEADERS)
    if host_header is not None:
        headers["Host"] = host_header
    return httpx.post(f"http://{address}:{port}/mcp", json=INIT, headers=headers, timeout=10).status_code


def test_loopback_bind_accepts_only_loopback_names() -> None:
    """A loopback bind with nothing configured accepts 127.0.0.1, localhost and [::1] on its port only."""
    assert allowed_host_headers("127.0.0.1", 8765) == ["127.0.0.1:8765", "localhost:8765", "[::1]:8765"]


def test_wildcard_bind_accepts_the_machine_names() -> None:
    """Bound to 0.0.0.0 with nothing configured, the machine's host name and addresses are accepted."""
    hosts = allowed_host_headers("0.0.0.0", 9000)
    assert hosts is not None
    assert f"{socket.gethostname()}:9000" in hosts
    assert "127.0.0.1:9000" in hosts
    assert "0.0.0.0:9000" not in hosts
    assert all(not h.startswith("::") for h in hosts)  # IPv6 literals are bracketed
    assert "127.0.0.1" in machine_hosts()


def test_configured_hosts_replace_the_defaults_and_star_turns_the_check_off() -> None:
    """Configured names are accepted (with the port unless pinned), plus loopback; "*" disables the check."""
    hosts = allowed_host_headers("0.0.0.0", 9000, ["syncd.lab.example", "192.0.2.10:443", "2001:db8::1"])
    assert hosts == [
        "127.0.0.1:9000",
        "localhost:9000",
        "[::1]:9000",
        "syncd.lab.example:9000",
        "192.0.2.10:443",
        "[2001:db8::1]:9000",
    ]
    assert allowed_host_headers("0.0.0.0", 9000, ["*"]) is None
    assert transport_security("0.0.0.0", 9000, ["*"]).enable_dns_rebinding_protection is False


def test_blank_token_is_refused() -> None:
    """A whitespace-only http.token is a configuration error, not a token every client can send."""
    with pytest.raises(InvalidInput) as info:
        HttpSettings(token="   ").bearer_token()
    assert info.value.reason == "invalid_config"


@pytest.mark.serial  # a real process
def test_daemon_on_all_interfaces_serves_its_names_and_refuses_others(
    fake: FakeUpstream, db_url: str, tmp_path: Path
) -> None:
    """Bound to 0.0.0.0 with a token: 127.0.0.1 and the host name are served (no 421); an unlisted
    address is refused with 421 until http.allowed_hosts names it, then it is served from that address.
    """
    port = _free_port()
    env = _env(
        fake,
        db_url,
        tmp_path,
        SYNCD_HTTP__HOST="0.0.0.0",
        SYNCD_HTTP__PORT=str(port),
        SYNCD_HTTP__TOKEN=TOKEN,
    )
    proc = _start_daemon(env, port)
    try:
        assert _post("127.0.0.1", port) == 200
        assert _post("127.0.0.1", port, f"{socket.gethostname()}:{port}") == 200
        assert _post("127.0.0.2", port) == 421
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)

    env["SYNCD_HTTP__ALLOWED_HOSTS"] = '["127.0.0.2"]'
    proc = _start_daemon(env, port)
    try:
        assert _post("127.0.0.2", port) == 200
        assert _post("127.0.0.1", port, f"evil.example:{port}") == 421
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    assert TOKEN not in out


def test_daemon_refuses_blank_token(fake: FakeUpstream, db_url: str, tmp_path: Path) -> None:
    """A blank SYNCD_HTTP__TOKEN with a public bind: exit code 2 and one invalid_config line."""
    env = _env(
        fake,
        db_url,
        tmp_path,
        SYNCD_HTTP__HOST="0.0.0.0",
        SYNCD_HTTP__PORT=str(_free_port()),
        SYNCD_HTTP__TOKEN=" ",
    )
    res = subprocess.run(
        [sys.executable, "-m", "syncd", "daemon"],
        env=env,
        cwd=str(ROOT),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 2
    assert "error: invalid_config: http.token is blank" in res.stderr
