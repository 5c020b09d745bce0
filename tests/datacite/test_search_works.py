"""``datacite_search_works`` over recorded pages: the composed request, rows, paging, walks, offline.

The recorded glacier page (61,386 matches, 3 rows with their gbif.col client), the first cursor
page of a "glacier mass balance" walk (2,510 matches) and DataCite's silent restart on a bad token,
the 400s DataCite gives for a broken query, and the store's own index answering when DataCite is down.
"""

from __future__ import annotations

from typing import Any

from syncd.datacite.args import SearchWorksArgs
from syncd.datacite.tools import get_work, search_works
from syncd.road.services import Services
from tests.datacite.upstream import Recorded, recorded_json

GLACIER = recorded_json("work-list/dois_query-glacier_size-3_fields_include-client.json")
WALK = recorded_json("work-list/dois_query-glacier-mass-balance_cursor-1_fields-doi-created.json")
RESTARTED = recorded_json("work-list/dois_query-glacier-mass-balance_cursor-garbage_restarted.json")


def _call(svc: Services, **arguments: Any) -> dict[str, Any]:
    args = SearchWorksArgs.model_validate(arguments).arguments()
    result = search_works(svc, args)
    assert result.structured_content is not None
    return result.structured_content


def _reason(data: dict[str, Any]) -> str:
    return str(data["error"]["data"]["reason"])


def test_a_text_search_answers_the_recorded_page(dc: Services, upstream: Recorded) -> None:
    """text=glacier: the clause (glacier) sorted by relevance; 3 rows of the gbif.col repository, the
    first "Cryptocalciella ..." with 10 creators (5 shown); totalCount 61,386, nextPage 2.
    """
    upstream.add_list(lambda path, q: path == "/dois" and q.get("query") == "(glacier)", GLACIER)
    data = _call(dc, text="glacier", limit=3)
    first = data["works"][0]
    assert first["title"].startswith("Cryptocalciella") and first["doi"] == "10.48580/dgwv7"
    assert (first["creatorCount"], len(first["creators"])) == (10, 5)
    assert (first["repositoryId"], first["repositoryName"], first["providerId"]) == (
        "gbif.col",
        "The Catalogue of Life",
        "gbif",
    )
    assert (data["totalCount"], data["nextPage"], data["sortApplied"]) == (61386, 2, "relevance")
    sent = upstream.calls[-1][2]
    assert (sent["sort"], sent["page[size]"], sent["page[number]"], sent["include"]) == (
        "relevance",
        "3",
        "1",
        "client",
    )
    again = _call(dc, text="glacier", limit=3)
    assert again["cache"]["source"] == "store" and len(upstream.calls) == 1


def test_filters_compose_the_query_and_parameters(dc: Services, upstream: Recorded) -> None:
    """Clauses in the contract's order, list filters as parameters, each applied filter as sent."""
    seen: list[dict[str, str]] = []

    def match(path: str, q: dict[str, str]) -> bool:
        seen.append(q)
        return True

    upstream.add_list(match, {"data": [], "meta": {"total": 0}, "links": {}})
    data = _call(
        dc,
        text="sea ice (arctic)",
        creator="0000-0002-1825-0097",
        funder="https://ror.org/021nxhr62",
        include_child_funders=True,
        fields_of_science=["Nanotechnology"],
        resource_types=["Dataset", "computational_notebook"],
        licenses=["CC-BY-4.0"],
        published_from=2010,
        published_to=2020,
    )
    q = seen[-1]
    assert q["query"] == (
        r"(sea ice \(arctic\)) AND "
        'creators.nameIdentifiers.nameIdentifier:("0000-0002-1825-0097" OR '
        '"https://orcid.org/0000-0002-1825-0097") AND '
        'subjects.subject:("FOS: Nanotechnology" OR "FOS: Nano-technology") AND '
        "publicationYear:[2010 TO 2020]"
    )
    assert (q["funded-by"], q["include-funder-child-organizations"]) == ("021nxhr62", "true")
    assert q["resource-type-id"] == "dataset,computational-notebook" and q["license"] == "cc-by-4.0"
    assert data["appliedFilters"]["funder"] == "funded-by=021nxhr62 (+ child organizations)"
    assert data["appliedFilters"]["published"] == "publicationYear:[2010 TO 2020]"
    assert data["totalCount"] == 0 and data["notice"].startswith("Nothing matched")
    assert "licence ids" in data["notice"].lower()


