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
import os
import socket
import stat
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio
import psutil
from mcp.server.transport_security import TransportSecuritySettings

from syncd.errors import InvalidInput

__all__ = [
    "LOOPBACK",
    "OAUTH_PATHS",
    "TOKEN_HINT",
    "BearerAuth",
    "NoOAuth",
    "RequestGuard",
    "allowed_host_headers",
    "bound_addresses",
    "check_bind",
    "machine_hosts",
    "token_file_warning",
    "transport_security",
    "unauthorized",
    "unbound_hosts",
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
    accepts only those; another bind accepts the machine's host names and the addresses it serves
    (:func:`bound_addresses`): every address for ``::`` (dual stack), the IPv4 ones for ``0.0.0.0``,
    the bound address itself otherwise. So no IPv6 address is listed for an IPv4-only bind.
    """
    configured = [h.strip() for h in configured or [] if h.strip()]
    if "*" in configured:
        return None
    names = ["127.0.0.1", "localhost", "::1"]
    if configured:
        names += configured
    elif bind not in LOOPBACK:
        names += bound_addresses(bind, machine_hosts())
    return list(dict.fromkeys(_with_port(n, port) for n in names))


def _is_ipv6(name: str) -> bool:
    return ":" in name.strip("[]")


def bound_addresses(bind: str, hosts: list[str]) -> list[str]:
    """Of ``hosts`` (names and addresses, :func:`machine_hosts`), those a socket bound to ``bind`` serves.

    Host names always; for ``::`` (or empty: dual stack on Linux) every address, for ``0.0.0.0`` the IPv4
    ones; for one address, only it.
    """
    names = [h for h in hosts if not _is_ipv6(h) and not h.replace(".", "").isdigit()]
    if bind in ("::", ""):
        return hosts
    if bind == "0.0.0.0":
        return [h for h in hosts if not _is_ipv6(h)]
    return [*names, bind]


def unbound_hosts(bind: str, configured: list[str] | None) -> list[str]:
    """Configured IPv6 literals an IPv4 bind (``0.0.0.0`` or one IPv4 address) cannot be reached at."""
    if bind in ("::", "") or _is_ipv6(bind) or bind in LOOPBACK:
        return []
    return [h for h in configured or [] if h.strip() and _is_ipv6(h.rsplit("]", 1)[0] if "]" in h else h)]


def transport_security(
    host: str, port: int, allowed_hosts: list[str] | None = None
) -> TransportSecuritySettings:
    """DNS-rebinding protection: Host and Origin must name this endpoint (:func:`allowed_host_headers`)."""
    hosts = allowed_host_headers(host, port, allowed_hosts)
    if hosts is None:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    log.info("event=http_allowed_hosts hosts=%s", ",".join(hosts))
    unreachable = unbound_hosts(host, allowed_hosts)
    if unreachable:
        log.warning(
            "event=http_allowed_hosts_unbound hosts=%s bind=%s hint=%r",
            ",".join(unreachable),
            host,
            'an IPv4 bind does not serve these IPv6 addresses; set http.host = "::" to serve IPv6 and IPv4',
        )
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{h}" for h in hosts] + [f"https://{h}" for h in hosts],
    )


TOKEN_HINT = (
    "syncd takes a static bearer token, not OAuth: configure the MCP client to send the header "
    "'Authorization: Bearer <token>' with the token of the daemon's http.token or http.token_file"
)
"""What every refusal of the token (and every OAuth discovery route) tells the client to do."""
UNAUTHORIZED_CODE = -32001
"""JSON-RPC error code of the 401 body (implementation-defined range; ``data.reason`` ``unauthorized``)."""


def _json_response(
    status: int, body: dict[str, Any], extra: list[tuple[bytes, bytes]]
) -> list[dict[str, Any]]:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()), *extra]
    return [
        {"type": "http.response.start", "status": status, "headers": headers},
        {"type": "http.response.body", "body": data},
    ]


def unauthorized(missing: bool) -> list[dict[str, Any]]:
    """The ASGI messages of the 401 for a ``missing`` or a wrong bearer token.

    Shaped for what the MCP clients do with a 401 (authorization spec 2025-11-25, RFC 6750, RFC 9728):

    * ``WWW-Authenticate: Bearer realm="syncd"``, with ``error="invalid_token"`` and an
      ``error_description`` for a wrong token (RFC 6750 section 3.1: none for a missing one), and no
      ``resource_metadata``: syncd is no OAuth protected resource, so there is no metadata to point at.
    * The body is a JSON-RPC error (code :data:`UNAUTHORIZED_CODE`, ``data.reason`` ``unauthorized``)
      whose message says which it was and what to do: the Python SDK client surfaces a JSON-RPC error
      body as the call's error, the TypeScript SDK client without an OAuth provider (the Inspector CLI)
      shows the body text ("Error POSTing to endpoint: ...").

    An OAuth-capable client starts discovery instead; :class:`NoOAuth` answers it.
    """
    what = "no bearer token was sent" if missing else "the bearer token is not this server's"
    message = f"unauthorized: {what}; {TOKEN_HINT}"
    challenge = 'Bearer realm="syncd"'
    if not missing:
        challenge += ', error="invalid_token", error_description="the bearer token is not this server\'s"'
    body = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": UNAUTHORIZED_CODE, "message": message, "data": {"reason": "unauthorized"}},
    }
    return _json_response(401, body, [(b"www-authenticate", challenge.encode())])


OAUTH_PATHS = frozenset({"/authorize", "/token", "/register", "/revoke", "/introspect"})
"""OAuth endpoints a client falls back to when no authorization-server metadata is found (the legacy
MCP spec's defaults at the server's root): answered by :class:`NoOAuth` like the well-known routes."""


class NoOAuth:
    """ASGI middleware: every OAuth discovery and endpoint route answers 404 with an OAuth error JSON.

    An OAuth-capable client (the TypeScript SDK with an auth provider: the Inspector's UI, agents on
    it) that meets the 401 probes ``/.well-known/oauth-protected-resource[/mcp]`` (RFC 9728), then
    ``/.well-known/oauth-authorization-server`` and ``/.well-known/openid-configuration`` (RFC 8414,
    OIDC; each also under the path), then registers at ``/register``. Each is answered here, before
    the token check (nothing is disclosed), with 404 and ``{"error": "invalid_request",
    "error_description": <what to do>}``: the SDK treats the 404s as "no OAuth metadata" and, at
    ``/register``, shows the ``error_description`` as the failure, so the user reads
    :data:`TOKEN_HINT` instead of an empty or misleading OAuth error.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer an OAuth route; pass everything else (and non-HTTP scopes) through."""
        path = str(scope.get("path", ""))
        if scope.get("type") != "http" or not (path.startswith("/.well-known/") or path in OAUTH_PATHS):
            await self.app(scope, receive, send)
            return
        log.info("event=http_oauth_probe path=%s", path[:200])
        body = {
            "error": "invalid_request",
            "error_description": f"this MCP server does not use OAuth (no {path[:200]}); {TOKEN_HINT}",
        }
        for message in _json_response(404, body, [(b"cache-control", b"no-store")]):
            await send(message)


def token_file_warning(path: str) -> str | None:
    """Why the token file at ``path`` is too open, else None.

    Too open: others may read or write it, or its group may and that group is not the daemon's own
    (``root:syncd`` mode 0640, read by the ``syncd`` service through its group, is fine). Source:
    ``os.stat`` and ``os.getegid``; a file that cannot be stat'ed is left to the token reader's error.
    """
    try:
        st = os.stat(os.path.expanduser(path))
    except OSError:
        return None
    mode = stat.S_IMODE(st.st_mode)
    if mode & stat.S_IRWXO:
        return f"mode {mode:04o} lets others read it; run chmod 600 {path} (or 640 with the daemon's group)"
    if mode & stat.S_IRWXG and st.st_gid != os.getegid():
        return (
            f"mode {mode:04o} lets group {st.st_gid}, not the daemon's, read it; run chmod 600 {path} "
            "(or chgrp it to the daemon's group)"
        )
    return None


class BearerAuth:
    """ASGI middleware: HTTP requests must carry ``Authorization: Bearer <token>``, else 401.

    Args:
        app: the wrapped ASGI application (the MCP Streamable HTTP app).
        token: the expected token (compared with :func:`hmac.compare_digest`).

    A refusal is :func:`unauthorized` (a missing token told apart from a wrong one).
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
        missing = not given
        log.warning(
            "event=http_unauthorized client=%s path=%s token=%s",
            client[0],
            scope.get("path", ""),
            "missing" if missing else "wrong",
        )
        for message in unauthorized(missing):
            await send(message)


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
