"""``crossref_get_works`` and ``zenodo_read_file`` when the store cannot be written (issue 30 item 5).

Another connection holds SQLite's write lock (``BEGIN IMMEDIATE``), or the database's filesystem is
full (``os.statvfs`` reports no free block, as tests/store/test_store_unwritable.py does). Before: a batch of
5 stale DOIs waited ``busy_timeout`` (10 s) once for the budget and once more per DOI (61 s against a
5 s deadline), and a kept file preview was not served (its read took the write lock to bump the LRU
stamp).

No clock is read: the bound is the work asked of SQLite, every ``BEGIN IMMEDIATE`` of the call with the
``busy_timeout`` it ran under (:func:`tests.store.test_store_unwritable.lock_waits`): few attempts whatever
the number of DOIs, their waits adding up to the call's deadline.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from syncd.config import Settings
from syncd.crossref.lookups_batch import get_works
from syncd.crossref.names import CROSSREF_WORK
from syncd.crossref.tools_batch import item_data
from syncd.registry import open_services
from syncd.road.local_first import PROBE_SHARE
from syncd.road.services import Services
from syncd.store.repo import WRITE_WAIT_FLOOR_S, Store
from syncd.upstream.http import call_deadline
from syncd.zenodo.tools_files import read_file
from tests.conftest import make_settings
from tests.corpus_path import CORPUS
from tests.fakeupstream import FakeUpstream
from tests.store.test_store_unwritable import lock_waits

DEADLINE_S = 5.0
WORKS = {
    "10.1016/j.apsusc.2007.01.131": "RETRACTED: Relative performances of effective medium",
    "10.1101/598821": "Raptor genomes reveal",
    "10.1038/srep16696": "Single-molecule FRET",
    "10.1002/jor.1100150407": "Growth hormone secretagogue",
    "10.1016/j.actao.2019.01.006": "Consistent sorting but contrasting",
}
"""Five recorded works (tests/corpus/crossref/work/) and how their titles begin."""
CSV_KEY = "Intensivregister_Deutschland_Altersgruppen.csv"


def _message(doi: str) -> dict[str, Any]:
    name = doi.replace("/", "_") + ".json"
    message: dict[str, Any] = json.loads((CORPUS / "crossref" / "work" / name).read_text("utf-8"))["message"]
    return message


class Crossref:
    """Crossref's ``/works?filter=doi:...`` answered from the recorded works; requests counted.

    ``on_list``: called as each list request arrives (a test takes the write lock there).
    """

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []
        self.on_list: Callable[[], None] | None = None

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        wanted = request.url.params.get("filter")
        if wanted is None:
            return httpx.Response(404, text="Resource not found.")
        if self.on_list is not None:
            self.on_list()
        items = [_message(k[4:]) for k in wanted.split(",") if k[4:] in WORKS]
        body = {"status": "ok", "message-type": "work-list", "message": {"items": items, "total-results": 5}}
        return httpx.Response(200, json=body)


def _settings(url: str) -> Settings:
    return Settings(
        database_url=url,
        crossref={"base_url": "https://api.crossref.test", "mailto": "ci@example.org"},
        zenodo={"base_url": "https://zenodo.test/api"},
        doi={"base_url": "https://doi.test"},
        deadline_s=DEADLINE_S,
        ttl={"crossref_work": 0.001},  # every stored work is stale at once
    )


@pytest.fixture
def crossref() -> Crossref:
    return Crossref()


@pytest.fixture
def svc(tmp_path: Path, crossref: Crossref) -> Iterator[Services]:
    """Services over an SQLite file, Crossref at the MockTransport seam."""
    settings = _settings(f"sqlite:///{tmp_path / 'batch.db'}")
    store = Store.open(settings.database_url)
    services = open_services(settings, store, transport=httpx.MockTransport(crossref))
    yield services
    services.close()
    store.close()


@pytest.fixture
def held_lock(svc: Services) -> Iterator[sqlite3.Connection]:
    """Another connection holding the database's write lock (``BEGIN IMMEDIATE``) until the test ends."""
    holder = sqlite3.connect(str(svc.store.engine.url.database), isolation_level=None)
    yield holder
    if holder.in_transaction:
        holder.execute("ROLLBACK")
    holder.close()


def _full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.statvfs

    def full(path: str) -> os.statvfs_result:
        st = real(path)
        return os.statvfs_result((st.f_bsize, st.f_frsize, st.f_blocks, 0, 0, *tuple(st)[5:]))

    monkeypatch.setattr(os, "statvfs", full)


def _items(svc: Services) -> list[dict[str, Any]]:
    with call_deadline(DEADLINE_S):
        return [item_data(i) for i in get_works(svc, list(WORKS)).items]


def test_five_stale_dois_under_a_held_lock_answer_within_the_deadline(
    svc: Services, crossref: Crossref, held_lock: sqlite3.Connection
) -> None:
    """5 stored, stale works; another process holds the write lock: one lock attempt for the whole
    call (the probe, waiting at most half the deadline), no request, every work answered from the
    store flagged stale with its recorded title.

    Before: 6 lock attempts of busy_timeout (10 s) each, 61 s for a 5 s deadline.
    """
    _items(svc)  # stored
    sent = len(crossref.requests)
    held_lock.execute("BEGIN IMMEDIATE")
    with lock_waits(svc.store) as waits:
        items = _items(svc)
    assert len(waits) == 1 and waits[0] <= DEADLINE_S * PROBE_SHARE * 1000, waits
    assert len(crossref.requests) == sent
    for item, (doi, title) in zip(items, WORKS.items(), strict=True):
        assert item["doi"].lower() == doi and item["title"].startswith(title)
        assert item["cache"]["source"] == "store-stale"
        assert item["cache"]["upstream_error"] == "store_unavailable"
    assert items[0]["flags"] == ["retracted"]


