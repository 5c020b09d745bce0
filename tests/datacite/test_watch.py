"""Watched DataCite queries: ``updated:[A TO B]`` windows walked by cursor through the loopback fake,
full then incremental, resumed after a crash, the watch added through ``syncd watch add``.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from syncd.cli import cli
from syncd.config import Settings, WatchSettings
from syncd.datacite.walk import DATACITE_FLOOR, datacite_params
from syncd.datacite.walk_specs import datacite_spec
from syncd.errors import InvalidInput
from syncd.passes import watches as watch_mod
from syncd.passes.sync import sync_watch
from syncd.registry import open_services
from syncd.road.services import Services
from syncd.store.repo import Store
from syncd.store.watches import get_sync_state
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.conftest import make_settings
from tests.fakeupstream import FakeUpstream

T0 = dt.datetime(2026, 11, 29, 10, 0, tzinfo=dt.UTC).timestamp()
ZENODO = [  # the held records of repository cern.zenodo, by created ascending
    "10.5281/zenodo.48440",
    "10.5281/zenodo.1196821",
    "10.5281/zenodo.3520062",
    "10.5281/zenodo.3520063",
    "10.5281/zenodo.3596961",
]


@pytest.fixture
def walker(fake: FakeUpstream, db_url: str) -> Iterator[Services]:
    """The daemon's view (non-interactive services) over the loopback fake."""
    settings = make_settings(fake, db_url)
    store = Store.open(settings.database_url)
    svc = open_services(settings, store, interactive=False)
    yield svc
    svc.close()
    store.close()


def _dois_requests(fake: FakeUpstream) -> list[dict[str, str]]:
    return [dict(r.query) for r in fake.requests if r.service == "datacite"]


