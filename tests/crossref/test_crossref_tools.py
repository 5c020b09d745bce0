"""The seven Crossref tools and the guide resource end to end through a real MCP client session.

Every claim is checked against values recorded in tests/corpus (titles, counts, ISSNs, names)
and against the fake upstream's request log (local-first: a repeated call makes 0 requests).
"""

from __future__ import annotations

import weakref
from typing import Any

import pytest
from mcp import Client, MCPError

from syncd.road.services import Services
from tests.conftest import Clock, corpus_json
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

# PostgreSQL in the full run only: these are tool tests; the store contract runs on both in every run
pytestmark = [pytest.mark.anyio, pytest.mark.both_backends(full_only=True)]


_SERVERS: weakref.WeakKeyDictionary[Services, Any] = weakref.WeakKeyDictionary()


async def call(cache: Services, name: str, args: dict[str, Any]) -> Any:
    """One tool call through a fresh MCP client session (the server is built once per cache); a call
    refused with a JSON-RPC error returns that ``MCPError``.
    """
    server = _SERVERS.get(cache)
    if server is None:
        server = _SERVERS[cache] = mcp_server(cache)
    async with Client(server) as client:
        try:
            return await client.call_tool(name, args)
        except MCPError as exc:
            return exc


def reason(res: Any) -> str:
    """The declared reason of an error result (schema refusals included: SEP-1303 tool errors)."""
    assert not isinstance(res, MCPError), res.message
    assert res.is_error is True, res.structured_content
    return res.structured_content["error"]["data"]["reason"]


# ------------------------------------------------------------------------------------------------ search


async def test_search_works_happy_path_then_local_first(cache: Services, fake: FakeUpstream) -> None:
    """query=ecology rows=2: the recorded page (total 586628, 'Communicating Ecology'), 1 request; the same
    query again (terms in another spacing) is answered from the store with 0 further requests.
    """
    first = await call(cache, "crossref_search_works", {"query": "ecology", "rows": 2})
    data = first.structured_content
    assert first.is_error is False
    assert data["totalResults"] == 586628
    assert data["returned"] == 2
    assert data["works"][0]["title"] == "Communicating Ecology"
    assert data["works"][0]["doi"] == "10.1093/obo/9780199830060-0238"
    assert data["cache"]["source"] == "upstream"
    assert "nextCursor" not in data
    assert fake.count("/works", service="crossref") == 1
    again = await call(cache, "crossref_search_works", {"query": "  ecology ", "rows": 2, "sort": ""})
    assert again.structured_content["works"][0]["title"] == "Communicating Ecology"
    assert again.structured_content["cache"]["source"] == "store"
    assert fake.count("/works", service="crossref") == 1


async def test_search_works_upserts_works_for_offline_fts(cache: Services, fake: FakeUpstream) -> None:
    """Works of a search page are stored; with Crossref down a new query is answered from the FTS index
    with a local-mirror notice (no traceback), flagged stale with upstream_error.
    """
    await call(cache, "crossref_search_works", {"query": "ecology", "rows": 2})
    fake.stop()
    res = await call(cache, "crossref_search_works", {"queryTitle": "communicating ecology"})
    data = res.structured_content
    assert res.is_error is False
    assert data["works"][0]["title"] == "Communicating Ecology"
    assert data["notice"].startswith("Local-mirror answer")
    assert data["cache"]["source"] == "store-stale"
    assert data["cache"]["stale"] is True
    assert data["cache"]["upstream_error"] == "upstream_unavailable"


async def test_offline_with_nothing_stored_is_declared_error(cache: Services, fake: FakeUpstream) -> None:
    """Upstream down and no query terms to search locally: upstream_unavailable, never a traceback."""
    fake.stop()
    res = await call(cache, "crossref_search_works", {"filter": {"type": "journal-article"}})
    assert reason(res) == "upstream_unavailable"
    assert "Recovery:" in res.content[0].text


