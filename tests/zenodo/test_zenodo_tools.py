"""Zenodo's six tools end to end through a real MCP client session over the fake upstream."""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from syncd.config import Settings
from syncd.road.services import Services
from syncd.store.blobs import blob_usage
from syncd.zenodo.params_cursor import CursorState, encode_cursor
from tests.conftest import Clock, corpus_json, make_settings
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

# PostgreSQL in the full run only: these are tool tests; the store contract runs on both in every run
pytestmark = [pytest.mark.anyio, pytest.mark.both_backends(full_only=True)]


@pytest.fixture
def settings(fake: FakeUpstream, db_url: str) -> Settings:
    """The shared test settings with roomy Zenodo pools (budget pacing is tested elsewhere)."""
    roomy = {"per_s": 1000, "burst": 1000, "in_flight": 8}
    return make_settings(fake, db_url, budget={"zenodo_general": roomy, "zenodo_search": roomy})


CSV_KEY = "Intensivregister_Deutschland_Altersgruppen.csv"
CSV_HEADER = (
    "datum,bundesland_id,bundesland_name,altersgruppe_0_bis_17,altersgruppe_18_bis_29,altersgruppe_30_bis_39,"
    "altersgruppe_40_bis_49,altersgruppe_50_bis_59,altersgruppe_60_bis_69,altersgruppe_70_bis_79,"
    "altersgruppe_80_plus,altersgruppe_unbekannt\n"
)


@pytest.fixture
async def mcp(cache: Services) -> AsyncIterator[Client]:
    """One MCP client session per test, on a server answering through ``cache``."""
    async with Client(mcp_server(cache)) as client:
        yield client


async def call(client: Client, name: str, args: dict[str, Any]) -> Any:
    return await client.call_tool(name, args)


def reason(res: Any) -> str:
    assert res.is_error is True
    return res.structured_content["error"]["data"]["reason"]


# ------------------------------------------------------------------------------------- get_record


async def test_citations_match_zenodo_rendering_offline(
    mcp: Client, cache: Services, fake: FakeUpstream
) -> None:
    """BibTeX and APA rendered locally equal Zenodo's own export of 22705923, also with Zenodo down."""
    bib = corpus_json("zenodo/non-json/records-22705923_citation_bibtex.exchange.json")["body_text"]
    apa = corpus_json("zenodo/non-json/records-22705923_citation_style-apa.exchange.json")[
        "body_text"
    ].strip()
    first = await call(mcp, "zenodo_get_record", {"id": "22705923", "citation_style": "BibTeX"})
    assert first.structured_content["citation"] == bib
    assert first.structured_content["citation_style"] == "bibtex"
    fake.stop()
    res = await call(mcp, "zenodo_get_record", {"id": "10.5281/zenodo.22705923", "citation_style": " A P A "})
    assert res.structured_content["citation"] == apa
    assert res.structured_content["cache"]["source"] == "store"
    csl = await call(mcp, "zenodo_get_record", {"id": "22705923", "citation_style": "CSL_JSON"})
    item = json.loads(csl.structured_content["citation"])
    assert (item["type"], item["version"], item["DOI"]) == ("software", "1.9.1", "10.5281/zenodo.22705923")
    for style in (
        "chicago-author-date",
        "harvard-cite-them-right",
        "ieee",
        "modern-language-association",
        "nature",
    ):
        text = await call(mcp, "zenodo_get_record", {"id": "22705923", "citation_style": style})
        assert "The scikit-learn developers" in text.structured_content["citation"]


async def test_unknown_citation_style_is_invalid_parameter(
    mcp: Client, cache: Services, fake: FakeUpstream
) -> None:
    """A style outside the eight is refused before any request."""
    res = await call(mcp, "zenodo_get_record", {"id": "22705923", "citation_style": "vancouver"})
    assert reason(res) == "invalid_parameter"
    assert fake.count() == 0


