"""Every answer of a tool has the same envelope, found or not (issue 13 kind 3).

Through a real MCP client session against the fake upstream (recorded corpus), each tool is called once
for a found answer and once for its miss or empty answer (``found: false``, zero hits, a page past the
end, no reference list); where a tool's only miss is an error, the error carries nothing but ``error``.
Walking each tool's output model: every key of every answer is a declared field, and a found and a miss
answer carry the same top-level keys except the tool's payload (declared below, e.g. ``record`` versus
``guidance``/``miss_kind``/``tombstone``) and the continuations the contracts give only when more
remain (``nextOffset``, ``next_page``, ...).
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from syncd.road.services import Services
from tests.conftest import corpus_json
from tests.fakeupstream import FakeUpstream
from tests.helpers import every_tool, mcp_server

pytestmark = pytest.mark.anyio

RAPTOR = "10.1101/598821"
ATLAS = "10.1016/j.physletb.2012.08.020"

CONTINUATIONS = {
    "notice",
    "nextOffset",
    "nextCursor",
    "nextWorksOffset",
    "nextWorksCursor",
    "next_page",
    "next_offset",
    "listedCount",
    "key_contains",
}
"""Keys present only when they apply (more remain, a notice to give, an input echoed) by the contracts."""

CROSSREF_PAGING = {"truncated", "shown", "cap"}
"""Crossref's list enrichment: present when more remain (anchors.md, get_references / get_work)."""

DATACITE_RECORD = {
    "doiUrl",
    "landingUrl",
    "titles",
    "creators",
    "contributors",
    "publisher",
    "publicationYear",
    "resourceTypeGeneral",
    "resourceType",
    "version",
    "language",
    "dates",
    "subjects",
    "descriptions",
    "fundingReferences",
    "geoLocations",
    "rights",
    "metadataLicense",
    "sizes",
    "formats",
    "alternateIdentifiers",
    "relatedIdentifiers",
    "relatedIdentifierCounts",
    "relatedItems",
    "counts",
    "repository",
    "registered",
    "created",
    "updated",
    "schemaVersion",
    "state",
}
"""Keys of datacite_get_work's found arm (the miss arm has none of them: contract §2)."""
DATACITE_MISS = {"missReason", "registrationAgency", "guidance"}
"""Keys of the DataCite typed miss (contract §3)."""

# tool -> (found arguments, miss arguments, keys only a found answer has, keys only a miss has)
PAIRS: dict[str, tuple[dict[str, Any], dict[str, Any], set[str], set[str]]] = {
    "crossref_search_works": ({"query": "ecology", "rows": 2}, {"query": "adfaaf"}, set(), set()),
    "crossref_get_references": (
        {"doi": RAPTOR, "limit": 3},
        {"doi": ATLAS},
        CROSSREF_PAGING,
        set(),
    ),
    "crossref_search_journals": ({"issn": "1803-2427"}, {"query": "ecology"}, set(), set()),
    "crossref_search_funders": ({"funder_doi": "10.13039/100000001"}, {"query": "national"}, set(), set()),
    "crossref_get_works": (
        {"dois": [RAPTOR, ATLAS]},
        {"dois": ["10.1371/NotARealDOI", "nonsense"]},
        set(),
        set(),
    ),
    "zenodo_get_record": (
        {"id": "5244404"},
        {"id": "22705918"},
        {"record", "resolved_from"},
        {"guidance", "miss_kind", "tombstone"},
    ),
    "zenodo_list_versions": (
        {"id": "22705923", "size": 3},
        {"id": "22705918"},
        {"concept_recid", "concept_doi", "latest_recid", "total_versions"},
        {"guidance", "miss_kind", "tombstone"},
    ),
    "zenodo_search_records": (
        {"query": 'title:"Frictionless Data Test"', "size": 2},
        {"query": "frictionless"},
        set(),
        set(),
    ),
    "zenodo_list_files": (
        {"id": "22917909", "limit": 4},
        {"id": "22917909", "key_contains": "nomatch"},
        set(),
        set(),
    ),
    "zenodo_lookup_vocabulary": (
        {"vocabulary": "License", "query": "mit", "size": 3},
        {"vocabulary": "licenses", "query": "nomatchxyz"},
        set(),
        set(),
    ),
    "syncd_list_changes": ({"since": "7d"}, {"kind": "zenodo", "types": "retraction"}, set(), set()),
    "datacite_get_work": (
        {"doi": "10.5061/dryad.8515"},
        {"doi": "10.1038/nphys1170"},
        DATACITE_RECORD,
        DATACITE_MISS,
    ),
    "datacite_search_works": ({"text": "glacier", "limit": 3}, {"text": "nomatchxyz"}, {"nextPage"}, set()),
    "datacite_get_citation": (
        {"doi": "10.5061/dryad.8515"},
        {"doi": "10.1038/nphys1170"},
        {"mediaType", "style", "citation", "citationHtml", "renderedLocally"},
        DATACITE_MISS,
    ),
    "datacite_list_reference": ({"topic": "resource_types"}, {"topic": "coverage"}, set(), set()),
    "datacite_search_repositories": ({"query": "glacier"}, {"software": "nomatchxyz"}, set(), set()),
    "datacite_trace_relations": (
        {"doi": "10.5061/dryad.8515"},
        {"doi": "10.1101/598821"},
        {"rootCounts"},
        set(),
    ),
    "syncd_cited_by": (
        {"doi": "10.1126/science.280.5362.421"},
        {"doi": "10.5555/cited-by-none"},
        set(),
        set(),
    ),
}
# Tools whose miss is an error answer (contracts: typed not-found reasons).
ERROR_MISSES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "crossref_get_work": ({"doi": RAPTOR}, {"doi": "10.1371/NotARealDOI"}),
    "crossref_get_member": ({"member_id": 98}, {"member_id": 99999999}),
    "crossref_get_prefix": ({"prefix": "10.1016"}, {"prefix": "10.5281"}),
    "zenodo_read_file": (
        {"id": "22917909", "key": "Intensivregister_Deutschland_Altersgruppen.csv", "max_bytes": 256},
        {"id": "22917909", "key": "nope.csv"},
    ),
}


