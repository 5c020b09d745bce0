"""Issue 25 kind 2: reference fields relayed whole, as the contract's citation-string strip gives them.

anchors.md §3.6: a bracket is markup only in a tag's shape (``<name attr="v">``); a link element's
tag is removed only where its text already holds the ``href`` (or the ``href`` minus its scheme);
in citation strings an unknown element is kept as content. §1a ``crossref_get_references``:
identifiers (``issn`` among them) stay byte-exact.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client

from syncd.crossref.views_lists import citation_text, references_view
from syncd.road.services import Services
from tests.corpus_path import CORPUS
from tests.helpers import mcp_server

GEO_LIST = "crossref/work-list/journals-1803-2427-works_rows-5.json"
AMS_WORK = "crossref/work/10.1090_s0002-9939-05-08007-x.json"


def _item(rel: str, doi: str) -> dict[str, Any]:
    body = json.loads((CORPUS / rel).read_text(encoding="utf-8"))
    message = body["message"]
    return next(i for i in message["items"] if i["DOI"] == doi) if "items" in message else message


def test_single_quoted_href_anchor_is_no_markup_and_is_relayed() -> None:
    """10.2478/v10285-012-0015-2 ref 1: ``<a target="_blank" href='…'>…</a>`` has no tag's shape (the
    href is single-quoted), so the anchor stays as deposited; the ``<i>`` title around it is stripped.
    """
    view = references_view(_item(GEO_LIST, "10.2478/v10285-012-0015-2"), offset=0, limit=100)
    ref1 = next(r for r in view.references if r.key == "1")
    assert ref1.unstructured == (
        "Act of Congress (1972). US Marine Mammal Protection Act. Retrieved 6. September 2008, from "
        "<a target=\"_blank\" href='http://www.nmfs.noaa.gov/pr/pdfs/laws/mmpa.pdf'>"
        "http://www.nmfs.noaa.gov/pr/pdfs/laws/mmpa.pdf</a>"
    )


def test_every_anchor_of_the_page_is_kept_whole() -> None:
    """All four ``<a target="_blank" href='…'>`` references of the recorded page keep their element."""
    body = json.loads((CORPUS / GEO_LIST).read_text(encoding="utf-8"))
    kept = [
        citation_text(ref["unstructured"]) or ""
        for item in body["message"]["items"]
        for ref in item.get("reference", [])
        if "<a " in ref.get("unstructured", "")
    ]
    assert len(kept) == 4
    assert all(t.count('<a target="_blank" href=\'http') == 1 and t.endswith("</a>") for t in kept)
    assert not any("<i>" in t for t in kept)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # a shaped link whose text is its href (or the href minus its scheme): the text alone
        ('<a href="http://x.org/y">http://x.org/y</a>', "http://x.org/y"),
        ('<ext-link xlink:href="http://www.praat.org/">www.praat.org/</ext-link>', "www.praat.org/"),
        # a shaped link whose text is not its href: the tag is not removed, the element is relayed
        (
            '<ext-link xlink:href="https://x.org/data">the data</ext-link> on the <100> plane',
            '<ext-link xlink:href="https://x.org/data">the data</ext-link> on the <100> plane',
        ),
        # a doi.org href around the bare DOI: neither the href nor it minus its scheme is in the text
        (
            '<a href="https://doi.org/10.1/x">10.1/x</a>',
            '<a href="https://doi.org/10.1/x">10.1/x</a>',
        ),
        # an unquoted attribute value is not a tag's shape: kept, its text's <i> stripped
        ("<a href=http://x.org>site</a> <i>T</i>", "<a href=http://x.org>site</a> T"),
        # unknown elements and prose brackets are content
        ("<Stack Overflow, http://so.com> <foo>bar</foo>", "<Stack Overflow, http://so.com> <foo>bar</foo>"),
    ],
)
def test_link_and_shape_rules(raw: str, expected: str) -> None:
    """The literal §3.6 rules on citation strings (each case a reading recorded in the issue note)."""
    assert citation_text(raw) == expected


def test_reference_issn_relayed_byte_exact() -> None:
    """10.1090/s0002-9939-05-08007-x ref 2 deposits ``ISSN`` as a URI: relayed as deposited."""
    view = references_view(_item(AMS_WORK, "10.1090/s0002-9939-05-08007-x"), offset=0, limit=100)
    ref2 = next(r for r in view.references if r.key == "2")
    assert ref2.issn == "https://id.crossref.org/issn/0039-3223"
    assert ref2.journalTitle == "Studia Math." and ref2.firstPage == "61"


@pytest.mark.anyio
async def test_get_references_tool_relays_issn_and_anchor(cache: Services) -> None:
    """Through the MCP tool over the fake upstream: the reference ISSN and the whole anchor element."""
    async with Client(mcp_server(cache)) as client:
        res = await client.call_tool("crossref_get_references", {"doi": "10.1090/s0002-9939-05-08007-x"})
    refs = res.structured_content["references"]
    issns = [r.get("issn") for r in refs if r.get("issn")]
    assert len(issns) == 15 and "https://id.crossref.org/issn/0039-3223" in issns
    text = (res.content[0].text if res.content else "") or ""
    assert "0039-3223" in text
