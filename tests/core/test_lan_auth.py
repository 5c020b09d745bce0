"""A wrong or missing bearer token reads as exactly that in MCP clients (issue 24 item 7).

Before: the 401 said ``{"error": "unauthorized"}`` and every other path was behind the token too, so an
OAuth-capable client (the TypeScript SDK with an auth provider) took syncd for an OAuth server: its
metadata probes got 401s, its client registration got a body that is no OAuth error, and the user read
an empty ``ServerError``. Now the 401 names the case and the fix (RFC 6750 challenge, a JSON-RPC error
body), and every OAuth discovery route and endpoint answers 404 with an OAuth error whose description
is that fix. Held with the real app (ASGI), the Python SDK's client, and, where ``.ci/run`` installed it
(the Inspector's ``@modelcontextprotocol/sdk``), the TypeScript SDK's client with and without OAuth.
Also: an IPv4 bind lists no IPv6 address, and a token file others can read is warned about.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client, MCPError
from pydantic import SecretStr

from syncd.config import Settings
from syncd.daemon.httpauth import (
    TOKEN_HINT,
    allowed_host_headers,
    bound_addresses,
    token_file_warning,
    unbound_hosts,
)
from syncd.daemon.ops.activity import Activity
from syncd.daemon.run import web_app
from syncd.road.services import Services
from tests.conftest import make_settings
from tests.fakeupstream import FakeUpstream
from tests.helpers import daemon_http

pytestmark = pytest.mark.anyio

TOKEN = "lan-token-0123456789"
ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "inspector" / "auth_probe.mjs"
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
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
DISCOVERY = (
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/mcp",
    "/.well-known/oauth-authorization-server",
    "/.well-known/oauth-authorization-server/mcp",
    "/.well-known/openid-configuration",
)


def _with_token(settings: Settings) -> Settings:
    return settings.model_copy(update={"http": settings.http.model_copy(update={"token": SecretStr(TOKEN)})})


async def _asgi(app: Any, method: str, path: str, **kwargs: Any) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as client:
        return await client.request(method, path, **kwargs)


async def test_the_401_says_missing_or_wrong_and_what_to_do(cache: Services) -> None:
    """Missing token: ``Bearer realm="syncd"`` (no error code, RFC 6750 3.1); wrong:
    ``error="invalid_token"``; neither names ``resource_metadata``; the body is a JSON-RPC error
    saying which and how to fix it.
    """
    app = web_app(_with_token(cache.settings), cache, Activity())
    missing = await _asgi(app, "POST", "/mcp", json=INIT, headers=MCP_HEADERS)
    wrong = await _asgi(
        app, "POST", "/mcp", json=INIT, headers={**MCP_HEADERS, "Authorization": "Bearer nope"}
    )
    assert (missing.status_code, wrong.status_code) == (401, 401)
    assert missing.headers["www-authenticate"] == 'Bearer realm="syncd"'
    assert wrong.headers["www-authenticate"].startswith('Bearer realm="syncd", error="invalid_token"')
    assert "resource_metadata" not in missing.headers["www-authenticate"] + wrong.headers["www-authenticate"]
    body = missing.json()
    assert body["jsonrpc"] == "2.0" and body["error"]["code"] == -32001
    assert body["error"]["data"] == {"reason": "unauthorized"}
    assert body["error"]["message"] == f"unauthorized: no bearer token was sent; {TOKEN_HINT}"
    assert wrong.json()["error"]["message"].startswith(
        "unauthorized: the bearer token is not this server's; "
    )
    assert TOKEN not in wrong.text


async def test_oauth_discovery_is_answered_404_with_the_fix(cache: Services) -> None:
    """Every OAuth metadata probe and the legacy /register, /authorize, /token answer 404 without a
    token, as an OAuth error (``invalid_request``) whose description is the static-token fix.
    """
    app = web_app(_with_token(cache.settings), cache, Activity())
    for method, path in [*(("GET", p) for p in DISCOVERY), ("POST", "/register"), ("GET", "/authorize")]:
        resp = await _asgi(app, method, path)
        assert resp.status_code == 404, path
        body = resp.json()
        assert body["error"] == "invalid_request", path
        assert body["error_description"].endswith(TOKEN_HINT), path
    assert (await _asgi(app, "GET", "/healthz")).status_code == 401  # the operator routes keep the token


@pytest.fixture
def endpoint(fake: FakeUpstream, tmp_path: Path) -> Iterator[str]:
    """``http://127.0.0.1:PORT/mcp`` of the daemon's real HTTP server with a bearer token, in a thread."""
    settings = _with_token(make_settings(fake, f"sqlite:///{tmp_path / 'lan.db'}"))
    with daemon_http(settings) as port:
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.mark.serial
async def test_the_python_sdk_client_reads_the_reason(endpoint: str) -> None:
    """The MCP Python SDK's client, without a token, fails with syncd's JSON-RPC error: code -32001 and
    its message (not "Server returned an error response").
    """
    with pytest.raises(Exception) as err:
        async with Client(endpoint) as client:
            await client.list_tools()
    found = [e for e in _leaves(err.value) if isinstance(e, MCPError)]
    assert [e.error.code for e in found] == [-32001]
    assert found[0].error.message == f"unauthorized: no bearer token was sent; {TOKEN_HINT}"


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _node() -> str | None:
    local = ROOT / "inspector" / "node_modules" / ".bin" / "node"
    return str(local) if local.exists() else shutil.which("node")