async def test_search_partial_work_is_refetched_whole_by_get_work(
    cache: Services, fake: FakeUpstream
) -> None:
    """A work first seen in a search page is fetched whole by crossref_get_work (the list item has no
    reference list): the PeerJ cursor page holds 10.1371/journal.pone.0210699; get_work asks /works/{doi}.
    """
    fake.set_body(
        "crossref",
        "/works/10.1371/journal.pone.0210699",
        corpus_json("crossref/work/10.1371_journal.pone.0033693.json")
        | {
            "message": {
                **corpus_json("crossref/work/10.1371_journal.pone.0033693.json")["message"],
                "DOI": "10.1371/journal.pone.0210699",
            }
        },
    )
    fake.set_body(
        "crossref",
        "/works",
        corpus_json(
            "crossref/work-list/journals-1932-6203-works_rows-30_cursor-star_with-retraction-notices.json"
        ),
    )
    await call(cache, "crossref_search_works", {"query": "plos"})
    before = fake.count("/works/10.1371", service="crossref")
    res = await call(cache, "crossref_get_work", {"doi": "10.1371/journal.pone.0210699"})
    assert res.is_error is False
    assert fake.count("/works/10.1371", service="crossref") == before + 1
    assert res.structured_content["referencesCount"] == 70


async def test_cursor_walk_ends_on_first_empty_page(cache: Services, fake: FakeUpstream) -> None:
    """Physical Review C walk: 20 + 10 records with nextCursor, then an empty page with no nextCursor and
    the walk-complete notice (totalResults 30).
    """
    args = {
        "filter": {"from-created-date": "2019-06-01", "container-title": "Physical Review C"},
        "cursor": "*",
    }
    p1 = (await call(cache, "crossref_search_works", args)).structured_content
    assert p1["returned"] == 20 and p1["totalResults"] == 30
    assert p1["works"][0]["doi"] == "10.1103/physrevc.99.064304"
    p2 = (await call(cache, "crossref_search_works", {**args, "cursor": p1["nextCursor"]})).structured_content
    assert p2["returned"] == 10
    p3 = (await call(cache, "crossref_search_works", {**args, "cursor": p2["nextCursor"]})).structured_content
    assert p3["returned"] == 0
    assert "nextCursor" not in p3
    assert "cursor walk is complete" in p3["notice"]


async def test_empty_page_notices(cache: Services, fake: FakeUpstream) -> None:
    """Nothing matched (query adfaaf, total 0) and offset past the end (total 454 for widget) say which."""
    none = (await call(cache, "crossref_search_works", {"query": "adfaaf"})).structured_content
    assert none["totalResults"] == 0 and "Nothing matched" in none["notice"]
    page = corpus_json("crossref/work-list/works_query-widget_cursor-star.json")
    page["message"]["items"] = []
    fake.set_body("crossref", "/works?query=widget&offset=500", page)
    past = (await call(cache, "crossref_search_works", {"query": "widget", "offset": 500})).structured_content
    assert past["returned"] == 0
    assert "offset=500 is past the end of the 454" in past["notice"]


async def test_blank_terms_unfiltered_listing_and_select_alias(cache: Services, fake: FakeUpstream) -> None:
    """Blank query and filter values are dropped (works?rows=2 recorded, 183388203 results) with the
    unfiltered-listing notice; Crossref's own alias names (select, query.*) are accepted.
    """
    res = (
        await call(cache, "crossref_search_works", {"query": "  ", "filter": {"type": ""}, "rows": 2})
    ).structured_content
    assert res["totalResults"] == 183388203
    assert "unfiltered" in res["notice"]
    sel = await call(cache, "crossref_search_works", {"query": "ecology", "select": "DOI,title"})
    data = sel.structured_content
    assert data["returned"] == 20
    assert set(data["works"][0]) <= {"doi", "title", "score"}
    sent = [r for r in fake.requests if r.service == "crossref" and r.query.get("select")]
    assert sent[-1].query["select"] == "DOI,title"