def test_five_new_dois_under_a_held_lock_are_declared_failures_at_once(
    svc: Services, crossref: Crossref, held_lock: sqlite3.Connection
) -> None:
    """Nothing stored, write lock held: one bounded lock attempt, no request (the budget lives in the
    store), each DOI an item with reason store_unavailable whose message names the lock, counted failed.
    """
    held_lock.execute("BEGIN IMMEDIATE")
    with lock_waits(svc.store) as waits:
        items = _items(svc)
    assert len(waits) == 1 and waits[0] <= DEADLINE_S * PROBE_SHARE * 1000
    assert crossref.requests == []
    assert [i["reason"] for i in items] == ["store_unavailable"] * 5
    assert all(i["found"] is False and "write lock" in i["message"] for i in items), items[0]["message"]


def test_a_lock_taken_during_the_call_costs_one_wait_per_group_not_per_doi(
    svc: Services, crossref: Crossref, held_lock: sqlite3.Connection
) -> None:
    """The lock is free at the probe and taken by another process while the list request is out: the
    five works are answered from the list answer (titles as recorded), marked not stored
    (``stored: false``, ``store_error``); the call's lock waits are the probe, the budget's take and
    release and one transaction for the group, all bounded by what was left of the deadline.
    """
    crossref.on_list = lambda: held_lock.execute("BEGIN IMMEDIATE")
    with lock_waits(svc.store) as waits:
        items = _items(svc)
    # probe, budget take, budget release (waits out the deadline's rest), the group's one transaction
    assert len(waits) == 4 and max(waits) <= DEADLINE_S * 1000, waits
    assert waits[-1] == int(WRITE_WAIT_FLOOR_S * 1000)  # the deadline spent: the floor, never busy_timeout
    assert len(crossref.requests) == 1
    for item, title in zip(items, WORKS.values(), strict=True):
        assert item["found"] is True and item["title"].startswith(title), item
        assert item["cache"]["source"] == "upstream"
        assert item["cache"]["stored"] is False and item["cache"]["store_error"] == "store_unavailable"
    held_lock.execute("ROLLBACK")
    assert all(svc.store.get(CROSSREF_WORK, doi) is None for doi in WORKS)  # nothing half-stored


def test_five_stale_dois_on_a_full_disk_take_no_lock(
    svc: Services, crossref: Crossref, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Full disk: no write lock even tried, no request, every stored work answered stale."""
    _items(svc)
    sent = len(crossref.requests)
    _full_disk(monkeypatch)
    with lock_waits(svc.store) as waits:
        items = _items(svc)
    assert waits == [] and len(crossref.requests) == sent
    assert [i["cache"]["source"] for i in items] == ["store-stale"] * 5
    assert items[1]["title"].startswith("Raptor genomes")


# --- zenodo_read_file: the kept preview -------------------------------------------------------------


@pytest.fixture
def zenodo_svc(fake: FakeUpstream, tmp_path: Path) -> Iterator[Services]:
    """Services over the loopback fake upstream, the CSV of record 22917909 read once (preview kept)."""
    settings = make_settings(fake, f"sqlite:///{tmp_path / 'preview.db'}", deadline_s=DEADLINE_S)
    store = Store.open(settings.database_url)
    services = open_services(settings, store)
    first = read_file(services, "22917909", CSV_KEY, max_bytes=256)
    assert not first.is_error and (first.structured_content or {})["cache"]["source"] == "upstream"
    yield services
    services.close()
    store.close()


def _file_requests(fake: FakeUpstream) -> int:
    return sum(1 for r in fake.requests if r.service == "zenodo" and "/files/" in r.service_path)


def _preview_served(svc: Services, fake: FakeUpstream) -> dict[str, Any]:
    before = _file_requests(fake)
    with call_deadline(DEADLINE_S):
        res = read_file(svc, "22917909", CSV_KEY, max_bytes=256)
    data: dict[str, Any] = res.structured_content or {}
    assert not res.is_error, data
    assert _file_requests(fake) == before  # from the kept preview
    assert data["cache"]["source"] == "store"
    return data


def test_kept_preview_is_served_under_a_held_lock(zenodo_svc: Services, fake: FakeUpstream) -> None:
    """Write lock held by another connection: the kept CSV preview is answered from the store (its
    first line the recorded header), the LRU bump given up after one floor-bounded wait.

    Before: the read waited busy_timeout for the lock and the call failed store_unavailable.
    """
    holder = sqlite3.connect(str(zenodo_svc.store.engine.url.database), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with lock_waits(zenodo_svc.store) as waits:
            data = _preview_served(zenodo_svc, fake)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert waits == [int(WRITE_WAIT_FLOOR_S * 1000)]
    assert data["text"].startswith("datum,bundesland_id,bundesland_name,altersgruppe_0_bis_17")


def test_kept_preview_is_served_on_a_full_disk(
    zenodo_svc: Services, fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Full disk: the kept preview is answered, no write lock tried."""
    _full_disk(monkeypatch)
    with lock_waits(zenodo_svc.store) as waits:
        data = _preview_served(zenodo_svc, fake)
    assert waits == []
    assert data["text"].startswith("datum,bundesland_id,bundesland_name,altersgruppe_0_bis_17")
