"""Reference strings as the contract renders them (issue 13.7): no JATS link tags left in `unstructured`."""

from __future__ import annotations

import json
from typing import Any

from syncd.crossref.views_lists import citation_text, references_view
from tests.corpus_path import CORPUS

PLOS_LIST = "crossref/work-list/journals-1932-6203-works_rows-30_cursor-star_with-retraction-notices.json"


def _item(doi: str) -> dict[str, Any]:
    body = json.loads((CORPUS / PLOS_LIST).read_text(encoding="utf-8"))
    return next(i for i in body["message"]["items"] if i["DOI"] == doi)


def test_ext_link_holding_its_href_is_unwrapped_in_the_corpus_reference() -> None:
    """PLOS ONE 10.1371/journal.pone.0209993 ref15: the deposited <ext-link> reads as its URL alone."""
    view = references_view(_item("10.1371/journal.pone.0209993"), offset=0, limit=100)
    ref15 = next(r for r in view.references if r.key == "ref15")
    assert ref15.unstructured is not None
    assert "<ext-link" not in ref15.unstructured and "</ext-link>" not in ref15.unstructured
    assert ref15.unstructured.endswith(
        "Available from: http://www.hc.fm.usp.br/site/Hospital-das-Clinicas-da-FMUSP/."
    )
    assert '"Gestão 2010–2014"' in ref15.unstructured  # &quot; decoded once


def test_no_link_markup_left_in_any_reference_of_the_plos_page() -> None:
    """Every reference of the 30 recorded PLOS ONE works: no ext-link or uri tag survives normalization."""
    body = json.loads((CORPUS / PLOS_LIST).read_text(encoding="utf-8"))
    seen = 0
    for item in body["message"]["items"]:
        for ref in item.get("reference", []):
            raw = ref.get("unstructured") or ""
            if "<ext-link" in raw or "<uri" in raw:
                seen += 1
                text = citation_text(raw) or ""
                assert "<ext-link" not in text and "<uri" not in text, (item["DOI"], ref["key"], text)
    assert seen >= 8


def test_uri_is_its_own_href_and_other_spans_stay() -> None:
    """<uri>U</uri> is U; a link whose text lacks its href is relayed whole (anchors 3.6: the tag is
    removed only where the text holds the href; issue 25 kind 2); a Miller index is kept as deposited.
    """
    assert citation_text("See <uri>https://example.org/a</uri>.") == "See https://example.org/a."
    linked = '<ext-link xlink:href="https://x.org/data">the data</ext-link> on the <100> plane'
    assert citation_text(linked) == linked
