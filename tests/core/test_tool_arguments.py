"""Tool arguments through a real MCP client session: Crossref's alias names, the contracts' repairs, and
the schema refusal (a tool error, ``isError``, code -32602 in its envelope, reason invalid_arguments) for
every tool.

Contract: the shared spec/anchors.md ("Arguments are repaired before validation": a numeric string
becomes a number, a number becomes a string, ``null`` at an optional key means absent; a genuinely wrong
type is rejected with -32602 InvalidParams, reason invalid_arguments), answered as a tool execution error
since issue 40 (SEP-1303: the model reads it and can correct the call), and issue 13 kind 2 (out of range,
a name not allowed, an ISSN/prefix/DOI of the wrong form). Each refusal is made before any upstream
request. Values asserted are the recorded corpus bodies served by the fake upstream.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError

from tests.fakeupstream import FakeUpstream
from tests.helpers import every_tool, mcp_server

pytestmark = pytest.mark.anyio

RAPTOR = "10.1101/598821"


async def call(deps: Any, name: str, args: dict[str, Any]) -> Any:
    """One call through a fresh in-memory client session: the result, or the ``MCPError`` it raised."""
    async with Client(mcp_server(deps)) as client:
        try:
            return await client.call_tool(name, args)
        except MCPError as exc:
            return exc


def last_crossref_query(fake: FakeUpstream) -> dict[str, str]:
    """The query parameters of the last request Crossref received."""
    return [r for r in fake.requests if r.service == "crossref"][-1].query


# ------------------------------------------------------------------------------------------- aliases

ALIASES = [
    ("query.bibliographic", "queryBibliographic"),
    ("query.title", "queryTitle"),
    ("query.author", "queryAuthor"),
    ("query.container-title", "queryContainerTitle"),
]


@pytest.mark.parametrize(("alias", "name"), ALIASES)
async def test_query_alias_reaches_crossref_as_its_parameter(
    cache: Any, fake: FakeUpstream, alias: str, name: str
) -> None:
    """crossref_search_works takes Crossref's own query.* name: the alias and the camelCase parameter send
    the term under the same Crossref parameter (the alias name itself).
    """
    res = await call(cache, "crossref_search_works", {alias: "aliasterm", "rows": 1})
    assert not isinstance(res, MCPError), res
    sent = last_crossref_query(fake)
    assert sent[alias] == "aliasterm"
    res = await call(cache, "crossref_search_works", {name: "nameterm", "rows": 1})
    assert not isinstance(res, MCPError), res
    assert last_crossref_query(fake)[alias] == "nameterm"


async def test_parameter_wins_over_its_alias(cache: Any, fake: FakeUpstream) -> None:
    """Given both queryAuthor and query.author, the parameter's value is the one sent."""
    await call(cache, "crossref_search_works", {"query.author": "alias", "queryAuthor": "param", "rows": 1})
    assert last_crossref_query(fake)["query.author"] == "param"


async def test_select_alias_as_string_and_list(cache: Any, fake: FakeUpstream) -> None:
    """select="DOI,title" (Crossref's comma form) and select=[...] both narrow the works like fields does:
    the recorded select=DOI,title page comes back with only doi and title on each work.
    """
    for select in ("DOI,title", ["DOI", "title"]):
        res = await call(cache, "crossref_search_works", {"query": "ecology", "select": select})
        works = res.structured_content["works"]
        assert works and all(set(w) <= {"doi", "title"} for w in works), works[0]
    assert last_crossref_query(fake)["select"] == "DOI,title"


async def test_facet_alias_as_object_and_crossref_string(cache: Any, fake: FakeUpstream) -> None:
    """facet={"type-name": "*"} and Crossref's facet="type-name:*" both ask Crossref for facet=type-name:*."""
    for facet in ({"type-name": "*"}, "type-name:*"):
        res = await call(cache, "crossref_search_works", {"query": "facetcheck", "rows": 0, "facet": facet})
        assert not isinstance(res, MCPError), res
        assert [r for r in fake.requests if r.service == "crossref"][-1].query.get("facet") == "type-name:*"


