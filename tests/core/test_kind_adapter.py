"""A kind defined only in a test plugs into the road, the store, the change feed and ``cache verify``.

The proof of the kind adapter (issue 21): the toy kind below is one :class:`syncd.kinds.Kind` with its
store rules and a fetch, declared here and nowhere in ``syncd/``. Without touching a core file it is
answered local-first (fetched once, then from the store, revalidated past its TTL), a hollow answer
of it is refused and the stored copy served stale, its replaced body writes a change-feed row with
its own summary, and ``cache verify --hashes`` re-hashes it with its own projection. The upstream is
a recorded Zenodo community (``tests/corpus/zenodo/community/communities-lexibank.json``) whose
title changes between two answers. A toy watch kind is walked by the walker the registry names for
it, and a toy kind's ``revalidate_many`` hook takes its stale entries in the sweep.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from freezegun import freeze_time
from mcp import Client

from syncd import registry
from syncd.config import Settings
from syncd.kinds import Kind, KindHooks, OnEntry, RevalidateMany, RevalidateOne
from syncd.passes import watches as watch_mod
from syncd.passes.refresh import sweep
from syncd.passes.sync import DOI_WATCH, sync_all
from syncd.registry import open_services
from syncd.road import policy
from syncd.road.batch import BatchReport, count_outcome
from syncd.road.local_first import local_first
from syncd.road.services import Services
from syncd.store.changes import list_changes
from syncd.store.content import content_hash
from syncd.store.maintenance import verify
from syncd.store.repo import Store, StoredEntry
from syncd.store.rules import ChangeSummary, Side, StoreRules
from syncd.store.watches import StoredWatch, add_watch
from syncd.upstream.http import Deadline
from syncd.walks.walker import PageHook, SyncReport
from tests.corpus_path import CORPUS
from tests.helpers import mcp_server

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
    services = open_services(settings, store, transport=httpx.MockTransport(lambda r: httpx.Response(599)))
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
    server = mcp_server(cache)
    entered: list[str] = []
    active = threading.Event()
    root = Path(__file__).resolve().parents[2] / "syncd"

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
    assert {
        "syncd.crossref.lookups",
        "syncd.road.local_first",
        "syncd.road.policy",
        "syncd.store.entries",
    } <= modules
    assert sorted(m for m in modules if "zenodo" in m) == []


# --- the walkers and the batch revalidation read the registry --------------------------------------


def test_every_watch_kind_has_a_walker_in_the_registry() -> None:
    """Each watch kind ``syncd watch add`` accepts is walked: ``doi`` by the DOI walkers, the others by
    the walker :data:`syncd.registry.WALKERS` names; exactly one DOI walker takes unclaimed DOIs.
    """
    assert set(watch_mod.KINDS) == {DOI_WATCH, *registry.WALKERS}
    assert [w.claims is None for w in registry.DOI_WALKERS].count(True) == 1


def test_a_toy_watch_kind_is_walked_by_the_walker_the_registry_names(
    svc: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass walks a watch of a kind known only to a test through the walker put in ``WALKERS``:
    the walker's counts come back as the watch's report, and what it stored is in the store.
    """
    walked: list[str] = []

    def toy_walk(
        svc: Services, watch: StoredWatch, *, now: float | None = None, on_page: PageHook | None = None,
        full: bool = False, report: SyncReport | None = None,
    ) -> SyncReport:  # fmt: skip
        assert report is not None  # the pass hands its report over, to keep the counts of a walk that raises
        before = svc.store.get(TOY.name, watch.spec["slug"])
        stored = Upstream([COMMUNITY]).fetch(svc.store)
        report.requests += 1
        report.count_stored(before is None, False)
        report.complete = True
        walked.append(stored.key)
        return report

    monkeypatch.setitem(registry.WALKERS, "toy_watch", toy_walk)
    add_watch(svc.store, "toy_watch", {"slug": "lexibank"})
    [report] = sync_all(svc)
    assert walked == ["lexibank"]
    counts = (report.kind, report.requests, report.stored, report.new, report.complete)
    assert counts == ("toy_watch", 1, 1, 1, True)
    entry = svc.store.get(TOY.name, "lexibank")
    assert entry is not None and entry.title == COMMUNITY["metadata"]["title"]


def test_a_toy_kind_revalidate_many_hook_takes_its_stale_entries_in_the_sweep(
    svc: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sweep hands a kind's ``revalidate_many`` hook the stale entries it accepts (at least
    ``BATCH_MIN``) and revalidates the one it refuses singly; both counts end up in the sweep's report.
    """
    batches: list[list[str]] = []

    def run(
        services: Services, entries: Sequence[StoredEntry], single: RevalidateOne, on_entry: OnEntry | None
    ) -> BatchReport:
        batches.append(sorted(e.key for e in entries))
        report = BatchReport(list_requests=1)
        for entry in entries:
            services.store.mark_validated(entry.id)
            count_outcome(report, entry, policy.UNCHANGED, on_entry)
        return report

    many = RevalidateMany(eligible=lambda e: e.key != "odd", run=run)
    kind = dataclasses.replace(TOY, hooks=KindHooks(revalidate_many=many))
    monkeypatch.setitem(registry.KINDS, kind.name, kind)
    text = json.dumps(COMMUNITY)
    for key in ("a", "b", "c", "odd"):
        svc.store.put_content(kind.content(key, "ok", text, content_hash(_projection(COMMUNITY)), title="x"))
    told: list[tuple[str, str]] = []
    report = sweep(svc, 100, now=time.time() + 8 * 86_400, on_entry=lambda e, o: told.append((e.key, str(o))))
    assert batches == [["a", "b", "c"]]
    # the refused one goes the single road: the toy kind has no refetch hook
    assert (report.checked, report.unchanged, report.failed, report.requests) == (4, 3, 1, 2)
    assert report.failures == {"unsupported_kind": 1}
    assert sorted(told) == [
        ("a", "unchanged"),
        ("b", "unchanged"),
        ("c", "unchanged"),
        ("odd", "failed:unsupported_kind"),
    ]
