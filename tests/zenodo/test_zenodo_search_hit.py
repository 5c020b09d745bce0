"""No second request where the first answer suffices (issue 13 kind 6).

An external DOI is resolved through Zenodo's search (``doi:"<doi>"``, ``all_versions=true``, size 2;
recorded: ``records_q-doi-10.3897-ap.e134190_all-versions_size-2_new-api.json``). The hit is a whole
record in the ``/api/records/<id>`` form: the same top-level keys as the recorded record 22705923
(``access, custom_fields, files, id, metadata, parent, pids, revision_id, stats, versions``) with the
full file manifest, and for the legacy shape the recorded search hit of 7078768 equals the recorded
record byte for byte. So syncd stores the hit as the record and answers from it: the record route
``/records/15308258`` is never asked, through a real MCP client session (counted with ``fake.count``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from mcp import Client

from syncd.config import Settings
from syncd.road.services import Services
from syncd.store.content import document
from syncd.zenodo.lookups_fetch import record_content
from syncd.zenodo.names import ZENODO_RECORD
from syncd.zenodo.views import record_view
from tests.conftest import corpus_json, make_settings
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

pytestmark = pytest.mark.anyio

DOI = "10.3897/ap.e134190"
RECID = "15308258"
SEARCH_FILE = "zenodo/search/records_q-doi-10.3897-ap.e134190_all-versions_size-2_new-api.json"


@pytest.fixture
def settings(fake: FakeUpstream, db_url: str) -> Settings:
    """Roomy Zenodo pools (pacing is tested elsewhere)."""
    roomy = {"per_s": 1000, "burst": 1000, "in_flight": 8}
    return make_settings(fake, db_url, budget={"zenodo_general": roomy, "zenodo_search": roomy})


@pytest.fixture
async def mcp(cache: Services) -> AsyncIterator[Client]:
    """One MCP client session per test."""
    async with Client(mcp_server(cache)) as client:
        yield client


def test_a_search_hit_has_the_record_form() -> None:
    """The recorded DOI-search hit carries the record route's top-level keys; the legacy search hit of
    7078768 equals the recorded record of 7078768 (and so its view).
    """
    hit = corpus_json(SEARCH_FILE)["hits"]["hits"][0]
    record = corpus_json("zenodo/record/records-22705923.json")
    assert set(hit) == set(record)
    assert set(hit["files"]) == set(record["files"]) and hit["files"]["count"] == len(hit["files"]["entries"])
    legacy_hit = corpus_json("zenodo/search/records_q-doi_one-hit.json")["hits"]["hits"][0]
    legacy = corpus_json("zenodo/record/records-7078768_legacy-2022.json")
    assert legacy_hit == legacy
    assert record_view(legacy_hit) == record_view(legacy)


async def test_external_doi_is_answered_from_the_search_hit(
    mcp: Client, cache: Services, fake: FakeUpstream
) -> None:
    """zenodo_get_record on the external DOI asks the search once and never /records/15308258; the
    stored record is the hit (same body and content hash as storing that body as a record fetch
    would); a repeat asks nothing.
    """
    res = await mcp.call_tool("zenodo_get_record", {"id": DOI})
    data = res.structured_content
    assert res.is_error is False, res.content[0].text
    assert (data["found"], data["input_kind"], data["resolved_from"]) == (
        True,
        "external_doi",
        "external_doi",
    )
    record = data["record"]
    assert (record["recid"], record["doi"], record["doi_provider"]) == (RECID, DOI, "external")
    assert fake.count("/records", service="zenodo") == 1
    assert fake.count(f"/records/{RECID}", service="zenodo") == 0
    [search] = [r for r in fake.requests if r.service == "zenodo"]
    assert search.query == {"q": f'doi:"{DOI}"', "all_versions": "true", "size": "2"}
    hit = corpus_json(SEARCH_FILE)["hits"]["hits"][0]
    stored = cache.store.get(ZENODO_RECORD, RECID)
    assert stored is not None and document(stored) == hit
    assert stored.content_hash == record_content(hit, json.dumps(hit)).content_hash
    again = await mcp.call_tool("zenodo_get_record", {"id": f"https://doi.org/{DOI}"})
    assert again.structured_content["record"]["recid"] == RECID
    assert fake.count(service="zenodo") == 1


async def test_trailing_punctuation_tries_the_stripped_doi_after_the_as_given_one(
    mcp: Client, fake: FakeUpstream
) -> None:
    """``10.3897/ap.e134190.`` is searched as given (Zenodo's zero-hit answer), then stripped (the
    recorded hit): two searches, no record request.
    """
    zero = {"hits": {"hits": [], "total": 0}}
    fake.set_body("zenodo", f'/records?q=doi:"{DOI}."&all_versions=true&size=2', zero)
    res = await mcp.call_tool("zenodo_get_record", {"id": f"{DOI}."})
    assert res.structured_content["record"]["recid"] == RECID
    asked = [r.query.get("q") for r in fake.requests if r.service == "zenodo"]
    assert asked == [f'doi:"{DOI}."', f'doi:"{DOI}"']


async def test_versions_and_files_of_an_external_doi_skip_the_record_request(
    mcp: Client, fake: FakeUpstream
) -> None:
    """zenodo_list_files of the external DOI lists the hit's manifest after the one search; the record
    route is never asked.
    """
    files = await mcp.call_tool("zenodo_list_files", {"id": DOI})
    assert files.is_error is False, files.content[0].text
    assert files.structured_content["recid"] == RECID
    keys = [e["key"] for e in files.structured_content["entries"]]
    assert keys == ["AP_article_134190.pdf", "AP_article_134190.xml"]  # the hit's manifest, in its order
    assert fake.count(f"/records/{RECID}", service="zenodo") == 0
    assert fake.count("/records", service="zenodo") == 1


async def test_a_doi_no_record_holds_is_not_on_zenodo_after_one_search(
    mcp: Client, fake: FakeUpstream
) -> None:
    """A DOI the search does not find answers found false (not_on_zenodo) after one search request."""
    fake.set_body("zenodo", "/records", {"hits": {"hits": [], "total": 0}})
    res = await mcp.call_tool("zenodo_get_record", {"id": "10.1234/not.deposited"})
    assert res.structured_content["found"] is False
    assert res.structured_content["miss_kind"] == "not_on_zenodo"
    assert fake.count(service="zenodo") == 1


async def test_a_search_hit_that_repeats_a_stored_record_confirms_it(
    mcp: Client, cache: Services, fake: FakeUpstream
) -> None:
    """Record 7078768, stored and then ten days stale, is confirmed by a search whose hit repeats it (the
    recorded legacy one-hit search equals the recorded record): zenodo_get_record then asks nothing.
    """
    first = await mcp.call_tool("zenodo_get_record", {"id": "7078768"})
    assert first.structured_content["record"]["recid"] == "7078768"
    stored = cache.store.get(ZENODO_RECORD, "7078768")
    assert stored is not None
    cache.store.mark_validated(stored.id, now=stored.validated_at - 10 * 86_400)
    fake.set_body("zenodo", "/records", corpus_json("zenodo/search/records_q-doi_one-hit.json"))
    hits = await mcp.call_tool("zenodo_search_records", {"query": "frictionless"})
    assert [h["recid"] for h in hits.structured_content["hits"]] == ["7078768"]
    before = fake.count(service="zenodo")
    again = await mcp.call_tool("zenodo_get_record", {"id": "7078768"})
    assert again.structured_content["cache"]["source"] == "store"
    assert fake.count(service="zenodo") == before
