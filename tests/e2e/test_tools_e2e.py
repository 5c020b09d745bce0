"""End to end through a real MCP client session (in-memory): local-first tools over the fake upstream."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client, MCPError

from syncd.registry import open_services
from syncd.road.services import Services
from syncd.upstream.http import MAX_ATTEMPTS
from tests.conftest import Clock
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

# PostgreSQL in the full run only: these are tool tests; the store contract runs on both in every run
pytestmark = [pytest.mark.anyio, pytest.mark.both_backends(full_only=True)]

RAPTOR_DOI = "10.1101/598821"
RAPTOR_TITLE = "Raptor genomes reveal evolutionary signatures of predatory and nocturnal lifestyles"


async def call(cache: Services, name: str, args: dict[str, Any]) -> Any:
    async with Client(mcp_server(cache)) as client:
        return await client.call_tool(name, args)


async def test_first_call_fetches_second_is_served_from_store(cache: Services, fake: FakeUpstream) -> None:
    """crossref_get_work: 1 upstream request on the first call, 0 on the second; real title and authors."""
    first = await call(cache, "crossref_get_work", {"doi": RAPTOR_DOI})
    assert first.is_error is False
    data = first.structured_content
    assert data["title"] == RAPTOR_TITLE
    assert data["authorCount"] == 24
    assert data["authors"][0]["family"] == "Cho"
    assert data["cache"]["source"] == "upstream"
    assert fake.count("/works", service="crossref") == 1
    second = await call(cache, "crossref_get_work", {"doi": "https://doi.org/10.1101/598821"})
    assert second.structured_content["title"] == RAPTOR_TITLE
    assert second.structured_content["cache"]["source"] == "store"
    assert second.structured_content["cache"]["stale"] is False
    assert fake.count("/works", service="crossref") == 1


async def test_author_paging(cache: Services) -> None:
    """offset/limit page the author list: authors 21-24 of 24, no nextOffset on the last page."""
    res = await call(cache, "crossref_get_work", {"doi": RAPTOR_DOI, "offset": 20, "limit": 10})
    data = res.structured_content
    assert len(data["authors"]) == 4
    assert data["authorCount"] == 24
    assert "nextOffset" not in data
    first_page = (await call(cache, "crossref_get_work", {"doi": RAPTOR_DOI, "limit": 10})).structured_content
    assert first_page["nextOffset"] == 10


async def test_upstream_down_serves_stored_entry_flagged(
    cache: Services, fake: FakeUpstream, injected_clock: Clock
) -> None:
    """With the fake stopped and the entry stale, the stored work is answered with stale + upstream_error."""
    await call(cache, "crossref_get_work", {"doi": RAPTOR_DOI})
    cache.settings.ttl.crossref_work = 0.001
    fake.stop()
    injected_clock.advance(1.0)  # older than its 1 ms lifetime: stale (the injected clock, no sleep)
    res = await call(cache, "crossref_get_work", {"doi": RAPTOR_DOI})
    assert res.is_error is False
    data = res.structured_content
    assert data["title"] == RAPTOR_TITLE
    assert data["cache"]["source"] == "store-stale"
    assert data["cache"]["stale"] is True
    assert data["cache"]["upstream_error"] == "upstream_unavailable"


async def test_unknown_doi_with_upstream_down_is_a_declared_error_fast(
    cache: Services, fake: FakeUpstream, injected_clock: Clock
) -> None:
    """Nothing stored and upstream down: a tool error with reason upstream_unavailable within the deadline:
    at most MAX_ATTEMPTS connection attempts (failures counted by the budget), whose backoff waits add up
    to less than the deadline (asked of the injected clock, not slept).
    """
    fake.stop()
    svc = open_services(cache.settings, cache.store, clock=injected_clock, sleep=injected_clock.sleep)
    try:
        res = await call(svc, "crossref_get_work", {"doi": "10.1234/never-seen"})
        failures = svc.budget.state("crossref_single").failures
    finally:
        svc.close()
    assert 1 <= failures <= MAX_ATTEMPTS
    assert len(injected_clock.slept) == failures - 1 and sum(injected_clock.slept) < cache.settings.deadline_s
    assert res.is_error is True
    assert res.structured_content["error"]["data"]["reason"] == "upstream_unavailable"
    assert "Recovery:" in res.content[0].text


async def test_unknown_doi_is_doi_not_found(cache: Services, fake: FakeUpstream) -> None:
    """Crossref's plain-text 404 becomes doi_not_found; the miss is stored, so a repeat costs no request."""
    res = await call(cache, "crossref_get_work", {"doi": "10.1371/notarealdoi"})
    assert res.is_error is True
    assert res.structured_content["error"]["data"]["reason"] == "doi_not_found"
    assert res.structured_content["error"]["code"] == -32001
    before = fake.count(service="crossref")
    again = await call(cache, "crossref_get_work", {"doi": "10.1371/NotARealDOI"})
    assert again.structured_content["error"]["data"]["reason"] == "doi_not_found"
    assert fake.count(service="crossref") == before


