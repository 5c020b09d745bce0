"""Issue 14 case 9: a journal asked by its other (print/electronic) ISSN is answered from the store."""

from __future__ import annotations

import pytest

from syncd.road.services import Services
from tests.crossref.test_crossref_tools import call, reason
from tests.fakeupstream import FakeUpstream

pytestmark = [pytest.mark.anyio]


async def test_other_issn_of_a_stored_journal_is_answered_from_the_store(
    cache: Services, fake: FakeUpstream
) -> None:
    """Journal of Landscape Ecology stored by its print ISSN 1803-2427: asked by its electronic ISSN
    1805-4196 (also pasted without the hyphen) it is answered from the store with no request; an ISSN
    no stored journal lists still goes upstream (and is issn_not_found there, after its 404 and one
    /works?filter=issn: probe).
    """
    first = (await call(cache, "crossref_search_journals", {"issn": "1803-2427"})).structured_content
    assert first["journals"][0]["issn"] == ["1803-2427", "1805-4196"]
    fake.reset_log()
    for pasted in ("1805-4196", "18054196"):
        other = (await call(cache, "crossref_search_journals", {"issn": pasted})).structured_content
        assert other["journals"][0]["title"] == "Journal of Landscape Ecology"
        assert other["cache"]["source"] == "store"
    assert fake.count(service="crossref") == 0
    assert reason(await call(cache, "crossref_search_journals", {"issn": "0000-0000"})) == "issn_not_found"
    assert fake.count("/journals/0000-0000", service="crossref") == 1
    assert fake.count("/works", service="crossref") == 1
