"""The list line stored beside a work's body: offline search lines read it, never the whole body.

A stored Crossref work carries its list line (``entry_lines``, :mod:`syncd.crossref.views_lines`);
the offline ``crossref_search_works`` renders its ``works[]`` from it. These tests hold the line to
the answer the whole body gives (every recorded work, every author limit, the 2,932-author ATLAS
paper) and the offline tool's answer to the same bytes with and without the lines.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client
from sqlalchemy import text

from syncd.crossref import lookups
from syncd.crossref.lookups import line_of, message_of, work_content
from syncd.crossref.tools_batch import get_works_tool
from syncd.crossref.views_lines import AUTHOR_TOTAL, LINE_AUTHORS, line_item, list_line
from syncd.crossref.views_lists import work_summary
from syncd.road.services import Services
from tests.corpus_path import CORPUS
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

ATLAS = "10.1016/j.physletb.2012.08.020"


def corpus_messages() -> list[tuple[str, dict[str, Any]]]:
    """``(body text, message)`` of every recorded Crossref work."""
    out = []
    for path in sorted((CORPUS / "crossref" / "work").glob("*.json")):
        if path.name.endswith(".headers.json"):
            continue
        raw = path.read_text(encoding="utf-8")
        message = json.loads(raw).get("message")
        if isinstance(message, dict) and isinstance(message.get("DOI"), str):
            out.append((raw, message))
    return out


def _line(item: dict[str, Any], limit: int) -> tuple[str | None, bool]:
    summary, cut = work_summary(item, limit)
    return (summary.model_dump_json(exclude_none=True) if summary else None), cut


def test_every_recorded_work_renders_the_same_line_from_its_list_line() -> None:
    """For each of the recorded works and authorLimit 1, 3, 25, 306 and 500, the works[] entry rendered
    from the stored list line is the one rendered from the whole message, byte for byte.
    """
    works = corpus_messages()
    assert len(works) > 80
    for _, message in works:
        line = list_line(message)
        assert line is not None
        for limit in (1, 3, 25, 306, 500):
            assert _line(line_item(line), limit) == _line(message, limit), (message["DOI"], limit)


def test_the_atlas_paper_line_keeps_500_authors_and_the_full_count() -> None:
    """The 2,932-author ATLAS paper: its line keeps the first 500 names and the count 2,932, and is a
    small part of the body; rendered at authorLimit 500 it says authorCount 2932 and truncated.
    """
    raw, message = next((r, m) for r, m in corpus_messages() if m["DOI"].lower() == ATLAS)
    line = list_line(message)
    assert line is not None
    item = line_item(line)
    assert len(item["author"]) == LINE_AUTHORS and item[AUTHOR_TOTAL] == 2932
    assert len(line) < len(raw) / 4
    summary, cut = work_summary(item, 500)
    assert summary is not None and summary.authorCount == 2932 and cut is True
    assert summary.title is not None and summary.title.startswith("Observation of a new particle")


def test_a_stored_work_carries_its_line_and_a_line_page_reads_no_body(cache: Services) -> None:
    """work_content writes the list line; a search page with lines hands it with no body, and line_of
    reads it; an entry without a line (stored before migration 0014) falls back to its body.
    """
    store = cache.store
    for raw, message in corpus_messages():
        store.put_content(work_content(message["DOI"].lower(), message, raw))
    found, total = store.search_page(["Higgs", "ATLAS"], "crossref_work", lines=True)
    atlas = next(e for e in found if e.key == ATLAS)
    assert total >= 1 and atlas.body is None and atlas.summary is not None
    assert line_of(atlas)[AUTHOR_TOTAL] == 2932
    with store.write() as conn:
        conn.execute(
            text("DELETE FROM entry_lines WHERE entry_id = (SELECT id FROM entries WHERE key = :k)"),
            {"k": ATLAS},
        )
    found, _ = store.search_page(["Higgs", "ATLAS"], "crossref_work", lines=True)
    bare = next(e for e in found if e.key == ATLAS)
    assert bare.summary is None and bare.body is not None
    assert line_of(bare) == message_of(bare) and len(line_of(bare)["author"]) == 2932


@pytest.mark.anyio
async def test_the_offline_search_answer_is_the_same_with_and_without_lines(
    cache: Services, fake: FakeUpstream
) -> None:
    """Crossref down: crossref_search_works over the recorded works answers the same JSON, byte for byte,
    from the stored lines as from the whole bodies (lines dropped), at authorLimit 3 and 500.
    """
    for raw, message in corpus_messages():
        cache.store.put_content(work_content(message["DOI"].lower(), message, raw))
    fake.stop()
    queries = [
        {"query": "Higgs boson ATLAS", "authorLimit": 500},
        {"query": "genomes evolution", "rows": 20, "authorLimit": 3},
        {"query": "programming array water", "rows": 10},
    ]

    async def answers() -> list[str]:
        out = []
        async with Client(mcp_server(cache)) as client:
            for args in queries:
                res = await client.call_tool("crossref_search_works", args)
                assert res.is_error is False
                data = dict(res.structured_content)
                data["cache"] = {k: v for k, v in data["cache"].items() if k != "age_s"}  # the clock runs
                out.append(json.dumps(data, sort_keys=True))
        return out

    with_lines = await answers()
    assert all(json.loads(a)["works"] for a in with_lines)
    assert '"authorCount": 2932' in with_lines[0] and '"truncated": true' in with_lines[0]
    with cache.store.write() as conn:
        conn.execute(text("DELETE FROM entry_lines"))
    assert await answers() == with_lines


def _get_works_answer(cache: Services, dois: list[str]) -> str:
    """The structured ``crossref_get_works`` answer for ``dois``, cache ages left out (the clock runs)."""
    res = get_works_tool(cache, dois)
    assert res.is_error is not True
    data = dict(res.structured_content or {})
    for item in data["items"]:
        item["cache"] = {k: v for k, v in item.get("cache", {}).items() if k != "age_s"}
    return json.dumps(data, sort_keys=True)


def test_get_works_items_are_the_same_from_the_lines_and_parse_no_body(
    cache: Services, fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """crossref_get_works over every recorded work (stored, fresh): the items rendered from the stored
    lines, with the body parser made to fail, are byte for byte the items rendered from the whole bodies
    (lines dropped); the ATLAS item says authorCount 2932 from its line; no request is sent.
    """
    works = corpus_messages()
    for raw, message in works:
        cache.store.put_content(work_content(message["DOI"].lower(), message, raw))
    dois = [m["DOI"] for _, m in works][:100]
    assert ATLAS in {d.lower() for d in dois}
    sent = len(fake.requests)

    def no_body(entry: Any) -> dict[str, Any]:
        raise AssertionError(f"body of {entry.key} parsed for a list line")

    with monkeypatch.context() as patched:
        patched.setattr(lookups, "message_of", no_body)
        with_lines = _get_works_answer(cache, dois)
    atlas = next(i for i in json.loads(with_lines)["items"] if i["doi"].lower() == ATLAS)
    assert atlas["authorCount"] == 2932 and len(atlas["authors"]) == 3
    assert atlas["title"].startswith("Observation of a new particle")
    with cache.store.write() as conn:
        conn.execute(text("DELETE FROM entry_lines"))
    assert _get_works_answer(cache, dois) == with_lines
    assert len(fake.requests) == sent


def test_an_item_dated_by_issued_alone_reads_it_from_the_line(cache: Services) -> None:
    """The bioRxiv preprint 10.1101/598821 has no published, published-print or published-online date,
    only ``issued`` (2019-04-05): its line keeps ``issued`` and its crossref_get_works item gives that
    date from the line, as from the body.
    """
    raw, message = next((r, m) for r, m in corpus_messages() if m["DOI"] == "10.1101/598821")
    assert not {"published", "published-print", "published-online"} & set(message)
    cache.store.put_content(work_content("10.1101/598821", message, raw))
    line = json.loads(_get_works_answer(cache, ["10.1101/598821"]))["items"][0]
    with cache.store.write() as conn:
        conn.execute(text("DELETE FROM entry_lines"))
    whole = json.loads(_get_works_answer(cache, ["10.1101/598821"]))["items"][0]
    assert line == whole and line["published"] == {"year": 2019, "month": 4, "day": 5}
