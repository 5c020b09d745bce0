"""Watch-list sync: full and incremental walks, crash resume from checkpoints, batch revalidation."""

from __future__ import annotations

import copy
import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from syncd.config import Settings
from syncd.crossref.lookups_revalidate import revalidate_works
from syncd.crossref.params_filter import batch_params
from syncd.crossref.walk import crossref_params
from syncd.passes import watches as watch_mod
from syncd.passes.refresh import revalidate, sweep
from syncd.passes.sync import sync_all, sync_watch
from syncd.registry import open_services
from syncd.road.services import Services
from syncd.store.repo import Store
from syncd.store.watches import get_sync_state, list_watches
from syncd.walks.cursor import SORT
from syncd.zenodo.walk import ZENODO_FLOOR, zenodo_params
from syncd.zenodo.walk_specs import zenodo_spec
from tests.conftest import corpus_json, make_settings
from tests.fakeupstream import FakeUpstream

PRC = "crossref/work-list/works_filter-from-created-date-2019-06-01-container-title-Physical-Review-C"
PRC_FILTER = "from-created-date:2019-06-01,container-title:Physical Review C"
FUNDER = "crossref/work-list/funders-100000001-works_rows-30_cursor"
T0 = dt.datetime(2026, 11, 29, 10, 0, tzinfo=dt.UTC).timestamp()
FAST = {
    "crossref_list": {"per_s": 100, "burst": 100, "in_flight": 5},
    "crossref_single": {"per_s": 100, "burst": 100, "in_flight": 5},
    "zenodo_search": {"per_s": 100, "burst": 100, "in_flight": 5},
    "zenodo_general": {"per_s": 100, "burst": 100, "in_flight": 5},
}


@pytest.fixture
def daemon_cache(fake: FakeUpstream, db_url: str) -> Iterator[Services]:
    """The daemon's view: a non-interactive cache (leaves the reserve), generous test budget."""
    settings = make_settings(fake, db_url, budget=FAST)
    store = Store.open(settings.database_url)
    c = open_services(settings, store, interactive=False)
    yield c
    c.close()
    store.close()


def _work_list(items: list[dict[str, Any]], next_cursor: str | None) -> dict[str, Any]:
    message: dict[str, Any] = {"total-results": len(items), "items": items, "items-per-page": 20}
    if next_cursor:
        message["next-cursor"] = next_cursor
    return {"status": "ok", "message-type": "work-list", "message-version": "1.0.0", "message": message}


def serve_chain(fake: FakeUpstream, route: str, pages: list[dict[str, Any]], rows: int, total: int) -> None:
    """Serve recorded cursor ``pages`` of ``route`` in order, each page's ``total-results`` set to ``total``.

    The recorded funder chain says 176,862 (all the funder's works) on pages that hold its first 90: a
    walk of only those pages is told the 90 it holds, so that it ends complete on its third page.
    """
    tokens = ["*"] + [p["message"]["next-cursor"] for p in pages[:-1]]
    for token, page in zip(tokens, pages, strict=True):
        body = copy.deepcopy(page)
        body["message"]["total-results"] = total
        fake.set_body("crossref", f"{route}?" + urlencode({"rows": str(rows), **SORT, "cursor": token}), body)


def funder_chain() -> list[dict[str, Any]]:
    """The recorded three-page cursor chain of funder 100000001 (30 works a page)."""
    return [corpus_json(f"{FUNDER}-{p}.json") for p in ("star", "page2", "page3")]


def _prc_items() -> list[dict[str, Any]]:
    return (
        corpus_json(f"{PRC}_cursor-star.json")["message"]["items"]
        + corpus_json(f"{PRC}_cursor-page2.json")["message"]["items"]
    )