def test_a_full_walk_then_an_incremental_window_asks_only_what_changed(
    walker: Services, fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repository watch (cern.zenodo, ``*``) is walked from 2009 in pages of 2: 3 requests (cursor
    ``1`` then the tokens of ``links.next``) store the 5 held Zenodo records whole; the next pass asks
    only ``updated:[<last end> TO now]``: one request, which stores the one record DataCite changed
    (its new title), the others untouched.
    """
    store = walker.store
    w, _ = watch_mod.add(store, "datacite_query", datacite_spec("*", repository="cern.zenodo", rows=2))
    end = "2026-11-29T10:00:00Z"
    full = sync_watch(walker, w, now=T0)
    assert (full.mode, full.requests, full.pages, full.stored, full.new, full.complete) == (
        "full", 3, 3, 5, 5, True,
    )  # fmt: skip
    sent = _dois_requests(fake)
    assert sent[0]["page[cursor]"] == "1" and len({q["page[cursor]"] for q in sent}) == 3
    assert (
        sent[0]["query"] == f"updated:[{DATACITE_FLOOR} TO {end}]" and sent[0]["client-id"] == "cern.zenodo"
    )
    entry = store.get("datacite_work", "10.5281/zenodo.3520062")
    assert entry is not None and entry.title is not None and entry.title.startswith("Między zagrodą")
    assert get_sync_state(store, f"watch:{w.id}").checkpoint == {"updated": end}  # type: ignore[union-attr]

    record, included = fake.corpus.datacite.records["10.5281/zenodo.1196821"]
    changed = copy.deepcopy(record)
    changed["attributes"]["titles"][0]["title"] = "Renamed at DataCite"
    changed["attributes"]["updated"] = "2026-11-29T10:30:00.000Z"
    monkeypatch.setitem(fake.corpus.datacite.records, "10.5281/zenodo.1196821", (changed, included))
    fake.reset_log()
    inc = sync_watch(walker, w, now=T0 + 3600)
    assert (inc.mode, inc.requests, inc.stored, inc.changed, inc.new) == ("incremental", 1, 1, 1, 0)
    assert _dois_requests(fake)[0]["query"] == f"updated:[{end} TO 2026-11-29T11:00:00Z]"
    renamed = store.get("datacite_work", "10.5281/zenodo.1196821")
    assert renamed is not None and renamed.title == "Renamed at DataCite"


def test_a_walk_that_dies_after_a_page_resumes_at_the_next_token(
    walker: Services, fake: FakeUpstream
) -> None:
    """A walk that crashes after its first page keeps the next page's token and the rows delivered in
    ``sync_state.cursor``; the next pass sends that token (page 1 is never asked again) and stores
    the remaining 3 records: 2 requests instead of 3, complete.
    """
    store = walker.store
    w, _ = watch_mod.add(store, "datacite_query", datacite_spec("*", repository="cern.zenodo", rows=2))

    class Crash(Exception):
        pass

    def crash(_watch: Any, pages: int) -> None:
        if pages == 1:
            raise Crash

    with pytest.raises(Crash):
        sync_watch(walker, w, now=T0, on_page=crash)
    state = get_sync_state(store, f"watch:{w.id}")
    assert state is not None and state.cursor is not None and state.cursor["delivered"] == 2
    saved = state.cursor["token"]
    assert [store.get("datacite_work", d) is not None for d in ZENODO] == [True, True, False, False, False]
    fake.reset_log()
    resumed = sync_watch(walker, w, now=T0 + 60)
    assert resumed.resumed and resumed.complete and (resumed.requests, resumed.new) == (2, 3)
    assert _dois_requests(fake)[0]["page[cursor]"] == saved
    assert all(store.get("datacite_work", d) is not None for d in ZENODO)


def test_a_query_watch_sends_the_query_with_the_window() -> None:
    """A query watch's page: ``(<q>) AND updated:[A TO B]``, the cursor, the page size, the record
    parameters (client, affiliations and publisher as objects) and no sort (a cursor walks by created).
    """
    params = datacite_params(
        datacite_spec("glacier mass balance"), "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", "1"
    )
    assert params == {
        "query": "(glacier mass balance) AND updated:[2026-01-01T00:00:00Z TO 2026-02-01T00:00:00Z]",
        "page[cursor]": "1",
        "page[size]": "100",
        "include": "client",
        "affiliation": "true",
        "publisher": "true",
    }


@pytest.mark.parametrize(
    ("q", "repository"),
    [("", None), ("*", None), ("x updated:[2020 TO 2021]", None), ("glacier", "not a repository")],
)
def test_watch_specs_refused(q: str, repository: str | None) -> None:
    """No query, all of DataCite, a query setting its own updated window, a malformed repository id:
    each refused with invalid_parameter.
    """
    with pytest.raises(InvalidInput) as err:
        datacite_spec(q, repository=repository)
    assert err.value.reason == "invalid_parameter"


def test_syncd_watch_add_then_sync_a_datacite_query(env: Settings, fake: FakeUpstream) -> None:  # noqa: F811
    """``syncd watch add datacite-query '*' CERN.ZENODO`` stores a ``datacite_query`` watch (listed as
    ``q=* repository=cern.zenodo``); ``syncd watch sync`` walks it with the other watches' pass: the
    5 held records in one page of 100, one DataCite request.
    """

    def run(*args: str) -> Any:
        res = CliRunner().invoke(cli, [*args, "--json"], obj={})
        assert res.exit_code == 0, res.output
        return json.loads(res.stdout)

    added = run("watch", "add", "datacite-query", "*", "CERN.ZENODO")
    assert [(a["kind"], a["watch"]) for a in added] == [("datacite_query", "q=* repository=cern.zenodo")]
    fake.reset_log()
    synced = run("watch", "sync")
    assert [(r["kind"], r["stored"], r["requests"], r["complete"]) for r in synced] == [
        ("datacite_query", 5, 1, True)
    ]
    assert fake.count("/dois", service="datacite") == 1


def test_the_config_s_datacite_queries_become_watches(walker: Services) -> None:
    """``watch.datacite_queries`` in the config file adds one ``datacite_query`` watch per query (label
    ``config``), once: applying the same table again adds none.
    """
    config = WatchSettings(datacite_queries=["glacier mass balance"])
    added = watch_mod.apply_config(walker.store, config)
    assert [(w.kind, w.spec["q"], w.label) for w in added] == [
        ("datacite_query", "glacier mass balance", "config")
    ]
    again = watch_mod.apply_config(walker.store, config)
    assert [w.id for w in again] == [w.id for w in added]