SDKS = {
    "v2": ROOT / "inspector" / "node_modules" / "@modelcontextprotocol" / "client",
    "v1": ROOT / "inspector" / "node_modules" / "@modelcontextprotocol" / "sdk",
}
"""The TypeScript SDK clients: v2 (``@modelcontextprotocol/client``, the Inspector's) and v1
(``@modelcontextprotocol/sdk``, most clients in the field), as tests/inspector installs them (or
``SYNCD_TEST_MCP_SDK_V1``/``_V2`` pointing at a package directory)."""


def _sdk(version: str) -> Path | None:
    given = os.environ.get(f"SYNCD_TEST_MCP_SDK_{version.upper()}")
    path = Path(given) if given else SDKS[version]
    return path if (path / "package.json").exists() else None


@pytest.mark.serial
@pytest.mark.parametrize("version", ["v2", "v1"])
@pytest.mark.parametrize("mode", ["plain", "oauth"])
def test_the_typescript_sdk_client_reads_the_reason(endpoint: str, mode: str, version: str) -> None:
    """The TypeScript SDK client without a token: plain (the Inspector CLI) reports the 401 body's
    message; with an OAuth provider it probes discovery, finds no OAuth, and reports the
    static-token fix from /register, never starting an authorization. With the token both connect.
    """
    sdk, node = _sdk(version), _node()
    if sdk is None or node is None:
        pytest.skip(
            f"no TypeScript SDK {version} under tests/inspector/node_modules (.ci/run installs it) or no node"
        )

    def probe(*token: str) -> dict[str, Any]:
        out = subprocess.run(
            [node, str(PROBE), sdk, endpoint, mode, *token],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return dict(json.loads(out.stdout.strip().splitlines()[-1]))

    refused = probe()
    assert refused["connected"] is False and refused["redirected"] is False
    if mode == "plain":
        assert "Error POSTing to endpoint: " in refused["error"]
        assert "unauthorized: no bearer token was sent; " in refused["error"]
    else:
        assert TOKEN_HINT in refused["error"]
    assert probe(TOKEN)["connected"] is True


def test_an_ipv4_bind_lists_no_ipv6_address(caplog: pytest.LogCaptureFixture) -> None:
    """0.0.0.0 serves IPv4 only: its allowed hosts hold the machine's names and IPv4 addresses, no
    IPv6 literal but the loopback one; ``::`` (dual stack) lists both; a configured IPv6 literal on an
    IPv4 bind is warned about.
    """
    hosts = ["lab-ws", "192.168.1.5", "127.0.0.1", "fe80::1", "2001:db8::5", "::1"]
    assert bound_addresses("0.0.0.0", hosts) == ["lab-ws", "192.168.1.5", "127.0.0.1"]
    assert bound_addresses("::", hosts) == hosts
    assert bound_addresses("192.168.1.5", hosts) == ["lab-ws", "192.168.1.5"]
    listed = allowed_host_headers("0.0.0.0", 9000) or []
    assert [h for h in listed if h.startswith("[") and h != "[::1]:9000"] == []
    assert unbound_hosts("0.0.0.0", ["lab.example", "[2001:db8::5]:9000", "2001:db8::5"]) == [
        "[2001:db8::5]:9000",
        "2001:db8::5",
    ]
    assert unbound_hosts("::", ["2001:db8::5"]) == []


def test_a_token_file_others_can_read_is_warned_about(
    tmp_path: Path, cache: Services, caplog: pytest.LogCaptureFixture
) -> None:
    """A 0644 token file (others read it) is named with its mode and the chmod that fixes it, and the
    daemon's app logs it; 0640 is fine with the daemon's own group (root:syncd) and warned with
    another group; 0600 is fine.
    """
    path = tmp_path / "token"
    path.write_text(f"{TOKEN}\n")
    path.chmod(0o644)
    assert token_file_warning(str(path)) == (
        f"mode 0644 lets others read it; run chmod 600 {path} (or 640 with the daemon's group)"
    )
    caplog.set_level(logging.WARNING, logger="syncd.daemon")
    http = cache.settings.http.model_copy(update={"token_file": str(path)})
    web_app(cache.settings.model_copy(update={"http": http}), cache, Activity())
    assert "event=token_file_readable" in caplog.text and "chmod 600" in caplog.text
    path.chmod(0o640)
    os.chown(path, -1, os.getegid())
    assert token_file_warning(str(path)) is None
    if os.geteuid() == 0:  # only root may hand the file to another group
        os.chown(path, -1, os.getegid() + 4242)
        assert "not the daemon's" in (token_file_warning(str(path)) or "")
    path.chmod(0o600)
    assert token_file_warning(str(path)) is None