async def test_not_a_doi_is_refused_before_any_request(cache: Services, fake: FakeUpstream) -> None:
    """A non-DOI string is a tool error the model can read (isError, SEP-1303) with reason
    invalid_arguments naming ``doi``, and reaches no upstream (BC-07).
    """
    async with Client(mcp_server(cache)) as client:
        refused = await client.call_tool("crossref_get_work", {"doi": "THISISNOTAREALDOI"})
    assert refused.is_error is True and refused.structured_content is not None
    error = refused.structured_content["error"]
    assert error["code"] == -32602
    assert error["data"]["reason"] == "invalid_arguments"
    assert error["data"]["fields"] == ["doi"]
    assert "invalid arguments for crossref_get_work: doi" in refused.content[0].text
    assert fake.count() == 0


async def test_unknown_tool_is_a_protocol_error(cache: Services) -> None:
    """A tool name the server does not serve is the JSON-RPC error -32602 naming it (SEP-1303: a
    protocol-level problem, not a tool result).
    """
    async with Client(mcp_server(cache)) as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("crossref_get_everything", {})
    assert refused.value.code == -32602
    assert refused.value.message == "Unknown tool: crossref_get_everything"


async def test_stale_entry_revalidated_unchanged_leaves_row(
    cache: Services, fake: FakeUpstream, injected_clock: Clock
) -> None:
    """A stale work is revalidated with one request; the same content only bumps validated_at."""
    await call(cache, "crossref_get_work", {"doi": RAPTOR_DOI})
    before = cache.store.get("crossref_work", RAPTOR_DOI)
    cache.settings.ttl.crossref_work = 0.001
    injected_clock.advance(1.0)  # older than its 1 ms lifetime: stale (the injected clock, no sleep)
    res = await call(cache, "crossref_get_work", {"doi": RAPTOR_DOI})
    after = cache.store.get("crossref_work", RAPTOR_DOI)
    assert res.structured_content["cache"]["source"] == "upstream"
    assert fake.count("/works", service="crossref") == 2
    assert (after.body, after.fetched_at, after.changes) == (before.body, before.fetched_at, 1)
    assert after.validated_at > before.validated_at


async def test_stale_entry_changed_upstream_is_replaced(
    cache: Services,
    fake: FakeUpstream,
    corpus_message,
    injected_clock: Clock,
) -> None:
    """When upstream's title changed, revalidation stores the new body and the tool shows it."""
    await call(cache, "crossref_get_work", {"doi": RAPTOR_DOI})
    changed = {
        "status": "ok",
        "message-type": "work",
        "message-version": "1.0.0",
        "message": dict(corpus_message, title=["Raptor genomes, revised"]),
    }
    fake.set_body("crossref", f"/works/{RAPTOR_DOI}", changed)
    cache.settings.ttl.crossref_work = 0.001
    injected_clock.advance(1.0)  # older than its 1 ms lifetime: stale (the injected clock, no sleep)
    res = await call(cache, "crossref_get_work", {"doi": RAPTOR_DOI})
    assert res.structured_content["title"] == "Raptor genomes, revised"
    assert cache.store.get("crossref_work", RAPTOR_DOI).changes == 2


async def test_zenodo_etag_revalidation_sends_if_none_match(
    cache: Services, fake: FakeUpstream, injected_clock: Clock
) -> None:
    """Zenodo's stored weak ETag is sent back as If-None-Match; a 304 touches only validated_at."""
    fake.etags = True
    first = await call(cache, "zenodo_get_record", {"id": "5244404"})
    assert first.structured_content["record"]["title"] == "The Origins of SARS-CoV-2: A Critical Review"
    stored = cache.store.get("zenodo_record", "5244404")
    assert stored.etag
    cache.settings.ttl.zenodo_record = 0.001
    injected_clock.advance(1.0)  # older than its 1 ms lifetime: stale (the injected clock, no sleep)
    second = await call(cache, "zenodo_get_record", {"id": "10.5281/zenodo.5244404"})
    assert second.structured_content["record"]["title"] == "The Origins of SARS-CoV-2: A Critical Review"
    last = fake.requests[-1]
    assert last.headers.get("if-none-match") == stored.etag
    after = cache.store.get("zenodo_record", "5244404")
    assert (after.body, after.fetched_at) == (stored.body, stored.fetched_at)
    assert after.validated_at > stored.validated_at


