"""``datacite_trace_relations`` hydration (issue 43): nodes are filled through ``GET /dois?ids=…`` as the
contract says (10 DOIs a request, the node fields only), through the loopback fake over the recorded
records, and a DOI holding a comma goes through a ``doi:("…")`` query instead.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from syncd.datacite.queries_trace import HYDRATE_FIELDS, hydrate_params
from syncd.road.services import Services
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

ROOT = "10.5281/zenodo.3520062"
VERSION = "10.5281/zenodo.3520063"


@pytest.mark.anyio
async def test_trace_hydrates_the_version_node_through_one_ids_request(
    cache: Services, fake: FakeUpstream
) -> None:
    """Root 10.5281/zenodo.3520062 (HasVersion 10.5281/zenodo.3520063, both recorded) traced through the
    loopback fake: the version node is hydrated from one ``ids=10.5281/zenodo.3520063`` request with the
    contract's ``fields[dois]`` and ``page[size]=10``: a DataCite DOI of cern.zenodo, its recorded Polish
    title, Text, 2019; no ``query=doi:`` request asks for it.
    """
    async with Client(mcp_server(cache)) as client:
        result = await client.call_tool("datacite_trace_relations", {"doi": ROOT})
    data: dict[str, Any] = dict(result.structured_content or {})
    node = next(n for n in data["nodes"] if n["id"] == VERSION)
    assert node == {
        "id": VERSION,
        "idType": "DOI",
        "depth": 1,
        "hydrated": True,
        "isDataCiteDoi": True,
        "title": "Między zagrodą a boiskiem. Studium aktywności wiejskich klubów sportowych",
        "resourceTypeGeneral": "Text",
        "publicationYear": 2019,
        "repositoryId": "cern.zenodo",
    }
    dois = [r.query for r in fake.requests if r.service == "datacite" and r.service_path == "/dois"]
    assert [q for q in dois if "ids" in q] == [
        {
            "ids": VERSION,
            "sort": "-created",
            "fields[dois]": HYDRATE_FIELDS,
            "affiliation": "true",
            "publisher": "true",
            "page[size]": "10",
        }
    ]
    assert not any(VERSION in q.get("query", "") and q["query"].startswith("doi:") for q in dois)


def test_hydration_params_send_a_comma_doi_as_a_query_and_cap_a_batch_at_ten() -> None:
    """``ids=`` lists comma-free DOIs joined by commas; a DOI holding a comma (``ids=`` would split it)
    makes the batch a ``doi:("…" OR "…")`` query with the same fields; 11 DOIs are refused (ValueError).
    """
    plain = hydrate_params(["10.5061/dryad.8515", "10.1371/journal.ppat.1000446"])
    assert plain["ids"] == "10.5061/dryad.8515,10.1371/journal.ppat.1000446" and "query" not in plain
    comma = hydrate_params(["10.5061/dryad.8515", "10.1000/a,b"])
    assert "ids" not in comma and comma["query"] == 'doi:("10.5061/dryad.8515" OR "10.1000/a,b")'
    assert comma["fields[dois]"] == HYDRATE_FIELDS and comma["page[size]"] == "10"
    with pytest.raises(ValueError, match="at most 10"):
        hydrate_params([f"10.5061/dryad.{n}" for n in range(11)])
