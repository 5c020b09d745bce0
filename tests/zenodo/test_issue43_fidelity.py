"""Issue 43, Zenodo: the remaining value differences from the anchor server (contract fidelity, round 3).

Through a real MCP client session over the loopback fake upstream replaying the recorded corpus: the
guidance for a DOI registered elsewhere names the DOI without the sentence's period glued to it, and a
``zenodo_list_versions`` page past the last one is the series' empty page with its notice even when the
record itself cannot be read.
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

PAST_END = "zenodo/versions/records-22705923-versions_page-3_size-25_past-end.json"
"""Zenodo's recorded answer for page 3 (size 25) of the 47-version scikit-learn series."""


@pytest.fixture
def settings(fake: FakeUpstream, db_url: str) -> Settings:
    """Roomy Zenodo pools (pacing is tested elsewhere) and a 30 s deadline (the claims are values)."""
    roomy = {"per_s": 1000, "burst": 1000, "in_flight": 8}
    s = make_settings(fake, db_url, budget={"zenodo_general": roomy, "zenodo_search": roomy})
    s.deadline_s = 30.0
    return s


@pytest.fixture
async def mcp(cache: Services) -> AsyncIterator[Client]:
    """One MCP client session per test."""
    async with Client(mcp_server(cache)) as client:
        yield client


async def _ok(mcp: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    res = await mcp.call_tool(tool, args)
    assert res.is_error is False, res.content[0].text
    return dict(res.structured_content or {})


@pytest.mark.parametrize("tool", ["zenodo_get_record", "zenodo_list_versions"])
async def test_guidance_names_the_doi_without_the_pasted_period(
    mcp: Client, fake: FakeUpstream, tool: str
) -> None:
    """``10.1038/nature12373.`` (a pasted sentence's period) misses as given and stripped (two searches):
    the guidance reads ``DOI 10.1038/nature12373 is not registered to a Zenodo record``, the doi.org URL
    and the Crossref call name the stripped DOI, as the anchor's guidance does.
    """
    fake.set_body("zenodo", "/records", {"hits": {"hits": [], "total": 0}})
    answer = await _ok(mcp, tool, {"id": "10.1038/nature12373."})
    assert (answer["found"], answer["miss_kind"]) == (False, "not_on_zenodo")
    assert answer["guidance"].startswith(
        "DOI 10.1038/nature12373 is not registered to a Zenodo record. It resolves elsewhere at "
        "https://doi.org/10.1038/nature12373; to find a related deposit, search by title with "
        "zenodo_search_records."
    )
    assert "nature12373." not in answer["guidance"].replace("nature12373. It", "")
    assert fake.count("/records", service="zenodo") == 2


async def test_list_files_of_a_doi_elsewhere_names_the_stripped_doi(mcp: Client, fake: FakeUpstream) -> None:
    """zenodo_list_files of ``10.1038/nature12373.``: record_not_found whose message names
    ``10.1038/nature12373`` with no period glued to it.
    """
    fake.set_body("zenodo", "/records", {"hits": {"hits": [], "total": 0}})
    res = await mcp.call_tool("zenodo_list_files", {"id": "10.1038/nature12373."})
    assert res.is_error is True
    error = (res.structured_content or {})["error"]
    assert error["data"]["reason"] == "record_not_found"
    assert error["message"] == "DOI 10.1038/nature12373 is not registered to a Zenodo record."


async def test_page_past_the_end_is_the_empty_page_even_when_the_record_is_unreadable(
    mcp: Client, fake: FakeUpstream
) -> None:
    """Page 3 of 22705923's 47 versions (the recorded past-the-end answer) while ``/records/22705923``
    answers a 200 that is not a record: found true, 47 versions, no version listed, the past-the-end
    notice, latest 22705923 from versions/latest (301); not ``record_unavailable``.
    """
    fake.set_body("zenodo", "/records/22705923/versions?page=3&size=25&sort=version", corpus_json(PAST_END))
    fake.set_body("zenodo", "/records/22705923", corpus_json(PAST_END))
    latest = {"location": "https://zenodo.org/api/records/22705923"}  # as the anchor's test serves it
    fake.set_body("zenodo", "/records/22705923/versions/latest", b"", status=301, headers=latest)
    answer = await _ok(mcp, "zenodo_list_versions", {"id": "22705923", "page": 3})
    assert (answer["found"], answer["total_versions"], answer["versions"]) == (True, 47, [])
    assert (answer["page"], answer["has_more"], answer["latest_recid"]) == (3, False, "22705923")
    assert "past the last page" in answer["notice"]