async def test_facets_counts_highest_first(cache: Services, fake: FakeUpstream) -> None:
    """Rows 0 + facets: the lagotto facet page (total 10) returns facet values ordered by count."""
    fake.set_body(
        "crossref", "/works", corpus_json("crossref/work-list/works_query-lagotto_rows-0_facets.json")
    )
    data = (
        await call(
            cache, "crossref_search_works", {"query": "lagotto", "rows": 0, "facets": {"affiliation": "*"}}
        )
    ).structured_content
    assert data["totalResults"] == 10 and data["returned"] == 0
    aff = next(f for f in data["facets"] if f["name"] == "affiliation")
    assert aff["values"][0] == {
        "value": "Department of Equine and Small Animal Medicine; University of Helsinki; Helsinki Finland",
        "count": 2,
    }
    assert "notice" not in data


@pytest.mark.parametrize(
    ("body_file", "expected", "extra"),
    [
        ("crossref/error/validation-failure_members-filter-has-full-text.json", "unknown_filter", None),
        ("crossref/error/validation-failure_rows-things.json", "invalid_parameter", None),
    ],
)
async def test_crossref_400_rejections_map_to_reasons(
    cache: Services, fake: FakeUpstream, body_file: str, expected: str, extra: Any
) -> None:
    """Crossref's validation-failure bodies become declared reasons with data.rejected, never retried."""
    fake.set_body("crossref", "/works", corpus_json(body_file), status=400)
    res = await call(cache, "crossref_search_works", {"query": "x", "filter": {"has-full-text": "true"}})
    assert reason(res) == expected
    assert res.structured_content["error"]["data"]["rejected"][0]["value"] in ("has-full-text", "things")
    assert fake.count("/works", service="crossref") == 1


async def test_unknown_filter_suggests_hyphenated_key(cache: Services, fake: FakeUpstream) -> None:
    """Filter has_abstract: Crossref's filter-not-available -> unknown_filter with suggestion has-abstract."""
    body = {
        "status": "failed",
        "message-type": "validation-failure",
        "message": [
            {
                "type": "filter-not-available",
                "value": "has_abstract",
                "message": "Filter has_abstract specified but there is no such filter for this route. "
                "Valid filters for this route are: has-abstract, type",
            }
        ],
    }
    fake.set_body("crossref", "/works", body, status=400)
    res = await call(cache, "crossref_search_works", {"filter": {"has_abstract": "true"}})
    assert reason(res) == "unknown_filter"
    assert res.structured_content["error"]["data"]["suggestion"] == "has-abstract"


async def test_invalid_cursor_and_sort_cursor_conflict(cache: Services, fake: FakeUpstream) -> None:
    """A bad cursor (recorded 404 resource-failure) is invalid_cursor; a publication-date sort with a cursor
    is sort_cursor_conflict before any request; cursor+offset and a deep offset are refused locally.
    """
    res = await call(cache, "crossref_search_works", {"query": "widget", "cursor": "thing"})
    assert reason(res) == "invalid_cursor"
    n = fake.count(service="crossref")
    assert (
        reason(await call(cache, "crossref_search_works", {"query": "a", "cursor": "*", "sort": "published"}))
        == "sort_cursor_conflict"
    )
    assert (
        reason(await call(cache, "crossref_search_works", {"query": "a", "cursor": "*", "offset": 5}))
        == "cursor_offset_conflict"
    )
    assert (
        reason(await call(cache, "crossref_search_works", {"query": "a", "offset": 9990, "rows": 20}))
        == "offset_too_large"
    )
    assert (
        reason(await call(cache, "crossref_search_works", {"query": "a", "rows": 101})) == "invalid_arguments"
    )
    assert (
        reason(await call(cache, "crossref_search_works", {"filter": {"issn": "12-34"}}))
        == "invalid_parameter"
    )
    assert reason(await call(cache, "crossref_search_works", {"fields": ["nope"]})) == "invalid_arguments"
    assert fake.count(service="crossref") == n


