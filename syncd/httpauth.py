"""Protection of the daemon's HTTP endpoint: bind policy and a bearer-token ASGI middleware.

Loopback binds (127.0.0.1, ::1, localhost) may run without a token; any other bind requires one
(``http.token`` / ``SYNCD_HTTP__TOKEN`` or ``http.token_file``). The token is compared in constant
time and never logged. Host/Origin checks against DNS rebinding are the MCP SDK's transport
security settings (:func:`transport_security`).
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings

from syncd.errors import InvalidInput

__all__ = ["LOOPBACK", "BearerAuth", "check_bind", "transport_security"]

log = logging.getLogger("syncd.http")

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve beyond loopback without a bearer token.

    Raises:
        InvalidInput: ``host`` is not loopback and no token is configured (reason ``invalid_config``).
    """
    if host not in LOOPBACK and not token:
        raise InvalidInput(
            f"binding the MCP endpoint to {host} requires a bearer token (http.token or http.token_file)",
            reason="invalid_config",
        )


def transport_security(host: str, port: int) -> TransportSecuritySettings:
    """DNS-rebinding protection: only the bound address (or loopback names) as Host and Origin."""
    if host in LOOPBACK:
        hosts = [f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"]
    else:
        hosts = [f"{host}:{port}"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{h}" for h in hosts] + [f"https://{h}" for h in hosts],
    )


class BearerAuth:
    """ASGI middleware: HTTP requests must carry ``Authorization: Bearer <token>``, else 401.

    Args:
        app: the wrapped ASGI application (the MCP Streamable HTTP app).
        token: the expected token (compared with :func:`hmac.compare_digest`).
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass authorised HTTP requests (and non-HTTP scopes such as lifespan) through."""
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        given = b""
        for name, value in scope.get("headers") or []:
            if name.lower() == b"authorization":
                given = value
                break
        if hmac.compare_digest(given, self._expected):
            await self.app(scope, receive, send)
            return
        client = scope.get("client") or ("?", 0)
        log.warning("event=http_unauthorized client=%s path=%s", client[0], scope.get("path", ""))
        body = json.dumps({"error": "unauthorized", "message": "missing or wrong bearer token"}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="syncd"'),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