# The not_on_zenodo miss (a Crossref DOI the Zenodo DOI search does not find): tool -> (found arguments,
# miss arguments, keys only a found answer has, keys only the miss has).
NOT_ON_ZENODO: dict[str, tuple[dict[str, Any], dict[str, Any], set[str], set[str]]] = {
    "zenodo_get_record": (
        {"id": "5244404"},
        {"id": RAPTOR},
        {"record", "resolved_from"},
        {"guidance", "miss_kind"},
    ),
    "zenodo_list_versions": (
        {"id": "22705923", "size": 3},
        {"id": f"doi:{RAPTOR}"},
        {"concept_recid", "concept_doi", "latest_recid", "total_versions"},
        {"guidance", "miss_kind"},
    ),
}
ZERO_HITS = "zenodo/search/records_q-conceptdoi_zero-hits.json"


def test_every_tool_is_walked() -> None:
    """The tables cover every tool, each once."""
    assert set(PAIRS) | set(ERROR_MISSES) == {t.name for t in every_tool()}
    assert not set(PAIRS) & set(ERROR_MISSES)


async def test_found_and_miss_answers_carry_the_same_envelope(cache: Services) -> None:
    """For each tool, a found and a miss answer have the same top-level keys beyond the tool's declared
    payload and the contracts' conditional continuations; every key is a field of the output model; a
    miss that is an error carries only ``error``.
    """
    async with Client(mcp_server(cache)) as client:
        for tool, pair in PAIRS.items():
            await _same_envelope(client, tool, *pair)
        for tool, (found_args, miss_args) in ERROR_MISSES.items():
            found = await client.call_tool(tool, found_args)
            miss = await client.call_tool(tool, miss_args)
            assert found.is_error is False and "error" not in found.structured_content, tool
            assert miss.is_error is True and set(miss.structured_content) == {"error"}, tool


