"""Notifications to handshake-era (2025-11-25) sessions: ``resources/subscribe`` and ``logging/setLevel``.

Protocol 2026-07-28 clients hear of changes through ``subscriptions/listen`` (the SDK's
``ListenHandler`` over the server's subscription bus). Clients of the handshake era, most of those in
the field, instead send ``resources/subscribe`` (then ``notifications/resources/updated`` arrives on
the session's standalone channel: the stdio stream, or the Streamable HTTP GET stream) and
``logging/setLevel`` (then syncd's own log events, the ``syncd.*`` loggers, arrive as
``notifications/message`` at or above the level asked). :class:`SessionNotifier` keeps those
sessions and delivers both from one task started in the server's lifespan:

- a resource update published on the bus (:class:`~syncd.server.changes.ChangeNotifier`) is sent once
  to every session subscribed to its URI (updates not yet sent coalesce: one per URI);
- a log record is redacted as on stderr (:func:`syncd.logsetup.redact`), queued (at most
  :data:`LOG_BACKLOG`; older ones are dropped and the drop is counted in the next message), and sent
  to every session whose level admits it.

A send that fails or takes longer than :data:`SEND_TIMEOUT_S` seconds drops the session (its
connection is gone or wedged); at most :data:`MAX_SESSIONS` sessions are kept. Log records come from
any thread (tool bodies run on worker threads); they are handed to the event loop with
``call_soon_threadsafe`` (the server runs on asyncio: ``anyio.run`` and uvicorn).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.server.session import ServerSession
from mcp.server.subscriptions import ResourceUpdated, ServerEvent, SubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    LoggingLevel,
    LoggingMessageNotification,
    LoggingMessageNotificationParams,
)

from syncd.logsetup import redact

__all__ = [
    "LOG_BACKLOG",
    "MAX_SESSIONS",
    "MAX_URIS",
    "MCP_LEVELS",
    "SEND_TIMEOUT_S",
    "SessionNotifier",
    "mcp_level",
]

log = logging.getLogger("syncd.tools.notify")  # the lines keep the logger name they always had

MCP_LEVELS: dict[str, int] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO + 5,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL + 10,
    "emergency": logging.CRITICAL + 20,
}
"""RFC 5424 levels of ``logging/setLevel`` (MCP) as :mod:`logging` levels."""
LOG_BACKLOG = 500
"""Log messages kept for sending (older ones dropped, and counted, when sessions fall behind)."""
MAX_SESSIONS = 256
"""Handshake-era sessions kept at once (subscribed or with a log level)."""
MAX_URIS = 64
"""Resource URIs one session may be subscribed to at once."""
SEND_TIMEOUT_S = 5.0
"""Longest one notification may take to send before its session is dropped (seconds)."""
SOURCE_LOGGER = "syncd"
"""The logger whose records (its own and its children's) are forwarded."""


def mcp_level(levelno: int) -> LoggingLevel:
    """The MCP level of a :mod:`logging` level number (``WARNING`` -> ``"warning"``)."""
    if levelno <= logging.DEBUG:
        return "debug"
    if levelno <= logging.INFO:
        return "info"
    if levelno <= logging.WARNING:
        return "warning"
    if levelno <= logging.ERROR:
        return "error"
    return "critical"


@dataclass
class _Peer:
    """One session: its handle (standalone channel), the URIs it subscribed, its log level (or None)."""

    session: ServerSession
    uris: set[str] = field(default_factory=set)
    level: int | None = None


@dataclass(frozen=True)
class _LogEntry:
    levelno: int
    logger: str
    message: str


def _key(session: ServerSession) -> int:
    """One key per connection: its ``initialize`` parameters object (the same for every request of it)."""
    params = session.client_params
    return id(params) if params is not None else id(session)


class _Forwarder(logging.Handler):
    """The handler on the ``syncd`` logger: redacts each record and hands it to the event loop."""

    def __init__(self, push: Callable[[_LogEntry], None], loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self.push = push
        self.loop = loop

    def emit(self, record: logging.LogRecord) -> None:
        if record.name == log.name:  # never forward our own delivery reports (a loop)
            return
        try:
            entry = _LogEntry(record.levelno, record.name, redact(record))
            self.loop.call_soon_threadsafe(self.push, entry)
        except RuntimeError:  # the loop is closed: the server is stopping
            pass
        except Exception:
            self.handleError(record)


class SessionNotifier:
    """Handshake-era sessions that subscribed to a resource or set a log level (module docstring).

    Args:
        bus: the server's subscription bus; its :class:`ResourceUpdated` events are delivered.
    """

    def __init__(self, bus: SubscriptionBus) -> None:
        self._peers: dict[int, _Peer] = {}
        self._dirty: list[str] = []
        self._logs: deque[_LogEntry] = deque(maxlen=LOG_BACKLOG)
        self._dropped = 0
        self._wake: anyio.Event | None = None  # made in run(): an event belongs to one event loop
        self._handler: _Forwarder | None = None
        self._saved_level: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        bus.subscribe(self._on_event)

    # --- requests -------------------------------------------------------------------------------

    def _peer(self, session: ServerSession) -> _Peer:
        key = _key(session)
        peer = self._peers.get(key)
        if peer is None:
            if len(self._peers) >= MAX_SESSIONS:
                raise MCPError(INTERNAL_ERROR, f"subscription limit reached ({MAX_SESSIONS} sessions)")
            peer = self._peers[key] = _Peer(session)
        return peer

    def subscribe(self, session: ServerSession, uri: str) -> None:
        """``resources/subscribe``: send ``notifications/resources/updated`` for ``uri`` to ``session``.

        Raises:
            MCPError: -32602 when the session already holds :data:`MAX_URIS` other subscriptions;
                -32603 when :data:`MAX_SESSIONS` sessions are already kept.
        """
        peer = self._peer(session)
        if uri not in peer.uris and len(peer.uris) >= MAX_URIS:
            raise MCPError(
                INVALID_PARAMS,
                f"subscription limit reached ({MAX_URIS} URIs in this session); unsubscribe from one first",
            )
        peer.uris.add(uri)

    def unsubscribe(self, session: ServerSession, uri: str) -> None:
        """``resources/unsubscribe``: stop sending updates of ``uri`` (a URI not subscribed is no error)."""
        peer = self._peers.get(_key(session))
        if peer is None:
            return
        peer.uris.discard(uri)
        self._forget_if_idle(_key(session), peer)

    def set_level(self, session: ServerSession, level: str) -> None:
        """``logging/setLevel``: send syncd's log events at ``level`` (an MCP level name) and above.

        Raises:
            MCPError: -32603 when :data:`MAX_SESSIONS` sessions are already kept.
        """
        self._peer(session).level = MCP_LEVELS[level]
        self._install()

    def sessions(self) -> int:
        """Sessions kept now (subscribed or logging)."""
        return len(self._peers)

    # --- intake -------------------------------------------------------------------------------

    def _on_event(self, event: ServerEvent) -> None:
        """Bus listener (on the loop): mark the URI of a resource update for delivery."""
        if not isinstance(event, ResourceUpdated) or event.uri in self._dirty:
            return
        if any(event.uri in p.uris for p in self._peers.values()):
            self._dirty.append(event.uri)
            self._signal()

    def _on_log(self, entry: _LogEntry) -> None:
        """Called on the loop for each forwarded record."""
        if not any(p.level is not None and entry.levelno >= p.level for p in self._peers.values()):
            return
        if len(self._logs) == self._logs.maxlen:
            self._dropped += 1
        self._logs.append(entry)
        self._signal()

    def _signal(self) -> None:
        if self._wake is not None:
            self._wake.set()

    def _install(self) -> None:
        """Keep the forwarding handler on the ``syncd`` logger at the lowest level any session asked."""
        levels = [p.level for p in self._peers.values() if p.level is not None]
        source = logging.getLogger(SOURCE_LOGGER)
        if not levels or self._loop is None:
            if self._handler is not None:
                source.removeHandler(self._handler)
                self._handler = None
                source.setLevel(self._saved_level or logging.NOTSET)
                self._saved_level = None
            return
        lowest = min(levels)
        if self._handler is None:
            self._handler = _Forwarder(self._on_log, self._loop)
            self._saved_level = source.level
            source.addHandler(self._handler)
        self._handler.setLevel(lowest)
        if source.getEffectiveLevel() > lowest:
            source.setLevel(lowest)  # stderr keeps its own level (syncd.logsetup sets it on the handler)

    def _forget_if_idle(self, key: int, peer: _Peer) -> None:
        if not peer.uris and peer.level is None:
            self._peers.pop(key, None)

    def _drop(self, key: int, why: str) -> None:
        if self._peers.pop(key, None) is not None:
            log.debug("event=notify_session_dropped why=%s sessions=%d", why, len(self._peers))
            self._install()

    # --- delivery -------------------------------------------------------------------------------

    async def _send(self, key: int, peer: _Peer, send: Callable[[ServerSession], Any]) -> None:
        try:
            with anyio.fail_after(SEND_TIMEOUT_S):
                await send(peer.session)
        except Exception as exc:  # a closed or wedged connection: forget the session
            self._drop(key, exc.__class__.__name__)

    async def _deliver(self) -> None:
        uris, self._dirty = self._dirty, []
        for uri in uris:
            for key, peer in list(self._peers.items()):
                if uri in peer.uris:
                    await self._send(key, peer, lambda s, u=uri: s.send_resource_updated(u))
        while self._logs:
            entry = self._logs.popleft()
            dropped, self._dropped = self._dropped, 0
            text = entry.message if not dropped else f"{entry.message} ({dropped} earlier messages dropped)"
            note = LoggingMessageNotification(
                params=LoggingMessageNotificationParams(
                    level=mcp_level(entry.levelno), logger=entry.logger, data=text
                )
            )
            for key, peer in list(self._peers.items()):
                if peer.level is not None and entry.levelno >= peer.level:
                    await self._send(key, peer, lambda s, n=note: s.send_notification(n))

    async def run(self) -> None:
        """Deliver until cancelled (the server's lifespan); removes the log handler on the way out."""
        self._loop = asyncio.get_running_loop()
        self._wake = anyio.Event()
        self._install()
        try:
            while True:
                await self._wake.wait()
                self._wake = anyio.Event()
                await self._deliver()
        finally:
            self._wake = None
            self._peers.clear()
            self._install()
            self._loop = None
