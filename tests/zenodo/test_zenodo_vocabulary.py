"""The resource-type vocabulary in Zenodo's order and ids (issue 13 kind 8).

The built-in table is Zenodo's ``/api/vocabularies/resourcetypes`` as the contract lists it (43 entries,
by id); every resource type id and label the recorded 2025-2026 search aggregations carry
(``records_q-climate_size-2_sort-bestmatch_new-api.json``, ``records_custom-dwc-family-Felidae_new-api.json``)
agrees with it. When Zenodo answers the vocabulary route the stored answer takes precedence; when it
cannot be used, the built-in table answers. Through a real MCP client session over the fake upstream.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from syncd.config import Settings
from syncd.road.services import Services
from syncd.zenodo.views_lists import RESOURCE_TYPE_IDS, RESOURCE_TYPES
from tests.conftest import corpus_json, make_settings
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

pytestmark = pytest.mark.anyio

AGGREGATED = (
    "zenodo/search/records_q-climate_size-2_sort-bestmatch_new-api.json",
    "zenodo/search/records_custom-dwc-family-Felidae_new-api.json",
)


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


def aggregated_types(rel: str) -> list[tuple[str, str]]:
    """``(id, label)`` of every resource-type bucket (and inner subtype bucket) of a recorded search."""
    out = []
    for bucket in corpus_json(rel)["aggregations"]["resource_type"]["buckets"]:
        out.append((bucket["key"], bucket["label"]))
        out += [(b["key"], b["label"]) for b in (bucket.get("inner") or {}).get("buckets", [])]
    return out


@pytest.mark.parametrize("rel", AGGREGATED)
def test_the_built_in_table_agrees_with_the_recorded_aggregations(rel: str) -> None:
    """Each aggregated id is in the table with Zenodo's label (publication-section is "Book chapter")."""
    seen = aggregated_types(rel)
    assert len(seen) == 27
    assert {(rid, RESOURCE_TYPE_IDS[rid][2]) for rid, _ in seen} == set(seen)
    assert RESOURCE_TYPE_IDS["publication-section"][2] == "Book chapter"


def test_the_built_in_table_is_43_entries_in_id_order() -> None:
    """43 entries, by id, each subtype's parent a listed top-level type."""
    ids = [rid for rid, _, _ in RESOURCE_TYPES]
    assert len(ids) == 43 and ids == sorted(ids)
    assert {parent for _, _, parent in RESOURCE_TYPES if parent} <= {
        r for r, _, p in RESOURCE_TYPES if p is None
    }


async def test_resource_types_come_in_zenodos_order(mcp: Client, fake: FakeUpstream) -> None:
    """A "journal" lookup lists publication-article (Journal article) before publication-journal; the
    whole list starts dataset, event, image; a repeat asks Zenodo nothing more.
    """
    res = await mcp.call_tool(
        "zenodo_lookup_vocabulary", {"vocabulary": "resource_types", "query": "journal"}
    )
    entries = res.structured_content["entries"]
    assert [(e["filter_value"], e["label"], e["search_value"]) for e in entries] == [
        ("publication-article", "Journal article", "publication::publication-article"),
        ("publication-journal", "Journal", "publication::publication-journal"),
    ]
    every = await mcp.call_tool("zenodo_lookup_vocabulary", {"vocabulary": "resourcetype", "size": 25})
    data = every.structured_content
    assert data["total"] == 43 and data["next_page"] == 2
    assert [e["filter_value"] for e in data["entries"][:3]] == ["dataset", "event", "image"]
    assert data["entries"][0]["search_value"] == "dataset" and "parent_type" not in data["entries"][0]
    n = fake.count("/vocabularies/resourcetypes", service="zenodo")
    await mcp.call_tool("zenodo_lookup_vocabulary", {"vocabulary": "resource_types", "query": "image"})
    assert fake.count("/vocabularies/resourcetypes", service="zenodo") == n == 1


