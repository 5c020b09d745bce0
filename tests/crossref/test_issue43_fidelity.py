"""Issue 43, Crossref: the remaining value differences from the anchor server (contract fidelity, round 3).

Each claim runs through a real MCP client session over the loopback fake upstream replaying the recorded
corpus (``tests/corpus/``): a thin ``/prefixes/{prefix}`` record, a reference's ``unstructured`` string
relayed with its deposited spacing, the offset page a blank ``cursor`` asks for, and abstract formulas.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from syncd.road.services import Services
from tests.conftest import corpus_json
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

pytestmark = pytest.mark.anyio

THIN_PREFIX = "crossref/prefix/prefixes-10.1016_thin.json"
"""Elsevier's 10.1016 record as Crossref answers some prefixes: ``member`` and ``name``, no ``prefix`` URI."""


@pytest.fixture(autouse=True)
def roomy_deadline(cache: Services) -> None:
    """A 30 s call deadline: the claims are values, and no fault here is slow."""
    cache.settings.deadline_s = 30.0


async def _ok(cache: Services, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    async with Client(mcp_server(cache)) as client:
        res = await client.call_tool(tool, args)
    assert res.is_error is False, res.content[0].text
    return dict(res.structured_content or {})


async def test_thin_prefix_record_answers_the_prefix_asked_and_its_owner(
    cache: Services, fake: FakeUpstream
) -> None:
    """``/prefixes/10.1016`` answering only ``member`` and ``name``: the record is the prefix as asked,
    ``Elsevier BV`` and member 78 (not ``malformed_response``); a ``name``-only record (the anchor's thin
    payload) gives the prefix and the owner, no member id.
    """
    fake.set_body("crossref", "/prefixes/10.1016", corpus_json(THIN_PREFIX))
    answer = await _ok(cache, "crossref_get_prefix", {"prefix": "10.1016"})
    assert {k: answer[k] for k in ("prefix", "ownerName", "memberId")} == {
        "prefix": "10.1016",
        "ownerName": "Elsevier BV",
        "memberId": 78,
    }
    name_only = {"status": "ok", "message-type": "prefix", "message": {"name": "Elsevier BV"}}
    fake.set_body("crossref", "/prefixes/10.1038", name_only)
    bare = await _ok(cache, "crossref_get_prefix", {"prefix": "10.1038"})
    assert bare["prefix"] == "10.1038" and bare["ownerName"] == "Elsevier BV" and "memberId" not in bare


async def test_reference_unstructured_keeps_its_deposited_spacing(cache: Services) -> None:
    """10.1186/s13661-014-0236-x, reference 236_CR1 (Figueiredo GM): the deposited double spaces around
    ``"Equation missing"`` are relayed as deposited; only the ends are trimmed.
    """
    raw = corpus_json("crossref/work/10.1186_s13661-014-0236-x.json")["message"]["reference"]
    deposited = next(r for r in raw if r.get("unstructured", "").startswith("Figueiredo GM"))
    answer = await _ok(cache, "crossref_get_references", {"doi": "10.1186/s13661-014-0236-x"})
    relayed = next(r for r in answer["references"] if r.get("key") == deposited["key"])
    assert relayed["unstructured"] == deposited["unstructured"].strip()
    assert '"Equation missing"  elliptic problems' in relayed["unstructured"]


async def test_blank_cursor_is_an_offset_page_and_past_the_end_says_so(
    cache: Services, fake: FakeUpstream
) -> None:
    """``cursor=""`` with offset 500 over the 454 widget results is an offset page: the notice says the
    offset is past the end (naming offset=440) and does not call a cursor walk complete.
    """
    page = corpus_json("crossref/work-list/works_query-widget_cursor-star.json")
    page["message"]["items"] = []
    fake.set_body("crossref", "/works?query=widget&offset=500", page)
    answer = await _ok(cache, "crossref_search_works", {"query": "widget", "offset": 500, "cursor": ""})
    assert answer["returned"] == 0 and "nextCursor" not in answer
    assert answer["notice"].startswith("offset=500 is past the end of the 454 matching records")
    assert "cursor walk" not in answer["notice"]


async def test_blank_cursor_empty_first_page_says_past_the_end(cache: Services, fake: FakeUpstream) -> None:
    """``cursor=""`` at offset 0 answered with an empty page while Crossref counts 454 widget results (the
    anchor's blank-cursor case): an offset page, so the notice says it is past the end of what Crossref
    served and never that a cursor walk is complete; no ``nextCursor``.
    """
    page = corpus_json("crossref/work-list/works_query-widget_cursor-star.json")
    page["message"]["items"] = []
    fake.set_body("crossref", "/works?query=widget", page)
    answer = await _ok(cache, "crossref_search_works", {"query": "widget", "cursor": ""})
    assert answer["returned"] == 0 and answer["totalResults"] == 454 and "nextCursor" not in answer
    assert answer["notice"].startswith("offset=0 is past the end of the records Crossref served")
    assert "454 matching records" in answer["notice"] and "cursor walk" not in answer["notice"]


async def test_presentation_mathml_abstract_reads_as_the_anchor_renders_it(cache: Services) -> None:
    """10.1186/s13661-014-0236-x deposits presentation MathML only: the fraction reads
    ``p^⋆:=(Np)/(N−p)`` (an operand grouped unless one token or bracketed) and a fenced base stays
    ``|u|^{r−1}``, not ``(|u|)^{r−1}``.
    """
    answer = await _ok(cache, "crossref_get_work", {"doi": "10.1186/s13661-014-0236-x"})
    assert "where 1<q≤p<r+1<p^⋆:=(Np)/(N−p), p<N, λ>0 is a parameter" in answer["abstract"]
    assert "{−Δ_pu−Δ_qu=λg(x)|u|^{r−1}u+|u|^{p^⋆−2}u,;" in answer["abstract"]
    assert "g∈L^{(p^⋆)/(p^⋆−r−1)}(R^N)" in answer["abstract"]


async def test_inline_tex_after_a_hyphen_stands_as_its_own_token(cache: Services, fake: FakeUpstream) -> None:
    r"""The anchor's ``<alternatives>`` reproduction (TeX first, the same formula as MathML second) after
    ``anti-``: the abstract reads ``values for the anti- $$k_{\bot }$$ algorithm``, one encoding, the
    space before the formula kept.
    """
    body = corpus_json("crossref/work-shaped/10.1140_epjc_s10052-020-8172-7_alternatives.json")
    fake.set_body("crossref", "/works/10.1140/epjc/s10052-020-8172-7", body)
    answer = await _ok(cache, "crossref_get_work", {"doi": "10.1140/epjc/s10052-020-8172-7"})
    assert answer["abstract"] == "values for the anti- $$k_{\\bot }$$ algorithm"
