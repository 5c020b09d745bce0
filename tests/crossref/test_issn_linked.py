"""Issue 42 item 5: an e-ISSN asked first on an empty store, whose ``/journals/{issn}`` 404s, is probed
once with ``/works?filter=issn:{issn}&rows=1``; the work's ``issn-type`` names the linked print ISSN.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from syncd.road.services import Services
from tests.conftest import corpus_json
from tests.crossref.test_crossref_tools import call, reason
from tests.fakeupstream import FakeUpstream

pytestmark = [pytest.mark.anyio]

LANDSCAPE_WORKS = "crossref/work-list/journals-1803-2427-works_rows-5.json"
LANDSCAPE_JOURNAL = "crossref/journal/journals-1803-2427.json"
NATURE_WORK = "crossref/work/10.1038_s41586-020-2649-2.json"


def _probe_answer(work: dict[str, Any], total: int) -> dict[str, Any]:
    """A ``/works?filter=issn:...&rows=1`` answer (work-list shape, as recorded) holding ``work``."""
    return {
        "status": "ok",
        "message-type": "work-list",
        "message-version": "1.0.0",
        "message": {
            "facets": {},
            "total-results": total,
            "items": [work],
            "items-per-page": 1,
            "query": {"start-index": 0, "search-terms": None},
        },
    }


def _landscape_work() -> dict[str, Any]:
    """The first recorded work of Journal of Landscape Ecology, its ISSNs as the journal lists them."""
    recorded = corpus_json(LANDSCAPE_WORKS)["message"]
    work = copy.deepcopy(recorded["items"][0])
    journal = corpus_json(LANDSCAPE_JOURNAL)["message"]
    work["ISSN"], work["issn-type"] = journal["ISSN"], journal["issn-type"]
    return _probe_answer(work, recorded["total-results"])


async def test_eissn_on_empty_store_is_answered_via_its_print_issn(
    cache: Services, fake: FakeUpstream
) -> None:
    """Electronic ISSN 1805-4196 asked first: /journals/1805-4196 404s, one probe of
    /works?filter=issn:1805-4196&rows=1 names print ISSN 1803-2427, and the journal Crossref holds
    there (Journal of Landscape Ecology) is answered with a notice naming both ISSNs; asked again, it
    is answered from the store with no request.
    """
    fake.set_body("crossref", "/works?filter=issn:1805-4196&rows=1", _landscape_work())
    res = await call(cache, "crossref_search_journals", {"issn": "1805-4196"})
    assert res.is_error is False, res.structured_content
    data = res.structured_content
    assert data["journals"][0]["title"] == "Journal of Landscape Ecology"
    assert data["journals"][0]["issn"] == ["1803-2427", "1805-4196"]
    assert "no journal under ISSN 1805-4196" in data["notice"]
    assert "1803-2427" in data["notice"]
    assert fake.count("/journals/1805-4196", service="crossref") == 1
    assert fake.count("/works", service="crossref") == 1
    assert fake.count("/journals/1803-2427", service="crossref") == 1
    fake.reset_log()
    again = (await call(cache, "crossref_search_journals", {"issn": "1805-4196"})).structured_content
    assert again["journals"][0]["title"] == "Journal of Landscape Ecology"
    assert fake.count(service="crossref") == 0


async def test_eissn_miss_names_the_linked_print_issn(cache: Services, fake: FakeUpstream) -> None:
    """Nature's e-ISSN 1476-4687: /journals/1476-4687 404s, the probe's work (the recorded
    10.1038/s41586-020-2649-2) lists print ISSN 0028-0836, whose /journals lookup 404s too: the answer
    is issn_not_found naming 0028-0836 in message, hint and data.linkedIssns.
    """
    work = corpus_json(NATURE_WORK)["message"]
    fake.set_body("crossref", "/works?filter=issn:1476-4687&rows=1", _probe_answer(work, 1))
    res = await call(cache, "crossref_search_journals", {"issn": "1476-4687"})
    assert reason(res) == "issn_not_found"
    error = res.structured_content["error"]
    assert error["data"]["linkedIssns"] == ["0028-0836"]
    assert "0028-0836" in error["message"]
    assert "issn=0028-0836" in error["data"]["recovery"]["hint"]
    assert fake.count("/journals/0028-0836", service="crossref") == 1


async def test_probe_without_a_matching_work_keeps_the_plain_miss(
    cache: Services, fake: FakeUpstream
) -> None:
    """A probe answering a work that does not list the asked ISSN (or no work) names no linked ISSN:
    plain issn_not_found, no linkedIssns, and no further journal lookup.
    """
    fake.set_body("crossref", "/works?filter=issn:2049-3630&rows=1", _landscape_work())
    res = await call(cache, "crossref_search_journals", {"issn": "2049-3630"})
    assert reason(res) == "issn_not_found"
    assert "linkedIssns" not in res.structured_content["error"]["data"]
    assert fake.count("/journals/1803-2427", service="crossref") == 0
