"""The shared real-user-cases.md, each case with the behaviour it asks for (one test per case
not already pinned elsewhere; the others are named in their own tests: BC-01/03/04/05/07/08 in
test_normalize_doi.py, BC-09 in test_store.py, BC-12 in test_normalize_text.py, BC-13 in
test_normalize_crossref_work.py, BC-15/16/17 across test_faults*.py, BC-19 in test_sync.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client, MCPError

from syncd.road.services import Services
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

pytestmark = pytest.mark.anyio


async def call(cache: Services, name: str, args: dict[str, Any]) -> Any:
    async with Client(mcp_server(cache)) as client:
        try:
            return await client.call_tool(name, args)
        except MCPError as exc:  # a protocol-level refusal (never expected here)
            return exc


def reason(res: Any) -> str:
    """The declared reason of an error result (schema refusals included: SEP-1303 tool errors)."""
    assert not isinstance(res, MCPError), res.message
    assert res.is_error is True, res.content[0].text
    return res.structured_content["error"]["data"]["reason"]


async def test_bc16_status_error_body_on_200_is_not_stored(cache: Services, fake: FakeUpstream) -> None:
    """BC-16: a 200 whose JSON says "status": "error" is a failure, never cached."""
    fake.set_body(
        "crossref",
        "/works/10.1101/598821",
        {"status": "error", "message-type": "exception", "message": "Solr returned a partial result set"},
    )
    res = await call(cache, "crossref_get_work", {"doi": "10.1101/598821"})
    assert reason(res) == "malformed_response"
    assert cache.store.get("crossref_work", "10.1101/598821") is None


async def test_bc20_offset_and_rows_caps_are_refused_before_any_request(
    cache: Services, fake: FakeUpstream
) -> None:
    """BC-20: offset past 10,000 and rows past the cap are declared errors, not silently clamped."""
    assert reason(await call(cache, "crossref_search_works", {"query": "ecology", "offset": 20_000})) == (
        "offset_too_large"
    )
    assert reason(await call(cache, "crossref_search_works", {"query": "ecology", "rows": 1000})) == (
        "invalid_arguments"
    )
    assert fake.count(service="crossref") == 0


async def test_bc28_doi_in_zenodo_query_and_unpaired_slash(cache: Services, fake: FakeUpstream) -> None:
    """BC-28: a bare DOI as the query is query_is_identifier; an unpaired / is query_syntax; no request."""
    assert reason(await call(cache, "zenodo_search_records", {"query": "10.5281/zenodo.5244404"})) == (
        "query_is_identifier"
    )
    assert reason(await call(cache, "zenodo_search_records", {"query": "climate/change"})) == "query_syntax"
    assert fake.count(service="zenodo") == 0


async def test_bc29_zenodo_page_size_and_window(cache: Services, fake: FakeUpstream) -> None:
    """BC-29: size above 25 is refused; page x size past 10,000 is result_window_exceeded; no request."""
    assert reason(await call(cache, "zenodo_search_records", {"query": "climate", "size": 26})) == (
        "invalid_arguments"
    )
    assert reason(
        await call(cache, "zenodo_search_records", {"query": "climate", "size": 25, "page": 401})
    ) == ("result_window_exceeded")
    assert fake.count(service="zenodo") == 0


async def test_bc25_concept_doi_resolves_to_the_latest_version(cache: Services) -> None:
    """BC-25: the concept DOI 10.5281/zenodo.591564 answers the latest scikit-learn version, not a miss."""
    res = await call(cache, "zenodo_get_record", {"id": "https://doi.org/10.5281/zenodo.591564"})
    data = res.structured_content
    assert data["found"] is True and data["resolved_from"] == "concept_to_latest"
    assert data["record"]["recid"] == "22705923" and data["record"]["concept_recid"] == "591564"


async def test_bc27_embargoed_files_are_metadata_only(cache: Services) -> None:
    """BC-27: an embargoed record answers its metadata with the embargo date and a metadata-only notice."""
    res = await call(cache, "zenodo_get_record", {"id": "22837418"})
    data = res.structured_content
    assert data["found"] is True
    access = data["record"]["access"]
    assert access["embargo_active"] is True and access["embargo_until"]
    assert "embargo" in data["notice"].lower()


async def test_bc31_legacy_and_rdm_shapes_read_alike(cache: Services) -> None:
    """BC-31: a legacy-shape record (2022) and an RDM-era one both give a title, creators and a DOI."""
    legacy = (await call(cache, "zenodo_get_record", {"id": "7078768"})).structured_content["record"]
    assert legacy["title"] == "Frictionless Data Test Dataset Without Descriptor"
    assert legacy["creators"][0]["name"] == "FD Testing"
    rdm = (await call(cache, "zenodo_get_record", {"id": "5244404"})).structured_content["record"]
    assert rdm["doi"] == "10.5281/zenodo.5244404" and rdm["creator_count"] == 21
