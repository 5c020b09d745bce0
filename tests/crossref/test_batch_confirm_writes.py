"""Batch revalidation confirms a list request's unchanged works in one write (issue 28 item 6).

``benchmarks/bench_reval.py`` measured ``syncd cache refresh --stale`` of 1,000 unchanged works: 20 list
requests, and before this one write transaction per confirmed work (1,000 ``BEGIN IMMEDIATE``, about
0.76 s of the sweep's 2.45 s). The works are recorded ones (tests/corpus/crossref/work/) that the
loopback fake answers in a ``filter=doi:...&select=DOI,indexed`` list with their stamps unchanged.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import event

from syncd.config import Settings
from syncd.crossref.lookups import get_work
from syncd.normalize.doi import parse_doi
from syncd.passes.refresh import sweep
from syncd.registry import open_services
from syncd.road.services import Services
from syncd.store.repo import Store
from tests.conftest import make_settings
from tests.fakeupstream import FakeUpstream

WORKS = {
    "10.1101/598821": "Raptor genomes reveal",
    "10.1038/srep16696": "Single-molecule FRET",
    "10.1002/jor.1100150407": "Growth hormone secretagogue",
    "10.1016/j.actao.2019.01.006": "Consistent sorting but contrasting",
}
"""Four recorded works and how their titles begin."""
WIDE = {p: {"per_s": 100, "burst": 100, "in_flight": 5} for p in ("crossref_list", "crossref_single")}
UPDATE_VALIDATIONS = re.compile(r"^\s*UPDATE validations\b", re.IGNORECASE)


@pytest.fixture
def svc(fake: FakeUpstream, db_url: str) -> Iterator[Services]:
    settings: Settings = make_settings(fake, db_url, budget=WIDE)
    store = Store.open(settings.database_url)
    services = open_services(settings, store, interactive=False)
    yield services
    services.close()
    store.close()


def test_a_list_request_confirms_its_unchanged_works_in_one_update(svc: Services, fake: FakeUpstream) -> None:
    """4 stored works past their lifetime, the list answering their stamps unchanged: the sweep sends 1
    list request and confirms all 4 with one ``UPDATE validations`` (before: 4, one write transaction
    per work); each is checked twice, changed never, validated anew, its body untouched, and the last
    error one of them carried is cleared.
    """
    store = svc.store
    for doi, title in WORKS.items():
        got = get_work(svc, parse_doi(doi))
        assert got.entry is not None and (got.entry.title or "").startswith(title)
    before = {doi: store.get("crossref_work", doi) for doi in WORKS}
    errored = before["10.1038/srep16696"]
    assert errored is not None
    store.mark_error(errored.id, "upstream_unavailable")
    updates: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if UPDATE_VALIDATIONS.match(statement):
            updates.append(statement)

    fake.reset_log()
    event.listen(store.engine, "before_cursor_execute", seen)
    try:
        report = sweep(svc, 100, now=time.time() + 8 * 86_400)
    finally:
        event.remove(store.engine, "before_cursor_execute", seen)
    assert (report.checked, report.unchanged, report.changed, report.failed) == (4, 4, 0, 0)
    assert report.requests == 1 == fake.count(service="crossref") == fake.count("/works", service="crossref")
    assert len(updates) == 1, updates
    for doi, old in before.items():
        new = store.get("crossref_work", doi)
        assert old is not None and new is not None
        assert (new.checks, new.changes, new.last_error) == (2, old.changes, None)
        assert new.validated_at > old.validated_at
        assert (new.body, new.content_hash, new.fetched_at) == (old.body, old.content_hash, old.fetched_at)


def test_confirming_no_entry_writes_nothing(svc: Services) -> None:
    """``mark_validated_many([])`` opens no write transaction (a list that confirmed none of its works)."""
    statements: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        statements.append(statement)

    event.listen(svc.store.engine, "before_cursor_execute", seen)
    try:
        svc.store.mark_validated_many([])
    finally:
        event.remove(svc.store.engine, "before_cursor_execute", seen)
    assert statements == []
