"""Issue 14 case 7: zenodo_list_files totals never contradict file_count (2,052 files, 1,000 listed)."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from syncd.road.services import Services
from tests.conftest import corpus_json
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

pytestmark = [pytest.mark.anyio]

RECID = "9100001"
COUNT = 2052


@pytest.fixture
async def mcp(cache: Services) -> AsyncIterator[Client]:
    """One MCP client session per test, on a server answering through ``cache``."""
    async with Client(mcp_server(cache)) as client:
        yield client


def _file(n: int) -> dict[str, Any]:
    key = f"tile_{n:04d}.tif"
    return {"key": key, "size": 1000 + n, "mimetype": "image/tiff", "checksum": f"md5:{n:032x}"}


def _serve_record(fake: FakeUpstream) -> None:
    """A record counting 2,052 files whose body lists the first 1,000 (as Zenodo answers)."""
    body = copy.deepcopy(corpus_json("zenodo/record/records-1241_no-doi.json"))
    body["id"] = RECID
    listed = {f["key"]: f for f in map(_file, range(1000))}
    body["files"] = {
        "enabled": True,
        "order": [],
        "count": COUNT,
        "total_bytes": 9_999_999,
        "entries": listed,
    }
    fake.set_body("zenodo", f"/records/{RECID}", body)


async def test_files_past_the_body_are_listed_from_the_files_endpoint(
    mcp: Client, fake: FakeUpstream
) -> None:
    """With /records/{id}/files listing all 2,052 files, offset 999 answers totalCount 2052, has_more
    true, the 1,000th file first and the 1,001st (absent from the body) next; the files page is stored:
    a second listing makes no request.
    """
    _serve_record(fake)
    fake.set_body(
        "zenodo",
        f"/records/{RECID}/files",
        {"enabled": True, "entries": [_file(n) for n in range(COUNT)], "links": {}},
    )
    res = (
        await mcp.call_tool("zenodo_list_files", {"id": RECID, "offset": 999, "limit": 2})
    ).structured_content
    assert (res["file_count"], res["totalCount"], res["matched"]) == (COUNT, COUNT, COUNT)
    assert (res["has_more"], res["truncated"], res["next_offset"]) == (True, True, 1001)
    assert [e["key"] for e in res["entries"]] == ["tile_0999.tif", "tile_1000.tif"]
    assert res["listed_from"] == "files_endpoint" and "unlisted" not in res
    fake.reset_log()
    tail = (
        await mcp.call_tool("zenodo_list_files", {"id": RECID, "offset": 2000, "limit": 200})
    ).structured_content
    assert (tail["shown"], tail["has_more"], tail["entries"][-1]["key"]) == (52, False, "tile_2051.tif")
    assert fake.count(service="zenodo") == 0


async def test_unreachable_files_endpoint_says_how_many_are_unlisted(mcp: Client, fake: FakeUpstream) -> None:
    """When the files endpoint fails (503), the answer says 1,052 files are not listed and where the
    full list is, instead of claiming a complete list of 1,000.
    """
    _serve_record(fake)
    fake.fault("status", status=503, path_prefix=f"/records/{RECID}/files", service="zenodo")
    res = (await mcp.call_tool("zenodo_list_files", {"id": RECID, "offset": 999})).structured_content
    assert (res["file_count"], res["matched"], res["unlisted"]) == (COUNT, 1000, 1052)
    assert res["listed_from"] == "record" and res["truncated"] is True
    assert res["files_list_url"] == f"https://zenodo.org/api/records/{RECID}/files"
    assert "1,052 of the record's 2,052 files are not listed here" in res["notice"]
    assert res["file_count"] == res["matched"] + res["unlisted"]


async def test_a_file_past_the_body_can_be_read(mcp: Client, fake: FakeUpstream) -> None:
    """zenodo_read_file of the 1,501st file (absent from the record body, listed by the files endpoint)
    reads its text instead of answering file_not_found.
    """
    _serve_record(fake)
    files = [_file(n) for n in range(COUNT)]
    files[1500] = {
        "key": "notes_1500.txt",
        "size": 12,
        "mimetype": "text/plain",
        "checksum": "md5:" + "0" * 32,
    }
    fake.set_body("zenodo", f"/records/{RECID}/files", {"enabled": True, "entries": files, "links": {}})
    fake.set_body(
        "zenodo",
        f"/records/{RECID}/files/notes_1500.txt/content",
        "hello tiles\n",
        headers={"content-type": "text/plain"},
    )
    res = (await mcp.call_tool("zenodo_read_file", {"id": RECID, "key": "notes_1500.txt"})).structured_content
    assert (res["status"], res["text"]) == ("text", "hello tiles\n")
