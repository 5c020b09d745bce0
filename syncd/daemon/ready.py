"""``syncd daemon`` up to READY=1: the store opened (and migrated), the port bound, systemd told.

What runs before READY=1 is only what READY promises (issue 28 item 1): the settings, the store at the
shipped schema head (migrated if it was not) and the listening socket on ``http.host``:``http.port``.
Then systemd hears ``READY=1`` (``STATUS=loading``), and only then is the rest loaded and started
(:mod:`syncd.daemon.run`: the MCP SDK, the slices' tools, uvicorn, the scheduler), on the socket already
bound: a client that connects in between is not refused, its connection waits in the socket's backlog
and is answered as soon as the endpoint serves (``STATUS=serving``). A busy port or a store that
cannot be opened is one error line, and no READY=1.
"""

from __future__ import annotations

import errno
import logging
import socket
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import make_url

from syncd.daemon.sdnotify import notify
from syncd.errors import StoreError, SyncdError
from syncd.lazy import load
from syncd.registry import IDENTITIES
from syncd.store.engine import free_bytes, make_engine, upgrade_to_head
from syncd.store.repo import MIN_FREE_BYTES, Store

if TYPE_CHECKING:
    from syncd.config import Settings

__all__ = ["listen_socket", "open_store", "run_daemon"]

log = logging.getLogger("syncd.daemon")


def listen_socket(host: str, port: int) -> socket.socket:
    """The daemon's listening socket on ``host``:``port``, bound before anything starts.

    ``::`` (or empty) binds dual stack where the system has it (IPv6 and IPv4 on one socket), so the
    IPv4 addresses the allowed hosts list are served too.

    Raises:
        SyncdError: reason ``address_in_use`` when another process (a second daemon?) holds the port,
            ``invalid_config`` when the address cannot be bound (not an address of this machine).
    """
    try:
        if host in ("::", "") and socket.has_dualstack_ipv6():
            return socket.create_server(
                ("::", port), family=socket.AF_INET6, dualstack_ipv6=True, backlog=2048
            )
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        return socket.create_server((host, port), family=family, backlog=2048)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise SyncdError(
                f"{host}:{port} is already in use (another syncd daemon, or another server, listens there)",
                reason="address_in_use",
                hint="Stop the other process, or set http.port to a free port.",
            ) from None
        raise SyncdError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            reason="invalid_config",
            hint="Set http.host to an address of this machine (or 0.0.0.0 / ::).",
        ) from None


def _redact_url(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)


def open_store(settings: Settings) -> Store:
    """The daemon's store: opened and migrated, or read-only when its disk is full.

    A full disk (under ``MIN_FREE_BYTES`` free) where the SQLite file cannot be opened for writing
    (its ``-wal``/``-shm`` cannot be created, or a migration cannot be written) still serves: the file
    is opened read-only (``event=store_degraded cause=disk_full``; the tools answer from the store
    only) when its schema is at head.

    Raises:
        StoreError: the store cannot be opened; on a full disk the message says so and names the fix.
    """
    limits: dict[str, Any] = {"search_timeout_s": settings.deadline_s, **settings.store.model_dump()}
    try:
        return Store.open(settings.database_url, **limits)
    except StoreError as exc:
        free = free_bytes(settings.database_url)
        if free is None or free >= MIN_FREE_BYTES:
            raise
        where = make_url(settings.database_url).database
        why = f"the disk holding it is full ({free} bytes free)"
        try:
            engine = make_engine(settings.database_url, read_only=why)
            upgrade_to_head(engine)
        except StoreError:
            raise StoreError(
                f"the disk holding the database {where} is full ({free} bytes free) and the store cannot "
                f"be opened ({exc.message})",
                hint="Free space on that disk, then start the daemon again.",
            ) from exc
        log.warning(
            "event=store_degraded cause=disk_full path=%s free_bytes=%d answers=%r hint=%r",
            where,
            free,
            "from the store only, no upstream request, nothing stored",
            "free space on that disk, then restart the daemon to fetch and store again",
        )
        return Store(engine, **{k: v for k, v in limits.items() if k != "connect_timeout_s"})


def run_daemon(settings: Settings) -> None:
    """Open (and migrate) the store, bind the port, tell systemd READY=1, then serve until SIGINT/SIGTERM.

    The endpoint and the jobs are loaded after READY=1 (:func:`syncd.daemon.run.serve`), on the socket
    bound here: a connection made meanwhile waits, it is never refused.

    Raises:
        StoreError: the store cannot be opened or migrated.
        SyncdError: the port is in use (``address_in_use``) or cannot be bound (``invalid_config``).
    """
    clients = [identify(settings) for identify in IDENTITIES]  # how each client identifies itself
    for client in clients:
        if client.hint:
            log.warning("event=anonymous_client client=%s hint=%r", client.client, client.hint)
    store = open_store(settings)
    log.info(
        "event=start database=%s clients=%s sync_interval_s=%g revalidate_interval_s=%g",
        _redact_url(settings.database_url),
        ",".join(f"{c.client}:{c.how}" for c in clients),
        settings.sync_interval_s,
        settings.revalidate_interval_s,
    )
    try:
        listener = listen_socket(settings.http.host, settings.http.port)  # busy: one error line, no READY
        try:
            log.info(
                "event=ready endpoint=http://%s:%d/mcp database=%s",
                settings.http.host,
                settings.http.port,
                _redact_url(settings.database_url),
            )
            notify("READY=1", f"STATUS=loading MCP on {settings.http.host}:{settings.http.port}")
            daemon: Any = load(__name__, "syncd.daemon.run")
            daemon.serve(settings, store, listener)
        finally:
            listener.close()
    finally:
        store.close()