def test_watched_query_full_then_incremental_fetches_only_changed(
    daemon_cache: Services, fake: FakeUpstream
) -> None:
    """A watched Crossref query is walked fully by cursor (30 works, 2 list requests: the second page
    accounts for `total-results: 30`, so the empty third page is not asked), then an incremental pass
    asks with from-index-date and transfers only the 2 works re-indexed since.
    """
    store = daemon_cache.store
    w, created = watch_mod.add(store, "crossref_query", {"route": "/works", "filter": PRC_FILTER})
    assert created
    full = sync_watch(daemon_cache, w, now=T0)
    assert (full.mode, full.requests, full.stored, full.new, full.complete) == ("full", 2, 30, 30, True)
    assert (full.seen, full.total) == (30, 30)
    assert fake.count("/works", service="crossref") == 2
    state = get_sync_state(store, f"watch:{w.id}")
    assert state is not None and state.cursor is None and state.status == "ok"
    assert state.checkpoint == {"index_date": "2026-11-29"}
    first = _prc_items()[0]
    stored = store.get("crossref_work", first["DOI"].lower())
    assert stored is not None and stored.changes == 1

    # Crossref re-indexed two works since: one with a corrected title, one whose stamp merely moved
    changed = copy.deepcopy(first)
    changed["title"] = ["Effects of the Coulomb interaction on pairing in N=Z nuclei (corrected)"]
    changed["indexed"] = {"date-parts": [[2026, 11, 30]], "date-time": "2026-11-30T08:00:00Z"}
    touched = copy.deepcopy(_prc_items()[1])
    touched["indexed"] = {"date-parts": [[2026, 11, 30]], "date-time": "2026-11-30T08:00:01Z"}
    first_page = crossref_params({"filter": PRC_FILTER}, "*", "2026-11-29")
    assert first_page == {
        "filter": PRC_FILTER + ",from-index-date:2026-11-29",
        "sort": "indexed",
        "order": "asc",
        "cursor": "*",
    }
    fake.set_body("crossref", "/works?" + urlencode(first_page), _work_list([changed, touched], "inc-2"))
    fake.reset_log()

    inc = sync_watch(daemon_cache, w, now=T0 + 86_400)
    assert (inc.mode, inc.requests, inc.stored, inc.changed, inc.unchanged, inc.new) == (
        "incremental",
        1,  # the page holds both works of total-results 2: no second page is asked
        2,
        1,
        1,
        0,
    )
    assert fake.count(service="crossref") == 1  # no /works/{doi} at all
    assert all(r.query.get("filter", "").endswith("from-index-date:2026-11-29") for r in fake.requests)
    after = store.get("crossref_work", first["DOI"].lower())
    assert after is not None and after.title == changed["title"][0] and after.changes == 2
    assert get_sync_state(store, f"watch:{w.id}").checkpoint == {"index_date": "2026-11-30"}  # type: ignore[union-attr]
    assert store.search("corrected pairing")[0].key == first["DOI"].lower()


def test_crash_mid_walk_resumes_from_checkpoint_without_refetching(
    daemon_cache: Services, fake: FakeUpstream
) -> None:
    """A walk that dies after its second page resumes at the third: page 1 and 2 are never asked
    again (the chain's cursors rotate, so the saved one is sent again), and all 90 works of the
    three recorded pages end up stored once; the third page accounts for the 90: complete.
    """
    store = daemon_cache.store
    w, _ = watch_mod.add(store, "crossref_query", {"route": "/funders/100000001/works", "rows": 30})
    serve_chain(fake, "/funders/100000001/works", funder_chain(), 30, 90)

    class Crash(Exception):
        pass

    def crash_after_two(_watch: Any, pages: int) -> None:
        if pages == 2:
            raise Crash

    with pytest.raises(Crash):
        sync_watch(daemon_cache, w, now=T0, on_page=crash_after_two)
    state = get_sync_state(store, f"watch:{w.id}")
    page2_next = corpus_json(f"{FUNDER}-page2.json")["message"]["next-cursor"]
    assert state is not None and state.cursor is not None and state.checkpoint is None
    assert state.cursor["cursor"] == page2_next and state.cursor["pages"] == 2
    assert state.cursor["style"] == "rotating" and (state.seen, state.total) == (60, 90)
    assert fake.count("/funders", service="crossref") == 2

    fake.reset_log()
    resumed = sync_watch(daemon_cache, w, now=T0 + 60)
    assert resumed.resumed and resumed.complete and (resumed.seen, resumed.total) == (90, 90)
    assert [r.query["cursor"] for r in fake.requests] == [page2_next]
    assert resumed.new == 30  # only page 3 was new
    dois = {i["DOI"].lower() for page in funder_chain() for i in page["message"]["items"]}
    assert len(dois) == 90
    assert all(store.get("crossref_work", d) is not None for d in dois)
    state = get_sync_state(store, f"watch:{w.id}")
    assert state is not None and state.cursor is None and state.checkpoint == {"index_date": "2026-11-29"}


