"""A work first stored from a search page is refetched whole once, then answered from the store.

A list item can carry everything the whole work does (Crossref's list items include open reference
lists), so its content hash equals the whole work's. Before the fix the whole answer only revalidated
the partial copy (same hash): the body stayed a list item, and every later ``crossref_get_work`` asked
upstream again and answered flagged stale.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from syncd.road.services import Services
from tests.conftest import corpus_json
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

pytestmark = pytest.mark.anyio

LANCET = "10.1016/s0140-6736(20)31180-6"
WORK = corpus_json("crossref/work/10.1016_s0140-6736_20_31180-6.json")


async def _call(cache: Services, name: str, args: dict[str, Any]) -> Any:
    async with Client(mcp_server(cache)) as client:
        return await client.call_tool(name, args)


async def test_list_item_equal_to_whole_work_is_replaced_once(cache: Services, fake: FakeUpstream) -> None:
    """The Lancet hydroxychloroquine paper seen first as a search hit: get_work asks /works/{doi} once
    (26 references, not stale), a second get_work asks nothing and is fresh.
    """
    page = {
        "status": "ok",
        "message-type": "work-list",
        "message": {"total-results": 1, "items-per-page": 20, "query": {}, "items": [WORK["message"]]},
    }
    fake.set_body("crossref", "/works", page)
    found = await _call(cache, "crossref_search_works", {"query": "hydroxychloroquine registry"})
    assert found.structured_content["works"][0]["doi"] == LANCET
    before = fake.count("/works/10.1016", service="crossref")
    first = await _call(cache, "crossref_get_work", {"doi": LANCET})
    assert first.is_error is False
    assert fake.count("/works/10.1016", service="crossref") == before + 1
    assert first.structured_content["referencesCount"] == 26
    assert first.structured_content["cache"]["stale"] is False
    second = await _call(cache, "crossref_get_work", {"doi": LANCET})
    assert fake.count("/works/10.1016", service="crossref") == before + 1
    assert second.structured_content["cache"]["stale"] is False
    assert second.structured_content["title"].startswith("RETRACTED: Hydroxychloroquine")
