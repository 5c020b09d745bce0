"""Access before existence (issue 13 kind 4): closed files answer with their access status.

A record whose files are restricted (22931068) or under an active embargo (22837418, until
2035-08-31) exposes no manifest, so no key can be checked against it. ``zenodo_list_files`` (manifest
or archive mode) and ``zenodo_read_file`` (any key, any archive member) answer with the access
status, the embargo date and the record's licenses as the contract does (anchors.md §1b), never
``file_not_found``, and make no request for file content, listing or container. ``zenodo_get_record``
answers with the same status in its notice and no file request. Every call goes through a real MCP
client session against the fake upstream serving the recorded bodies.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from mcp import Client

from syncd.road.services import Services
from tests.conftest import corpus_json
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

pytestmark = pytest.mark.anyio

RESTRICTED = "22931068"
EMBARGOED = "22837418"
NC_ND = [
    {
        "id": "cc-by-nc-nd-4.0",
        "title": "Creative Commons Attribution Non Commercial No Derivatives 4.0 International",
    }
]


async def _call(cache: Services, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    async with Client(mcp_server(cache)) as client:
        res = await client.call_tool(tool, args)
    assert res.is_error is False, res.content[0].text
    sc = dict(res.structured_content or {})
    sc.pop("cache", None)
    return sc


async def _error(cache: Services, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    async with Client(mcp_server(cache)) as client:
        res = await client.call_tool(tool, args)
    assert res.is_error is True
    return dict((res.structured_content or {})["error"])


def _file_requests(fake: FakeUpstream, recid: str) -> int:
    return fake.count(f"/records/{recid}/files", service="zenodo")


@pytest.mark.parametrize(
    ("recid", "notice", "rights"),
    [
        (RESTRICTED, "Files are restricted; content is not available anonymously.", []),
        (EMBARGOED, "Files are embargoed until 2035-08-31; content is not available anonymously.", NC_ND),
    ],
)
async def test_read_file_any_key_answers_the_access_status(
    cache: Services, fake: FakeUpstream, recid: str, notice: str, rights: list[dict[str, str]]
) -> None:
    """zenodo_read_file on closed files with a key no manifest shows: status restricted, the access
    status and embargo date in the notice, the record's licenses, and no request for content.
    """
    sc = await _call(cache, "zenodo_read_file", {"id": recid, "key": "x.csv", "max_bytes": 4096})
    assert sc == {
        "recid": recid,
        "key": "x.csv",
        "status": "restricted",
        "offset_bytes": 0,
        "bytes_returned": 0,
        "has_more": False,
        "replacement_chars": 0,
        "rights": rights,
        "record_url": f"https://zenodo.org/records/{recid}",
        "download_url": f"https://zenodo.org/api/records/{recid}/files/x.csv/content",
        "files_access": "restricted",
        "notice": notice,
    }
    assert fake.count(f"/records/{recid}", service="zenodo") == 1  # the record, nothing else
    assert _file_requests(fake, recid) == 0


async def test_read_file_archive_member_of_closed_files_is_restricted(
    cache: Services, fake: FakeUpstream
) -> None:
    """An archive member (even with an offset, which an open record would refuse) of embargoed files is
    answered restricted before any container listing or member read.
    """
    args = {
        "id": EMBARGOED,
        "key": "data.zip",
        "archive_member": "a/b.txt",
        "offset_bytes": 10,
        "max_bytes": 4096,
    }
    sc = await _call(cache, "zenodo_read_file", args)
    assert (sc["status"], sc["archive_member"], sc["offset_bytes"], sc["bytes_returned"]) == (
        "restricted",
        "a/b.txt",
        10,
        0,
    )
    assert sc["notice"] == "Files are embargoed until 2035-08-31; content is not available anonymously."
    assert _file_requests(fake, EMBARGOED) == 0


@pytest.mark.parametrize(
    ("recid", "status", "until"),
    [(RESTRICTED, "restricted", None), (EMBARGOED, "embargoed", "2035-08-31")],
)
@pytest.mark.parametrize("archive", [True, False])
async def test_list_files_answers_the_access_status(
    cache: Services, fake: FakeUpstream, recid: str, status: str, until: str | None, archive: bool
) -> None:
    """zenodo_list_files on closed files, with an archive_key or without: nothing listed, the access
    status and embargo date, the envelope, and no files, container or content request.
    """
    args: dict[str, Any] = {"id": recid, "limit": 20}
    if archive:
        args["archive_key"] = "x.zip"
    sc = await _call(cache, "zenodo_list_files", args)
    expected: dict[str, Any] = {
        "recid": recid,
        "kind": "archive" if archive else "manifest",
        "access_status": status,
        "files_access": "restricted",
        "files_enabled": True,
        "offset": 0,
        "limit": 20,
        "matched": 0,
        "has_more": False,
        "members" if archive else "entries": [],
        "truncated": False,
        "shown": 0,
        "cap": 20,
        "totalCount": 0,
        "notice": f"Files are {status}{' until ' + until if until else ''}; only metadata is available. "
        "zenodo_get_record shows the access details.",
    }
    if until:
        expected["embargo_until"] = until
    assert sc == expected
    assert _file_requests(fake, recid) == 0


@pytest.mark.parametrize(
    ("recid", "notice"),
    [
        (RESTRICTED, "Files are restricted; metadata only."),
        (EMBARGOED, "Files are embargoed until 2035-08-31; metadata only."),
    ],
)
async def test_get_record_file_part_of_closed_files(
    cache: Services, fake: FakeUpstream, recid: str, notice: str
) -> None:
    """zenodo_get_record on closed files: no entries, no count, the access in the notice, no file request."""
    sc = await _call(cache, "zenodo_get_record", {"id": recid})
    assert sc["record"]["files"] == {"enabled": True, "shown": 0, "entries": []}
    assert sc["record"]["access"]["files"] == "restricted"
    assert (sc["notice"], sc["shown"], sc["truncated"]) == (notice, 0, False)
    assert _file_requests(fake, recid) == 0


async def test_metadata_only_deposit_is_file_not_found_saying_so(cache: Services) -> None:
    """A metadata-only deposit (7126368) has open access and no files: a key is file_not_found, and the
    message says the deposit has no files; the recovery names the listing call.
    """
    for tool, args in (
        ("zenodo_read_file", {"id": "7126368", "key": "README.md"}),
        ("zenodo_list_files", {"id": "7126368", "archive_key": "data.zip"}),
    ):
        err = await _error(cache, tool, args)
        assert err["data"]["reason"] == "file_not_found"
        assert err["message"] == "Record 7126368 is a metadata-only deposit with no files."
        assert err["data"]["recovery"]["hint"] == (
            "Call zenodo_list_files with id '7126368' to see the record's exact file keys."
        )


async def test_open_record_unknown_key_is_file_not_found(cache: Services) -> None:
    """On an open record (22917909) an unknown key stays file_not_found, naming the record and the key."""
    err = await _error(cache, "zenodo_read_file", {"id": "22917909", "key": "x.csv"})
    assert err["data"]["reason"] == "file_not_found"
    assert err["message"] == "Record 22917909 has no file with key 'x.csv'."


async def test_legacy_embargoed_record_answers_the_access_status(cache: Services, fake: FakeUpstream) -> None:
    """A legacy-API record (7078725, recorded open with 7 files) served as ``access_right: embargoed``
    until 2030-01-01: the file tools read its access the same way, listing nothing and reading nothing,
    even for a key its body lists.
    """
    body = copy.deepcopy(corpus_json("zenodo/record/records-7078725_legacy-2022.json"))
    body["metadata"].update(access_right="embargoed", embargo_date="2030-01-01")
    key = body["files"][0]["key"]
    fake.set_body("zenodo", "/records/7078725", body)
    listing = await _call(cache, "zenodo_list_files", {"id": "7078725"})
    assert (listing["access_status"], listing["embargo_until"], listing["entries"], listing["notice"]) == (
        "embargoed",
        "2030-01-01",
        [],
        "Files are embargoed until 2030-01-01; only metadata is available. zenodo_get_record shows the "
        "access details.",
    )
    read = await _call(cache, "zenodo_read_file", {"id": "7078725", "key": key, "max_bytes": 4096})
    assert (read["status"], read["bytes_returned"], read["notice"]) == (
        "restricted",
        0,
        "Files are embargoed until 2030-01-01; content is not available anonymously.",
    )
    assert _file_requests(fake, "7078725") == 0
