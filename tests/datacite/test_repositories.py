"""``datacite_search_repositories`` over the recorded ``/repositories`` pages.

The glacier search (one account, ethz.wgms of provider kadq, certificates WDS and CoreTrustSeal),
the ``ids=`` lookup (dryad.dryad and ethz.wgms in name order, a missing id named), the filters as
sent, ``conflicting_lookup`` before any request, and the page answered from the store.
"""

from __future__ import annotations

from typing import Any

from syncd.datacite.args import SearchRepositoriesArgs
from syncd.datacite.tools import search_repositories
from syncd.road.services import Services
from tests.datacite.upstream import Recorded, recorded_json

GLACIER = recorded_json("repository-list/repositories_query-glacier_size-3.json")
IDS = recorded_json("repository-list/repositories_ids-ethz.wgms-dryad.dryad_query-ignored.json")


def _call(svc: Services, **arguments: Any) -> dict[str, Any]:
    result = search_repositories(svc, SearchRepositoriesArgs.model_validate(arguments).arguments())
    assert result.structured_content is not None
    return result.structured_content


def test_a_query_with_filters(dc: Services, upstream: Recorded) -> None:
    """query=glacier, certificates, client type by its label: the WGMS row with provider kadq (from the
    provider relationship, not the id's ethz prefix), its certificates and FOS subject; filters as sent.
    """
    upstream.add_list(lambda path, q: path == "/repositories" and "ids" not in q, GLACIER)
    data = _call(dc, query="glacier", limit=3, certificates=["coretrustseal"], client_type="Repository")
    row = data["repositories"][0]
    assert (row["repositoryId"], row["name"], row["providerId"]) == (
        "ethz.wgms",
        "World Glacier Monitoring Service",
        "kadq",
    )
    assert row["certificates"] == ["WDS", "CoreTrustSeal"] and row["year"] == 2012
    assert row["subjects"] == ["Earth and related environmental sciences"]
    assert data["appliedFilters"] == {
        "certificates": "certificate=CoreTrustSeal",
        "client_type": "client-type=repository",
    }
    assert (data["totalCount"], data["orderApplied"]) == (1, "name")
    sent = upstream.calls[-1][2]
    assert (sent["query"], sent["page[size]"]) == ("(glacier)", "3")
    assert (
        _call(dc, query="glacier", limit=3, certificates=["CoreTrustSeal"], client_type="repository")[
            "cache"
        ]["source"]
        == "store"
    )


def test_an_id_lookup_names_the_missing_ids(dc: Services, upstream: Recorded) -> None:
    """repository_ids alone: ids= lower-cased, page[size] at least their number; rows in name order;
    the id DataCite did not return is named in the notice.
    """
    upstream.add_list(lambda path, q: "ids" in q, IDS)
    data = _call(dc, repository_ids=["ETHZ.WGMS", "dryad.dryad", "nope.nope"], limit=2)
    assert [r["repositoryId"] for r in data["repositories"]] == ["dryad.dryad", "ethz.wgms"]
    assert upstream.calls[-1][2]["ids"] == "ethz.wgms,dryad.dryad,nope.nope"
    assert upstream.calls[-1][2]["page[size]"] == "3"
    assert data["notice"] == "No repository has the id nope.nope."


def test_ids_with_a_query_conflict_before_any_request(dc: Services, upstream: Recorded) -> None:
    """DataCite's ids= silently ignores query and filters, so combining them is conflicting_lookup."""
    data = _call(dc, repository_ids=["ethz.wgms"], query="glacier")
    assert data["error"]["data"]["reason"] == "conflicting_lookup" and upstream.calls == []
