"""The local-first road at its seams: runner + lookups over ``httpx.MockTransport`` for all three clients.

One transport answers Crossref, Zenodo and doi.org from recorded corpus bodies and counts requests, so
each test proves which upstream a lookup asked and how often. Staleness is made with freezegun (the
store, the policy and the budget read ``time.time``), never with sleeps.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from freezegun import freeze_time

from syncd.crossref import lookups as crossref
from syncd.crossref.names import CROSSREF_JOURNAL, CROSSREF_WORK
from syncd.doiorg.names import DOI_RA
from syncd.errors import NotFound, UpstreamRateLimited
from syncd.normalize.doi import parse_doi
from syncd.passes.refresh import revalidate
from syncd.road.services import Services
from syncd.zenodo import lookups as zenodo
from syncd.zenodo.names import ZENODO_RECORD
from syncd.zenodo.params_id import parse_record_ref
from tests.corpus_path import CORPUS
from tests.helpers import MOCK_CROSSREF, MOCK_DOI_ORG, MOCK_ZENODO, mock_services

CROSSREF, ZENODO, DOI_ORG = MOCK_CROSSREF, MOCK_ZENODO, MOCK_DOI_ORG
WORK = "10.1002/jor.1100150407"
WORK_BODY = (CORPUS / "crossref" / "work" / "10.1002_jor.1100150407.json").read_text(encoding="utf-8")
RECORD_BODY = (CORPUS / "zenodo" / "record" / "records-22917909.json").read_text(encoding="utf-8")

Handler = Callable[[httpx.Request], httpx.Response]


class Upstream:
    """A MockTransport handler per host; every request is recorded as ``(host, path)``."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        self.routes: dict[str, Handler] = {}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append((request.url.host, request.url.path))
        return self.routes[request.url.host](request)

    def hosts(self) -> list[str]:
        """The hosts asked, in order."""
        return [h for h, _ in self.requests]


def _crossref(request: httpx.Request) -> httpx.Response:
    if request.url.path == f"/works/{WORK}":
        return httpx.Response(200, text=WORK_BODY, headers={"content-type": "application/json"})
    return httpx.Response(404, text="Resource not found.", headers={"content-type": "text/plain"})


def _zenodo(request: httpx.Request) -> httpx.Response:
    if request.url.path == "/api/records/22917909":
        return httpx.Response(200, text=RECORD_BODY, headers={"content-type": "application/json"})
    return httpx.Response(404, json={"status": 404, "message": "PID does not exist."})


def _doi(request: httpx.Request) -> httpx.Response:
    prefix = request.url.path.removeprefix("/ra/")
    return httpx.Response(200, json=[{"DOI": prefix, "RA": "DataCite"}])


@pytest.fixture
def upstream() -> Upstream:
    """Crossref and Zenodo answer their corpus bodies, doi.org names DataCite for every prefix."""
    up = Upstream()
    up.routes = {CROSSREF: _crossref, ZENODO: _zenodo, DOI_ORG: _doi}
    return up


@pytest.fixture
def svc(tmp_path: Path, upstream: Upstream) -> Iterator[Services]:
    """Services over a fresh SQLite store whose three clients share one MockTransport."""
    with mock_services(tmp_path / "seams.db", upstream) as services:
        yield services


def _later(days: float) -> dt.datetime:
    return dt.datetime.now(dt.UTC) + dt.timedelta(days=days)


def test_a_work_is_fetched_once_then_served_from_the_store(svc: Services, upstream: Upstream) -> None:
    """First lookup asks Crossref (source upstream), the second asks nobody (source store), same body."""
    first = crossref.get_work(svc, parse_doi(WORK))
    second = crossref.get_work(svc, parse_doi(WORK))
    assert upstream.requests == [(CROSSREF, f"/works/{WORK}")]
    assert (first.provenance.source, second.provenance.source) == ("upstream", "store")
    assert second.entry.id == first.entry.id and second.entry.title == first.entry.title
    assert first.entry.title is not None and first.entry.title.startswith("Growth hormone secretagogue")


def test_a_work_past_its_ttl_is_revalidated(svc: Services, upstream: Upstream) -> None:
    """Eight days on (ttl.crossref_work = 7 days) the same lookup asks Crossref again and says upstream."""
    crossref.get_work(svc, parse_doi(WORK))
    with freeze_time(_later(8), tick=True):
        again = crossref.get_work(svc, parse_doi(WORK))
    assert upstream.hosts() == [CROSSREF, CROSSREF]
    assert again.provenance.source == "upstream" and again.provenance.stale is False


def test_a_stale_work_is_answered_stale_when_crossref_fails(svc: Services, upstream: Upstream) -> None:
    """Stale-if-error: past its TTL with Crossref answering 500, the stored work comes back flagged."""
    crossref.get_work(svc, parse_doi(WORK))
    upstream.routes[CROSSREF] = lambda _r: httpx.Response(500, text="boom")
    with freeze_time(_later(8), tick=True):
        stale = crossref.get_work(svc, parse_doi(WORK))
    assert stale.provenance.source == "store-stale" and stale.provenance.stale is True
    assert stale.provenance.upstream_error == "upstream_unavailable"
    assert stale.entry.title is not None and stale.entry.title.startswith("Growth hormone")
    assert svc.store.get(CROSSREF_WORK, WORK).last_error == "upstream_unavailable"  # type: ignore[union-attr]


