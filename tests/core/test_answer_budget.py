"""Every tool answer fits the ``answer_max_chars`` budget, and a cut one continues (issue 13 kind 10).

Through a real MCP client session against the fake upstream (recorded corpus): each of the 14 tools is
called with the largest request its input schema allows, and the answer's size (text block plus
structured JSON) stays within the budget. A cut answer carries its continuation and a notice naming
the next call, and that call returns the next part. The text block is a compact rendering, never the
structured JSON again.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from mcp import Client

from syncd.config import Settings
from syncd.datacite.views import document as datacite_document
from syncd.datacite.views_citation import render_csl_json
from syncd.registry import open_services
from syncd.road.services import Services
from syncd.store.repo import Store
from syncd.tools.fit import Fit, answer_size
from tests.conftest import corpus_json, make_settings
from tests.fakeupstream import FakeUpstream
from tests.helpers import every_tool, mcp_server

pytestmark = pytest.mark.anyio

ATLAS = "10.1016/j.physletb.2012.08.020"  # 2932 authors
REVIEW = "10.1038/s43586-021-00024-3"  # 161 references
CSV_KEY = "Intensivregister_Deutschland_Altersgruppen.csv"
BUDGET = Settings.model_fields["answer_max_chars"].default


def _services(fake: FakeUpstream, db_url: str, **overrides: Any) -> tuple[Store, Services]:
    settings = make_settings(fake, db_url, **overrides)
    store = Store.open(settings.database_url)
    return store, open_services(settings, store)


def _size(res: Any) -> int:
    return answer_size("".join(c.text for c in res.content), res.structured_content)


def _search_page() -> dict[str, Any]:
    """The recorded 100-row works page, its first item replaced by the ATLAS work (2932 authors)."""
    page = corpus_json("crossref/work-list/funders-10.13039-100000001-works_rows-100_large.json")
    page = copy.deepcopy(page)
    page["message"]["items"][0] = corpus_json("crossref/work/10.1016_j.physletb.2012.08.020.json")["message"]
    return page


HEPDATA = "10.17182/hepdata.77274.v1"
"""The recorded DataCite record with 1,000 creators."""

LARGEST: list[tuple[str, dict[str, Any]]] = [
    ("crossref_get_work", {"doi": ATLAS, "limit": 500}),
    ("crossref_search_works", {"query": "engineering", "rows": 100, "authorLimit": 500}),
    ("crossref_get_references", {"doi": REVIEW, "limit": 500}),
    ("crossref_search_journals", {"issn": "1803-2427", "include_works": True, "rows": 100}),
    ("crossref_search_funders", {"funder_doi": "10.13039/100000001", "include_works": True, "rows": 100}),
    ("crossref_get_member", {"member_id": 98}),
    ("crossref_get_prefix", {"prefix": "10.1016"}),
    ("crossref_get_works", {"dois": [i["DOI"] for i in _search_page()["message"]["items"]]}),  # 100 works
    ("zenodo_get_record", {"id": "5244404", "citation_style": "bibtex"}),
    ("zenodo_search_records", {"query": 'title:"Frictionless Data Test"', "size": 25}),
    ("zenodo_list_versions", {"id": "22705923", "size": 25}),
    ("zenodo_list_files", {"id": "22917909", "limit": 200}),
    ("zenodo_read_file", {"id": "22917909", "key": CSV_KEY, "max_bytes": 65_536}),
    ("zenodo_lookup_vocabulary", {"vocabulary": "licenses", "size": 25}),
    ("datacite_get_work", {"doi": "10.17182/hepdata.77274.v1"}),  # 1,000 creators
    ("datacite_search_works", {"text": "glacier", "limit": 100}),
    ("datacite_get_citation", {"doi": HEPDATA, "format": "csl_json"}),
    ("datacite_list_reference", {"topic": "fields_of_science"}),
    ("datacite_search_repositories", {"query": "glacier", "limit": 100}),
    ("datacite_trace_relations", {"doi": "10.17182/hepdata.77274.v1", "max_nodes": 100}),
    ("syncd_list_changes", {"since": "4w", "limit": 200}),
    ("syncd_cited_by", {"doi": "10.1126/science.280.5362.421", "limit": 500}),
]


def test_every_tool_declares_how_its_answers_are_fitted() -> None:
    """Each tool's spec carries how its answers are fitted (no tool escapes the budget)."""
    assert len(every_tool()) == 22
    assert all(isinstance(t.fit, Fit) for t in every_tool())