def test_expired_cursor_restarts_the_walk(daemon_cache: Services, fake: FakeUpstream) -> None:
    """A resume whose cursor Crossref no longer knows (404) restarts from cursor=* instead of failing."""
    store = daemon_cache.store
    w, _ = watch_mod.add(store, "crossref_query", {"route": "/works", "filter": PRC_FILTER})
    from syncd.store.watches import save_sync_state

    save_sync_state(
        store, f"watch:{w.id}", cursor={"cursor": "long-gone", "since": None, "started_at": T0, "pages": 5}
    )
    report = sync_watch(daemon_cache, w, now=T0)
    assert report.complete and report.resumed and report.stored == 30
    assert [r.query["cursor"] for r in fake.requests][:2] == ["long-gone", "*"]
    assert "cursor expired" in report.notes[0]


def _search_body(hits: list[dict[str, Any]], total: int | None = None) -> dict[str, Any]:
    return {"hits": {"hits": hits, "total": len(hits) if total is None else total}, "aggregations": {}}


def test_zenodo_community_full_walk_then_updated_window(daemon_cache: Services, fake: FakeUpstream) -> None:
    """A Zenodo community watch walks `updated` windows: a first window from 2013 stores the 10
    recorded records, the next pass asks only for [last end, now) and stores the one updated record.
    """
    store = daemon_cache.store
    w, _ = watch_mod.add(store, "zenodo_community", zenodo_spec(community="frictionless"))
    hits = corpus_json("zenodo/search/records_creators-FD-Tester_all-versions_new-api.json")["hits"]["hits"]
    t0_iso = "2026-11-29T10:00:00"
    params = zenodo_params(w.spec, ZENODO_FLOOR, t0_iso, 1, 25)
    assert params == {
        "q": 'updated:["2013-01-01T00:00:00" TO "2026-11-29T10:00:00"}',
        "sort": "updated-asc",
        "size": "25",
        "page": "1",
        "communities": "frictionless",
    }
    fake.set_body("zenodo", "/records?" + urlencode(params), _search_body(hits))
    full = sync_watch(daemon_cache, w, now=T0)
    assert (full.mode, full.requests, full.stored, full.new) == ("full", 1, 10, 10)
    assert store.get("zenodo_record", str(hits[0]["id"])) is not None
    assert get_sync_state(store, f"watch:{w.id}").checkpoint == {"updated": t0_iso}  # type: ignore[union-attr]

    edited = copy.deepcopy(hits[3])
    edited["metadata"]["title"] = "Frictionless Data Test (edited)"
    inc_params = zenodo_params(w.spec, t0_iso, "2026-11-29T11:00:00", 1, 25)
    fake.set_body("zenodo", "/records?" + urlencode(inc_params), _search_body([edited]))
    fake.reset_log()
    inc = sync_watch(daemon_cache, w, now=T0 + 3600)
    assert (inc.mode, inc.requests, inc.stored, inc.changed) == ("incremental", 1, 1, 1)
    assert fake.requests[0].query["q"] == 'updated:["2026-11-29T10:00:00" TO "2026-11-29T11:00:00"}'
    rec = store.get("zenodo_record", str(edited["id"]))
    assert rec is not None and rec.title == "Frictionless Data Test (edited)"


