"""The change feed over MCP: tool ``syncd_list_changes``, resource ``syncd://changes``, its notifications.

The tool and the resource answer from the store only (no upstream request). Clients subscribe to
``syncd://changes`` with ``subscriptions/listen`` (protocol 2026-07-28; ``Client.listen(
resource_subscriptions=["syncd://changes"])``) or ``resources/subscribe`` (2025-11-25, delivered by
:class:`~syncd.server.notify.SessionNotifier`) and get ``notifications/resources/updated`` when a
change is recorded: :class:`ChangeNotifier` publishes (and logs ``event=change_published``) on the
server's subscription bus after every
tool call that recorded one in this process (``Store.changes_recorded``), and every
``changes.poll_s`` seconds when another process (the daemon's sweep, ``syncd cache refresh``) did
(the newest change id in the store).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from typing import Annotated, Any

import anyio
import anyio.to_thread
from mcp.server.subscriptions import ResourceUpdated, SubscriptionBus
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BeforeValidator, Field

from syncd.contracts.changes import ChangeEntry, ChangesView
from syncd.errors import InvalidInput, StoreError
from syncd.normalize.changes import describe, since_epoch
from syncd.registry import CHANGE_SOURCES, SERIES_DOI_PREFIXES, change_sources
from syncd.road.policy import iso, read_now
from syncd.road.services import Services
from syncd.store.changes import StoredChange, latest_change_id, list_changes, watched_ids
from syncd.store.repo import Store
from syncd.tools.errors import error_result
from syncd.tools.fit import Cut, Fit, plain
from syncd.tools.params import ToolArgs, ToolSpec, split_names
from syncd.tools.resource import ResourceSpec

__all__ = [
    "CHANGES_URI",
    "RESOURCES",
    "RESOURCE_PAGE",
    "TOOLS",
    "ChangeNotifier",
    "ListChangesArgs",
    "change_entries",
    "list_changes_tool",
    "render_changes",
    "resume_changes",
]

log = logging.getLogger("syncd.tools.changes")  # the lines keep the logger name they always had

CHANGES_URI = "syncd://changes"
"""The change feed resource (the newest :data:`RESOURCE_PAGE` changes as JSON)."""
RESOURCE_PAGE = 50
"""Changes a read of :data:`CHANGES_URI` returns."""

_CURSOR_PREFIX = "before:"
_MAX_ID = 2**63 - 1
"""Largest row id either backend stores (a cursor beyond it names no change)."""


def change_entries(store: Store, changes: list[StoredChange]) -> list[dict[str, Any]]:
    """The feed rows as the tool, the resource and ``syncd changes --json`` give them (JSON-ready)."""
    watched = watched_ids(store, [c.id for c in changes], SERIES_DOI_PREFIXES)
    out = []
    for c in changes:
        entry = ChangeEntry(
            id=c.id,
            kind=c.kind,
            key=c.key,
            doi=c.doi,
            title=c.summary.get("title"),
            detected_at=iso(c.detected_at),
            types=list(c.types),
            summary=describe(c.summary),
            items=[i for i in c.summary.get("items") or [] if isinstance(i, dict)],
            watched=c.id in watched,
        )
        out.append(entry.model_dump(mode="json", exclude_none=True))
    return out


def _before(cursor: str | None) -> int | None:
    """The change id a ``before:<id>`` cursor names (ASCII digits, a 64-bit row id), None without one.

    Raises:
        InvalidInput: reason ``invalid_cursor``, not a cursor this tool gave.
    """
    if not cursor:
        return None
    raw = cursor.strip()
    digits = raw[len(_CURSOR_PREFIX) :]
    if raw.startswith(_CURSOR_PREFIX) and digits.isascii() and digits.isdigit() and int(digits) <= _MAX_ID:
        return int(digits)
    raise InvalidInput(
        f"cursor {cursor!r} is not a nextCursor of syncd_list_changes", reason="invalid_cursor"
    )


def _entry_kinds(kind: str, slices: list[str]) -> tuple[str, ...]:
    """The entry kinds the ``kind`` filter keeps on a server serving ``slices`` (empty: every kind).

    The filters are those of the served slices (:func:`syncd.registry.change_sources`), matched
    without regard to case or surrounding blanks.

    Raises:
        InvalidInput: reason ``invalid_parameter``, ``kind`` is no filter of this server.
    """
    sources = change_sources(slices)
    name = kind.strip().lower()
    if name in sources:
        return sources[name]
    raise InvalidInput(
        f"kind {kind!r} is not one of {', '.join(sources)} (the change sources this server serves)",
        reason="invalid_parameter",
    )


def render_changes(data: dict[str, Any]) -> str:
    """Text of a syncd_list_changes answer: one line per change, the continuation, the notice."""
    lines = [f"# Changes since {data.get('since')}", f"{data.get('count', 0)} on this page"]
    for c in data.get("changes") or []:
        mark = " [watched]" if c.get("watched") else ""
        lines.append(f"- {c['detected_at']} {c.get('doi') or c['key']}{mark}: {c['summary']}")
    if data.get("nextCursor"):
        lines.append(f"nextCursor: {data['nextCursor']}")
    if data.get("notice"):
        lines.append(f"Notice: {data['notice']}")
    return "\n".join(lines)


def list_changes_tool(
    services: Services,
    since: str = "7d",
    types: list[str] | None = None,
    kind: str = "all",
    watched_only: bool = False,
    limit: int = 50,
    cursor: str | None = None,
) -> CallToolResult:
    """List what changed in the works and records syncd holds, newest first (from the store only).

        Each change syncd found when it revalidated, synced or fetched a stored entry: updatedBy entries
        that appeared (retraction, correction, erratum, expression_of_concern, withdrawal, ... with the
        notice DOI and its source, publisher or retraction-watch) or disappeared, title/author/date changes,
        a Zenodo version no longer the latest (superseded) or a new version of a series syncd holds,
        deleted or restricted records, a DOI prefix now registered with another agency. since is a duration
        (7d, 12h) or an ISO date; types filters (retraction, expression_of_concern, ...); watched_only keeps
        the entries on the DOI watch list; kind keeps one upstream's entries (crossref, zenodo, datacite:
    those this server serves) or the registration agencies (agency). Page with limit and nextCursor.
        Makes no upstream request. Errors: invalid_parameter, invalid_cursor, store_unavailable.
    """
    try:
        now = time.time()
        # a window reaching before 1970 or past now holds the same changes as one from 1970 or now,
        # and keeps the echoed start a real date (a huge duration is not an overflow)
        start = min(max(since_epoch(since, now), 0.0), now)
        page = list_changes(
            services.store,
            since=start,
            kinds=_entry_kinds(kind, list(services.settings.mcp.slices)),
            types=[t.strip().lower() for t in types or [] if t.strip()],
            watched_only=watched_only,
            series_prefixes=SERIES_DOI_PREFIXES,
            before_id=_before(cursor),
            limit=limit + 1,
        )
        more = len(page) > limit
        page = page[:limit]
        data: dict[str, Any] = {
            "changes": change_entries(services.store, page),
            "count": len(page),
            "since": iso(start),
        }
        if more:
            data["nextCursor"] = f"{_CURSOR_PREFIX}{page[-1].id}"
        elif not page:
            data["notice"] = (
                "No change recorded in this window with these filters; syncd records a change when it "
                "revalidates, syncs or fetches an entry it already holds. Widen since or drop filters."
            )
        data["cache"] = read_now(now).as_dict(now)
    except Exception as exc:
        return error_result(exc)
    return CallToolResult(
        content=[TextContent(type="text", text=render_changes(data))], structured_content=data
    )


def resume_changes(data: dict[str, Any], args: Mapping[str, Any], kept: int, total: int) -> str:
    """Continuation of a page cut to fit the answer budget (:data:`syncd.tools.fit.FITS`).

    ``nextCursor`` continues after the last change kept, ``count`` is what the page now holds;
    returns the sentence naming the next call.
    """
    kept_changes = data.get("changes") or []
    data["count"] = len(kept_changes)
    if kept_changes:
        data["nextCursor"] = f"{_CURSOR_PREFIX}{kept_changes[-1]['id']}"
    return (
        f"Showing {kept} of this page's {total} changes; call again with cursor={data.get('nextCursor')!r} "
        f"and limit={max(kept, 1)} for the next ones"
    )


def _source_name(value: object) -> object:
    """A change source's name as :data:`syncd.registry.CHANGE_SOURCES` spells it (blanks, case aside).

    Raises:
        ValueError: not a change source (refused as ``invalid_arguments``, like any name out of the schema).
    """
    if not isinstance(value, str):
        return value  # the strict str check refuses it
    name = value.strip().lower()
    if name not in CHANGE_SOURCES:
        raise ValueError(f"kind must be one of {', '.join(CHANGE_SOURCES)}")
    return name


class ListChangesArgs(ToolArgs):
    """``syncd_list_changes`` input."""

    since: str = Field(
        "7d",
        min_length=1,
        max_length=40,
        description="Window start: a duration back from now (7d, 12h, 30m, 2w) or an ISO date/time in UTC "
        "(2026-11-01). Default 7d.",
    )
    types: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=40)]] | None, BeforeValidator(split_names)
    ] = Field(
        None,
        max_length=20,
        description='Only changes of these types, e.g. ["retraction", "expression_of_concern"] or '
        '"retraction,correction" (update types: retraction, correction, erratum, withdrawal, '
        "expression_of_concern, ...; also title, authors, date, superseded, new_version, deleted, "
        "restricted, agency_changed, metadata).",
    )
    kind: Annotated[str, BeforeValidator(_source_name)] = Field(
        "all",
        json_schema_extra={"enum": list(CHANGE_SOURCES)},
        description="Only the entries of one source: an upstream's works or records (of the slices this "
        "server serves), agency (the registration agencies of DOI prefixes) or all. Default all.",
    )
    watched_only: bool = Field(False, description="Only entries on the DOI watch list.")
    limit: int = Field(50, ge=1, le=200, description="Changes per page (1-200).")
    cursor: str | None = Field(
        None, max_length=40, description="The nextCursor of the previous page (same filters)."
    )


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "syncd_list_changes",
        "List what changed in the stored works and records",
        ListChangesArgs,
        ChangesView,
        list_changes_tool,
        ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
        fit=Fit((Cut("changes", resume_changes),), plain(render_changes)),
    ),
)
"""The change-feed tool."""


def _read_changes(deps: Services) -> str:
    page = list_changes(deps.store, limit=RESOURCE_PAGE)
    return json.dumps({"changes": change_entries(deps.store, page)}, ensure_ascii=False)


RESOURCES: tuple[ResourceSpec, ...] = (
    ResourceSpec(
        CHANGES_URI,
        name="changes",
        title="What changed in the stored works and records",
        description="The newest changes syncd found (retractions, corrections, new versions, deletions, ...) "
        "as JSON, newest first. Subscribe to be told when a new one is recorded; page the whole feed "
        "with the syncd_list_changes tool.",
        mime_type="application/json",
        read=_read_changes,
        subscribable=True,
    ),
)
"""The ``syncd://changes`` resource: the newest :data:`RESOURCE_PAGE` changes in the store as JSON."""


