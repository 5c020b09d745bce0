"""2025-11-25 clients subscribe and get syncd's log events (issue 24 item 1).

Before, ``resources/subscribe`` answered "Method not found" (only the 2026-07-28
``subscriptions/listen`` was served) and ``logging/setLevel`` was not served either, while the
server's instructions tell agents to subscribe to ``syncd://changes``. Now the SDK client speaking
2025-11-25 to a real ``syncd mcp`` subprocess subscribes, and a change recorded by another process
(this test's own store) arrives as ``notifications/resources/updated``; after ``logging/setLevel``
the server's ``event=change_published`` log line arrives as ``notifications/message``; after
``resources/unsubscribe`` no further update comes. The capabilities say so, for each era.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import LoggingMessageNotificationParams, ResourceUpdatedNotification

from syncd.config import Settings
from syncd.crossref.lookups import work_content
from syncd.registry import open_services
from syncd.server.changes import CHANGES_URI
from syncd.server.notify import MAX_URIS
from syncd.store.repo import Store
from tests.conftest import corpus_json
from tests.helpers import mcp_server

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

LANCET = "10.1016/s0140-6736(20)31180-6"
LANCET_FILE = "crossref/work/10.1016_s0140-6736_20_31180-6.json"
WAIT_S = 30.0
"""Longest a test waits for a notification that must come (a bound against hanging, not a speed claim)."""


def _lancet(store: Store, *, retracted: bool, title_suffix: str = "") -> None:
    """Store the Lancet paper as before its retraction, or as retracted (a change of the stored one)."""
    body = copy.deepcopy(corpus_json(LANCET_FILE))
    message = body["message"]
    if not retracted:
        message["updated-by"] = [u for u in message["updated-by"] if u["type"] != "retraction"]
        message["title"] = [message["title"][0].removeprefix("RETRACTED: ")]
    message["title"] = [message["title"][0] + title_suffix]
    store.put_content(work_content(LANCET, message, json.dumps(body)), now=time.time())


class Inbox:
    """What the client received: resource updates and log messages, with a way to wait for one."""

    def __init__(self) -> None:
        self.updates: list[str] = []
        self.logs: list[LoggingMessageNotificationParams] = []
        self.arrived = anyio.Event()

    async def on_message(self, message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            self.updates.append(str(message.params.uri))
            self._wake()

    async def on_log(self, params: LoggingMessageNotificationParams) -> None:
        self.logs.append(params)
        self._wake()

    def _wake(self) -> None:
        self.arrived.set()
        self.arrived = anyio.Event()

    async def until(self, done: Any) -> None:
        with anyio.fail_after(WAIT_S):
            while not done():
                await self.arrived.wait()

    def published(self) -> int:
        return sum(1 for p in self.logs if "event=change_published" in str(p.data))


async def test_a_2025_11_25_client_hears_of_a_change_recorded_by_another_process(tmp_path: Path) -> None:
    """Subscribed over stdio (2025-11-25), the client gets notifications/resources/updated for
    syncd://changes once this process records the retraction, and the log line saying so; after
    unsubscribing, the next recorded change is logged but not notified.
    """
    db_url = f"sqlite:///{tmp_path / 'feed.db'}"
    config = tmp_path / "syncd.toml"
    config.write_text(f'database_url = "{db_url}"\n[changes]\npoll_s = 0.1\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCD_")}
    env["SYNCD_CONFIG"] = str(config)
    writer = Store.open(db_url)  # "another process": the server subprocess has its own store
    try:
        _lancet(writer, retracted=False)
        inbox = Inbox()
        params = StdioServerParameters(command=sys.executable, args=["-m", "syncd", "mcp"], env=env)
        async with Client(
            params, mode="legacy", message_handler=inbox.on_message, logging_callback=inbox.on_log
        ) as c:
            assert c.protocol_version == "2025-11-25"
            caps = c.server_capabilities
            assert caps.resources is not None and caps.resources.subscribe is True
            assert caps.logging is not None
            await c.set_logging_level("info")
            await c.subscribe_resource(CHANGES_URI)
            await anyio.to_thread.run_sync(lambda: _lancet(writer, retracted=True))
            await inbox.until(lambda: inbox.updates and inbox.published())
            assert inbox.updates == [CHANGES_URI]
            line = next(p for p in inbox.logs if "event=change_published" in str(p.data))
            assert line.level == "info" and line.logger == "syncd.tools.changes"
            listed = await c.call_tool("syncd_list_changes", {"since": "1h"})
            assert [ch["types"] for ch in listed.structured_content["changes"]] == [["retraction", "title"]]  # type: ignore[index]
            await c.unsubscribe_resource(CHANGES_URI)
            await anyio.to_thread.run_sync(
                lambda: _lancet(writer, retracted=True, title_suffix=" (corrected)")
            )
            await inbox.until(lambda: inbox.published() >= 2)  # the poll saw it: no update may follow
            assert inbox.updates == [CHANGES_URI]
    finally:
        writer.close()


async def test_subscribe_refuses_an_unknown_uri_and_logs_respect_the_level(tmp_path: Path) -> None:
    """In-process, 2025-11-25: an unknown URI is -32602 naming it; at level warning an info record is
    not sent, a warning is (with secrets redacted as on stderr).
    """
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'x.db'}")
    store = Store.open(settings.database_url)
    services = open_services(settings, store)
    inbox = Inbox()
    try:
        async with Client(mcp_server(services), mode="legacy", logging_callback=inbox.on_log) as c:
            with pytest.raises(MCPError) as refused:
                await c.subscribe_resource("syncd://nothing")
            assert refused.value.error.code == -32602 and "syncd://nothing" in refused.value.error.message
            await c.set_logging_level("warning")
            logging.getLogger("syncd.sync").info("event=quiet")
            logging.getLogger("syncd.sync").warning("event=loud url=https://x.example/?access_token=s3cret")
            await inbox.until(lambda: inbox.logs)
        assert [(p.level, p.data) for p in inbox.logs] == [
            ("warning", "event=loud url=https://x.example/?access_token=***")
        ]
    finally:
        services.close()
        store.close()


async def test_a_foreign_uri_is_tracked_with_a_warning_and_subscriptions_are_bounded(tmp_path: Path) -> None:
    """2025-11-25: ``test://watched-resource`` (the conformance suite's URI, a scheme syncd does not
    serve) is accepted and the session is warned at once that no update will come; unsubscribing
    from it is accepted; a session holding MAX_URIS subscriptions is refused one more (-32602), and
    syncd://changes still subscribes once one is dropped.
    """
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'x.db'}")
    store = Store.open(settings.database_url)
    services = open_services(settings, store)
    inbox = Inbox()
    try:
        async with Client(mcp_server(services), mode="legacy", logging_callback=inbox.on_log) as c:
            await c.subscribe_resource("test://watched-resource")
            await inbox.until(lambda: inbox.logs)
            assert inbox.logs[0].level == "warning"
            assert inbox.logs[0].data.startswith(
                "subscribed to test://watched-resource, which syncd does not serve: no update will be sent"
            )
            assert "skill://, syncd://" in inbox.logs[0].data
            await c.unsubscribe_resource("test://watched-resource")
            for i in range(MAX_URIS):
                await c.subscribe_resource(f"urn:example:{i}")
            with pytest.raises(MCPError) as refused:
                await c.subscribe_resource(CHANGES_URI)
            assert refused.value.error.code == -32602
            assert f"subscription limit reached ({MAX_URIS} URIs" in refused.value.error.message
            await c.subscribe_resource("urn:example:0")  # one already held: no new slot needed
            await c.unsubscribe_resource("urn:example:0")
            await c.subscribe_resource(CHANGES_URI)
    finally:
        services.close()
        store.close()


async def test_capabilities_are_true_to_each_era(tmp_path: Path) -> None:
    """2025-11-25: resources.subscribe and logging; 2026-07-28: subscribe through listen, no logging
    (syncd sends log messages only to handshake-era sessions).
    """
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'x.db'}")
    store = Store.open(settings.database_url)
    services = open_services(settings, store)
    try:
        async with Client(mcp_server(services), mode="legacy") as legacy:
            caps = legacy.server_capabilities
            assert caps.resources is not None and caps.resources.subscribe and caps.logging is not None
        async with Client(mcp_server(services)) as modern:
            assert modern.protocol_version == "2026-07-28"
            caps = modern.server_capabilities
            assert caps.resources is not None and caps.resources.subscribe and caps.logging is None
    finally:
        services.close()
        store.close()