async def test_largest_request_of_every_tool_fits_the_budget(fake: FakeUpstream, db_url: str) -> None:
    """The largest request each tool's schema allows answers within answer_max_chars (60,000 by
    default), with no JSON copy in the text block; the ones that had to be cut say so in the notice.
    """
    fake.set_body("crossref", "/works", _search_page())
    for works in ("/funders/10.13039/100000001/works", "/journals/1803-2427/works"):  # 100-work pages
        fake.set_body("crossref", works, _search_page())
    # DataCite's content negotiation of the 1,000-creator record (no recording holds it): its CSL JSON
    # as the renderer that reproduces DataCite's (the recorded 10.5061/dryad.8515 one) writes it
    hepdata = corpus_json("datacite/work/10.17182_hepdata.77274.v1.json")
    csl = render_csl_json(datacite_document(hepdata) or {})
    fake.set_body("datacite", f"/dois/application/vnd.citationstyles.csl+json/{HEPDATA}", csl)
    store, svc = _services(fake, db_url)
    try:
        async with Client(mcp_server(svc)) as client:
            assert {t.name for t in (await client.list_tools()).tools} == {t for t, _ in LARGEST}
            for tool, args in LARGEST:
                res = await client.call_tool(tool, args)
                assert res.is_error is False, (tool, res.content[0].text)
                assert _size(res) <= BUDGET, (tool, _size(res))
                assert "```json" not in res.content[0].text, tool
                sc = res.structured_content
                if "answer_max_chars" in (sc.get("notice") or ""):
                    assert "call again" in sc["notice"] or "walk with" in sc["notice"], (tool, sc["notice"])
    finally:
        svc.close()
        store.close()


async def test_search_page_with_thousands_of_authors_is_cut_and_continues(
    fake: FakeUpstream, db_url: str
) -> None:
    """rows=100, authorLimit=500 over a page holding the ATLAS work: uncut it is far over the budget;
    cut, the author lists are shortened (authorCount keeps 2932) and, if needed, the works list ends at
    nextOffset, which the next call sends to Crossref as its offset.
    """
    fake.set_body("crossref", "/works", _search_page())
    args = {"query": "engineering", "rows": 100, "authorLimit": 500}
    store, svc = _services(fake, db_url, answer_max_chars=0)
    try:
        async with Client(mcp_server(svc)) as client:
            whole = await client.call_tool("crossref_search_works", args)
    finally:
        svc.close()
        store.close()
    assert _size(whole) > BUDGET
    assert len(whole.structured_content["works"][0]["authors"]) == 500

    store, svc = _services(fake, db_url, answer_max_chars=20_000)
    try:
        async with Client(mcp_server(svc)) as client:
            res = await client.call_tool("crossref_search_works", args)
            sc = res.structured_content
            assert _size(res) <= 20_000
            atlas = sc["works"][0]
            assert atlas["doi"] == ATLAS and atlas["authorCount"] == 2932
            assert sc["truncated"] is True and len(atlas["authors"]) == sc["cap"] < 500
            assert f"Author lists cut to {sc['cap']} per work" in sc["notice"]
            assert sc["returned"] == len(sc["works"])
            if sc["returned"] < 100:
                assert sc["nextOffset"] == sc["returned"]
                assert f"call again with offset={sc['nextOffset']}" in sc["notice"]
                fake.reset_log()
                await client.call_tool("crossref_search_works", {**args, "offset": sc["nextOffset"]})
                sent = [r.query for r in fake.requests if r.service_path == "/works"]
                assert sent and sent[-1].get("offset") == str(sc["nextOffset"])
    finally:
        svc.close()
        store.close()


