"""The daemon's Streamable HTTP endpoint refuses what a hostile peer sends (issue 30 item 9, HTTP part).

The real app of ``syncd daemon`` (:func:`syncd.daemon.run.web_server`: the MCP server, the request guard,
uvicorn with syncd's protocol) on a free loopback port. Before: a request body sent a byte at a time
was waited for forever (slowloris), a request without ``Host`` was served, and a second
``initialize`` on a live session was accepted. Now: 408 and the connection closed once
``http.body_timeout_s`` passes, 400 without ``Host`` (HTTP/1.0 and 1.1), and -32600
``already_initialized`` for the second ``initialize`` while the session keeps working.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from syncd.config import Settings
from tests.conftest import make_settings
from tests.fakeupstream import FakeUpstream
from tests.helpers import daemon_http, every_tool

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
BODY_TIMEOUT_S = 0.5


@pytest.fixture
def endpoint(fake: FakeUpstream, tmp_path: Path) -> Iterator[tuple[int, Settings]]:
    """The daemon's HTTP app serving on a free loopback port (body timeout 0.5 s) in a thread."""
    settings = make_settings(fake, f"sqlite:///{tmp_path / 'http.db'}")
    settings.http.body_timeout_s = BODY_TIMEOUT_S
    with daemon_http(settings) as port:
        yield port, settings


def _exchange(port: int, raw: bytes, wait_s: float = 10.0) -> bytes:
    """Send ``raw`` and read until the server closes the connection (or ``wait_s`` passes)."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait_s) as sock:
        sock.sendall(raw)
        got = b""
        try:
            while chunk := sock.recv(65536):
                got += chunk
        except TimeoutError:
            pass
    return got


def test_a_body_that_never_finishes_is_408_and_closed(endpoint: tuple[int, Settings]) -> None:
    """Headers announcing 200 bytes, then 10 bytes and silence: 408 naming the limit, connection closed."""
    port, _settings = endpoint
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\nContent-Length: 200\r\n\r\n"
    ).encode()
    answer = _exchange(port, head + b'{"jsonrpc"')
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    body = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert body == {
        "error": "request_timeout",
        "message": f"the request body did not arrive within {BODY_TIMEOUT_S:g} s",
    }


@pytest.mark.parametrize("version", ["HTTP/1.0", "HTTP/1.1"])
def test_a_request_without_host_is_400(endpoint: tuple[int, Settings], version: str) -> None:
    """An initialize POST without a Host header is refused with 400, never served."""
    port, _settings = endpoint
    payload = json.dumps(INIT).encode()
    raw = (
        f"POST /mcp {version}\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n"
        f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
    ).encode() + payload
    answer = _exchange(port, raw)
    assert answer.split(b"\r\n", 1)[0].endswith(b"400 Bad Request"), answer[:200]
    assert b'"result"' not in answer


def _rpc(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a Streamable HTTP answer (JSON or one SSE ``data:`` event)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])
    return response.json()


def test_a_second_initialize_on_a_live_session_is_refused(endpoint: tuple[int, Settings]) -> None:
    """initialize, initialized, initialize again on the same session: -32600 already_initialized; the
    session still lists the 15 tools afterwards.
    """
    port, _settings = endpoint
    url = f"http://127.0.0.1:{port}/mcp"
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with httpx.Client(timeout=20) as http:
        first = http.post(url, json=INIT, headers=headers)
        assert first.status_code == 200 and "result" in _rpc(first)
        headers["Mcp-Session-Id"] = first.headers["mcp-session-id"]
        headers["Mcp-Protocol-Version"] = "2025-11-25"
        note = http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        assert note.status_code == 202
        again = _rpc(http.post(url, json={**INIT, "id": 2}, headers=headers))
        assert again["id"] == 2 and again["error"]["code"] == -32600
        assert again["error"]["data"]["reason"] == "already_initialized"
        tools = _rpc(
            http.post(url, json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, headers=headers)
        )
    assert len(tools["result"]["tools"]) == len(every_tool()) == 22