async def test_description_continuations_walk_the_whole_text(
    mcp: Client, cache: Services, fake: FakeUpstream
) -> None:
    """7391177's 25,419-character description: 4,000 shown, then 8,000-character windows to the end."""
    res = (await call(mcp, "zenodo_get_record", {"id": "7391177"})).structured_content
    assert res["record"]["description_length"] == 25_419
    assert res["truncated"] is True
    (cont,) = [c for c in res["continuations"] if c["field"] == "description"]
    assert (cont["shown"], cont["total"], cont["id"], cont["unit"]) == (4000, 25_419, "7391177", "characters")
    full = res["record"]["description"]
    cursor, windows = cont["cursor"], 0
    while cursor:
        win = (await call(mcp, "zenodo_get_record", {"id": "7391177", "cursor": cursor})).structured_content
        assert "record" not in win
        full += win["window"]["text"]
        windows += 1
        nxt = win.get("continuations") or []
        cursor = nxt[0]["cursor"] if nxt else None
        assert win["truncated"] is bool(nxt)
    assert windows == 3 and len(full) == 25_419
    assert fake.count("/records/7391177", service="zenodo") == 1


async def test_cursor_for_other_record_or_garbage_is_invalid_cursor(mcp: Client, cache: Services) -> None:
    """A cursor passed with another record's id, or one never issued, is invalid_cursor."""
    res = (await call(mcp, "zenodo_get_record", {"id": "7391177"})).structured_content
    cursor = res["continuations"][0]["cursor"]
    assert (
        reason(await call(mcp, "zenodo_get_record", {"id": "22705923", "cursor": cursor})) == "invalid_cursor"
    )
    assert reason(await call(mcp, "zenodo_get_record", {"id": "7391177", "cursor": "bm90LWEtY3Vyc29y"})) == (
        "invalid_cursor"
    )


async def test_cursor_invalid_after_revision_change(
    mcp: Client, cache: Services, fake: FakeUpstream, injected_clock: Clock
) -> None:
    """record-history 5244404: a cursor bound to revision 4 is refused once revision 7 is stored."""
    fake.serve_history(
        "5244404",
        [
            "zenodo/record-history/records-5244404__2024-01-14.json",
            "zenodo/record-history/records-5244404__2024-09-27.json",
        ],
    )
    first = (await call(mcp, "zenodo_get_record", {"id": "5244404"})).structured_content
    assert first["record"]["revision"] == 4
    stored = cache.store.get("zenodo_record", "5244404")
    cursor = encode_cursor(CursorState("5244404", stored.content_hash[:16], "keywords", None, 0))
    ok = (await call(mcp, "zenodo_get_record", {"id": "5244404", "cursor": cursor})).structured_content
    assert ok["window"]["keywords"] == first["record"]["keywords"]
    cache.settings.ttl.zenodo_record = 0.001
    injected_clock.advance(1.0)  # older than its 1 ms lifetime: stale (the injected clock, no sleep)
    changed = (await call(mcp, "zenodo_get_record", {"id": "5244404"})).structured_content
    assert changed["record"]["revision"] == 7
    cache.settings.ttl.zenodo_record = 86_400
    assert (
        reason(await call(mcp, "zenodo_get_record", {"id": "5244404", "cursor": cursor})) == "invalid_cursor"
    )


async def test_record_unavailable_and_rate_limited(mcp: Client, cache: Services, fake: FakeUpstream) -> None:
    """A 500 from Zenodo is record_unavailable; a 429 is rate_limited with the wait."""
    fake.fault("status", status=500, service="zenodo")
    assert reason(await call(mcp, "zenodo_get_record", {"id": "22705923"})) == "record_unavailable"
    fake.clear_faults()
    fake.fault("rate_limit", retry_after=30, service="zenodo")
    res = await call(mcp, "zenodo_get_record", {"id": "4927605"})
    assert reason(res) == "rate_limited"
    assert res.structured_content["error"]["data"]["retry_after_s"] == 30


# ----------------------------------------------------------------------------------- search_records

SEARCH = {"query": 'title:"Frictionless Data Test"', "size": 2, "sort": "bestmatch"}


