"""HTTP endpoint protection: bearer token required beyond loopback, checked in constant time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from syncd.config import Settings
from syncd.daemon.httpauth import BearerAuth, check_bind, transport_security
from syncd.errors import InvalidInput

pytestmark = pytest.mark.anyio


async def _ok_app(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"inner"})


async def test_request_without_token_is_refused() -> None:
    """No Authorization header, or a wrong token: 401 with WWW-Authenticate; the app is not reached."""
    app = BearerAuth(_ok_app, "s3cret-token")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        missing = await client.post("/mcp", content=b"{}")
        wrong = await client.post("/mcp", content=b"{}", headers={"Authorization": "Bearer nope"})
        right = await client.post("/mcp", content=b"{}", headers={"Authorization": "Bearer s3cret-token"})
    assert missing.status_code == 401 and missing.headers["www-authenticate"].startswith("Bearer")
    assert wrong.status_code == 401
    assert "s3cret-token" not in wrong.text
    assert (right.status_code, right.text) == (200, "inner")


def test_non_loopback_bind_requires_a_token() -> None:
    """0.0.0.0 without a token is refused as invalid_config; loopback without one is fine."""
    check_bind("127.0.0.1", None)
    check_bind("0.0.0.0", "tok")
    with pytest.raises(InvalidInput) as err:
        check_bind("0.0.0.0", None)
    assert err.value.reason == "invalid_config"


def test_token_from_file(tmp_path: Path) -> None:
    """http.token_file supplies the token (first line); an empty file is invalid_config."""
    path = tmp_path / "token"
    path.write_text("from-file-token\n")
    assert Settings(http={"token_file": str(path)}).http.bearer_token() == "from-file-token"
    path.write_text("")
    with pytest.raises(InvalidInput):
        Settings(http={"token_file": str(path)}).http.bearer_token()


def test_transport_security_allows_only_the_bound_host() -> None:
    """On loopback only loopback Host values pass the SDK's DNS-rebinding check."""
    sec = transport_security("127.0.0.1", 8765)
    assert sec.enable_dns_rebinding_protection is True
    assert "127.0.0.1:8765" in sec.allowed_hosts and "evil.example:8765" not in sec.allowed_hosts