async def test_author_pages_cut_to_the_budget_continue_with_the_next_author(
    fake: FakeUpstream, db_url: str
) -> None:
    """crossref_get_work limit=500 on the ATLAS paper under a 20,000-character budget: the page is cut,
    nextOffset names the first author not shown, and calling with it returns exactly that author.
    """
    store, svc = _services(fake, db_url, answer_max_chars=0)
    try:
        async with Client(mcp_server(svc)) as client:
            whole = (
                await client.call_tool("crossref_get_work", {"doi": ATLAS, "limit": 500})
            ).structured_content
    finally:
        svc.close()
        store.close()
    store, svc = _services(fake, db_url, answer_max_chars=20_000)
    try:
        async with Client(mcp_server(svc)) as client:
            res = await client.call_tool("crossref_get_work", {"doi": ATLAS, "limit": 500})
            sc = res.structured_content
            assert _size(res) <= 20_000
            k = sc["nextOffset"]
            assert 0 < k < 500 and sc["shown"] == k and sc["truncated"] is True
            assert sc["authors"] == whole["authors"][:k]
            assert f"Showing authors 1-{k} of 2,932; call again with offset={k}" in sc["notice"]
            assert "Showing authors 1–500" not in sc["notice"]  # the superseded paging advice is gone
            nxt = await client.call_tool("crossref_get_work", {"doi": ATLAS, "limit": 500, "offset": k})
            assert nxt.structured_content["authors"][0] == whole["authors"][k]
    finally:
        svc.close()
        store.close()


async def test_reference_list_cut_to_the_budget_continues(fake: FakeUpstream, db_url: str) -> None:
    """crossref_get_references limit=500 on a 161-reference review: uncut about 150,000 characters; cut
    to the default budget with nextOffset, and the next call starts at the first reference not shown.
    """
    store, svc = _services(fake, db_url, answer_max_chars=0)
    try:
        async with Client(mcp_server(svc)) as client:
            whole = await client.call_tool("crossref_get_references", {"doi": REVIEW, "limit": 500})
    finally:
        svc.close()
        store.close()
    refs = whole.structured_content["references"]
    assert len(refs) == 161 and _size(whole) > BUDGET
    store, svc = _services(fake, db_url)
    try:
        async with Client(mcp_server(svc)) as client:
            res = await client.call_tool("crossref_get_references", {"doi": REVIEW, "limit": 500})
            sc = res.structured_content
            k = sc["nextOffset"]
            assert _size(res) <= BUDGET and sc["references"] == refs[:k] and sc["shown"] == k
            assert f"call again with offset={k}" in sc["notice"]
            rest = await client.call_tool(
                "crossref_get_references", {"doi": REVIEW, "limit": 500, "offset": k}
            )
            assert rest.structured_content["references"] == refs[k:]
            assert "nextOffset" not in rest.structured_content
    finally:
        svc.close()
        store.close()


async def test_read_file_max_bytes_is_lowered_to_the_budget(fake: FakeUpstream, db_url: str) -> None:
    """zenodo_read_file max_bytes=65,536 under an 8,000-character budget reads at most 2,000 bytes, says
    so, and next_offset continues the file.
    """
    store, svc = _services(fake, db_url, answer_max_chars=8_000)
    try:
        async with Client(mcp_server(svc)) as client:
            args = {"id": "22917909", "key": CSV_KEY, "max_bytes": 65_536}
            res = await client.call_tool("zenodo_read_file", args)
            sc = res.structured_content
            assert sc["bytes_returned"] <= 2_000 and _size(res) <= 8_000
            assert "max_bytes 65,536 was lowered to 2,000 to fit answer_max_chars=8,000." in sc["notice"]
            if sc["has_more"]:
                nxt = await client.call_tool("zenodo_read_file", {**args, "offset_bytes": sc["next_offset"]})
                assert nxt.structured_content["offset_bytes"] == sc["next_offset"]
    finally:
        svc.close()
        store.close()