async def test_search_local_first_and_hits_stored(mcp: Client, cache: Services, fake: FakeUpstream) -> None:
    """A search page: 13 hits, 2 shown; the repeat costs 0 requests; its records are stored."""
    first = (await call(mcp, "zenodo_search_records", SEARCH)).structured_content
    assert (first["total"], first["shown"], first["next_page"]) == (13, 2, 2)
    assert [h["title"] for h in first["hits"]] == [
        "Frictionless Data Test Dataset",
        "Frictionless Data Test Publication",
    ]
    assert first["effectiveQuery"] == 'title:"Frictionless Data Test"'
    assert first["cache"]["source"] == "upstream"
    n = fake.count(service="zenodo")
    again = (await call(mcp, "zenodo_search_records", SEARCH)).structured_content
    assert again["cache"]["source"] == "store" and again["hits"] == first["hits"]
    assert fake.count(service="zenodo") == n
    assert cache.store.get("zenodo_record", "7078760").title == "Frictionless Data Test Dataset"


async def test_search_offline_answers_from_fts_with_notice(
    mcp: Client, cache: Services, fake: FakeUpstream
) -> None:
    """With Zenodo down, a new query is answered from stored records' full-text index, flagged local."""
    await call(mcp, "zenodo_get_record", {"id": "5244404"})
    await call(mcp, "zenodo_get_record", {"id": "22705923"})
    fake.stop()
    res = await call(mcp, "zenodo_search_records", {"query": "SARS-CoV-2 origins"})
    data = res.structured_content
    assert res.is_error is False and data["local"] is True
    assert [h["recid"] for h in data["hits"]] == ["5244404"]
    assert "local" in data["notice"] and data["cache"]["upstream_error"] == "upstream_unavailable"
    by_creator = (
        await call(mcp, "zenodo_search_records", {"query": "scikit-learn developers"})
    ).structured_content
    assert [h["recid"] for h in by_creator["hits"]] == ["22705923"]


async def test_search_filters_compose_into_q(mcp: Client, cache: Services, fake: FakeUpstream) -> None:
    """resource_type, license, access_status and partial dates become AND-ed clauses of q."""
    fake.set_body("zenodo", "/records", corpus_json("zenodo/search/records_title_size-2_page-1_new-api.json"))
    res = await call(
        mcp,
        "zenodo_search_records",
        {
            "query": "climate",
            "resource_type": "Dataset",
            "license": "CC-BY-4.0",
            "access_status": "Open",
            "published_from": "2020",
            "published_to": "2021-02",
        },
    )
    q = res.structured_content["effectiveQuery"]
    assert q == (
        '(climate) AND metadata.rights.id:"cc-by-4.0" AND metadata.resource_type.props.type:"dataset" '
        'AND access.status:"open" AND metadata.publication_date:[2020-01-01 TO 2021-02-28]'
    )
    assert fake.requests[-1].query["q"] == q


async def test_search_declared_errors(mcp: Client, cache: Services, fake: FakeUpstream) -> None:
    """Local pre-checks refuse bad searches before any request, each with its reason."""
    cases = [
        ({"query": "10.5281/zenodo.22705923"}, "query_is_identifier"),
        ({"query": "a/b"}, "query_syntax"),
        ({"query": "x", "page": 500, "size": 25}, "result_window_exceeded"),
        ({"published_from": "2022", "published_to": "2021"}, "invalid_date_range"),
        ({"resource_type": "spaceship"}, "invalid_parameter"),
        ({"creator_orcid": "0000-0002-1825-0098"}, "invalid_parameter"),
    ]
    for args, expected in cases:
        assert reason(await call(mcp, "zenodo_search_records", args)) == expected
    assert fake.count() == 0
    assert (
        reason(await call(mcp, "zenodo_search_records", {"community": "nosuchcommunity"}))
        == "unknown_community"
    )
    assert reason(await call(mcp, "zenodo_search_records", {"funder": "0zzzzzz00"})) == "unknown_funder"


# ------------------------------------------------------------------------------------ list_versions


async def test_list_versions_page_and_store(mcp: Client, cache: Services, fake: FakeUpstream) -> None:
    """22705923's series: 47 versions, newest first, latest 22705923; a repeat costs 0 requests."""
    res = (await call(mcp, "zenodo_list_versions", {"id": "22705923", "size": 3})).structured_content
    assert (res["total_versions"], res["latest_recid"], res["concept_recid"]) == (47, "22705923", "591564")
    assert [v["version"] for v in res["versions"]] == ["1.9.1", "1.9.0", "1.8.0"]
    assert res["has_more"] is True and res["next_page"] == 2
    n = fake.count(service="zenodo")
    again = (await call(mcp, "zenodo_list_versions", {"id": "22705923", "size": 3})).structured_content
    assert again["cache"]["source"] == "store" and fake.count(service="zenodo") == n
    assert cache.store.get("zenodo_record", "20510517").title == "scikit-learn"
    assert cache.store.concept_latest("591564")[0] == "22705923"


