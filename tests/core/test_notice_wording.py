"""Issue 25 kinds 6 and 7: empty pages and notices in the anchors' words (numbers as the anchors print them).

anchors.md quotes "only the first 10,000 of N reachable", "Showing x of y; call again with page p+1",
"Offset N is past the end of this reference list (M references)…"; counts are printed with thousands
separators (``110,814``); syncd's own additions follow the anchor's sentence.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from syncd.config import Settings
from syncd.road.services import Services
from tests.conftest import corpus_json, make_settings
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

pytestmark = pytest.mark.anyio

CSV_KEY = "Intensivregister_Deutschland_Altersgruppen.csv"


@pytest.fixture
def settings(fake: FakeUpstream, db_url: str) -> Settings:
    roomy = {"per_s": 1000, "burst": 1000, "in_flight": 8}
    return make_settings(fake, db_url, budget={"zenodo_general": roomy, "zenodo_search": roomy})


async def call(cache: Services, name: str, args: dict[str, Any]) -> dict[str, Any]:
    async with Client(mcp_server(cache)) as client:
        res = await client.call_tool(name, args)
    assert res.is_error is False, res.structured_content
    return res.structured_content


async def test_zenodo_window_notice_prints_110814_with_separators(
    cache: Services, fake: FakeUpstream
) -> None:
    """q=climate (recorded: 110,814 matches, 2 hits): the window sentence, then the next page."""
    recorded = corpus_json("zenodo/search/records_q-climate_size-2_sort-bestmatch_new-api.json")
    fake.set_body("zenodo", "/records", recorded)  # as recorded, whatever else the query carries
    res = await call(cache, "zenodo_search_records", {"query": "climate", "size": 2})
    assert res["total"] == 110_814
    assert res["notice"] == (
        "Only the first 10,000 of 110,814 hits are reachable; narrow the query. "
        "Showing 2 of 110,814; call again with page 2."
    )


async def test_read_file_notice_names_the_byte_range_shown(cache: Services) -> None:
    """The recorded CSV range (83,958-byte file): 240 bytes kept of 256 read, so bytes 0–239 are shown."""
    res = await call(cache, "zenodo_read_file", {"id": "22917909", "key": CSV_KEY, "max_bytes": 256})
    assert (res["bytes_returned"], res["file_size"]) == (240, 83_958)
    assert res["notice"] == "Showing bytes 0–239 of 83,958. More follows; call again with offset_bytes 240."


async def test_cursor_walk_end_counts_with_separators(cache: Services, fake: FakeUpstream) -> None:
    """works?query=ecology (recorded total 586,628) emptied as a walk's last page: the end is said with
    the total as the anchors print it, and no nextCursor.
    """
    page = corpus_json("crossref/work-list/works_query-ecology_rows-2.json")
    page["message"]["items"] = []
    fake.set_body("crossref", "/works?query=ecology&rows=2&cursor=END", page)
    res = await call(cache, "crossref_search_works", {"query": "ecology", "rows": 2, "cursor": "END"})
    assert res["returned"] == 0 and "nextCursor" not in res
    assert "this empty page ends the list of 586,628 matching records" in res["notice"]


async def test_blank_cursor_is_offset_paging_and_past_the_end_says_so(
    cache: Services, fake: FakeUpstream
) -> None:
    """Kind 6: a blank cursor is no cursor (offset paging, no cursor sent), and the empty page past the
    454 widget works names the last page.
    """
    page = corpus_json("crossref/work-list/works_query-widget_cursor-star.json")
    page["message"]["items"] = []
    fake.set_body("crossref", "/works?query=widget&offset=500", page)
    res = await call(cache, "crossref_search_works", {"query": "widget", "offset": 500, "cursor": "  "})
    assert res["returned"] == 0 and "nextCursor" not in res
    assert res["notice"].startswith(
        "offset=500 is past the end of the 454 matching records; call again with offset=440"
    )
    sent = [r for r in fake.requests if r.service == "crossref" and "/works" in r.path]
    assert sent and all("cursor" not in r.query for r in sent)


async def test_window_refusals_name_the_last_valid_page_or_lower(cache: Services, fake: FakeUpstream) -> None:
    """Page 500 x size 25 names page 400 or lower; Crossref offset 9,990 + rows 20 names offset 9,980 or
    lower; both refused before any request.
    """
    async with Client(mcp_server(cache)) as client:
        zen = await client.call_tool("zenodo_search_records", {"query": "x", "page": 500, "size": 25})
        cr = await client.call_tool("crossref_search_works", {"query": "x", "offset": 9990, "rows": 20})
    zerr, cerr = zen.structured_content["error"], cr.structured_content["error"]
    assert zerr["data"]["reason"] == "result_window_exceeded"
    assert "use page 400 or lower at size 25" in zerr["message"]
    assert cerr["data"]["reason"] == "offset_too_large"
    assert (
        "offset + rows = 10,010 passes Crossref's 10,000 offset window: use offset 9,980 or lower"
        in (cerr["message"])
    )
    assert fake.count() == 0
