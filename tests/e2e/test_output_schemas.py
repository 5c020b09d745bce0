"""Each tool's outputSchema admits every answer the tool gives: success, miss, each error (issue 12 item 1).

Each of the 14 tools is called through a real MCP client session in several states against the fake
upstream (recorded corpus): a success, a miss where the tool has one, declared errors (not found,
conflicts, upstream down, rate limited), and every structured answer is validated with ``jsonschema``
against the ``outputSchema`` the client listed. The schemas themselves declare ``error`` as an optional
property, as the seeds do, and require nothing an error answer lacks.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import Any

import pytest
from mcp import Client

from syncd.crossref import queries_work
from tests.fakeupstream import FakeUpstream
from tests.helpers import every_tool, mcp_server
from tests.schema_check import schema_errors

pytestmark = pytest.mark.anyio

RAPTOR = "10.1101/598821"
CSV_KEY = "Intensivregister_Deutschland_Altersgruppen.csv"

# tool, arguments, what the answer is: "ok", "miss" (found: false) or the error reason
ONLINE: list[tuple[str, dict[str, Any], str]] = [
    ("crossref_get_work", {"doi": RAPTOR}, "ok"),
    ("crossref_get_work", {"doi": "10.1371/NotARealDOI"}, "doi_not_found"),
    ("crossref_search_works", {"query": "ecology", "rows": 2}, "ok"),
    ("crossref_search_works", {"query": "a", "cursor": "*", "offset": 5}, "cursor_offset_conflict"),
    ("crossref_search_works", {"query": "a", "offset": 9990, "rows": 20}, "offset_too_large"),
    ("crossref_search_works", {"filter": {"issn": "12-34"}}, "invalid_parameter"),
    ("crossref_get_references", {"doi": RAPTOR, "limit": 3}, "ok"),
    ("crossref_get_references", {"doi": "10.1371/NotARealDOI"}, "doi_not_found"),
    ("crossref_search_journals", {"issn": "1803-2427"}, "ok"),
    (
        "crossref_search_journals",
        {"issn": "1803-2427", "include_works": True, "works_offset": 5, "works_cursor": "*"},
        "works_cursor_offset_conflict",
    ),
    ("crossref_search_funders", {"funder_doi": "10.13039/100000001"}, "ok"),
    ("crossref_search_funders", {"funder_doi": "999999999"}, "funder_not_found"),
    ("crossref_get_member", {"member_id": 98}, "ok"),
    ("crossref_get_member", {"member_id": 99999999}, "member_not_found"),
    ("crossref_get_prefix", {"prefix": "10.1016"}, "ok"),
    ("crossref_get_prefix", {"prefix": "10.5281"}, "prefix_not_found"),
    (
        "crossref_get_works",
        {"dois": [RAPTOR, "10.1371/NotARealDOI", "nonsense", "10.5281/zenodo.5244404"]},
        "ok",
    ),
    ("zenodo_get_record", {"id": "5244404"}, "ok"),
    ("zenodo_get_record", {"id": "5244404", "citation_style": "apa"}, "ok"),
    ("zenodo_get_record", {"id": "22705918"}, "miss"),
    ("zenodo_get_record", {"id": "badge.svg"}, "invalid_identifier"),
    ("zenodo_get_record", {"id": "22705923", "citation_style": "vancouver"}, "invalid_parameter"),
    ("zenodo_search_records", {"query": 'title:"Frictionless Data Test"', "size": 2}, "ok"),
    ("zenodo_search_records", {"query": "10.5281/zenodo.5244404"}, "query_is_identifier"),
    ("zenodo_search_records", {"query": "climate/change"}, "query_syntax"),
    ("zenodo_list_versions", {"id": "22705923", "size": 3}, "ok"),
    ("zenodo_list_versions", {"id": "22705923", "page": 3}, "ok"),
    ("zenodo_list_versions", {"id": "22705918"}, "miss"),
    ("zenodo_list_files", {"id": "22917909", "limit": 4}, "ok"),
    ("zenodo_list_files", {"id": "22705918"}, "record_deleted"),
    ("zenodo_list_files", {"id": "999999999999"}, "record_not_found"),
    ("zenodo_list_files", {"id": "22917909", "archive_key": "nope.zip"}, "file_not_found"),
    ("zenodo_read_file", {"id": "22917909", "key": CSV_KEY, "max_bytes": 256}, "ok"),
    ("zenodo_read_file", {"id": "22917909", "key": "nope.csv"}, "file_not_found"),
    ("zenodo_lookup_vocabulary", {"vocabulary": "License", "query": "mit", "size": 3}, "ok"),
    ("zenodo_lookup_vocabulary", {"vocabulary": "licenses", "funder": "01cwqze88"}, "funder_only_for_awards"),
    ("syncd_list_changes", {"since": "7d", "types": "retraction"}, "ok"),
    ("syncd_list_changes", {"cursor": "page-2"}, "invalid_cursor"),
    ("datacite_get_work", {"doi": "10.5061/dryad.8515"}, "ok"),
    ("datacite_get_work", {"doi": "10.17182/hepdata.77274.v1"}, "ok"),
    ("datacite_get_work", {"doi": "10.1038/nphys1170"}, "miss"),
    ("datacite_get_work", {"doi": "10.12/x"}, "invalid_doi"),
    ("datacite_search_works", {"text": "glacier", "limit": 3}, "ok"),
    ("datacite_search_works", {"text": "glacier", "limit": 100, "page": 101}, "page_ceiling"),
    ("datacite_get_citation", {"doi": "10.5061/dryad.8515"}, "ok"),
    ("datacite_get_citation", {"doi": "10.5061/dryad.8515", "format": "csl_json"}, "ok"),
    ("datacite_get_citation", {"doi": "10.1038/nphys1170", "format": "bibtex"}, "miss"),
    (
        "datacite_get_citation",
        {"doi": "10.5061/dryad.8515", "format": "bibtex", "style": "ieee"},
        "style_requires_text",
    ),
    ("datacite_list_reference", {"topic": "relation_types"}, "ok"),
    ("datacite_search_repositories", {"query": "glacier", "limit": 3}, "ok"),
    ("datacite_trace_relations", {"doi": "10.5061/dryad.8515"}, "ok"),
    ("datacite_trace_relations", {"doi": "10.12/x"}, "invalid_doi"),
    ("datacite_search_repositories", {"repository_ids": ["ethz.wgms"], "query": "x"}, "conflicting_lookup"),
    ("syncd_cited_by", {"doi": "10.1126/science.280.5362.421"}, "ok"),
    ("syncd_cited_by", {"doi": "not a doi"}, "invalid_parameter"),
]
# With every upstream down and nothing stored for these arguments.
OFFLINE: list[tuple[str, dict[str, Any], str]] = [
    ("crossref_get_work", {"doi": "10.1038/nphys1170"}, "upstream_unavailable"),
    ("crossref_get_references", {"doi": "10.1038/nphys1170"}, "upstream_unavailable"),
    ("crossref_search_journals", {"query": "nature physics"}, "upstream_unavailable"),
    ("crossref_search_funders", {"query": "wellcome"}, "upstream_unavailable"),
    ("crossref_get_member", {"member_id": 297}, "upstream_unavailable"),
    ("crossref_get_prefix", {"prefix": "10.1038"}, "upstream_unavailable"),
    ("crossref_get_works", {"dois": ["10.1038/nphys1170", "10.1101/598821"]}, "ok"),  # item reasons
    ("zenodo_get_record", {"id": "4927605"}, "record_unavailable"),
    ("zenodo_list_versions", {"id": "4927605"}, "record_unavailable"),
    ("zenodo_list_files", {"id": "4927605"}, "record_unavailable"),
    ("zenodo_read_file", {"id": "4927605", "key": "x.csv"}, "record_unavailable"),
    ("zenodo_lookup_vocabulary", {"vocabulary": "funders", "query": "wellcome"}, "upstream_unavailable"),
    ("syncd_list_changes", {"watched_only": True}, "ok"),  # answered from the store, upstream or not
    ("datacite_get_work", {"doi": "10.5061/dryad.234"}, "upstream_unavailable"),
    ("datacite_search_works", {"text": "permafrost"}, "upstream_unavailable"),
    ("datacite_get_citation", {"doi": "10.5061/dryad.234"}, "upstream_unavailable"),
    ("datacite_search_repositories", {"query": "permafrost"}, "upstream_unavailable"),
    ("datacite_trace_relations", {"doi": "10.5061/dryad.234"}, "upstream_unavailable"),
    ("syncd_cited_by", {"doi": "10.1101/598821", "limit": 5}, "ok"),  # the reference index, offline
]


STATIC = {"datacite_list_reference"}
"""Tools that send no request and whose only refusal is -32602 (one outcome: ok)."""

ITEM_REASONS = {"crossref_get_works"}
"""Tools whose misses and upstream failures are reasons of the items of an ``ok`` answer (checked above
against the schema), never an error answer: their only refusal is -32602."""


def outcome(res: Any) -> str:
    """The outcome of one answer: ok, miss (found: false) or the error reason."""
    sc = res.structured_content
    if res.is_error:
        return str(sc["error"]["data"]["reason"])
    return "miss" if sc.get("found") is False else "ok"


async def test_schemas_declare_error_and_require_nothing_an_error_lacks(cache: Any) -> None:
    """Every tool's outputSchema has an optional ``error`` property shaped {code, message, data: {reason}},
    requires no top-level field, and admits a bare error answer.
    """
    async with Client(mcp_server(cache)) as client:
        tools = (await client.list_tools()).tools
    assert len(tools) == len(every_tool())
    error_answer = {
        "error": {
            "code": -32001,
            "message": "m",
            "data": {"reason": "doi_not_found", "recovery": {"hint": "h"}},
        }
    }
    for tool in tools:
        schema = tool.output_schema
        assert schema is not None, tool.name
        assert "error" in schema["properties"], tool.name
        assert not schema.get("required"), (tool.name, schema.get("required"))
        assert "cache" in schema["properties"], tool.name
        assert schema_errors(schema, error_answer) == [], tool.name
        assert schema_errors(schema, {"error": {"message": "no code"}}) != [], tool.name


async def test_every_answer_fits_the_declared_output_schema(cache: Any, fake: FakeUpstream) -> None:
    """Successes, misses and errors of all 14 tools, online and with upstream down, validate against the
    tool's outputSchema; each state gives the outcome listed (so the table cannot silently test nothing).
    """
    seen: dict[str, set[str]] = defaultdict(set)
    async with Client(mcp_server(cache)) as client:
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        for table, stop in ((ONLINE, False), (OFFLINE, True)):
            if stop:
                fake.stop()
            for tool, args, expected in table:
                res = await client.call_tool(tool, args)
                assert outcome(res) == expected, (tool, args, res.content[0].text)
                assert schema_errors(schemas[tool], res.structured_content) == [], (tool, args)
                seen[tool].add(expected)
    assert set(seen) == set(schemas)
    assert all("ok" in s and (len(s) >= 2 or t in ITEM_REASONS | STATIC) for t, s in seen.items()), dict(seen)


async def test_rate_limited_answers_fit(cache: Any, fake: FakeUpstream) -> None:
    """A 429 from each upstream is rate_limited with retry_after_s in its data, inside the outputSchema."""
    fake.fault("rate_limit", retry_after=30)
    async with Client(mcp_server(cache)) as client:
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        for tool, args in (
            ("crossref_get_work", {"doi": "10.1038/nphys1170"}),
            ("zenodo_get_record", {"id": "4927605"}),
            ("crossref_get_member", {"member_id": 297}),
        ):
            res = await client.call_tool(tool, args)
            assert outcome(res) == "rate_limited", (tool, res.content[0].text)
            assert 25 <= res.structured_content["error"]["data"]["retry_after_s"] <= 30
            assert schema_errors(schemas[tool], res.structured_content) == [], tool


async def test_an_answer_breaking_the_model_inside_a_list_item_is_refused_by_the_server(
    cache: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """crossref_get_work publishes its list items by their type alone, so an author carrying Crossref's
    ``role`` (which the contract drops; the author model refuses unknown keys) passes the published
    outputSchema; the server checks every answer against the full output model and answers
    internal_error (logged ``answer_breaks_output_schema``), never the broken answer.
    """
    real = queries_work.work_answer
    sent: list[dict[str, Any]] = []

    def with_role(*args: Any) -> dict[str, Any]:
        data = real(*args)
        sent.append({**data, "authors": [{**data["authors"][0], "role": "author"}, *data["authors"][1:]]})
        return sent[-1]

    async with Client(mcp_server(cache)) as client:
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        good = await client.call_tool("crossref_get_work", {"doi": RAPTOR})
        monkeypatch.setattr(queries_work, "work_answer", with_role)
        with caplog.at_level(logging.ERROR, logger="syncd.tools.server"):
            res = await client.call_tool("crossref_get_work", {"doi": RAPTOR})
    assert good.structured_content["authors"][0]["given"] == "Yun Sung"
    assert sent[0]["authors"][0]["role"] == "author" and len(sent[0]["authors"]) == 24
    assert schema_errors(schemas["crossref_get_work"], sent[0]) == []
    assert res.is_error is True and outcome(res) == "internal_error"
    assert "authors" not in res.structured_content
    assert "event=answer_breaks_output_schema tool=crossref_get_work" in caplog.text