async def test_list_versions_past_end_and_deleted(mcp: Client, cache: Services) -> None:
    """Page 3 of 25 is past the 47 versions (notice); a deleted record is found: false with tombstone."""
    past = (await call(mcp, "zenodo_list_versions", {"id": "22705923", "page": 3})).structured_content
    assert past["versions"] == [] and "past the last page" in past["notice"]
    gone = (await call(mcp, "zenodo_list_versions", {"id": "22705918"})).structured_content
    assert gone["found"] is False and gone["miss_kind"] == "deleted" and gone["tombstone"]


# --------------------------------------------------------------------------------------- list_files


def zip_record() -> dict[str, Any]:
    """Record 22917909 given a ZIP file (so the recorded 7614815 container listing can be served)."""
    body = copy.deepcopy(corpus_json("zenodo/record/records-22917909.json"))
    body["id"] = "7614815"
    body["files"]["entries"]["monthly_shapes_0_20.zip"] = {
        "key": "monthly_shapes_0_20.zip",
        "size": 81000,
        "mimetype": "application/zip",
        "checksum": "md5:00000000000000000000000000000000",
    }
    body["files"]["count"] = 10
    return body


async def test_list_files_manifest_paging_and_filter(
    mcp: Client, cache: Services, fake: FakeUpstream
) -> None:
    """22917909's 9 files page locally; key_contains filters before paging; no extra request."""
    res = (await call(mcp, "zenodo_list_files", {"id": "22917909", "limit": 4})).structured_content
    assert (res["file_count"], res["matched"], res["shown"], res["next_offset"]) == (9, 9, 4, 4)
    assert res["entries"][1]["key"] == CSV_KEY and res["entries"][1]["previewable"] is True
    csv = (
        await call(mcp, "zenodo_list_files", {"id": "22917909", "key_contains": "KAPAZ"})
    ).structured_content
    assert csv["matched"] == 4 and all("kapazitaeten" in e["key"].lower() for e in csv["entries"])
    assert fake.count(service="zenodo") == 1


async def test_list_files_zip_members_and_errors(mcp: Client, cache: Services, fake: FakeUpstream) -> None:
    """The recorded ZIP listing: 7 TIFF members, 1 directory; errors for missing or non-ZIP keys."""
    fake.set_body("zenodo", "/records/7614815", zip_record())
    res = await call(mcp, "zenodo_list_files", {"id": "7614815", "archive_key": "monthly_shapes_0_20.zip"})
    data = res.structured_content
    assert data["kind"] == "archive" and data["archive"]["listed_members"] == 7
    assert data["archive"]["directory_count"] == 1
    assert data["members"][0] == {
        "path": "monthly_shapes_0_20/ID_378092.tif",
        "size": 18808,
        "compressed_size": 6796,
        "mimetype": "image/tiff",
        "previewable": False,
    }
    assert reason(await call(mcp, "zenodo_list_files", {"id": "7614815", "archive_key": "nope.zip"})) == (
        "file_not_found"
    )
    assert (
        reason(await call(mcp, "zenodo_list_files", {"id": "7614815", "archive_key": CSV_KEY}))
        == "not_an_archive"
    )
    assert reason(await call(mcp, "zenodo_list_files", {"id": "22705918"})) == "record_deleted"
    assert reason(await call(mcp, "zenodo_list_files", {"id": "999999999999"})) == "record_not_found"


# ---------------------------------------------------------------------------------------- read_file


async def test_read_file_preview_kept_and_served_offline(
    mcp: Client,
    cache: Services,
    fake: FakeUpstream,
    injected_clock: Clock,
) -> None:
    """The recorded CSV range: BOM dropped, cut after the 240-byte first line; offline it is served again."""
    args = {"id": "22917909", "key": CSV_KEY, "max_bytes": 256}
    first = (await call(mcp, "zenodo_read_file", args)).structured_content
    assert first["status"] == "text" and first["text"] == CSV_HEADER.removeprefix("\ufeff")
    assert (first["bytes_returned"], first["next_offset"], first["file_size"]) == (240, 240, 83_958)
    assert first["cache"]["source"] == "upstream"
    assert blob_usage(cache.store, "zenodo_preview") == (1, 256)
    fake.stop()
    cache.settings.ttl.zenodo_record = 0.001
    injected_clock.advance(1.0)  # older than its 1 ms lifetime: stale (the injected clock, no sleep)
    offline = (await call(mcp, "zenodo_read_file", args)).structured_content
    assert offline["text"] == first["text"] and offline["cache"]["source"] in ("store", "store-stale")


