"""Notices that name the next call (issue 13 kind 9), as exact sentences on corpus inputs.

A page past the last names the offset or page to ask for; a zero-hit search names the terms and
filters that narrowed it and which one to drop first; a miss says which tool or form would find it.
Every call goes through a real MCP client session against the fake upstream.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from mcp import Client

from syncd.registry import open_services
from syncd.road.services import Services
from syncd.store.repo import Store
from tests.conftest import corpus_json, make_settings
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def roomy_deadline(cache: Services) -> None:
    """A 30 s call deadline: these claims are notice texts, and no fault here is slow (on a loaded
    machine the suite's 3 s turned a recorded answer into request_timeout).
    """
    cache.settings.deadline_s = 30.0


async def _notice(cache: Services, tool: str, args: dict[str, Any]) -> str:
    async with Client(mcp_server(cache)) as client:
        res = await client.call_tool(tool, args)
    assert res.is_error is False, res.content[0].text
    sc = res.structured_content
    return str(sc.get("notice") or sc.get("guidance"))


async def test_crossref_zero_hits_names_the_query(cache: Services) -> None:
    """The recorded zero-hit search (query adfaaf) names the query and the form to try instead."""
    assert await _notice(cache, "crossref_search_works", {"query": "adfaaf"}) == (
        "Nothing matched query='adfaaf' in Crossref (totalResults 0); check the spelling or try "
        "queryBibliographic with the whole citation."
    )


async def test_crossref_zero_hits_names_the_filter_to_drop(cache: Services, fake: FakeUpstream) -> None:
    """A zero-hit search with filters names each filter and says to drop the last one first."""
    fake.set_body(
        "crossref", "/works", corpus_json("crossref/work-list/works_query-adfaaf_zero-results.json")
    )
    args = {"query": "adfaaf", "filter": {"type": "journal-article", "from-pub-date": "2030-01-01"}}
    assert await _notice(cache, "crossref_search_works", args) == (
        "Nothing matched query='adfaaf', filter.type=journal-article, filter.from-pub-date=2030-01-01 in "
        "Crossref (totalResults 0); the filters AND together: call again without filter.from-pub-date first."
    )


async def test_crossref_offset_past_the_end_names_the_last_page(cache: Services, fake: FakeUpstream) -> None:
    """Offset 500 over the 454 widget results (rows 20) names offset=440, the start of the last page."""
    page = corpus_json("crossref/work-list/works_query-widget_cursor-star.json")
    page["message"]["items"] = []
    fake.set_body("crossref", "/works?query=widget&offset=500", page)
    assert await _notice(cache, "crossref_search_works", {"query": "widget", "offset": 500}) == (
        "offset=500 is past the end of the 454 matching records; call again with offset=440 for the last "
        "page of 20."
    )


async def test_references_offset_past_the_end_names_the_offset(cache: Services) -> None:
    """Offset 900 over 10.1101/598821's 76 listed references (limit 50) names offset=50."""
    args = {"doi": "10.1101/598821", "offset": 900, "limit": 50}
    assert await _notice(cache, "crossref_get_references", args) == (
        "Offset 900 is past the end of this reference list (76 references listed); call again with "
        "offset=50 for the last page of 50."
    )


async def test_zenodo_zero_hits_names_the_filters_and_the_one_to_drop(
    cache: Services, fake: FakeUpstream
) -> None:
    """A zero-hit Zenodo search with a resource type and a date names both, drops the type first, and
    points to all_versions.
    """
    fake.set_body("zenodo", "/records", corpus_json("zenodo/search/records_q-conceptdoi_zero-hits.json"))
    args = {"query": "frictionless", "resource_type": "dataset", "published_from": "2020"}
    assert await _notice(cache, "zenodo_search_records", args) == (
        "No record matched with resource_type=dataset, published_from=2020-01-01 (filters AND together "
        "with the query 'frictionless'). Call again without resource_type first; check filter ids with "
        "zenodo_lookup_vocabulary. Superseded versions are not searched: set all_versions=true."
    )


async def test_zenodo_page_past_the_last_names_the_page(cache: Services, fake: FakeUpstream) -> None:
    """Page 5 of the recorded keyword search (29 hits, hits emptied as Zenodo answers past the end) at
    size 10 names page 3, the last.
    """
    body = copy.deepcopy(corpus_json("zenodo/search/records_keyword-search_new-api.json"))
    body["hits"]["hits"] = []
    fake.set_body("zenodo", "/records", body)
    args = {"query": "keyword", "size": 10, "page": 5}
    assert await _notice(cache, "zenodo_search_records", args) == (
        "Page 5 is past the last page (3 pages of 10); call again with page 3."
    )


async def test_zenodo_miss_names_the_tool_and_form_that_finds_it(cache: Services) -> None:
    """An unknown record id's guidance names zenodo_search_records and the doi: query form."""
    assert await _notice(cache, "zenodo_get_record", {"id": "999999999999"}) == (
        "No Zenodo record has id 999999999999; it may never have existed. Search by title with "
        'zenodo_search_records, or by query doi:"10.5281/zenodo.999999999999" with all_versions true.'
    )


async def test_journal_and_funder_zero_hits_name_the_id_form(cache: Services) -> None:
    """A title or name query that matches nothing names the query and the id lookup that would find it."""
    assert await _notice(cache, "crossref_search_journals", {"query": "ecology"}) == (
        "No journal matched the title query 'ecology'; try fewer or other words, or look it up by ISSN "
        "with issn."
    )
    assert await _notice(cache, "crossref_search_funders", {"query": "national"}) == (
        "No funder matched the name query 'national'; try fewer or other words, or look it up by id with "
        "funder_doi."
    )


async def test_list_files_offset_past_the_end_names_the_last_page(cache: Services) -> None:
    """Offset 500 over record 22917909's 9 files names offset 0, where the last page (of 4) starts: 8."""
    args = {"id": "22917909", "offset": 500, "limit": 4}
    assert await _notice(cache, "zenodo_list_files", args) == (
        "Offset 500 is past the last of 9 entries; call again with offset 8 for the last page of 4."
    )


async def test_list_files_zero_matches_names_the_call_without_the_filter(cache: Services) -> None:
    """A key_contains that matches nothing says to call again without key_contains."""
    args = {"id": "22917909", "key_contains": "nomatch"}
    assert await _notice(cache, "zenodo_list_files", args) == (
        "No key contains 'nomatch'; call zenodo_list_files again without key_contains."
    )


async def test_get_work_author_offset_past_the_end_names_the_last_offset(cache: Services) -> None:
    """Author offset 900 over 10.1101/598821's 24 authors names offset=20 for the last page of limit 5,
    and offset=0 at the default limit 25.
    """
    args = {"doi": "10.1101/598821", "offset": 900, "limit": 5}
    assert await _notice(cache, "crossref_get_work", args) == (
        "offset=900 is past the end of the author list (24 authors); no authors on this page. Call again "
        "with offset=20 for the last page (authors 21–24); every other field is complete on every page."
    )
    assert await _notice(cache, "crossref_get_work", {"doi": "10.1101/598821", "offset": 24}) == (
        "offset=24 is past the end of the author list (24 authors); no authors on this page. Call again "
        "with offset=0 for the last page (authors 1–24); every other field is complete on every page."
    )


async def test_not_on_zenodo_names_the_crossref_call(cache: Services, fake: FakeUpstream) -> None:
    """A Crossref DOI that no Zenodo record holds (the DOI search finds nothing): zenodo_get_record's and
    zenodo_list_versions' guidance end with the exact crossref_get_work call (doi.org names Crossref as
    the prefix's agency).
    """
    fake.set_body("zenodo", "/records", corpus_json("zenodo/search/records_q-conceptdoi_zero-hits.json"))
    expected = (
        "DOI 10.1101/598821 is not registered to a Zenodo record. It resolves elsewhere at "
        "https://doi.org/10.1101/598821; to find a related deposit, search by title with "
        'zenodo_search_records. It is a Crossref DOI: call crossref_get_work with {"doi": "10.1101/598821"}.'
    )
    assert await _notice(cache, "zenodo_get_record", {"id": "10.1101/598821"}) == expected
    assert await _notice(cache, "zenodo_list_versions", {"id": "doi:10.1101/598821"}) == expected
    assert fake.count("/ra/", service="doi") == 1  # the agency is asked once per prefix, then stored


async def test_file_tools_on_a_doi_not_on_zenodo_name_the_crossref_call(
    cache: Services, fake: FakeUpstream
) -> None:
    """zenodo_list_files / zenodo_read_file on a Crossref DOI: record_not_found whose recovery is the
    exact crossref_get_work call.
    """
    fake.set_body("zenodo", "/records", corpus_json("zenodo/search/records_q-conceptdoi_zero-hits.json"))
    async with Client(mcp_server(cache)) as client:
        for tool, args in (
            ("zenodo_list_files", {"id": "10.1101/598821"}),
            ("zenodo_read_file", {"id": "10.1101/598821", "key": "README.md"}),
        ):
            res = await client.call_tool(tool, args)
            assert res.is_error is True
            err = (res.structured_content or {})["error"]
            assert (err["data"]["reason"], err["message"]) == (
                "record_not_found",
                "DOI 10.1101/598821 is not registered to a Zenodo record.",
            )
            assert err["data"]["recovery"]["hint"] == (
                'It is a Crossref DOI: call crossref_get_work with {"doi": "10.1101/598821"}.'
            )


async def _error(cache: Services, tool: str, args: dict[str, Any]) -> tuple[str, str, str]:
    async with Client(mcp_server(cache)) as client:
        res = await client.call_tool(tool, args)
    assert res.is_error is True
    err = (res.structured_content or {})["error"]
    return err["data"]["reason"], err["message"], err["data"]["recovery"]["hint"]


ALTERSGRUPPEN = "Intensivregister_Deutschland_Altersgruppen.csv"


async def test_file_tool_errors_name_the_next_call(cache: Services) -> None:
    """Refused file reads say what to call instead, with the values to pass (record 22917909: a CSV of
    83,958 bytes and Metadaten.zip; 999999999999 does not exist; 22705918 was deleted).
    """
    read = {"id": "22917909", "key": ALTERSGRUPPEN, "max_bytes": 4096}
    assert await _error(cache, "zenodo_read_file", {**read, "offset_bytes": 10**9}) == (
        "offset_out_of_range",
        "offset_bytes 1000000000 is at or past the file size 83958",
        "Call zenodo_read_file again with an offset_bytes below 83958 (0 reads from the start).",
    )
    assert await _error(cache, "zenodo_read_file", {**read, "archive_member": "x.txt"}) == (
        "not_an_archive",
        f"'{ALTERSGRUPPEN}' is not a .zip file, so archive_member cannot be read from it",
        f"Drop archive_member to read '{ALTERSGRUPPEN}' itself, or pick a listable (.zip) key from "
        "zenodo_list_files.",
    )
    member = {"id": "22917909", "key": "Metadaten.zip", "archive_member": "x.txt", "offset_bytes": 5}
    reason, _, hint = await _error(cache, "zenodo_read_file", member)
    assert (reason, hint) == (
        "member_offset_unsupported",
        "Read the member from offset_bytes 0 with a larger max_bytes (up to 65536), or download the archive "
        "from https://zenodo.org/api/records/22917909/files/Metadaten.zip/content.",
    )
    reason, message, hint = await _error(
        cache, "zenodo_list_files", {"id": "22917909", "archive_key": ALTERSGRUPPEN}
    )
    assert (reason, message) == (
        "not_an_archive",
        f"'{ALTERSGRUPPEN}' is not a .zip file; only ZIP archives can be listed",
    )
    assert hint.startswith(
        f"Read it with zenodo_read_file (key '{ALTERSGRUPPEN}') if it is text, or download it"
    )
    assert await _error(cache, "zenodo_read_file", {"id": "999999999999", "key": "a.txt"}) == (
        "record_not_found",
        "No Zenodo record has id 999999999999.",
        "Check the id with zenodo_get_record (id '999999999999'), or find the deposit with "
        "zenodo_search_records.",
    )
    assert await _error(cache, "zenodo_list_files", {"id": "22705918"}) == (
        "record_deleted",
        "Record 22705918 was deleted from Zenodo; only its tombstone remains.",
        "Call zenodo_get_record with id '22705918' for the removal date and reason, then find a replacement "
        "deposit with zenodo_search_records.",
    )


async def test_not_on_zenodo_without_doi_org_still_names_the_crossref_call(
    cache: Services, fake: FakeUpstream
) -> None:
    """With doi.org failing (HTTP 503) the agency is unknown: the guidance still ends with the exact
    crossref_get_work call, as the first thing to try, and the answer is not an error.
    """
    fake.set_body("zenodo", "/records", corpus_json("zenodo/search/records_q-conceptdoi_zero-hits.json"))
    fake.fault("status", service="doi", status=503)
    guidance = await _notice(cache, "zenodo_get_record", {"id": "10.1101/598821"})
    assert guidance.endswith(
        "to find a related deposit, search by title with zenodo_search_records. If it is a Crossref DOI, "
        'call crossref_get_work with {"doi": "10.1101/598821"}.'
    )


async def test_vocabulary_page_past_the_end_names_the_last_page(cache: Services, fake: FakeUpstream) -> None:
    """Page 20 of the recorded "wellcome" funders search (30 funders, hits emptied as Zenodo answers past
    the end) at size 3 names page 10, the last; a single-entry answer (NIH's Funder DOI) on page 2 names
    page 1.
    """
    body = copy.deepcopy(corpus_json("zenodo/vocabulary/funders_q-wellcome_page-1_size-3.json"))
    body["hits"]["hits"] = []
    fake.set_body("zenodo", "/funders?q=wellcome&page=20&size=3", body)
    args = {"vocabulary": "funders", "query": "wellcome", "size": 3, "page": 20}
    assert await _notice(cache, "zenodo_lookup_vocabulary", args) == (
        "Page 20 is past the last page (10 pages of 3 for 30 entries); call again with page 10."
    )
    single = {"vocabulary": "funders", "query": "10.13039/100000002", "page": 2}
    assert await _notice(cache, "zenodo_lookup_vocabulary", single) == (
        "Page 2 is past the last page (1 page of 10 for 1 entry); call again with page 1."
    )


RESTRICTED = "22931070"
"""A record id answered 403 below (Zenodo's answer for metadata only authorized users may read)."""


async def test_restricted_record_names_the_call_to_repeat_with_a_token(
    cache: Services, fake: FakeUpstream
) -> None:
    """A record whose metadata Zenodo refuses anonymously (403): zenodo_get_record's and
    zenodo_list_versions' guidance name the token setting and the exact zenodo_get_record call to repeat.
    """
    fake.set_body("zenodo", f"/records/{RESTRICTED}", {"status": 403, "message": "Permission denied."}, 403)
    expected = (
        f"Record {RESTRICTED} exists but its metadata is restricted to authorized users and cannot be read "
        "anonymously. With the Zenodo token of an account that may read it (setting zenodo.token, "
        f'SYNCD_ZENODO__TOKEN), call zenodo_get_record with {{"id": "{RESTRICTED}"}} again; otherwise find '
        "a public deposit with zenodo_search_records."
    )
    assert await _notice(cache, "zenodo_get_record", {"id": RESTRICTED}) == expected
    assert await _notice(cache, "zenodo_list_versions", {"id": RESTRICTED}) == expected


async def test_restricted_record_with_a_token_says_the_account_has_no_access(
    fake: FakeUpstream, db_url: str, store: Store
) -> None:
    """With a Zenodo token configured (sent as a bearer header), a 403 means that account may not read
    the record: the guidance says so and names the search instead of repeating the call.
    """
    fake.set_body("zenodo", f"/records/{RESTRICTED}", {"status": 403, "message": "Permission denied."}, 403)
    settings = make_settings(fake, db_url, zenodo={"base_url": fake.zenodo_url, "token": "t0ken"})
    services = open_services(settings, store)
    try:
        guidance = await _notice(services, "zenodo_get_record", {"id": RESTRICTED})
    finally:
        services.close()
    assert guidance == (
        f"Record {RESTRICTED} exists but its metadata is restricted to authorized users, and the account of "
        "the configured Zenodo token is not one of them. Ask the owner for access, or find a public deposit "
        "with zenodo_search_records."
    )
    [asked] = [r for r in fake.requests if r.service_path == f"/records/{RESTRICTED}"]
    assert asked.headers.get("authorization") == "Bearer t0ken"