def test_a_crossref_miss_asks_doi_org_through_the_same_transport(svc: Services, upstream: Upstream) -> None:
    """A DOI Crossref lacks is refused naming the agency doi.org gives; the agency is stored per prefix."""
    with pytest.raises(NotFound) as err:
        crossref.get_work(svc, parse_doi("10.48550/arXiv.1706.03762"))
    assert err.value.reason == "doi_not_found"
    assert err.value.data["registrationAgency"] == "DataCite"
    assert upstream.requests == [(CROSSREF, "/works/10.48550/arXiv.1706.03762"), (DOI_ORG, "/ra/10.48550")]
    assert svc.store.get(DOI_RA, "10.48550").title == "DataCite"  # type: ignore[union-attr]
    with pytest.raises(NotFound):
        crossref.get_work(svc, parse_doi("10.48550/arXiv.1706.03762"))
    assert len(upstream.requests) == 2  # the miss and the agency both answered from the store


def test_a_zenodo_record_is_fetched_once(svc: Services, upstream: Upstream) -> None:
    """A record lookup asks Zenodo once, stores the record and answers the store afterwards."""
    first = zenodo.get_record(svc, parse_record_ref("22917909"))
    second = zenodo.get_record(svc, parse_record_ref("https://zenodo.org/records/22917909"))
    assert upstream.requests == [(ZENODO, "/api/records/22917909")]
    assert (first.provenance.source, second.provenance.source) == ("upstream", "store")
    assert first.entry.kind == ZENODO_RECORD and json.loads(first.entry.body or "{}")["id"] == "22917909"


def test_a_stored_miss_expires_with_the_miss_ttl(svc: Services, upstream: Upstream) -> None:
    """A 404 is stored as a miss for ttl.miss (1 h): answered locally within it, asked again after it.

    The first miss also asks the concept fallback search once (a record id may be a concept whose
    latest version is gone, issue 14.5); that page is stored too, so the second lookup sends nothing.
    """
    assert zenodo.get_record(svc, parse_record_ref("1")).entry.status == "not_found"
    first = len(upstream.requests)
    assert first >= 1 and upstream.requests[0][1].endswith("/records/1")
    assert zenodo.get_record(svc, parse_record_ref("1")).entry.status == "not_found"
    assert len(upstream.requests) == first
    with freeze_time(_later(1 / 12), tick=True):  # two hours on
        zenodo.get_record(svc, parse_record_ref("1"))
    assert len(upstream.requests) > first


def test_revalidate_reports_a_typed_outcome(svc: Services, upstream: Upstream) -> None:
    """Revalidating a stored work: unchanged on the same body, failed with its reason on a 500."""
    stored = crossref.get_work(svc, parse_doi(WORK)).entry
    assert str(revalidate(svc, stored)) == "unchanged"
    upstream.routes[CROSSREF] = lambda _r: httpx.Response(500, text="boom")
    failed = revalidate(svc, stored)
    assert (failed.result.value, failed.reason) == ("failed", "upstream_unavailable")
    assert set(upstream.hosts()) == {CROSSREF}  # the 500 may be retried; nothing else was asked


def test_a_blocked_pool_with_nothing_stored_is_a_declared_error_without_request(
    svc: Services, upstream: Upstream
) -> None:
    """A 429 block on crossref_single longer than the deadline: rate_limited at once, nothing sent."""
    svc.budget.block("crossref_single", 60.0)
    with pytest.raises(UpstreamRateLimited) as err:
        crossref.get_work(svc, parse_doi(WORK))
    assert err.value.reason == "rate_limited"
    with pytest.raises(UpstreamRateLimited):
        crossref.get_entity(svc, CROSSREF_JOURNAL, "0036-8075")  # journals share the works' pool
    assert upstream.requests == []


def test_a_block_on_another_pool_does_not_stop_a_journal_lookup(svc: Services, upstream: Upstream) -> None:
    """A journal lookup consults crossref_single only: a Zenodo block leaves it asking Crossref."""
    svc.budget.block("zenodo_general", 60.0)
    stored, prov = crossref.get_entity(svc, CROSSREF_JOURNAL, "0036-8075")
    assert (stored.status, prov.source) == ("not_found", "upstream")  # the mock knows no journal: a 404 miss
    assert upstream.requests == [(CROSSREF, "/journals/0036-8075")]


def test_a_blocked_pool_answers_the_stale_entry_without_request(svc: Services, upstream: Upstream) -> None:
    """Past its TTL with the pool blocked, the stored work is answered flagged rate_limited, no request."""
    crossref.get_work(svc, parse_doi(WORK))
    with freeze_time(_later(8), tick=True):
        svc.budget.block("crossref_single", 60.0)
        stale = crossref.get_work(svc, parse_doi(WORK))
    assert (stale.provenance.source, stale.provenance.upstream_error) == ("store-stale", "rate_limited")
    assert upstream.requests == [(CROSSREF, f"/works/{WORK}")]