async def test_default_max_bytes_is_lowered_without_a_notice(fake: FakeUpstream, db_url: str) -> None:
    """zenodo_read_file without max_bytes under an 8,000-character budget reads at most 2,000 bytes and
    says nothing of a lowered max_bytes (the client sent none; the default 16,384 is ours to fit).
    """
    store, svc = _services(fake, db_url, answer_max_chars=8_000)
    try:
        async with Client(mcp_server(svc)) as client:
            res = await client.call_tool("zenodo_read_file", {"id": "22917909", "key": CSV_KEY})
            sc = res.structured_content
            assert sc["bytes_returned"] <= 2_000 and _size(res) <= 8_000
            assert "was lowered" not in (sc.get("notice") or "")
    finally:
        svc.close()
        store.close()


async def test_text_block_is_compact_not_the_json(cache: Services) -> None:
    """A work's text block lists title, DOI and authors in lines, and is much smaller than its JSON."""
    async with Client(mcp_server(cache)) as client:
        res = await client.call_tool("crossref_get_work", {"doi": "10.1101/598821"})
    text = res.content[0].text
    assert text.splitlines()[1] == "DOI: 10.1101/598821"
    assert "Authors (24):" in text
    assert len(text) < len(json.dumps(res.structured_content, ensure_ascii=False))


async def test_zenodo_lists_cut_to_the_budget_continue(fake: FakeUpstream, db_url: str) -> None:
    """Under a 5,000-character budget the 24-file manifest of record 7834392 is cut with next_offset, and
    the call it names returns the next files; a 25-hit search page (recorded Felidae search) under
    12,000 names size and page, which the next call sends to Zenodo.
    """
    store, svc = _services(fake, db_url, answer_max_chars=0)
    try:
        async with Client(mcp_server(svc)) as client:
            whole = await client.call_tool("zenodo_list_files", {"id": "7834392", "limit": 200})
    finally:
        svc.close()
        store.close()
    entries = whole.structured_content["entries"]
    assert len(entries) == 24
    fake.set_body(
        "zenodo", "/records", corpus_json("zenodo/search/records_custom-dwc-family-Felidae_new-api.json")
    )
    store, svc = _services(fake, db_url, answer_max_chars=5_000)
    try:
        async with Client(mcp_server(svc)) as client:
            res = await client.call_tool("zenodo_list_files", {"id": "7834392", "limit": 200})
            sc = res.structured_content
            k = sc["next_offset"]
            assert _size(res) <= 5_000 and 0 < k < 24 and sc["entries"] == entries[:k]
            assert sc["has_more"] is True and sc["shown"] == k
            assert f"Showing {k} of 24; call again with offset {k}" in sc["notice"]
            rest = await client.call_tool("zenodo_list_files", {"id": "7834392", "limit": 200, "offset": k})
            assert rest.structured_content["entries"][0] == entries[k]
    finally:
        svc.close()
        store.close()
    store, svc = _services(fake, db_url, answer_max_chars=12_000)
    try:
        async with Client(mcp_server(svc)) as client:
            res = await client.call_tool("zenodo_search_records", {"query": "felidae", "size": 25})
            sc = res.structured_content
            k = sc["shown"]
            assert _size(res) <= 12_000 and 0 < k < 25 and sc["truncated"] is True
            assert f"call again with size={k} and page=2 for the next ones" in sc["notice"]
            fake.reset_log()
            await client.call_tool("zenodo_search_records", {"query": "felidae", "size": k, "page": 2})
            sent = [r.query for r in fake.requests if r.service_path == "/records"]
            assert sent and (sent[-1]["size"], sent[-1]["page"]) == (str(k), "2")
    finally:
        svc.close()
        store.close()