@pytest.mark.parametrize(
    ("kind", "params", "expected"),
    [
        ("rate_limit", {"retry_after": 30}, "rate_limited"),
        ("status", {"status": 503}, "upstream_unavailable"),
        ("html", {}, "upstream_unavailable"),
        ("text", {}, "malformed_response"),
        ("status", {"status": 504}, "request_timeout"),
    ],
)
async def test_upstream_failures_are_declared_reasons(
    cache: Services, fake: FakeUpstream, kind: str, params: dict[str, Any], expected: str
) -> None:
    """Upstream failures on a search with nothing stored come back as the declared reason."""
    fake.fault(kind, service="crossref", **params)
    res = await call(cache, "crossref_search_works", {"filter": {"type": "dataset"}})
    assert reason(res) == expected


# -------------------------------------------------------------------------------------------- references


async def test_get_references_shares_the_stored_work(cache: Services, fake: FakeUpstream) -> None:
    """10.1002/jor.1100150407 has 36 references; page 3 of 10 from 0 has nextOffset 10; after get_work no
    second request is made; the third reference's title is relayed.
    """
    await call(cache, "crossref_get_work", {"doi": "10.1002/jor.1100150407"})
    res = await call(
        cache, "crossref_get_references", {"doi": "https://doi.org/10.1002/JOR.1100150407", "limit": 10}
    )
    data = res.structured_content
    assert data["referenceCount"] == 36
    assert data["nextOffset"] == 10
    assert (
        data["references"][2]["articleTitle"]
        == "Recovery of skeletal muscle after 3 mo of hindlimb immobilization in rats"
    )
    assert data["references"][2]["doi"] == "10.1152/jappl.1979.47.2.435"
    assert data["cache"]["source"] == "store"
    assert fake.count("/works", service="crossref") == 1


async def test_get_references_notices(cache: Services) -> None:
    """No list indexed (10.1016/j.actao.2019.01.006, 69 counted) and offset past the end both say why;
    referenceCount is what Crossref counts in both tools (69, as crossref_get_work's referencesCount),
    listedCount what can be paged (0) (issue 14.8: it said 0 here and 69 in crossref_get_work).
    """
    none = (
        await call(cache, "crossref_get_references", {"doi": "10.1016/j.actao.2019.01.006"})
    ).structured_content
    assert (
        none["referenceCount"] == 69
        and none["listedCount"] == 0
        and "No reference list indexed" in none["notice"]
        and "69" in none["notice"]
    )
    work = (await call(cache, "crossref_get_work", {"doi": "10.1016/j.actao.2019.01.006"})).structured_content
    assert work["referencesCount"] == none["referenceCount"]
    past = (
        await call(cache, "crossref_get_references", {"doi": "10.1002/jor.1100150407", "offset": 40})
    ).structured_content
    assert (
        past["references"] == []
        and "Offset 40 is past the end of this reference list (36 references listed)" in past["notice"]
        and "listedCount" not in past
    )


async def test_citation_strings_are_stripped_and_decoded(cache: Services) -> None:
    """Citation strings lose <i> markup and decode &amp;; the DOI inside stays byte-exact."""
    data = (
        await call(cache, "crossref_get_references", {"doi": "10.53731/r79s4nh-97aq74v-ag4t1"})
    ).structured_content
    texts = [r.get("unstructured") or "" for r in data["references"]]
    assert (
        "Fenner, M., & Aryani, A. (2019). Introducing the PID Graph. https://doi.org/10.5438/jwvf-8a66"
        in texts
    )


# -------------------------------------------------------------------------------------------- RA lookups


async def test_zenodo_doi_short_circuits_without_crossref(cache: Services, fake: FakeUpstream) -> None:
    """10.5281/zenodo.13225792 (BC-08): doi_not_found naming DataCite and zenodo_get_record, 0 requests."""
    for tool in ("crossref_get_work", "crossref_get_references"):
        res = await call(cache, tool, {"doi": "10.5281/zenodo.13225792"})
        assert reason(res) == "doi_not_found"
        data = res.structured_content["error"]["data"]
        assert data["registrationAgency"] == "DataCite" and data["zenodoRecordId"] == "13225792"
        assert "zenodo_get_record" in res.content[0].text
    assert fake.count(service="crossref") == 0 and fake.count(service="doi") == 0


