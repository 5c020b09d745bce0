"""Identifiers as people paste them (issue 14.9): wrappers and look-alikes repaired, nothing of the DOI
dropped, and what cannot be valid refused before any request.
"""

from __future__ import annotations

import pytest
from mcp import Client

from syncd.crossref.params import issn_check_digit, issn_key
from syncd.errors import InvalidInput
from syncd.normalize.doi import doi_path_segment, parse_doi
from syncd.road.services import Services
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

SICI_HASH = "10.1002/(SICI)1097-0258(19970515)16:9<981::AID-SIM510>3.0.CO;2-#"


@pytest.mark.parametrize(
    ("pasted", "doi"),
    [
        ("\u201c10.1038/nature12373\u201d", "10.1038/nature12373"),  # typographic quotes from a web page
        ("'10.1371/journal.pone.0209993'", "10.1371/journal.pone.0209993"),
        ("(10.3319/TAO.2009.05.25.02(IWNOP))", "10.3319/TAO.2009.05.25.02(IWNOP)"),  # BC-04's ")" kept
        (
            "<10.1002/(SICI)1096-9861(19960129)365:1<113::AID-CNE9>3.0.CO;2-6>",
            "10.1002/(SICI)1096-9861(19960129)365:1<113::AID-CNE9>3.0.CO;2-6",
        ),
        ("10.1038\u2215nature12373", "10.1038/nature12373"),  # DIVISION SLASH from a PDF
        ("10.1016/S0140\u20106736(20)30183\u20105", "10.1016/S0140-6736(20)30183-5"),  # U+2010 hyphens
        ("\uff11\uff10.1038/nature12373", "10.1038/nature12373"),  # full-width digits
        ("doi:10.1038/nature12373;", "10.1038/nature12373"),  # reference-list separator
        ("\u201c10.1038/nature12373\u201d.", "10.1038/nature12373"),  # quoted at a sentence end
        (SICI_HASH, SICI_HASH),  # a SICI whose check character is "#"
        ("https://doi.org/" + SICI_HASH, SICI_HASH),  # ... kept in a resolver URL too
        ("https://doi.org/10.1093/analys/anw053#abstract", "10.1093/analys/anw053"),  # a real fragment
        (
            "10.1002/(sici)1096-9861(19971020)387:2<167::aid-cne1>3.0.co;2-z.",
            "10.1002/(sici)1096-9861(19971020)387:2<167::aid-cne1>3.0.co;2-z",
        ),
    ],
)
def test_pasted_doi_forms_give_the_doi(pasted: str, doi: str) -> None:
    """Each pasted form parses to exactly the DOI, every character that belongs to it kept."""
    assert parse_doi(pasted).doi == doi


def test_sici_hash_check_character_is_sent_encoded() -> None:
    """The "#" check character goes upstream as %23, never cut off as a URL fragment."""
    assert doi_path_segment(parse_doi("https://doi.org/" + SICI_HASH).doi).endswith("3.0.CO%3B2-%23")


@pytest.mark.parametrize("pasted", ["10.1002/(SICI)1097-0258(19970515)16:9<981\u2026", "10.1038/natu..."])
def test_doi_cut_short_is_refused(pasted: str) -> None:
    """A DOI ending in an ellipsis was truncated by whatever displayed it: refused, not looked up."""
    with pytest.raises(InvalidInput) as err:
        parse_doi(pasted)
    assert err.value.reason == "invalid_parameter"
    assert "cut short" in err.value.message


def test_issn_check_digit_from_the_standard() -> None:
    """ISO 3297 check digits of ISSNs in the corpus: PLOS ONE 1932-6203 and 1687-725X (check digit X)."""
    assert issn_check_digit("1932620") == "3"
    assert issn_key("1687-725x") == "1687-725X"
    assert issn_check_digit("1687725") == "X"


def test_issn_with_a_wrong_check_digit_is_refused_before_any_request() -> None:
    """1932-6204 (a typo of PLOS ONE's ISSN) is invalid_parameter naming the right check digit."""
    with pytest.raises(InvalidInput) as err:
        issn_key("1932-6204")
    assert err.value.reason == "invalid_parameter"
    assert "check digit should be 3" in err.value.message


@pytest.mark.anyio
async def test_pasted_doi_reaches_the_stored_work_through_the_tool(
    cache: Services, fake: FakeUpstream
) -> None:
    """crossref_get_work with the DOI as pasted from a PDF (typographic quotes, a DIVISION SLASH, a
    trailing ';') answers the Raptor work, and the clean form afterwards is answered from the store.
    """
    async with Client(mcp_server(cache)) as client:
        pasted = await client.call_tool("crossref_get_work", {"doi": "\u201c10.1101\u2215598821\u201d;"})
        clean = await client.call_tool("crossref_get_work", {"doi": "10.1101/598821"})
    assert not pasted.is_error, pasted.structured_content
    assert pasted.structured_content["title"].startswith("Raptor genomes reveal evolutionary signatures")
    assert clean.structured_content["cache"]["source"] == "store"
    assert fake.count("/works", service="crossref") == 1


@pytest.mark.anyio
async def test_issn_with_a_wrong_check_digit_is_refused_by_the_tool_without_request(
    cache: Services, fake: FakeUpstream
) -> None:
    """crossref_search_journals issn=1932-6204 (PLOS ONE's ISSN mistyped) is refused before any request,
    with the contract's reason for an ISSN no journal has (issn_not_found, issue 25 item 4) and the
    right check digit in the message.
    """
    async with Client(mcp_server(cache)) as client:
        res = await client.call_tool("crossref_search_journals", {"issn": "1932-6204"})
    assert res.is_error
    error = res.structured_content["error"]
    assert error["data"]["reason"] == "issn_not_found"
    assert error["data"]["expectedCheckDigit"] == "3"
    assert "1932-6204" in error["message"] and "check digit should be 3" in error["message"]
    assert fake.count(service="crossref") == 0
