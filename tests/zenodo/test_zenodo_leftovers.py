"""Issue 13 leftovers: search filters checked against Zenodo's stored resource-type vocabulary (kind 8)
and the funder filter applied offline from the stored records' funding (kind 9).

Through a real MCP client session over the fake upstream (recorded corpus). Stored records: 5244404 (no
funding), 1241 (funded by the European Commission, ROR ``00k4n6c32``), 22705923 (scikit-learn, no
funding) and the two SYMBA reports of the recorded climate search (``16537543``, ``16537726``, both
funded by the European Commission).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from syncd.config import Settings
from syncd.road.services import Services
from tests.conftest import corpus_json, make_settings
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

pytestmark = pytest.mark.anyio

EC_ROR = "00k4n6c32"
NIH_DOI = "10.13039/100000002"
CLIMATE = "zenodo/search/records_q-climate_size-2_sort-bestmatch_new-api.json"
OFFLINE_HEAD = (
    "Zenodo could not be used (upstream_unavailable); these are {n} matching records from syncd's local "
    "mirror (full-text index over stored titles, creators, descriptions and keywords), not Zenodo's search."
)

# A refreshed vocabulary as Zenodo's /vocabularies/resourcetypes pages carry it: two ids the recorded
# records carry and one Zenodo could add later (not in the built-in table of 43).
VOCABULARY: dict[str, Any] = {
    "hits": {
        "total": 3,
        "hits": [
            {
                "id": "publication-registeredreport",
                "title": {"en": "Registered report"},
                "props": {"type": "publication", "subtype": "publication-registeredreport"},
            },
            {
                "id": "publication-deliverable",
                "title": {"de": "Projektergebnis", "en": "Project deliverable"},
                "props": {"type": "publication", "subtype": "publication-deliverable"},
            },
            {"id": "dataset", "title": {"de": "Datensatz", "en": "Dataset"}, "props": {"type": "dataset"}},
        ],
    }
}


@pytest.fixture
def settings(fake: FakeUpstream, db_url: str) -> Settings:
    """Roomy Zenodo pools (pacing is tested elsewhere)."""
    roomy = {"per_s": 1000, "burst": 1000, "in_flight": 8}
    return make_settings(fake, db_url, budget={"zenodo_general": roomy, "zenodo_search": roomy})


@pytest.fixture
async def mcp(cache: Services, fake: FakeUpstream) -> AsyncIterator[Client]:
    """One MCP session; every Zenodo search answers the recorded climate page."""
    fake.set_body("zenodo", "/records", corpus_json(CLIMATE))
    async with Client(mcp_server(cache)) as client:
        yield client


def asked_q(fake: FakeUpstream) -> list[str]:
    """The ``q`` of every search request Zenodo received, in order."""
    return [r.query.get("q", "") for r in fake.requests if r.service_path.rstrip("/") == "/records"]


def reason(res: Any) -> tuple[str, str]:
    """``(reason, message)`` of an error answer."""
    assert res.is_error is True
    err = res.structured_content["error"]
    return err["data"]["reason"], err["message"]


async def test_resource_type_is_checked_against_the_built_in_table_until_one_is_stored(
    mcp: Client, fake: FakeUpstream
) -> None:
    """Nothing stored: "software" is a built-in id and goes out as a props.type filter, and the refreshed
    vocabulary's new id is refused (the built-in table does not hold it).
    """
    res = await mcp.call_tool("zenodo_search_records", {"resource_type": "software"})
    assert res.is_error is False
    assert asked_q(fake)[-1] == 'metadata.resource_type.props.type:"software"'
    refused = await mcp.call_tool("zenodo_search_records", {"resource_type": "publication-registeredreport"})
    assert reason(refused) == ("invalid_parameter", "unknown resource_type 'publication-registeredreport'")


async def test_resource_type_is_checked_against_the_stored_vocabulary(
    mcp: Client, fake: FakeUpstream
) -> None:
    """Once Zenodo's vocabulary is stored (here by a resource_types lookup), a search filter is checked
    against it: its new id (and its label) pass as a subtype filter, an id it does not list ("software")
    is invalid_parameter naming the stored vocabulary, and the check asks Zenodo nothing more.
    """
    fake.set_body("zenodo", "/vocabularies/resourcetypes?page=1&size=25", VOCABULARY)
    listed = await mcp.call_tool("zenodo_lookup_vocabulary", {"vocabulary": "resource_types"})
    assert listed.structured_content["total"] == 3
    for given in (
        "publication-registeredreport",
        "Registered report",
        "publication::publication-registeredreport",
    ):
        res = await mcp.call_tool("zenodo_search_records", {"query": "climate", "resource_type": given})
        assert res.is_error is False, res.content[0].text
        assert asked_q(fake)[-1] == '(climate) AND metadata.resource_type.id:"publication-registeredreport"'
    both = await mcp.call_tool(
        "zenodo_search_records", {"resource_type": ["dataset", "Project deliverable"], "size": 2}
    )
    assert both.is_error is False
    assert asked_q(fake)[-1] == (
        '(metadata.resource_type.props.type:"dataset" OR metadata.resource_type.id:"publication-deliverable")'
    )
    refused = await mcp.call_tool("zenodo_search_records", {"resource_type": "software"})
    assert reason(refused) == (
        "invalid_parameter",
        "unknown resource_type 'software' (not in Zenodo's stored resource-type vocabulary)",
    )
    assert fake.count("/vocabularies/resourcetypes", service="zenodo") == 1


async def test_offline_the_stored_vocabulary_still_checks_resource_types(
    mcp: Client, fake: FakeUpstream
) -> None:
    """With Zenodo refusing connections, the stored vocabulary still decides: its new id is accepted (a
    local answer), "software" is refused.
    """
    fake.set_body("zenodo", "/vocabularies/resourcetypes?page=1&size=25", VOCABULARY)
    await mcp.call_tool("zenodo_lookup_vocabulary", {"vocabulary": "resource_types"})
    fake.fault("refuse", service="zenodo")
    local = await mcp.call_tool("zenodo_search_records", {"resource_type": "publication-registeredreport"})
    assert local.is_error is False and local.structured_content["local"] is True
    assert local.structured_content["total"] == 0
    refused = await mcp.call_tool("zenodo_search_records", {"resource_type": "software"})
    assert reason(refused)[0] == "invalid_parameter"


async def _store_records(mcp: Client) -> None:
    """Store 5244404, 1241 and 22705923 (record GETs) and the two SYMBA reports (the climate search)."""
    for recid in ("5244404", "1241", "22705923"):
        assert (await mcp.call_tool("zenodo_get_record", {"id": recid})).structured_content["found"] is True
    found = await mcp.call_tool("zenodo_search_records", {"query": "climate", "size": 2})
    assert [h["recid"] for h in found.structured_content["hits"]] == ["16537543", "16537726"]


def hits(res: Any) -> list[tuple[str, str]]:
    """``(recid, publication_date)`` of an answer's hits."""
    assert res.is_error is False, res.content[0].text
    return [(h["recid"], h["publication_date"]) for h in res.structured_content["hits"]]