def test_declared_errors_come_before_any_request(dc: Services, upstream: Recorded) -> None:
    """Page x limit past 10,000 -> page_ceiling; cursor with page -> conflicting_paging; a forged
    cursor -> invalid_cursor; years reversed -> invalid_filter naming published_from; a bad ORCID
    check digit -> invalid_filter. DataCite is never asked.
    """
    assert _reason(_call(dc, text="x", page=101, limit=100)) == "page_ceiling"
    assert _reason(_call(dc, text="x", cursor="*", page=1)) == "conflicting_paging"
    assert _reason(_call(dc, text="x", cursor="bm90YW5lbnZlbG9wZQ")) == "invalid_cursor"
    reversed_years = _call(dc, published_from=2020, published_to=2010)
    assert (_reason(reversed_years), reversed_years["error"]["data"]["field"]) == (
        "invalid_filter",
        "published_from",
    )
    assert _reason(_call(dc, creator="0000-0002-1825-0098")) == "invalid_filter"
    assert upstream.calls == []


def test_a_cursor_walk_issues_its_own_envelope_and_detects_a_restart(
    dc: Services, upstream: Recorded
) -> None:
    """Cursor "*" sends page[cursor]=1 and returns nextCursor bound to the query; the next call sends
    DataCite's token; when DataCite restarts the walk (the recorded garbage-token answer: the first
    rows again) the answer is invalid_cursor.
    """
    token = "MTMxNDc4NTc3OTAwMCwxMC4xNTk0L3dkY2MvbWJfaHNnXzIwMDdfMjAxMA"
    upstream.add_list(lambda path, q: q.get("page[cursor]") == "1", WALK)
    upstream.add_list(lambda path, q: q.get("page[cursor]") == token, RESTARTED)
    first = _call(dc, text="glacier mass balance", limit=3, cursor="*")
    assert first["sortApplied"] == "oldest" and first["totalCount"] == 2510
    assert next(w["doi"] for w in first["works"]) == "10.1594/wdcc/mb_jam_1989-2010"
    assert "sort" not in upstream.calls[-1][2]
    second = _call(dc, text="glacier mass balance", limit=3, cursor=first["nextCursor"])
    assert upstream.calls[-1][2]["page[cursor]"] == token
    assert _reason(second) == "invalid_cursor"
    other = _call(dc, text="glacier", limit=3, cursor=first["nextCursor"])
    assert _reason(other) == "invalid_cursor"


def test_a_broken_query_is_invalid_query_with_its_position(dc: Services, upstream: Recorded) -> None:
    """DataCite's recorded token_mgr_error 400 for the caller's query -> invalid_query (line 1, column 24)."""
    body = recorded_json("error/dois_query-token-mgr-error_400.json")
    upstream.add_list(lambda path, q: True, body, status=400)
    data = _call(dc, query='(titles.title:"sea ice)')
    assert _reason(data) == "invalid_query"
    assert "line 1, column 24" in data["error"]["message"]


def test_datacite_down_answers_from_the_stored_works(dc: Services, upstream: Recorded) -> None:
    """With DataCite unreachable and no stored page, the stored works matching the words answer:
    the Dryad malaria dataset for "malaria hominids", local true, the notice saying so.
    """
    upstream.add_work("10.5061/dryad.8515")
    get_work(dc, "10.5061/dryad.8515")
    upstream.down = True
    data = _call(dc, text="malaria hominids")
    assert data["local"] is True and data["works"][0]["doi"] == "10.5061/dryad.8515"
    assert data["works"][0]["title"] == "Data from: A new malaria agent in African hominids."
    assert "syncd's own index" in data["notice"] and data["cache"]["stale"] is True