def test_zenodo_window_over_10000_is_split(daemon_cache: Services, fake: FakeUpstream) -> None:
    """A window whose total exceeds Zenodo's 10,000 limit is split in two halves, each walked on its own."""
    store = daemon_cache.store
    w, _ = watch_mod.add(store, "zenodo_query", zenodo_spec(q="climate"))
    hits = corpus_json("zenodo/search/records_creators-FD-Tester_all-versions_new-api.json")["hits"]["hits"]
    start, end = "2026-01-01T00:00:00", "2026-01-03T00:00:00"
    state_now = dt.datetime(2026, 1, 3, tzinfo=dt.UTC).timestamp()
    from syncd.store.watches import save_sync_state

    save_sync_state(store, f"watch:{w.id}", checkpoint={"updated": start})
    fake.set_body(
        "zenodo",
        "/records?" + urlencode(zenodo_params(w.spec, start, end, 1, 25)),
        _search_body(hits[:1], 12_000),
    )
    mid = "2026-01-02T00:00:00"
    fake.set_body(
        "zenodo", "/records?" + urlencode(zenodo_params(w.spec, start, mid, 1, 25)), _search_body(hits[:5])
    )
    fake.set_body(
        "zenodo", "/records?" + urlencode(zenodo_params(w.spec, mid, end, 1, 25)), _search_body(hits[5:])
    )
    report = sync_watch(daemon_cache, w, now=state_now)
    assert report.requests == 3 and report.stored == 10
    assert [r.query["q"] for r in fake.requests] == [
        f'(climate) AND updated:["{start}" TO "{end}"}}',
        f'(climate) AND updated:["{start}" TO "{mid}"}}',
        f'(climate) AND updated:["{mid}" TO "{end}"}}',
    ]


def test_batch_revalidation_uses_fewer_requests_than_one_per_work(
    daemon_cache: Services, fake: FakeUpstream
) -> None:
    """30 stale works are confirmed with one `filter=doi:...&select=DOI,indexed` list request; only the
    one whose `indexed` stamp moved is fetched whole: 2 requests instead of 30.
    """
    store = daemon_cache.store
    w, _ = watch_mod.add(store, "crossref_query", {"filter": PRC_FILTER})
    sync_watch(daemon_cache, w, now=T0)
    items = _prc_items()
    entries = [store.get("crossref_work", i["DOI"].lower()) for i in items]
    assert all(e is not None for e in entries)
    stamps = [{"DOI": i["DOI"], "indexed": i["indexed"]} for i in items]
    moved = dict(items[4])
    moved["indexed"] = {"date-parts": [[2026, 12, 1]], "date-time": "2026-12-01T00:00:00Z"}
    stamps[4] = {"DOI": moved["DOI"], "indexed": moved["indexed"]}
    params = batch_params([e.doi or e.key for e in entries])  # type: ignore[union-attr]
    assert params["select"] == "DOI,indexed" and params["rows"] == "30"
    fake.set_body("crossref", "/works?" + urlencode(params), _work_list(stamps, None))
    fake.set_body(
        "crossref",
        f"/works/{moved['DOI']}",
        {"status": "ok", "message-type": "work", "message-version": "1.0.0", "message": moved},
    )
    fake.reset_log()
    later = T0 + 30 * 86_400
    report = sweep(daemon_cache, 500, now=later + 400 * 86_400)
    assert (report.checked, report.unchanged, report.failed) == (30, 30, 0)  # same content, new stamp
    assert report.requests == 2
    assert fake.count(service="crossref") == 2
    assert fake.count(f"/works/{moved['DOI']}", service="crossref") == 1
    refreshed = store.get("crossref_work", items[0]["DOI"].lower())
    assert refreshed is not None and refreshed.checks == 2 and refreshed.changes == 1


def test_batch_falls_back_to_single_fetch_for_works_the_list_omits(
    daemon_cache: Services, fake: FakeUpstream
) -> None:
    """A stored work missing from the batch answer is revalidated on its own (and its failure counted)."""
    store = daemon_cache.store
    w, _ = watch_mod.add(store, "crossref_query", {"filter": PRC_FILTER})
    sync_watch(daemon_cache, w, now=T0)
    entries = [store.get("crossref_work", i["DOI"].lower()) for i in _prc_items()[:3]]
    params = batch_params([e.key for e in entries])  # type: ignore[union-attr]
    fake.set_body(
        "crossref",
        "/works?" + urlencode(params),
        _work_list([{"DOI": e.key, "indexed": {"date-time": e.upstream_version}} for e in entries[:2]], None),  # type: ignore[union-attr]
    )
    fake.reset_log()
    report = revalidate_works(daemon_cache, entries, revalidate)  # type: ignore[arg-type]
    assert (report.list_requests, report.single_requests, report.unchanged) == (1, 1, 2)
    # the fake has no /works/{doi} for this PRC work: a 404 keeps the stored body (BC-09), counted as failed
    assert report.failed == 1 and report.failures == {"not_found": 1}