class ChangeNotifier:
    """Tells ``syncd://changes`` subscribers when a change is recorded (see the module docstring).

    Args:
        store: the store the server's tools write.
        bus: the server's subscription bus (given to ``MCPServer(subscriptions=...)``).
    """

    @classmethod
    def of(cls, deps: Any, bus: SubscriptionBus) -> ChangeNotifier:
        """The notifier over the store of ``deps`` (the server's dependency object, its ``store``)."""
        return cls(deps.store, bus)

    def __init__(self, store: Store, bus: SubscriptionBus) -> None:
        self.store = store
        self.bus = bus
        self.seen_local = store.changes_recorded
        self.seen_id: int | None = None
        try:  # the baseline: what is in the store when the server is built is no news
            self.seen_id = latest_change_id(store)
        except StoreError as exc:
            log.debug("event=changes_poll_failed reason=%s", exc.reason)
        self.lock = anyio.Lock()

    async def _newest(self) -> int | None:
        try:
            return await anyio.to_thread.run_sync(latest_change_id, self.store)
        except StoreError as exc:
            log.debug("event=changes_poll_failed reason=%s", exc.reason)
            return None

    async def after_call(self) -> None:
        """After a tool call: publish when this process recorded a change (no store read otherwise)."""
        if self.store.changes_recorded == self.seen_local:
            return
        async with self.lock:
            self.seen_local = self.store.changes_recorded
            newest = await self._newest()
            if newest is not None:
                self.seen_id = max(newest, self.seen_id or 0)
            log.info("event=change_published uri=%s source=call newest_id=%s", CHANGES_URI, newest)
            await self.bus.publish(ResourceUpdated(uri=CHANGES_URI))

    async def poll(self) -> None:
        """Publish when the store holds a change newer than any seen (recorded by another process)."""
        async with self.lock:
            newest = await self._newest()
            if newest is None:
                return
            if self.seen_id is not None and newest > self.seen_id:
                log.info("event=change_published uri=%s source=poll newest_id=%d", CHANGES_URI, newest)
                await self.bus.publish(ResourceUpdated(uri=CHANGES_URI))
            self.seen_id = max(newest, self.seen_id or 0)
            self.seen_local = self.store.changes_recorded

    async def run(self, poll_s: float) -> None:
        """Poll every ``poll_s`` seconds until cancelled (the server's lifespan)."""
        while True:
            await self.poll()
            await anyio.sleep(poll_s)