async def _same_envelope(
    client: Client,
    tool: str,
    found_args: dict[str, Any],
    miss_args: dict[str, Any],
    found_only: set[str],
    miss_only: set[str],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Call ``tool`` for a found and a miss answer and check they carry the same envelope (see the
    module docstring); returns both structured answers.
    """
    fields = set({t.name: t.output for t in every_tool()}[tool].model_fields)
    assert found_only <= fields and miss_only <= fields, tool
    found = await client.call_tool(tool, found_args)
    miss = await client.call_tool(tool, miss_args)
    assert found.is_error is False and miss.is_error is False, (tool, miss.content[0].text)
    fk, mk = set(found.structured_content), set(miss.structured_content)
    assert fk <= fields and mk <= fields, (tool, (fk | mk) - fields)
    assert fk - mk - CONTINUATIONS == found_only & fk, (tool, sorted(fk - mk))
    assert mk - fk - CONTINUATIONS == miss_only & mk, (tool, sorted(mk - fk))
    return found.structured_content, miss.structured_content


async def test_not_on_zenodo_miss_carries_the_same_envelope_and_cache(
    cache: Services, fake: FakeUpstream
) -> None:
    """zenodo_get_record and zenodo_list_versions on the Crossref DOI 10.1101/598821 (the Zenodo DOI search
    finds nothing): the not_on_zenodo miss has the found answers' keys, ``cache`` included. Its provenance
    is the DOI search's: upstream when Zenodo was asked in this call, then the stored page (same etag).
    """
    fake.set_body("zenodo", "/records", corpus_json(ZERO_HITS))
    async with Client(mcp_server(cache)) as client:
        misses = [await _same_envelope(client, tool, *pair) for tool, pair in NOT_ON_ZENODO.items()]
    (found, first), (_, versions) = misses
    assert "cache" in found and first["miss_kind"] == versions["miss_kind"] == "not_on_zenodo"
    assert (first["truncated"], first["shown"], first["cap"]) == (False, 0, 25)
    assert (first["cache"]["source"], first["cache"]["stale"]) == ("upstream", False)
    assert versions["cache"]["source"] == "store"
    assert versions["cache"]["etag"] == first["cache"]["etag"]
    searched = [r for r in fake.requests if r.service == "zenodo" and r.query.get("q") == f'doi:"{RAPTOR}"']
    assert len(searched) == 1


async def test_record_miss_carries_truncated_shown_cap(cache: Services) -> None:
    """zenodo_get_record's deleted-record miss (22705918) reads truncated false, shown 0, cap 25, as a
    found answer's envelope does.
    """
    async with Client(mcp_server(cache)) as client:
        miss = (await client.call_tool("zenodo_get_record", {"id": "22705918"})).structured_content
    assert miss["found"] is False and miss["miss_kind"] == "deleted"
    assert (miss["truncated"], miss["shown"], miss["cap"]) == (False, 0, 25)


async def test_versions_page_past_the_end_keeps_the_series(cache: Services) -> None:
    """zenodo_list_versions page 3 of size 25 (47 versions, recorded past-end page) keeps latest_recid and
    the concept ids that page 1 gives, and names the page to ask for.
    """
    async with Client(mcp_server(cache)) as client:
        past = (
            await client.call_tool("zenodo_list_versions", {"id": "22705923", "page": 3, "size": 25})
        ).structured_content
        first = (
            await client.call_tool("zenodo_list_versions", {"id": "22705923", "size": 3})
        ).structured_content
    assert past["versions"] == [] and past["total_versions"] == 47
    for key in ("latest_recid", "concept_recid", "concept_doi"):
        assert past[key] == first[key], key
    assert past["notice"] == (
        "Page 3 is past the last page: 47 versions make 2 pages of 25; call again with page 2 for the "
        "oldest versions, or page 1 for the newest."
    )


async def test_not_on_zenodo_miss_served_stale_says_so(cache: Services, fake: FakeUpstream) -> None:
    """With the stored DOI search past its lifetime and Zenodo refusing connections, the not_on_zenodo
    miss is still answered (from the stored search) and its cache block says store-stale, with the reason.
    """
    fake.set_body("zenodo", "/records", corpus_json(ZERO_HITS))
    async with Client(mcp_server(cache)) as client:
        first = (await client.call_tool("zenodo_get_record", {"id": RAPTOR})).structured_content
        cache.settings.ttl.search = 0.001  # the stored search page is now stale
        fake.fault("refuse", service="zenodo")
        again = (await client.call_tool("zenodo_get_record", {"id": RAPTOR})).structured_content
    assert again["miss_kind"] == "not_on_zenodo" and again["guidance"] == first["guidance"]
    cache_block = again["cache"]
    assert (cache_block["source"], cache_block["stale"], cache_block["upstream_error"]) == (
        "store-stale",
        True,
        "upstream_unavailable",
    )
    assert cache_block["etag"] == first["cache"]["etag"]