async def test_aliases_are_accepted_but_not_listed(cache: Any) -> None:
    """The inputSchema lists the camelCase names (the contract's), not the aliases; descriptions name them."""
    async with Client(mcp_server(cache)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    props = tools["crossref_search_works"].input_schema["properties"]
    assert {
        "queryAuthor",
        "queryTitle",
        "queryBibliographic",
        "queryContainerTitle",
        "fields",
        "facets",
    } <= set(props)
    assert "query.author" not in props and "select" not in props
    assert "query.author" in props["queryAuthor"]["description"]
    assert props["fields"]["items"]["enum"][0] == "DOI"
    assert props["sort"]["enum"][-1] == ""


# -------------------------------------------------------------------------------------------- repairs


async def test_numeric_record_id_is_repaired_to_a_string(cache: Any) -> None:
    """zenodo_get_record id=5244404 as a JSON number answers the record "5244404" does (issue 12 item 2)."""
    as_number = await call(cache, "zenodo_get_record", {"id": 5244404})
    as_string = await call(cache, "zenodo_get_record", {"id": "5244404"})
    assert as_number.is_error is False, as_number.content[0].text
    assert as_number.structured_content["found"] is True
    assert as_number.structured_content["record"] == as_string.structured_content["record"]
    assert as_string.structured_content["cache"]["source"] == "store"


async def test_numeric_strings_are_repaired_to_numbers(cache: Any) -> None:
    """member_id="98" is member 98 (Hindawi Limited); limit="5" pages 5 of the 24 raptor authors."""
    member = await call(cache, "crossref_get_member", {"member_id": "98"})
    assert member.structured_content["primaryName"] == "Hindawi Limited"
    work = await call(cache, "crossref_get_work", {"doi": RAPTOR, "limit": "5", "offset": " 1 "})
    assert len(work.structured_content["authors"]) == 5
    assert work.structured_content["authorCount"] == 24
    assert work.structured_content["nextOffset"] == 6


async def test_null_at_an_optional_key_is_absent(cache: Any, fake: FakeUpstream) -> None:
    """A null offset/limit/cursor/sort/filter is read as absent: the defaults apply (25 of 24 authors; the
    recorded ecology page) and nothing is refused.
    """
    work = await call(cache, "crossref_get_work", {"doi": RAPTOR, "offset": None, "limit": None})
    assert len(work.structured_content["authors"]) == 24
    page = await call(
        cache,
        "crossref_search_works",
        {"query": "ecology", "rows": 2, "cursor": None, "sort": None, "filter": None, "fields": None},
    )
    assert page.structured_content["works"][0]["title"] == "Communicating Ecology"
    record = await call(cache, "zenodo_get_record", {"id": "5244404", "cursor": None, "citation_style": None})
    assert record.structured_content["found"] is True


async def test_filter_values_are_repaired_to_strings(cache: Any, fake: FakeUpstream) -> None:
    """filter={"until-pub-date": 2020, "has-abstract": true} is sent as Crossref's string values."""
    res = await call(
        cache,
        "crossref_search_works",
        {"query": "ecology", "filter": {"until-pub-date": 2020, "has-abstract": True}},
    )
    assert not isinstance(res, MCPError), res
    sent = last_crossref_query(fake)["filter"].split(",")
    assert sorted(sent) == ["has-abstract:true", "until-pub-date:2020"]


async def test_boolean_strings_are_repaired(cache: Any, fake: FakeUpstream) -> None:
    """include_works="false" is false: a plain journal answer (ISSN 1803-2427), no works list."""
    res = await call(cache, "crossref_search_journals", {"issn": "1803-2427", "include_works": "false"})
    assert res.is_error is False, res.content[0].text
    assert "recentWorks" not in res.structured_content
    assert res.structured_content["journals"][0]["issn"]


# --------------------------------------------------------------------------------------- refusals

DOI = {"doi": RAPTOR}
ZID = {"id": "22917909"}

INVALID = [
    # tool, arguments, the refused parameter (named as the caller sent it: an alias stays an alias)
    ("crossref_get_work", {}, "doi"),
    ("crossref_get_work", {"doi": ["10.1101/598821"]}, "doi"),
    ("crossref_get_work", {"doi": "THISISNOTAREALDOI"}, "doi"),
    ("crossref_get_work", {**DOI, "limit": 0}, "limit"),
    ("crossref_get_work", {**DOI, "limit": 501}, "limit"),
    ("crossref_get_work", {**DOI, "offset": -1}, "offset"),
    ("crossref_get_work", {**DOI, "limit": "many"}, "limit"),
    ("crossref_get_work", {**DOI, "limit": True}, "limit"),
    ("crossref_get_work", {**DOI, "limit": 2.5}, "limit"),
    ("crossref_search_works", {"rows": 101}, "rows"),
    ("crossref_search_works", {"rows": -1}, "rows"),
    ("crossref_search_works", {"authorLimit": 0}, "authorLimit"),
    ("crossref_search_works", {"offset": -1}, "offset"),
    ("crossref_search_works", {"sort": "nope"}, "sort"),
    ("crossref_search_works", {"order": "up"}, "order"),
    ("crossref_search_works", {"fields": ["nope"]}, "fields"),
    ("crossref_search_works", {"select": "DOI,nope"}, "select"),
    ("crossref_search_works", {"filter": {"type": ["journal-article"]}}, "filter"),
    ("crossref_search_works", {"filter": "type"}, "filter"),
    ("crossref_search_works", {"facets": {"type-name": [1]}}, "facets"),
    ("crossref_search_works", {"query": ["a", "b"]}, "query"),
    ("crossref_search_works", {"query.author": {"name": "x"}}, "query.author"),
    ("crossref_get_references", {"doi": "not a doi"}, "doi"),
    ("crossref_get_references", {**DOI, "limit": 501}, "limit"),
    ("crossref_search_journals", {"rows": 0}, "rows"),
    ("crossref_search_journals", {"issn": "12345"}, "issn"),
    ("crossref_search_journals", {"include_works": "maybe"}, "include_works"),
    ("crossref_search_funders", {"rows": 101}, "rows"),
    ("crossref_search_funders", {"works_offset": -5}, "works_offset"),
    ("crossref_get_member", {"member_id": 0}, "member_id"),
    ("crossref_get_member", {"member_id": "abc"}, "member_id"),
    ("crossref_get_member", {}, "member_id"),
    ("crossref_get_prefix", {"prefix": "10.1016/x"}, "prefix"),
    ("crossref_get_prefix", {"prefix": 10}, "prefix"),
    ("crossref_get_works", {}, "dois"),
    ("crossref_get_works", {"dois": []}, "dois"),
    ("crossref_get_works", {"dois": ["10.1101/598821"] * 101}, "dois"),
    ("crossref_get_works", {"dois": [{"doi": "10.1101/598821"}]}, "dois"),
    ("crossref_get_works", {"dois": ["10.1101/598821"], "offset": -1}, "offset"),
    ("zenodo_get_record", {"id": ""}, "id"),
    ("zenodo_get_record", {"id": ["5244404"]}, "id"),
    ("zenodo_get_record", {"id": "9" * 501}, "id"),
    ("zenodo_get_record", {"id": "5244404", "cursor": "c" * 501}, "cursor"),
    ("zenodo_get_record", {"id": "5244404", "citation_style": "s" * 65}, "citation_style"),
    ("zenodo_search_records", {"size": 26}, "size"),
    ("zenodo_search_records", {"page": 0}, "page"),
    ("zenodo_search_records", {"all_versions": "yes"}, "all_versions"),
    ("zenodo_search_records", {"query": "q" * 1001}, "query"),
    ("zenodo_search_records", {"resource_type": {"dataset": 1}}, "resource_type"),
    ("zenodo_list_versions", {**ZID, "size": 0}, "size"),
    ("zenodo_list_files", {**ZID, "limit": 201}, "limit"),
    ("zenodo_list_files", {**ZID, "offset": -1}, "offset"),
    ("zenodo_read_file", {**ZID, "key": "a.csv", "max_bytes": 255}, "max_bytes"),
    ("zenodo_read_file", {**ZID, "key": "a.csv", "max_bytes": 65_537}, "max_bytes"),
    ("zenodo_read_file", {**ZID, "key": ""}, "key"),
    ("zenodo_read_file", dict(ZID), "key"),
    ("zenodo_lookup_vocabulary", {"vocabulary": ""}, "vocabulary"),
    ("zenodo_lookup_vocabulary", {"vocabulary": "licenses", "size": 26}, "size"),
    ("zenodo_lookup_vocabulary", {}, "vocabulary"),
    ("syncd_list_changes", {"limit": 0}, "limit"),
    ("syncd_list_changes", {"kind": "books"}, "kind"),
    ("syncd_list_changes", {"since": ""}, "since"),
    ("datacite_get_work", {}, "doi"),
    ("datacite_get_work", {"doi": "dryad.234"}, "doi"),
    ("datacite_search_works", {"limit": 101}, "limit"),
    ("datacite_search_works", {"sort": "best"}, "sort"),
    ("datacite_search_works", {"resource_types": ["book-review"]}, "resource_types"),
    ("datacite_search_works", {"text": "x" * 2001}, "text"),
    ("datacite_get_citation", {"doi": "10.5061/dryad.8515", "format": "pdf"}, "format"),
    ("datacite_list_reference", {"topic": "Resource Types"}, "topic"),
    ("datacite_search_repositories", {"certificates": ["ISO 9001"]}, "certificates"),
    ("datacite_search_repositories", {"repository_ids": ["dryad"]}, "repository_ids"),
    ("datacite_trace_relations", {"doi": "10.5061/dryad.8515", "depth": 3}, "depth"),
    (
        "datacite_trace_relations",
        {"doi": "10.5061/dryad.8515", "relation_types": ["Likes"]},
        "relation_types",
    ),
    ("syncd_cited_by", {"doi": "10.1101/598821", "limit": 0}, "limit"),
    ("syncd_cited_by", {"doi": ""}, "doi"),
    ("syncd_cited_by", {}, "doi"),
]


@pytest.mark.parametrize(("tool", "args", "field"), INVALID)
async def test_invalid_arguments_are_invalid_params(
    cache: Any, fake: FakeUpstream, tool: str, args: dict[str, Any], field: str
) -> None:
    """A wrong type, a value out of bounds, a name not allowed or a value of the wrong form is refused as a
    tool error the model reads (``isError``, SEP-1303) whose envelope has code -32602 and data saying
    reason invalid_arguments, naming the parameter, carrying a hint and not retryable; the text names the
    parameter too; no upstream request is made.
    """
    before = fake.count()
    res = await call(cache, tool, args)
    assert not isinstance(res, MCPError), res
    assert res.is_error is True
    error = res.structured_content["error"]
    assert error["code"] == -32602
    assert error["data"]["reason"] == "invalid_arguments"
    assert error["data"]["fields"] == [field]
    assert error["data"]["retryable"] is False
    assert error["data"]["recovery"]["hint"]
    assert error["message"].startswith(f"invalid arguments for {tool}: {field}")
    assert res.content[0].text.startswith(f"Error (invalid_arguments): invalid arguments for {tool}: {field}")
    assert fake.count() == before


async def test_every_tool_has_refusal_cases() -> None:
    """The refusal table covers all 14 tools."""
    assert {t for t, _, _ in INVALID} == {spec.name for spec in every_tool()}


async def test_values_crossref_rejects_stay_invalid_parameter(cache: Any, fake: FakeUpstream) -> None:
    """A value of the declared type and form that Crossref itself refuses is still invalid_parameter (a tool
    error result, not invalid_arguments): an issn filter value Crossref cannot read.
    """
    res = await call(cache, "crossref_search_works", {"filter": {"issn": "12-34"}})
    assert not isinstance(res, MCPError)
    assert res.is_error is True
    assert res.structured_content["error"]["data"]["reason"] == "invalid_parameter"


def test_no_private_sdk_attribute_in_syncd() -> None:
    """The tool surface uses the SDK's public API only: no ``_tool_manager``, ``arg_model`` or
    ``fn_metadata`` access and no ``__cause__`` unwrapping anywhere in syncd/ (issue 11, done-when).
    """
    root = Path(__file__).resolve().parents[2] / "syncd"
    offending = [
        f"{path.relative_to(root)}: {needle}"
        for path in sorted(root.rglob("*.py"))
        for needle in ("_tool_manager", "arg_model", "fn_metadata", "__cause__")
        if needle in path.read_text(encoding="utf-8")
    ]
    assert offending == []
