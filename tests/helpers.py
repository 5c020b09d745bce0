"""Helpers shared by test modules: the MCP server as the application builds it, every tool, the
daemon's HTTP server in a thread, services whose upstream clients share one ``httpx.MockTransport``.

Imported by the test modules (not a conftest: ``tests/schema_check.py``, which the conftest loads,
needs :func:`every_tool` too).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
from mcp.server.lowlevel import Server

from syncd.config import Settings
from syncd.daemon.ops.activity import Activity
from syncd.daemon.run import web_server
from syncd.registry import mcp_specs, open_services, tool_specs
from syncd.road.services import Services
from syncd.server.app import CHANGES_SLICE, Deps, build_server, served_tools
from syncd.store.repo import Store
from syncd.tools.params import ToolSpec
from tests.e2e.test_processes import _free_port


def mcp_server(deps: Deps, *, close_on_exit: bool = False) -> Server[Any]:
    """The MCP server over ``deps`` as ``syncd mcp`` and the daemon build it (``mcp.slices``' tools)."""
    return build_server(deps, *mcp_specs(deps.settings), close_on_exit=close_on_exit)


def every_tool() -> tuple[ToolSpec, ...]:
    """Every tool syncd has (every slice's and the change feed's), in ``tools/list`` order."""
    return served_tools(tool_specs(), (CHANGES_SLICE,))


@contextlib.contextmanager
def daemon_http(
    settings: Settings,
    fill: Callable[[Store], object] | None = None,
    activity: Activity | None = None,
) -> Iterator[int]:
    """The daemon's real HTTP server (:func:`syncd.daemon.run.web_server`) over ``settings`` in a thread.

    Served on a free loopback port (set on ``settings.http.port``, which it yields) over its own store
    (given to ``fill`` first, when one is given) and services, both closed with the server; ``activity``:
    the server's activity record (a fresh one by default). Fails the test when the server has not
    started within 60 s (a poll bound, not a timing claim).
    """
    port = _free_port()
    settings.http.port = port
    store = Store.open(settings.database_url)
    if fill is not None:
        fill(store)
    services = open_services(settings, store)
    web = web_server(settings, services, activity)
    thread = threading.Thread(target=web.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not web.started and time.monotonic() < deadline and thread.is_alive():
        time.sleep(0.05)
    assert web.started, "the endpoint did not start"
    try:
        yield port
    finally:
        web.should_exit = True
        thread.join(10)
        services.close()
        store.close()


MOCK_CROSSREF = "api.crossref.test"
MOCK_ZENODO = "zenodo.test"
MOCK_DOI_ORG = "doi.test"
"""The hosts :func:`mock_services` points the Crossref, Zenodo and doi.org clients at."""


@contextlib.contextmanager
def mock_services(
    db: Path, handler: Callable[[httpx.Request], httpx.Response], *, deadline_s: float = 3.0
) -> Iterator[Services]:
    """Services over a fresh SQLite store at ``db`` whose upstream clients share one MockTransport.

    ``handler`` answers every request (Crossref at :data:`MOCK_CROSSREF`, Zenodo at
    ``https://{MOCK_ZENODO}/api``, doi.org at :data:`MOCK_DOI_ORG`); ``deadline_s``: the call deadline.
    Services and store are closed on exit.
    """
    settings = Settings(
        database_url=f"sqlite:///{db}",
        crossref={"base_url": f"https://{MOCK_CROSSREF}", "mailto": "ci@example.org"},
        zenodo={"base_url": f"https://{MOCK_ZENODO}/api"},
        doi={"base_url": f"https://{MOCK_DOI_ORG}"},
        deadline_s=deadline_s,
    )
    store = Store.open(settings.database_url)
    services = open_services(settings, store, transport=httpx.MockTransport(handler))
    try:
        yield services
    finally:
        services.close()
        store.close()