async def test_read_file_binary_and_range_errors(mcp: Client, cache: Services, fake: FakeUpstream) -> None:
    """A PDF is not_text without a content request; offset past the size is offset_out_of_range."""
    pdf = "[Dokumentation]_Intensivkapazitaeten_und_COVID-19-Intensivbettenbelegung_in_Deutschland.pdf"
    res = (await call(mcp, "zenodo_read_file", {"id": "22917909", "key": pdf})).structured_content
    assert res["status"] == "not_text" and "text" not in res
    assert fake.count("/records/22917909/files", service="zenodo") == 0
    bad = await call(mcp, "zenodo_read_file", {"id": "22917909", "key": CSV_KEY, "offset_bytes": 90_000})
    assert reason(bad) == "offset_out_of_range"
    assert (
        reason(await call(mcp, "zenodo_read_file", {"id": "22917909", "key": "nope.csv"})) == "file_not_found"
    )
    member = await call(
        mcp,
        "zenodo_read_file",
        {"id": "22917909", "key": CSV_KEY, "archive_member": "a.txt", "offset_bytes": 5},
    )
    assert reason(member) == "member_offset_unsupported"


# -------------------------------------------------------------------------------- lookup_vocabulary


async def test_vocabularies(mcp: Client, cache: Services, fake: FakeUpstream) -> None:
    """Awards, funders and licenses from the recorded pages; resource_types built in; repeats are free."""
    awards = await call(mcp, "zenodo_lookup_vocabulary", {"vocabulary": "grant", "query": "SYMBA"})
    first = awards.structured_content["entries"][0]
    assert (first["filter_param"], first["filter_value"], first["acronym"]) == (
        "award",
        "00k4n6c32::101135562",
        "SYMBA",
    )
    funders = await call(
        mcp, "zenodo_lookup_vocabulary", {"vocabulary": "funders", "query": "wellcome", "size": 3}
    )
    assert (
        funders.structured_content["total"] == 30
        and "Several funders" in funders.structured_content["notice"]
    )
    lic = await call(mcp, "zenodo_lookup_vocabulary", {"vocabulary": "License", "query": "mit", "size": 3})
    assert lic.structured_content["entries"][0]["filter_value"] == "mit"
    assert lic.structured_content["entries"][0]["osi_approved"] is True
    n = fake.count()
    again = await call(mcp, "zenodo_lookup_vocabulary", {"vocabulary": "grant", "query": "SYMBA"})
    assert again.structured_content["cache"]["source"] == "store" and fake.count() == n
    types = (await call(mcp, "zenodo_lookup_vocabulary", {"vocabulary": "resource_types"})).structured_content
    # one request for Zenodo's resourcetypes vocabulary (not recorded: a 404, the built-in table answers)
    assert types["total"] == 43 and fake.count() == n + 1
    err = await call(mcp, "zenodo_lookup_vocabulary", {"vocabulary": "licenses", "funder": "01cwqze88"})
    assert reason(err) == "funder_only_for_awards"


async def test_six_tools_listed_read_only(mcp: Client, cache: Services) -> None:
    """All six Zenodo tools are listed read-only with output schemas carrying the cache block."""
    async with Client(mcp_server(cache)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    names = {n for n in tools if n.startswith("zenodo_")}
    assert names == {
        "zenodo_get_record",
        "zenodo_search_records",
        "zenodo_list_versions",
        "zenodo_list_files",
        "zenodo_read_file",
        "zenodo_lookup_vocabulary",
    }
    for name in names:
        assert tools[name].annotations.read_only_hint is True
        assert "cache" in tools[name].output_schema["properties"]
    assert "cursor" in tools["zenodo_get_record"].input_schema["properties"]