def test_doi_watches_are_fetched_through_one_list_request(daemon_cache: Services, fake: FakeUpstream) -> None:
    """Watched DOIs not yet stored arrive through one filter=doi:... list request; a DOI the list does
    not return is asked for singly (and stored as a miss).
    """
    store = daemon_cache.store
    items = _prc_items()[:3]
    for spec in watch_mod.doi_specs([i["DOI"] for i in items] + ["10.1234/not-there"]):
        watch_mod.add(store, "doi", spec)
    group = [i["DOI"].lower() for i in items] + ["10.1234/not-there"]
    fake.set_body(
        "crossref",
        "/works?" + urlencode({"filter": ",".join(f"doi:{d}" for d in group), "rows": "4"}),
        _work_list(items, None),
    )
    reports = sync_all(daemon_cache)
    assert reports[0].requests == 2 and reports[0].new == 3
    assert fake.count("/works/10.1234", service="crossref") == 1
    miss = store.get("crossref_work", "10.1234/not-there")
    assert miss is not None and miss.status == "not_found"
    assert all(get_sync_state(store, f"watch:{w.id}").status == "ok" for w in list_watches(store))  # type: ignore[union-attr]


def test_config_watches_are_added_once(settings: Settings, store: Store, tmp_path: Path) -> None:
    """Watches from the [watch] config table (DOIs, a DOI file, a Crossref ORCID query, a community)
    are added with label `config`, and applying the config again adds nothing.
    """
    doi_file = tmp_path / "dois.txt"
    doi_file.write_text("# lab papers\n10.1101/598821\n\nhttps://doi.org/10.1103/PhysRevC.99.064304\n")
    cfg = Settings(
        database_url=settings.database_url,
        watch={
            "dois": ["10.5281/zenodo.5244404"],
            "doi_files": [str(doi_file)],
            "crossref": [{"orcid": "0000-0002-1825-0097"}],
            "zenodo_communities": ["frictionless"],
        },
    ).watch
    watch_mod.apply_config(store, cfg)
    watch_mod.apply_config(store, cfg)
    watches = list_watches(store)
    assert [(w.kind, watch_mod.describe(w)) for w in watches] == [
        ("doi", "10.5281/zenodo.5244404"),
        ("doi", "10.1101/598821"),
        ("doi", "10.1103/physrevc.99.064304"),
        ("crossref_query", "/works filter=orcid:0000-0002-1825-0097"),
        ("zenodo_community", "community=frictionless"),
    ]
    assert {w.label for w in watches} == {"config"}
    assert json.loads(json.dumps(watches[3].spec))["rows"] == 1000


def test_shutdown_stops_a_walk_at_a_page_boundary(daemon_cache: Services, fake: FakeUpstream) -> None:
    """With the stop flag set (SIGTERM), a walk ends after the current page with its cursor saved,
    and the next pass resumes there.
    """
    from syncd.passes.sync import STOP

    store = daemon_cache.store
    w, _ = watch_mod.add(store, "crossref_query", {"route": "/funders/100000001/works", "rows": 30})
    STOP.set()
    try:
        stopped = sync_watch(daemon_cache, w, now=T0)
    finally:
        STOP.clear()
    assert stopped.complete is False and stopped.pages == 1
    state = get_sync_state(store, f"watch:{w.id}")
    first_next = corpus_json(f"{FUNDER}-star.json")["message"]["next-cursor"]
    assert state is not None and state.cursor is not None and state.cursor["cursor"] == first_next
    assert fake.count("/funders", service="crossref") == 1