EC_FUNDED = [("16537726", "2025-07-28"), ("16537543", "2025-07-28"), ("1241", "2012-04-01")]


async def test_offline_a_ror_funder_is_applied_to_the_stored_funding(mcp: Client, fake: FakeUpstream) -> None:
    """Zenodo down: of the 5 stored records, the funder filter (a ROR id or ROR URL) keeps the 3 whose
    metadata.funding names the European Commission, newest first; the notice says it was applied. Other
    filters that need Zenodo (community, file_type) are named as not applied.
    """
    await _store_records(mcp)
    fake.fault("refuse", service="zenodo")
    every = await mcp.call_tool("zenodo_search_records", {})
    assert hits(every) == [
        ("22705923", "2026-09-11"),
        *EC_FUNDED[:2],
        ("5244404", "2021-08-18"),
        EC_FUNDED[2],
    ]
    res = await mcp.call_tool("zenodo_search_records", {"funder": EC_ROR})
    assert hits(res) == EC_FUNDED
    assert res.structured_content["notice"] == (
        OFFLINE_HEAD.format(n=3)
        + " The funder filter is applied to the stored records' funding (ROR id 00k4n6c32)."
    )
    mixed = await mcp.call_tool(
        "zenodo_search_records",
        {"funder": f"https://ror.org/{EC_ROR}", "community": "zenodo", "file_type": "csv"},
    )
    assert hits(mixed) == EC_FUNDED
    assert mixed.structured_content["notice"] == (
        OFFLINE_HEAD.format(n=3)
        + " The funder filter is applied to the stored records' funding (ROR id 00k4n6c32). Not applied "
        "offline: community=zenodo, file_type=csv; the hits may include records these filters would "
        "exclude. Call again when Zenodo answers for a filtered search."
    )
    climate = await mcp.call_tool("zenodo_search_records", {"query": "climate", "funder": EC_ROR})
    assert hits(climate) == [("16537543", "2025-07-28"), ("16537726", "2025-07-28")]


async def test_offline_a_funder_doi_is_applied_when_stored_and_named_when_not(
    mcp: Client, fake: FakeUpstream
) -> None:
    """Zenodo down: the European Commission's Funder DOI (no funder entity stored) cannot be mapped to a
    ROR id, so all 5 records come back and the notice names that funder; NIH's Funder DOI, stored by an
    earlier lookup as ROR 01cwqze88, is applied: none of the stored records is NIH-funded.
    """
    await _store_records(mcp)
    await mcp.call_tool("zenodo_lookup_vocabulary", {"vocabulary": "funders", "query": NIH_DOI})
    fake.fault("refuse", service="zenodo")
    res = await mcp.call_tool("zenodo_search_records", {"funder": "10.13039/501100000780"})
    assert len(hits(res)) == 5
    assert res.structured_content["notice"] == (
        OFFLINE_HEAD.format(n=5)
        + " Not applied offline: funder=10.13039/501100000780 (no stored funder gives its ROR id); the "
        "hits may include records these filters would exclude. Call again when Zenodo answers for a "
        "filtered search."
    )
    nih = await mcp.call_tool("zenodo_search_records", {"funder": f"doi:{NIH_DOI}"})
    assert hits(nih) == []
    assert nih.structured_content["notice"] == (
        OFFLINE_HEAD.format(n=0)
        + " The funder filter is applied to the stored records' funding (ROR id 01cwqze88)."
    )