async def test_other_agency_doi_names_agency_cached_per_prefix(cache: Services, fake: FakeUpstream) -> None:
    """A DataCite arXiv DOI gets doi_not_found with registrationAgency DataCite; a second DOI under the same
    prefix asks doi.org no more (cached per prefix); a mEDRA DOI names mEDRA.
    """
    res = await call(cache, "crossref_get_work", {"doi": "10.48550/arXiv.2101.00001"})
    assert reason(res) == "doi_not_found"
    assert res.structured_content["error"]["data"]["registrationAgency"] == "DataCite"
    await call(cache, "crossref_get_work", {"doi": "10.48550/arXiv.2101.00002"})
    assert fake.count(service="doi") == 1
    medra = await call(cache, "crossref_get_work", {"doi": "10.1430/8105"})
    assert medra.structured_content["error"]["data"]["registrationAgency"] == "mEDRA"


async def test_datacite_10_5281_points_at_zenodo(cache: Services, fake: FakeUpstream) -> None:
    """A non-zenodo.N 10.5281 DOI, after Crossref's 404, is DataCite and points at zenodo_get_record."""
    res = await call(cache, "crossref_get_work", {"doi": "10.5281/other.1"})
    assert reason(res) == "doi_not_found"
    assert "zenodo_get_record" in res.content[0].text


# --------------------------------------------------------------------------------------------- entities


async def test_journal_by_issn_local_first(cache: Services, fake: FakeUpstream) -> None:
    """ISSN 1803-2427: Journal of Landscape Ecology, 356 DOIs, years ascending; second call 0 requests."""
    data = (await call(cache, "crossref_search_journals", {"issn": "18032427"})).structured_content
    j = data["journals"][0]
    assert j["title"] == "Journal of Landscape Ecology"
    assert j["issn"] == ["1803-2427", "1805-4196"]
    assert j["totalDois"] == 356 and j["doisByYear"][0] == {"year": 2008, "count": 10}
    assert data["journalsTotal"] == 1
    n = fake.count(service="crossref")
    again = (await call(cache, "crossref_search_journals", {"issn": "1803-2427"})).structured_content
    assert again["cache"]["source"] == "store" and fake.count(service="crossref") == n


async def test_journal_title_search_and_ambiguity(cache: Services, fake: FakeUpstream) -> None:
    """Query ecology rows 2: Ecology and Population Ecology of 337, nextOffset 2; include_works with 337
    matches is ambiguous_journal naming candidates and ISSNs.
    """
    data = (await call(cache, "crossref_search_journals", {"query": "ecology", "rows": 2})).structured_content
    assert [j["title"] for j in data["journals"]] == ["Ecology", "Population Ecology"]
    assert data["journalsTotal"] == 337 and data["nextOffset"] == 2
    res = await call(
        cache, "crossref_search_journals", {"query": "ecology", "rows": 2, "include_works": True}
    )
    assert reason(res) == "ambiguous_journal"
    err = res.structured_content["error"]["data"]
    assert err["matchedTotal"] == 337 and err["candidates"][0]["issn"] == ["0012-9658", "1939-9170"]
    assert "0012-9658" in res.content[0].text


async def test_journal_include_works_and_errors(cache: Services, fake: FakeUpstream) -> None:
    """include_works for 1803-2427 lists its works (49 total); unknown ISSN is issn_not_found; ceilings and
    cursor/offset conflicts are refused.
    """
    fake.set_body(
        "crossref",
        "/journals/1803-2427/works",
        corpus_json("crossref/work-list/journals-1803-2427-works_rows-5.json"),
    )
    data = (
        await call(cache, "crossref_search_journals", {"issn": "1803-2427", "include_works": True, "rows": 5})
    ).structured_content
    assert data["worksTotal"] == 49 and data["recentWorks"][0]["doi"] == "10.2478/v10285-012-0020-5"
    assert data["nextWorksOffset"] == 5
    assert reason(await call(cache, "crossref_search_journals", {"issn": "0000-0000"})) == "issn_not_found"
    assert (
        reason(await call(cache, "crossref_search_journals", {"query": "x", "offset": 99_995}))
        == "offset_too_large"
    )
    assert (
        reason(
            await call(
                cache,
                "crossref_search_journals",
                {"issn": "1803-2427", "include_works": True, "works_offset": 9995},
            )
        )
        == "works_offset_too_large"
    )
    assert (
        reason(
            await call(
                cache,
                "crossref_search_journals",
                {"issn": "1803-2427", "include_works": True, "works_offset": 5, "works_cursor": "*"},
            )
        )
        == "works_cursor_offset_conflict"
    )
    assert reason(await call(cache, "crossref_search_journals", {"issn": "12345"})) == "invalid_arguments"


