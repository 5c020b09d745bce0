"""A kind defined only in a test plugs into the road, the store, the change feed and ``cache verify``.

The proof of the kind adapter (issue 21): the toy kind below is one :class:`syncd.kinds.Kind` with its
store rules and a fetch, declared here and nowhere in ``syncd/``. Without touching a core file it is
answered local-first (fetched once, then from the store, revalidated past its TTL), a hollow answer
of it is refused and the stored copy served stale, its replaced body writes a change-feed row with
its own summary, and ``cache verify --hashes`` re-hashes it with its own projection. The upstream is
a recorded Zenodo community (``tests/corpus/zenodo/community/communities-lexibank.json``) whose
title changes between two answers.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from freezegun import freeze_time
from mcp import Client

from syncd.cache import local_first
from syncd.config import Settings
from syncd.kinds import Kind
from syncd.services import Services
from syncd.store.changes import list_changes
from syncd.store.content import content_hash
from syncd.store.maintenance import verify
from syncd.store.repo import Store, StoredEntry
from syncd.store.rules import ChangeSummary, Side, StoreRules
from syncd.tools.server import build_server
from syncd.upstream.http import Deadline
from tests.corpus_path import CORPUS

COMMUNITY = json.loads((CORPUS / "zenodo/community/communities-lexibank.json").read_text(encoding="utf-8"))


def _title(body: str | None) -> str | None:
    value = json.loads(body).get("metadata", {}).get("title") if body else None
    return value if isinstance(value, str) else None


def _summary(old: Side, new: Side) -> ChangeSummary | None:
    before, after = _title(old.body), _title(new.body)
    if before == after:
        return None
    return ChangeSummary(("title",), ({"type": "title", "from": before, "to": after},), title=after)


def _projection(body: Any) -> Any:
    return {"slug": body.get("slug"), "title": body.get("metadata", {}).get("title")}


TOY_RULES = StoreRules(required=(("id",), ("slug",)), summarize=_summary, projection=_projection)
TOY = Kind("toy_community", "entity", "doi", rules=TOY_RULES)
"""A toy kind: a community, ``ttl.entity`` (7 days), charged to the ``doi`` pool, its own rules."""


class Upstream:
    """Answers the next body of ``bodies`` on each fetch, counting them."""

    def __init__(self, bodies: list[dict[str, Any]]) -> None:
        self.bodies = bodies
        self.calls = 0

    def fetch(self, store: Store) -> StoredEntry:
        body = self.bodies[min(self.calls, len(self.bodies) - 1)]
        self.calls += 1
        text = json.dumps(body)
        projected = _projection(body) if "slug" in body else body
        content = TOY.content("lexibank", "ok", text, content_hash(projected), title=_title(text))
        stored, _ = store.put_content(content)
        return stored


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[Services]:
    """Services over a fresh SQLite store; no HTTP client is ever used (the toy fetch is local)."""
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'toy.db'}", deadline_s=3.0)
    store = Store.open(settings.database_url)
    services = Services.open(settings, store, transport=httpx.MockTransport(lambda r: httpx.Response(599)))
    yield services
    services.close()
    store.close()


def _renamed(title: str) -> dict[str, Any]:
    return {**COMMUNITY, "metadata": {**COMMUNITY["metadata"], "title": title}}


def _ask(svc: Services, up: Upstream) -> tuple[StoredEntry, Any]:
    return local_first(svc.runner, TOY, "lexibank", lambda: up.fetch(svc.store), deadline=Deadline(3.0))


def test_a_toy_kind_is_answered_local_first(svc: Services) -> None:
    """Fetched once (source upstream), then from the store with no fetch, revalidated past its TTL."""
    up = Upstream([COMMUNITY, _renamed("Lexibank, renamed")])
    first, first_prov = _ask(svc, up)
    second, second_prov = _ask(svc, up)
    assert (first_prov.source, second_prov.source, up.calls) == ("upstream", "store", 1)
    assert first.title == second.title == COMMUNITY["metadata"]["title"]
    with freeze_time(dt.datetime.now(dt.UTC) + dt.timedelta(days=8), tick=True):
        third, third_prov = _ask(svc, up)
    assert (third_prov.source, up.calls, third.title) == ("upstream", 2, "Lexibank, renamed")


def test_a_toy_kind_replaced_writes_its_own_change_summary(svc: Services) -> None:
    """The replaced body writes one change row of the toy kind, with the toy's own ``title`` item."""
    up = Upstream([COMMUNITY, _renamed("Lexibank, renamed")])
    _ask(svc, up)
    with freeze_time(dt.datetime.now(dt.UTC) + dt.timedelta(days=8), tick=True):
        _ask(svc, up)
    changes = list_changes(svc.store, kinds=[TOY.name])
    assert [(c.kind, c.key, c.types) for c in changes] == [("toy_community", "lexibank", ("title",))]
    assert changes[0].summary["items"][0]["to"] == "Lexibank, renamed"


def test_a_hollow_answer_of_a_toy_kind_is_refused_and_the_stored_one_served_stale(svc: Services) -> None:
    """A body without the toy's required ``id``/``slug`` is refused; the held copy comes back stale."""
    up = Upstream([COMMUNITY, {"status": "ok"}])
    _ask(svc, up)
    with freeze_time(dt.datetime.now(dt.UTC) + dt.timedelta(days=8), tick=True):
        stale, prov = _ask(svc, up)
    assert (prov.source, prov.upstream_error, up.calls) == ("store-stale", "malformed_response", 2)
    assert stale.title == COMMUNITY["metadata"]["title"]


def test_cache_verify_rehashes_a_toy_kind_with_its_own_projection(svc: Services) -> None:
    """``verify --hashes`` with the toy's rules finds its hash right, then names the tampered entry."""
    up = Upstream([COMMUNITY])
    stored, _ = _ask(svc, up)
    assert verify(svc.store, check_hashes=True, rules={TOY.name: TOY.rules}).ok
    with svc.store.write() as conn:
        conn.exec_driver_sql("UPDATE entries SET content_hash = 'tampered' WHERE id = ?", (stored.id,))
    found = verify(svc.store, check_hashes=True, rules={TOY.name: TOY.rules})
    assert found.bad_hashes == ["toy_community:lexibank"] and not found.ok


@pytest.mark.anyio
async def test_a_crossref_get_work_walk_names_no_zenodo_module(cache: Services) -> None:
    """One ``crossref_get_work`` (fetched from the fake Crossref, then stored) enters no Zenodo module.

    The store's write path takes the work kind's own rules (guard, change summary), so a Crossref
    write no longer reaches the Zenodo parsers; the walk goes lookups -> road -> policy -> store.
    """
    server = build_server(cache)
    entered: list[str] = []
    active = threading.Event()
    root = Path(__file__).resolve().parent.parent / "syncd"

    def profile(frame: Any, event: str, arg: Any) -> None:
        path = Path(frame.f_code.co_filename)
        if event == "call" and active.is_set() and path.is_relative_to(root):
            entered.append(".".join(path.relative_to(root.parent).with_suffix("").parts))

    threading.setprofile(profile)  # the worker threads the session starts are profiled too
    sys.setprofile(profile)
    try:
        async with Client(server) as client:
            active.set()
            result = await client.call_tool("crossref_get_work", {"doi": "10.1002/jor.1100150407"})
            active.clear()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    assert result.structured_content["title"].startswith("Growth hormone secretagogue")
    modules = set(entered)
    assert {"syncd.crossref.lookups", "syncd.cache", "syncd.policy", "syncd.store.repo"} <= modules
    assert sorted(m for m in modules if "zenodo" in m) == []
