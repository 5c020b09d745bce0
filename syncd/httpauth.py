"""Protection of the daemon's HTTP endpoint: bind policy, request guards and a bearer-token middleware.

Loopback binds (127.0.0.1, ::1, localhost) may run without a token; any other bind requires one
(``http.token`` / ``SYNCD_HTTP__TOKEN`` or ``http.token_file``). The token is compared in constant
time and never logged. Host/Origin checks against DNS rebinding are the MCP SDK's transport
security settings (:func:`transport_security`). :class:`RequestGuard`, outermost, refuses a request
without a ``Host`` header (400, RFC 9112 §3.2) and one whose body does not arrive in full within
``http.body_timeout_s`` seconds (408, then the connection is closed) or exceeds
``http.max_request_bytes`` (413); the SDK's app then reads the body from memory.
"""

from __future__ import annotations

import hmac
import json
import logging
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio
import psutil
from mcp.server.transport_security import TransportSecuritySettings

from syncd.errors import InvalidInput

__all__ = [
    "LOOPBACK",
    "BearerAuth",
    "RequestGuard",
    "allowed_host_headers",
    "check_bind",
    "machine_hosts",
    "transport_security",
]

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


WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})


def machine_hosts() -> list[str]:
    """The host names and interface addresses (IPv4 and IPv6, link-local zones dropped).

    Source: ``socket.gethostname()``/``getfqdn()`` and :func:`psutil.net_if_addrs`.
    """
    names = {socket.gethostname(), socket.getfqdn()}
    for addrs in psutil.net_if_addrs().values():
        for addr in addrs:
            if addr.family in (socket.AF_INET, socket.AF_INET6):
                names.add(addr.address.split("%", 1)[0])
    return sorted(n for n in names if n)


def _with_port(host: str, port: int) -> str:
    """``host`` as it appears in a Host header on ``port`` (IPv6 literals in brackets)."""
    if host.startswith("["):
        return host if "]:" in host else f"{host}:{port}"
    if host.count(":") > 1:
        return f"[{host}]:{port}"
    return host if ":" in host else f"{host}:{port}"


def allowed_host_headers(bind: str, port: int, configured: list[str] | None = None) -> list[str] | None:
    """The Host header values the endpoint accepts, or None when the check is off (``"*"``).

    Args:
        bind: ``http.host``, the address the endpoint is bound to.
        port: ``http.port``.
        configured: ``http.allowed_hosts``: names or addresses, optionally ``name:port``.

    Loopback names are always accepted (the machine itself). With nothing configured, a loopback bind
    accepts only those; another bind accepts the machine's own names and addresses
    (:func:`machine_hosts`), plus the bound address itself.
    """
    configured = [h.strip() for h in configured or [] if h.strip()]
    if "*" in configured:
        return None
    names = ["127.0.0.1", "localhost", "::1"]
    if configured:
        names += configured
    elif bind not in LOOPBACK:
        names += machine_hosts()
        if bind not in WILDCARD_BINDS:
            names.append(bind)
    return list(dict.fromkeys(_with_port(n, port) for n in names))


def transport_security(
    host: str, port: int, allowed_hosts: list[str] | None = None
) -> TransportSecuritySettings:
    """DNS-rebinding protection: Host and Origin must name this endpoint (:func:`allowed_host_headers`)."""
    hosts = allowed_host_headers(host, port, allowed_hosts)
    if hosts is None:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    log.info("event=http_allowed_hosts hosts=%s", ",".join(hosts))
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


async def _refuse(send: Send, status: int, error: str, message: str) -> None:
    """A small JSON error response that closes the connection."""
    body = json.dumps({"error": error, "message": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class RequestGuard:
    """ASGI middleware: a ``Host`` header is required and the whole body must arrive in time.

    Args:
        app: the wrapped ASGI application.
        body_timeout_s: seconds from the first read of the body to its last byte (``http.body_timeout_s``).
        max_body_bytes: largest body accepted (``http.max_request_bytes``).
    """

    def __init__(self, app: ASGIApp, body_timeout_s: float, max_body_bytes: int) -> None:
        self.app = app
        self.body_timeout_s = body_timeout_s
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse (400, 408, 413) or pass the request on with its body read (non-HTTP scopes pass as is)."""
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        client = (scope.get("client") or ("?", 0))[0]
        host = next((v for k, v in scope.get("headers") or [] if k.lower() == b"host"), b"")
        if not host.strip():
            log.warning("event=http_no_host client=%s path=%s", client, scope.get("path", ""))
            await _refuse(send, 400, "bad_request", "the request has no Host header (RFC 9112 section 3.2)")
            return
        chunks: list[bytes] = []
        size = 0
        tail: MutableMapping[str, Any] | None = None
        with anyio.move_on_after(self.body_timeout_s) as waited:
            while True:
                message = await receive()
                if message.get("type") != "http.request":
                    tail = message  # the client went away: let the app see it
                    break
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > self.max_body_bytes:
                    log.warning("event=http_body_too_large client=%s bytes=%d", client, size)
                    await _refuse(
                        send, 413, "too_large", f"the request body exceeds {self.max_body_bytes} bytes"
                    )
                    return
                chunks.append(chunk)
                if not message.get("more_body", False):
                    break
        if waited.cancelled_caught:
            log.warning(
                "event=http_body_timeout client=%s bytes=%d timeout_s=%g", client, size, self.body_timeout_s
            )
            await _refuse(
                send,
                408,
                "request_timeout",
                f"the request body did not arrive within {self.body_timeout_s:g} s",
            )
            return
        pending: list[MutableMapping[str, Any]] = [{"type": "http.request", "body": b"".join(chunks)}]
        if tail is not None:
            pending.append(tail)

        async def replay() -> MutableMapping[str, Any]:
            return pending.pop(0) if pending else await receive()

        await self.app(scope, replay, send)
