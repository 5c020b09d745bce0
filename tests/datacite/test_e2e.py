"""The DataCite tools through a real MCP client session against the loopback fake upstream.

From upstream, then from the store, then with the fake stopped (every upstream down): the stored
record and page come back flagged stale, the citation is still rendered locally; every answer is
checked against its tool's outputSchema (the suite's autouse schema check).
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from syncd.road.services import Services
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

pytestmark = pytest.mark.anyio


async def _sc(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert result.structured_content is not None, tool
    return result.structured_content


async def test_the_datacite_tools_online_stored_and_offline(
    cache: Services, fake: FakeUpstream, injected_clock: Any
) -> None:
    """dryad.234 (the anchor's recorded list record): upstream, then store, then stale with the fake
    down; the glacier search and repository pages likewise; the APA citation rendered offline; a
    Crossref DOI is the typed miss; the reference table needs no upstream.
    """
    async with Client(mcp_server(cache)) as client:
        first = await _sc(client, "datacite_get_work", {"doi": "https://doi.org/10.5061/DRYAD.234"})
        assert first["titles"][0]["title"] == "Data from: Towards a worldwide wood economics spectrum"
        assert first["counts"]["citationCount"] == 264 and first["cache"]["source"] == "upstream"
        again = await _sc(client, "datacite_get_work", {"doi": "10.5061/dryad.234"})
        assert again["cache"]["source"] == "store"
        works = await _sc(client, "datacite_search_works", {"text": "glacier", "limit": 3})
        assert works["totalCount"] == 61386 and len(works["works"]) == 3
        repos = await _sc(client, "datacite_search_repositories", {"query": "glacier"})
        assert repos["repositories"][0]["repositoryId"] == "ethz.wgms"
        miss = await _sc(client, "datacite_get_work", {"doi": "10.1101/598821"})
        assert (miss["found"], miss["missReason"], miss["registrationAgency"]) == (
            False,
            "other_agency",
            "Crossref",
        )
        reference = await _sc(client, "datacite_list_reference", {"topic": "resource_types"})
        assert len(reference["entries"]) == 34
        requests = fake.count(service="datacite")
        injected_clock.advance(cache.settings.ttl.search + cache.settings.ttl.datacite + 60)
        fake.stop()
        stale = await _sc(client, "datacite_get_work", {"doi": "10.5061/dryad.234"})
        assert stale["cache"]["stale"] is True and stale["counts"]["citationCount"] == 264
        cited = await _sc(client, "datacite_get_citation", {"doi": "10.5061/dryad.234"})
        assert cited["renderedLocally"] is True and cited["citation"].startswith("Zanne, A. E.")
        offline = await _sc(client, "datacite_search_works", {"text": "glacier", "limit": 3})
        assert offline["cache"]["stale"] is True and offline["totalCount"] == 61386
        down = await _sc(client, "datacite_get_work", {"doi": "10.48550/arxiv.1902.02534"})
        assert down["error"]["data"]["reason"] == "upstream_unavailable"
    assert requests == 4  # the record, the miss's page, the search and the repositories page


async def test_relations_of_a_dryad_dataset(cache: Services, fake: FakeUpstream) -> None:
    """10.5061/dryad.8515: its own IsCitedBy of 10.1371/journal.ppat.1000446 (metadata) merged with the
    recorded Event Data (is-cited-by, is-referenced-by, is-supplement-to, source datacite-crossref):
    three edges between two nodes; relation_types=[Cites] keeps none of the root's own assertions but
    admits what points at it by the inverse type (nothing here), so Event Data is all that is left.
    """
    async with Client(mcp_server(cache)) as client:
        data = await _sc(client, "datacite_trace_relations", {"doi": "10.5061/dryad.8515"})
        edges = {(e["relationType"], tuple(e["sources"])) for e in data["edges"]}
        assert edges == {
            ("IsCitedBy", ("metadata", "event_data")),
            ("IsReferencedBy", ("event_data",)),
            ("IsSupplementTo", ("event_data",)),
        }
        assert [n["id"] for n in data["nodes"]] == ["10.5061/dryad.8515", "10.1371/journal.ppat.1000446"]
        assert data["root"]["isDataCiteDoi"] is True and data["rootCounts"]["partCount"] == 2
        assert data["coverage"]["eventData"] == {
            "status": "ok",
            "scope": "both_sides",
            "total": 3,
            "fetched": 3,
            "kept": 3,
        }
        narrowed = await _sc(
            client, "datacite_trace_relations", {"doi": "10.5061/dryad.8515", "relation_types": ["Cites"]}
        )
        assert narrowed["edges"] == [] and narrowed["coverage"]["ownMetadata"]["edgeCount"] == 0
