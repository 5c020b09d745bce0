"""Funders and awards resolved the way Zenodo indexes them (issue 13 kind 5).

Through a real MCP client session over the fake upstream (recorded corpus): a Crossref Funder DOI in
any form becomes the ROR id Zenodo indexes (``01cwqze88``, from the recorded funders vocabulary answer
``funders_q-identifiers.identifier-10.13039-100000002_size-1.json``); an award DOI or URL becomes
Zenodo's award id (``00k4n6c32::101135562``, the entry recorded in ``awards_q-SYMBA_page-1_size-10.json``);
a funder name is ``unknown_funder`` with candidates from ``funders_q-wellcome_page-1_size-3.json``. Funders
and awards are stored entities (kinds ``zenodo_funder`` / ``zenodo_award``): repeats and other forms of
the same id ask nothing, and with Zenodo unreachable the store answers or the answer says it cannot.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from syncd.config import Settings
from syncd.passes.refresh import revalidate
from syncd.registry import hooks_of
from syncd.road.policy import Result
from syncd.road.services import Services
from syncd.zenodo.names import ZENODO_AWARD, ZENODO_FUNDER
from tests.conftest import corpus_json, make_settings
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

pytestmark = pytest.mark.anyio

NIH_ROR = "01cwqze88"
NIH_DOI = "10.13039/100000002"
SYMBA_AWARD = "00k4n6c32::101135562"
WELLCOME = [
    {"name": "Wellcome Collection", "id": "022awwm23"},
    {"name": "Wellcome Trust", "id": "029chgv08"},
    {"name": "Wellcome Library", "id": "05hde1z07"},
]


@pytest.fixture
def settings(fake: FakeUpstream, db_url: str) -> Settings:
    """Roomy Zenodo pools (pacing is tested elsewhere)."""
    roomy = {"per_s": 1000, "burst": 1000, "in_flight": 8}
    return make_settings(fake, db_url, budget={"zenodo_general": roomy, "zenodo_search": roomy})


@pytest.fixture
async def mcp(cache: Services, fake: FakeUpstream) -> AsyncIterator[Client]:
    """One MCP session; every Zenodo search answers the recorded climate page (its ``q`` is logged)."""
    fake.set_body(
        "zenodo",
        "/records",
        corpus_json("zenodo/search/records_q-climate_size-2_sort-bestmatch_new-api.json"),
    )
    async with Client(mcp_server(cache)) as client:
        yield client


def error_data(res: Any) -> dict[str, Any]:
    assert res.is_error is True, res.content[0].text
    return res.structured_content["error"]["data"]


def sent_q(fake: FakeUpstream) -> list[str]:
    """The ``q`` of every Zenodo search request, in order."""
    return [r.query.get("q", "") for r in fake.requests if r.service_path.rstrip("/") == "/records"]


async def test_funder_doi_in_every_form_becomes_the_ror_id_zenodo_indexes(
    mcp: Client, fake: FakeUpstream
) -> None:
    """Bare, doi:, doi.org URL and bare registry number forms of NIH's Funder DOI all filter by
    ``metadata.funding.funder.id:"01cwqze88"``; only the first asks the funders vocabulary.
    """
    forms = [
        NIH_DOI,
        f"https://doi.org/{NIH_DOI}",
        f"doi:{NIH_DOI}",
        "100000002",
        f"HTTPS://DX.DOI.ORG/{NIH_DOI}",
    ]
    for form in forms:
        res = await mcp.call_tool("zenodo_search_records", {"funder": form, "size": 2})
        assert res.is_error is False, res.content[0].text
        assert res.structured_content["effectiveQuery"] == f'metadata.funding.funder.id:"{NIH_ROR}"'
    assert sent_q(fake) == [f'metadata.funding.funder.id:"{NIH_ROR}"']  # one search page, then stored
    assert fake.count("/funders", service="zenodo") == 1
    [vocab] = [r for r in fake.requests if r.service_path == "/funders"]
    assert vocab.query == {"q": f'identifiers.identifier:"{NIH_DOI}"', "size": "1"}


async def test_a_ror_lookup_stores_the_funder_and_its_doi(
    mcp: Client, cache: Services, fake: FakeUpstream
) -> None:
    """``funder=01cwqze88`` fetches /funders/01cwqze88 once and stores it as a ``zenodo_funder`` entity
    carrying its Funder DOI, so the DOI form then resolves from the store with no vocabulary request.
    """
    await mcp.call_tool("zenodo_search_records", {"funder": "https://ror.org/01cwqze88", "size": 2})
    stored = cache.store.get(ZENODO_FUNDER, NIH_ROR)
    assert stored is not None and (stored.status, stored.doi, stored.title) == (
        "ok",
        NIH_DOI,
        "National Institutes of Health",
    )
    res = await mcp.call_tool("zenodo_search_records", {"funder": NIH_DOI, "size": 2})
    assert res.structured_content["effectiveQuery"] == f'metadata.funding.funder.id:"{NIH_ROR}"'
    assert fake.count("/funders", service="zenodo") == 1  # /funders/01cwqze88 only


async def test_an_unknown_ror_id_is_unknown_funder(mcp: Client, fake: FakeUpstream) -> None:
    """The recorded 404 of /funders/0zzzzzz00 is unknown_funder, and no search is sent."""
    data = error_data(await mcp.call_tool("zenodo_search_records", {"funder": "0zzzzzz00"}))
    assert data["reason"] == "unknown_funder"
    assert sent_q(fake) == []


async def test_a_funder_name_is_unknown_funder_with_candidates(mcp: Client, fake: FakeUpstream) -> None:
    """``funder=wellcome`` is never picked: unknown_funder with the three recorded candidates (name, ROR
    id) and matchedTotal 30; no search is sent. zenodo_lookup_vocabulary's funder does the same.
    """
    data = error_data(await mcp.call_tool("zenodo_search_records", {"funder": "wellcome"}))
    assert data["reason"] == "unknown_funder"
    assert data["candidates"] == WELLCOME and data["matchedTotal"] == 30
    assert sent_q(fake) == []
    res = await mcp.call_tool("zenodo_lookup_vocabulary", {"vocabulary": "awards", "funder": "wellcome"})
    assert error_data(res)["candidates"] == WELLCOME
    assert "Wellcome Trust (029chgv08)" in res.content[0].text
    assert fake.count("/funders", service="zenodo") == 1  # the candidates page, stored


async def test_a_non_funder_doi_is_invalid_parameter(mcp: Client) -> None:
    """A DOI outside the Funder Registry (10.3030/...) as funder is refused before any request."""
    data = error_data(await mcp.call_tool("zenodo_search_records", {"funder": "10.3030/101135562"}))
    assert data["reason"] == "invalid_parameter"


async def test_award_doi_and_url_become_zenodos_award_id(
    mcp: Client, cache: Services, fake: FakeUpstream
) -> None:
    """CORDIS DOI 10.3030/101135562 (any form) filters by award id ``00k4n6c32::101135562``,
    resolved through the awards vocabulary's identifiers (one request, then the stored award); the
    CORDIS URL of award 899068 resolves likewise; a bare number stays an award.number match.
    """
    for form in ("10.3030/101135562", "https://doi.org/10.3030/101135562"):
        res = await mcp.call_tool("zenodo_search_records", {"award": form, "size": 2})
        assert res.structured_content["effectiveQuery"] == f'metadata.funding.award.id:"{SYMBA_AWARD}"'
    assert fake.count("/awards", service="zenodo") == 1
    [asked] = [r for r in fake.requests if r.service_path == "/awards"]
    assert asked.query == {"q": 'identifiers.identifier:"10.3030/101135562"', "size": "1"}
    award = cache.store.get(ZENODO_AWARD, SYMBA_AWARD)
    assert award is not None and award.doi == "10.3030/101135562"
    res = await mcp.call_tool(
        "zenodo_search_records", {"award": "https://cordis.europa.eu/projects/899068", "size": 2}
    )
    assert res.structured_content["effectiveQuery"] == 'metadata.funding.award.id:"00k4n6c32::899068"'
    res = await mcp.call_tool("zenodo_search_records", {"award": "101135562", "size": 2})
    assert res.structured_content["effectiveQuery"] == 'metadata.funding.award.number:"101135562"'


async def test_cordis_doi_with_the_awards_vocabulary_down_uses_the_commission_rule(
    mcp: Client, fake: FakeUpstream
) -> None:
    """With /awards failing and nothing stored, a CORDIS DOI still becomes 00k4n6c32::<n> (the
    European Commission, anchors.md parseAwardRef), and the search is still sent to Zenodo.
    """
    fake.fault("refuse", path_prefix="/awards", service="zenodo")
    res = await mcp.call_tool("zenodo_search_records", {"award": "10.3030/101135562", "size": 2})
    assert res.structured_content["effectiveQuery"] == f'metadata.funding.award.id:"{SYMBA_AWARD}"'
    assert fake.count("/awards", service="zenodo") >= 1 and sent_q(fake) == [
        f'metadata.funding.award.id:"{SYMBA_AWARD}"'
    ]


async def test_lookup_vocabulary_resolves_ids_the_same_way(mcp: Client, fake: FakeUpstream) -> None:
    """vocabulary=funders with a Funder DOI URL answers NIH's one entry; vocabulary=awards with the
    award DOI answers the SYMBA award with its id as filter_value.
    """
    funders = await mcp.call_tool(
        "zenodo_lookup_vocabulary", {"vocabulary": "funders", "query": f"https://doi.org/{NIH_DOI}"}
    )
    [nih] = funders.structured_content["entries"]
    assert (nih["filter_param"], nih["filter_value"], nih["label"], nih["funder_doi"], nih["acronym"]) == (
        "funder",
        NIH_ROR,
        "National Institutes of Health",
        NIH_DOI,
        "NIH",
    )
    assert funders.structured_content["total"] == 1
    awards = await mcp.call_tool(
        "zenodo_lookup_vocabulary", {"vocabulary": "grants", "query": "10.3030/101135562"}
    )
    [symba] = awards.structured_content["entries"]
    assert (symba["filter_value"], symba["acronym"], symba["funder_id"], symba["number"]) == (
        SYMBA_AWARD,
        "SYMBA",
        "00k4n6c32",
        "101135562",
    )
    scoped = await mcp.call_tool(
        "zenodo_lookup_vocabulary", {"vocabulary": "awards", "query": "SYMBA", "funder": NIH_DOI}
    )
    asked = [r.query for r in fake.requests if r.service_path == "/awards"]
    assert scoped.is_error is False and asked[-1].get("funders") == NIH_ROR


async def test_offline_the_store_resolves_a_funder_doi_or_says_it_cannot(
    mcp: Client, cache: Services, fake: FakeUpstream
) -> None:
    """Zenodo down: NIH's Funder DOI, stored earlier and now stale, still resolves (marked stale); a
    Funder DOI never resolved (Wellcome Trust's 10.13039/100010269) is upstream_unavailable in
    zenodo_lookup_vocabulary, and the search answers locally saying funder filters are not applied.
    """
    await mcp.call_tool("zenodo_lookup_vocabulary", {"vocabulary": "funders", "query": NIH_DOI})
    cache.settings.ttl.entity = 0.001  # everything stored is now stale
    fake.fault("refuse", service="zenodo")
    again = await mcp.call_tool(
        "zenodo_lookup_vocabulary", {"vocabulary": "funders", "query": f"doi:{NIH_DOI}"}
    )
    assert again.is_error is False, again.content[0].text
    assert again.structured_content["entries"][0]["ror_id"] == NIH_ROR
    assert again.structured_content["cache"]["stale"] is True
    res = await mcp.call_tool(
        "zenodo_lookup_vocabulary", {"vocabulary": "funders", "query": "10.13039/100010269"}
    )
    assert error_data(res)["reason"] == "upstream_unavailable"
    local = await mcp.call_tool("zenodo_search_records", {"funder": "10.13039/100010269"})
    assert local.is_error is False and local.structured_content["local"] is True
    assert "funder" in local.structured_content["notice"]


async def test_offline_name_candidates_come_from_stored_funders(mcp: Client, fake: FakeUpstream) -> None:
    """With Zenodo down, a funder name still gets candidates: the funders stored from an earlier page."""
    await mcp.call_tool("zenodo_lookup_vocabulary", {"vocabulary": "funders", "query": "wellcome", "size": 3})
    fake.fault("refuse", service="zenodo")
    data = error_data(
        await mcp.call_tool("zenodo_lookup_vocabulary", {"vocabulary": "awards", "funder": "Wellcome Trust"})
    )
    assert data["reason"] == "unknown_funder"
    assert {"name": "Wellcome Trust", "id": "029chgv08"} in data["candidates"]


async def test_stored_funders_are_refetched_by_ror_id(
    mcp: Client, cache: Services, fake: FakeUpstream
) -> None:
    """The sweep's refetch of a zenodo_funder entity asks /funders/{ror} and finds it unchanged."""
    assert hooks_of(ZENODO_FUNDER).refetch is not None and hooks_of(ZENODO_AWARD).refetch is not None
    await mcp.call_tool("zenodo_lookup_vocabulary", {"vocabulary": "funders", "query": NIH_DOI})
    entry = cache.store.get(ZENODO_FUNDER, NIH_ROR)
    assert entry is not None
    before = fake.count("/funders/01cwqze88", service="zenodo")
    outcome = revalidate(cache, entry)
    assert outcome.result is Result.UNCHANGED
    assert fake.count("/funders/01cwqze88", service="zenodo") == before + 1