async def test_funder_by_doi_with_descendants_and_works(cache: Services, fake: FakeUpstream) -> None:
    """https://doi.org/10.13039/100000001: National Science Foundation, 84 descendants, worksCount 447883;
    funded works from /funders/{id}/works (368301 total); second call 0 requests.
    """
    fake.set_body(
        "crossref",
        "/funders/10.13039/100000001/works",
        corpus_json("crossref/work-list/funders-10.13039-100000001-works_rows-5.json"),
    )
    data = (
        await call(
            cache,
            "crossref_search_funders",
            {"funder_doi": "https://doi.org/10.13039/100000001", "include_works": True, "rows": 5},
        )
    ).structured_content
    f = data["funders"][0]
    assert f["name"] == "National Science Foundation" and f["worksCount"] == 447883
    assert len(f["descendants"]) == 84 and f["descendants"][0] == "100000076"
    assert (
        data["fundedWorksTotal"] == 368301
        and data["fundedWorks"][0]["doi"] == "10.1080/19345747.2020.1823538"
    )
    n = fake.count(service="crossref")
    again = await call(
        cache, "crossref_search_funders", {"funder_doi": "100000001", "include_works": True, "rows": 5}
    )
    assert again.structured_content["cache"]["source"] == "store" and fake.count(service="crossref") == n


async def test_funder_name_search_ambiguity_and_replaced_by(cache: Services, fake: FakeUpstream) -> None:
    """Query NSF rows 2 (93 matches) lists Large Facilities Office; include_works is ambiguous_funder; a
    replaced-by entry carries the deprecation notice naming its successor; unknown id is funder_not_found.
    """
    data = (await call(cache, "crossref_search_funders", {"query": "NSF", "rows": 2})).structured_content
    assert data["fundersTotal"] == 93 and data["funders"][0]["name"] == "Large Facilities Office"
    res = await call(cache, "crossref_search_funders", {"query": "NSF", "rows": 2, "include_works": True})
    assert reason(res) == "ambiguous_funder"
    assert {"name": "Large Facilities Office", "id": "100014071"} in res.structured_content["error"]["data"][
        "candidates"
    ]
    old = corpus_json("crossref/funder/funders-10.13039-100000015.json")
    old["message"] = {**old["message"], "id": "100004440", "replaced-by": ["100010269"]}
    fake.set_body("crossref", "/funders/10.13039/100004440", old)
    dep = (
        await call(cache, "crossref_search_funders", {"funder_doi": "10.13039/100004440"})
    ).structured_content
    assert dep["funders"][0]["replacedBy"] == ["100010269"] and "100010269" in dep["notice"]
    assert (
        reason(await call(cache, "crossref_search_funders", {"funder_doi": "999999999"}))
        == "funder_not_found"
    )
    assert (
        reason(await call(cache, "crossref_search_funders", {"funder_doi": "10.1000/abc"}))
        == "invalid_parameter"
    )