async def test_zenodo_record_served_offline(
    cache: Services, fake: FakeUpstream, injected_clock: Clock
) -> None:
    """A stored Zenodo record is still answered with the fake stopped, flagged stale."""
    await call(cache, "zenodo_get_record", {"id": "5244404"})
    fake.stop()
    cache.settings.ttl.zenodo_record = 0.001
    injected_clock.advance(1.0)  # older than its 1 ms lifetime: stale (the injected clock, no sleep)
    res = await call(cache, "zenodo_get_record", {"id": "https://zenodo.org/records/5244404"})
    data = res.structured_content
    assert data["found"] is True
    assert data["record"]["creator_count"] == 21
    assert data["cache"]["source"] == "store-stale"
    assert data["cache"]["upstream_error"] == "upstream_unavailable"


async def test_zenodo_concept_id_resolves_to_latest(cache: Services, fake: FakeUpstream) -> None:
    """Concept record id 591564 (scikit-learn) resolves to its latest version; a repeat costs no request."""
    res = await call(cache, "zenodo_get_record", {"id": "591564"})
    data = res.structured_content
    assert data["found"] is True
    assert data["resolved_from"] == "concept_to_latest"
    assert data["record"]["title"] == "scikit-learn"
    assert data["record"]["concept_recid"] == "591564"
    n = fake.count(service="zenodo")
    again = await call(cache, "zenodo_get_record", {"id": "10.5281/zenodo.591564"})
    assert again.structured_content["record"]["recid"] == data["record"]["recid"]
    assert again.structured_content["resolved_from"] == "concept_to_latest"
    assert fake.count(service="zenodo") == n


async def test_zenodo_tombstone_is_a_miss_not_an_error(cache: Services) -> None:
    """A deleted record (410) answers found: false, miss_kind deleted, with its tombstone."""
    res = await call(cache, "zenodo_get_record", {"id": "22705918"})
    assert res.is_error is False
    data = res.structured_content
    assert data["found"] is False
    assert data["miss_kind"] == "deleted"
    assert data["tombstone"]


async def test_zenodo_invalid_identifier(cache: Services, fake: FakeUpstream) -> None:
    """A GitHub-badge id is refused with invalid_identifier before any request."""
    res = await call(cache, "zenodo_get_record", {"id": "https://zenodo.org/badge/latestdoi/12345"})
    assert res.is_error is True
    assert res.structured_content["error"]["data"]["reason"] == "invalid_identifier"
    assert fake.count() == 0


async def test_tools_listed_with_output_schema(cache: Services) -> None:
    """Both tools are listed read-only with input and output schemas (cache block included)."""
    async with Client(mcp_server(cache)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert {"crossref_get_work", "zenodo_get_record"} <= set(tools)
    work = tools["crossref_get_work"]
    assert work.annotations.read_only_hint is True
    assert "cache" in work.output_schema["properties"]
    assert work.input_schema["properties"]["limit"]["maximum"] == 500


def test_concurrent_case_variants_make_one_request(cache: Services, fake: FakeUpstream) -> None:
    """Two concurrent lookups of one DOI in different case: one upstream request, one row (BC-05)."""
    import threading

    from syncd.crossref.lookups import get_work
    from syncd.normalize.doi import parse_doi

    fake.fault("latency", delay_s=0.3, times=1)
    results: list[str] = []

    def look(raw: str) -> None:
        results.append(get_work(cache, parse_doi(raw)).entry.key)

    threads = [threading.Thread(target=look, args=(d,)) for d in ("10.1101/598821", "10.1101/598821".upper())]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["10.1101/598821", "10.1101/598821"]
    assert fake.count("/works", service="crossref") == 1


async def test_cache_etag_is_stable_for_unchanged_content(
    cache: Services, fake: FakeUpstream, injected_clock: Clock
) -> None:
    """cache.etag (syncd's content hash) is the same after an unchanged revalidation, new after a change."""
    first = (await call(cache, "crossref_get_work", {"doi": RAPTOR_DOI})).structured_content["cache"]["etag"]
    cache.settings.ttl.crossref_work = 0.001
    injected_clock.advance(1.0)  # older than its 1 ms lifetime: stale (the injected clock, no sleep)
    again = await call(cache, "crossref_get_work", {"doi": RAPTOR_DOI})
    assert again.structured_content["cache"]["source"] == "upstream"
    assert again.structured_content["cache"]["etag"] == first
    stored = cache.store.get("crossref_work", RAPTOR_DOI)
    assert first == f'"{stored.content_hash[:32]}"'