async def test_the_vocabulary_is_refreshed_from_zenodo_when_it_answers(
    mcp: Client, cache: Services, fake: FakeUpstream
) -> None:
    """When /vocabularies/resourcetypes answers, its entries (here two, written with the ids, titles
    and types the recorded records carry) replace the built-in table, sorted by id, and are stored.
    """
    body: dict[str, Any] = {
        "hits": {
            "total": 2,
            "hits": [
                {
                    "id": "publication-deliverable",
                    "title": {"de": "Projektergebnis", "en": "Project deliverable"},
                    "props": {"type": "publication", "subtype": "publication-deliverable"},
                },
                {
                    "id": "dataset",
                    "title": {"de": "Datensatz", "en": "Dataset"},
                    "props": {"type": "dataset"},
                },
            ],
        }
    }
    fake.set_body("zenodo", "/vocabularies/resourcetypes?page=1&size=25", body)
    res = await mcp.call_tool("zenodo_lookup_vocabulary", {"vocabulary": "resource_types"})
    data = res.structured_content
    assert data["total"] == 2 and data["cache"]["source"] == "upstream"
    assert [(e["filter_value"], e["label"], e.get("parent_type")) for e in data["entries"]] == [
        ("dataset", "Dataset", None),
        ("publication-deliverable", "Project deliverable", "publication"),
    ]
    again = await mcp.call_tool(
        "zenodo_lookup_vocabulary", {"vocabulary": "resource_types", "query": "deliverable"}
    )
    assert [e["filter_value"] for e in again.structured_content["entries"]] == ["publication-deliverable"]
    assert again.structured_content["cache"]["source"] == "store"
    assert fake.count("/vocabularies/resourcetypes", service="zenodo") == 1


async def test_offline_the_built_in_table_answers(mcp: Client, fake: FakeUpstream) -> None:
    """With Zenodo refusing connections, resource_types still answers all 43 (no error)."""
    fake.fault("refuse", service="zenodo")
    res = await mcp.call_tool("zenodo_lookup_vocabulary", {"vocabulary": "resource_types", "size": 25})
    assert res.is_error is False and res.structured_content["total"] == 43


async def test_search_filters_take_the_ids_and_labels(mcp: Client, fake: FakeUpstream) -> None:
    """resource_type accepts ids, labels and type::id; "other" is the top-level id, not image-other;
    a subtype filters by metadata.resource_type.id, a top-level type by props.type; an id Zenodo does
    not list is invalid_parameter pointing at the vocabulary.
    """
    fake.set_body("zenodo", "/records", corpus_json(AGGREGATED[0]))
    res = await mcp.call_tool(
        "zenodo_search_records",
        {"resource_type": ["Journal article", "publication::publication-section", "other"], "size": 2},
    )
    assert res.structured_content["effectiveQuery"] == (
        '(metadata.resource_type.id:"publication-article" OR metadata.resource_type.id:"publication-section"'
        ' OR metadata.resource_type.props.type:"other")'
    )
    bad = await mcp.call_tool("zenodo_search_records", {"resource_type": "journal-paper"})
    assert bad.is_error is True
    error = bad.structured_content["error"]["data"]
    assert error["reason"] == "invalid_parameter" and "vocabulary=resource_types" in error["recovery"]["hint"]


async def test_an_incomplete_vocabulary_listing_is_not_used(mcp: Client, fake: FakeUpstream) -> None:
    """A first page saying 30 entries but listing one, with no second page (404), leaves the built-in
    table answering: a partial vocabulary never replaces it.
    """
    one = {"id": "dataset", "title": {"en": "Dataset"}, "props": {"type": "dataset"}}
    fake.set_body(
        "zenodo", "/vocabularies/resourcetypes?page=1&size=25", {"hits": {"total": 30, "hits": [one]}}
    )
    res = await mcp.call_tool("zenodo_lookup_vocabulary", {"vocabulary": "resource_types"})
    assert res.structured_content["total"] == 43
    assert fake.count("/vocabularies/resourcetypes", service="zenodo") == 2