async def test_member_and_prefix(cache: Services, fake: FakeUpstream) -> None:
    """Member 98 is Hindawi Limited (8 prefixes, journal-article largest type 130272); prefix 10.1016 is
    Elsevier BV, member 78; repeats make 0 requests; unknown member/prefix are declared misses.
    """
    m = (await call(cache, "crossref_get_member", {"member_id": 98})).structured_content
    assert m["primaryName"] == "Hindawi Limited" and len(m["prefixes"]) == 8
    assert m["worksByType"][0] == {"type": "journal-article", "count": 130272}
    assert "Hindawi Limited" not in m["names"]
    assert m["coverage"][0]["category"] == "abstracts"
    p = (await call(cache, "crossref_get_prefix", {"prefix": "10.1016"})).structured_content
    assert p == {**p, "prefix": "10.1016", "ownerName": "Elsevier BV", "memberId": 78}
    n = fake.count(service="crossref")
    assert (await call(cache, "crossref_get_member", {"member_id": 98})).structured_content["cache"][
        "source"
    ] == "store"
    assert (await call(cache, "crossref_get_prefix", {"prefix": "10.1016"})).structured_content["cache"][
        "source"
    ] == "store"
    assert fake.count(service="crossref") == n
    assert reason(await call(cache, "crossref_get_member", {"member_id": 99999999})) == "member_not_found"
    miss = await call(cache, "crossref_get_prefix", {"prefix": "10.5281"})
    assert reason(miss) == "prefix_not_found"
    assert miss.structured_content["error"]["data"]["registrationAgency"] == "DataCite"
    assert reason(await call(cache, "crossref_get_prefix", {"prefix": "10.1016/x"})) == "invalid_arguments"
    assert reason(await call(cache, "crossref_get_member", {"member_id": 0})) == "invalid_arguments"


async def test_entities_offline_served_stale(
    cache: Services, fake: FakeUpstream, injected_clock: Clock
) -> None:
    """Past their lifetime with Crossref down, stored member and journal are answered flagged stale."""
    await call(cache, "crossref_get_member", {"member_id": 98})
    await call(cache, "crossref_search_journals", {"issn": "1803-2427"})
    cache.settings.ttl.entity = 0.001
    fake.stop()
    injected_clock.advance(1.0)  # older than its 1 ms lifetime: stale (the injected clock, no sleep)
    m = (await call(cache, "crossref_get_member", {"member_id": 98})).structured_content
    assert m["primaryName"] == "Hindawi Limited"
    assert m["cache"]["source"] == "store-stale" and m["cache"]["upstream_error"] == "upstream_unavailable"
    j = (await call(cache, "crossref_search_journals", {"issn": "1803-2427"})).structured_content
    assert j["journals"][0]["title"] == "Journal of Landscape Ecology" and j["cache"]["stale"] is True


# ----------------------------------------------------------------------------------------------- guide


async def test_guide_resource_and_template(cache: Services) -> None:
    """skill://crossref-guide/SKILL.md is listed and readable, also through the skill://{+path} template."""
    async with Client(mcp_server(cache)) as client:
        listed = await client.list_resources()
        assert "skill://crossref-guide/SKILL.md" in [str(r.uri) for r in listed.resources]
        text = (await client.read_resource("skill://crossref-guide/SKILL.md")).contents[0].text
        assert "Confirming a citation match" in text and "store-stale" in text
        templates = await client.list_resource_templates()
        assert "skill://{+path}" in [t.uri_template for t in templates.resource_templates]


async def test_tool_annotations_follow_the_anchor(cache: Services) -> None:
    """All 8 Crossref tools are listed; read-only everywhere, idempotent on gets, open-world on searches."""
    async with Client(mcp_server(cache)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    names = {n for n in tools if n.startswith("crossref_")}
    assert names == {
        "crossref_get_work",
        "crossref_search_works",
        "crossref_get_references",
        "crossref_search_journals",
        "crossref_search_funders",
        "crossref_get_member",
        "crossref_get_prefix",
        "crossref_get_works",
    }
    assert all(tools[n].annotations.read_only_hint for n in names)
    assert tools["crossref_get_works"].annotations.idempotent_hint is True
    assert tools["crossref_get_member"].annotations.idempotent_hint is True
    assert tools["crossref_search_works"].annotations.open_world_hint is True
    assert tools["crossref_search_works"].input_schema["properties"]["rows"]["maximum"] == 100
