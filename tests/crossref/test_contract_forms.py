"""Upstream values in the form the contracts give (issue 13 kind 1), audited over the corpus.

Through a real MCP client session on recorded bodies: ORCID iDs stay Crossref's URI form
(``https://orcid.org/...``, ``http://`` in older deposits), update and publication dates are
``{year, month?, day?}`` parts everywhere (get_work, search items, journal works), search-result
authors carry ``{given, family, name}`` only, and a facet carries exactly ``name`` and ``values``
(``[{value, count}]``): Crossref's ``value-count`` counts the values returned, so no total is relayed.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from mcp import Client

from syncd.road.services import Services
from tests.conftest import corpus_json
from tests.corpus_path import CORPUS
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

pytestmark = pytest.mark.anyio

ORCID = re.compile(r"^https?://orcid\.org/\d{4}-\d{4}-\d{4}-\d{3}[\dX]$")
DATE_KEYS = {"year", "month", "day"}
PLOS_WORKS = "crossref/work-list/journals-1932-6203-works_rows-30_cursor-star_with-retraction-notices.json"


async def _call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    res = await client.call_tool(tool, args)
    assert res.is_error is False, res.content[0].text
    return dict(res.structured_content or {})


def _forms(value: Any, path: str, bad: list[str], seen: dict[str, int]) -> None:
    """Collect every ORCID not in URI form and every date field not in parts form under ``value``."""
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}"
            if key == "orcid":
                seen["orcid"] += 1
                if not (isinstance(item, str) and ORCID.match(item)):
                    bad.append(f"{where}={item!r}")
            if key in ("updated", "published", "approved", "start", "end"):
                seen["date"] += 1
                if not (isinstance(item, dict) and "year" in item and set(item) <= DATE_KEYS):
                    bad.append(f"{where}={item!r}")
            _forms(item, where, bad, seen)
    elif isinstance(value, list):
        for item in value:
            _forms(item, f"{path}[]", bad, seen)


def _corpus_dois() -> list[str]:
    dois = []
    for path in sorted((CORPUS / "crossref" / "work").glob("*.json")):
        if path.name.endswith(".headers.json"):
            continue
        message = json.loads(path.read_text(encoding="utf-8")).get("message")
        if isinstance(message, dict) and isinstance(message.get("DOI"), str):
            dois.append(message["DOI"])
    return dois


async def test_every_corpus_work_relays_orcid_uris_and_date_parts(cache: Services) -> None:
    """crossref_get_work and crossref_get_references on every recorded work: every ORCID is a
    ``http(s)://orcid.org/`` URI and every date (published, updated, approved, event) is parts.
    """
    bad: list[str] = []
    seen = {"orcid": 0, "date": 0}
    dois = _corpus_dois()
    async with Client(mcp_server(cache)) as client:
        for doi in dois:
            for tool in ("crossref_get_work", "crossref_get_references"):
                res = await client.call_tool(tool, {"doi": doi})
                if not res.is_error:
                    _forms(res.structured_content, f"{tool}({doi})", bad, seen)
    assert bad == []
    assert len(dois) >= 80 and seen["orcid"] >= 50 and seen["date"] >= 80


async def test_get_work_orcid_and_update_forms(cache: Services) -> None:
    """The exact deposited forms: 10.1021/acs.orglett.9b00971 keeps its ``http://orcid.org/`` URI, the
    withdrawn Lancet paper's first updatedBy entry is parts with its Retraction Watch source and id.
    """
    async with Client(mcp_server(cache)) as client:
        work = await _call(client, "crossref_get_work", {"doi": "10.1021/acs.orglett.9b00971"})
        lancet = await _call(client, "crossref_get_work", {"doi": "10.1016/s0140-6736(20)31180-6"})
    assert [a["orcid"] for a in work["authors"] if "orcid" in a] == ["http://orcid.org/0000-0002-4149-0494"]
    assert lancet["updatedBy"][0] == {
        "doi": "10.1016/s0140-6736(20)31290-3",
        "type": "expression_of_concern",
        "source": "retraction-watch",
        "recordId": "23527",
        "updated": {"year": 2020, "month": 6, "day": 3},
    }


async def test_search_items_carry_update_parts_and_bare_author_names(
    cache: Services, fake: FakeUpstream
) -> None:
    """A search page (PLOS ONE works with correction and retraction notices): updateTo entries are
    ``{doi, type, updated{year, month, day}}`` as deposited (no source there), and authors carry only
    given/family/name, as the search contract gives them.
    """
    fake.set_body("crossref", "/works", corpus_json(PLOS_WORKS))
    async with Client(mcp_server(cache)) as client:
        page = await _call(client, "crossref_search_works", {"query": "plos", "rows": 30})
    notices = [u for w in page["works"] for u in w.get("updateTo") or []]
    assert notices[0] == {
        "doi": "10.1371/journal.pone.0109449",
        "type": "correction",
        "updated": {"year": 2015, "month": 1, "day": 28},
    }
    assert all(set(u["updated"]) == DATE_KEYS for u in notices) and len(notices) >= 3
    author_keys = {k for w in page["works"] for a in w.get("authors") or [] for k in a}
    assert author_keys == {"given", "family", "name"}
    bad: list[str] = []
    _forms(page, "search", bad, {"orcid": 0, "date": 0})
    assert bad == []


async def test_facet_entries_carry_name_and_values_only(cache: Services, fake: FakeUpstream) -> None:
    """The lagotto facet page: each facet is exactly ``{name, values}`` and each value ``{value, count}``,
    highest count first; Crossref's value-count is not relayed.
    """
    fake.set_body(
        "crossref", "/works", corpus_json("crossref/work-list/works_query-lagotto_rows-0_facets.json")
    )
    async with Client(mcp_server(cache)) as client:
        args = {"query": "lagotto", "rows": 0, "facets": {"affiliation": "*", "published": "*"}}
        page = await _call(client, "crossref_search_works", args)
    assert page["facets"]
    for facet in page["facets"]:
        assert set(facet) == {"name", "values"}
        assert all(set(v) == {"value", "count"} for v in facet["values"])
        counts = [v["count"] for v in facet["values"]]
        assert counts == sorted(counts, reverse=True)
    published = next(f for f in page["facets"] if f["name"] == "published")
    assert all(isinstance(v["value"], str) and isinstance(v["count"], int) for v in published["values"])
