"""Identifiers as people paste them, one parser for every slice (issue 42 item 5): a pasted DOI gives
the same key and the same request in the Crossref, Zenodo and DataCite tools.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from syncd.normalize.doi import doi_path_segment, parse_doi
from syncd.road.services import Services
from syncd.zenodo.params_id import parse_record_ref
from tests.conftest import corpus_json
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

pytestmark = [pytest.mark.anyio]

LANCET = "10.1016/S0140-6736(20)31180-6"
"""A recorded Crossref work (The Lancet, 2020, retracted) whose suffix holds two hyphens."""
SICI_HASH = "10.1002/(SICI)1097-0258(19970515)16:9<981::AID-SIM510>3.0.CO;2-#"
"""A SICI DOI whose check character is ``#``."""

PASTED: list[tuple[str, str, str]] = [
    ("arrow after a space", LANCET + " \u2197", LANCET),
    ("arrow after a no-break space", LANCET + "\u00a0\u2197", LANCET),
    ("arrow glued on", LANCET + "\u2197", LANCET),
    ("link emoji", LANCET + " \U0001f517", LANCET),
    ("zero-width space and joiner", "\u200b" + LANCET + "\u2060", LANCET),
    ("U+2010 hyphen", LANCET.replace("-", "\u2010"), LANCET),
    ("U+2011 non-breaking hyphen", LANCET.replace("-", "\u2011"), LANCET),
    ("U+2012 figure dash", LANCET.replace("-", "\u2012"), LANCET),
    ("U+2013 en dash", LANCET.replace("-", "\u2013"), LANCET),
    ("U+2014 em dash", LANCET.replace("-", "\u2014"), LANCET),
    ("U+2015 horizontal bar", LANCET.replace("-", "\u2015"), LANCET),
    ("U+2212 minus sign", LANCET.replace("-", "\u2212"), LANCET),
    ("trailing # as written", SICI_HASH, SICI_HASH),
    ("trailing # typed as %23", SICI_HASH[:-1] + "%23", SICI_HASH),
    ("trailing %23 with an arrow", SICI_HASH[:-1] + "%23 \u2197", SICI_HASH),
]


def _requests(fake: FakeUpstream, service: str) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    """The (raw path, sorted decoded query) of each request ``service`` received."""
    return [(r.path, tuple(sorted(r.query.items()))) for r in fake.requests if r.service == service]


async def _ask(cache: Services, fake: FakeUpstream, doi: str) -> dict[str, Any]:
    """Each slice's DOI tool called with ``doi``: answers and the requests each slice sent."""
    out: dict[str, Any] = {}
    async with Client(mcp_server(cache)) as client:
        for tool, args in (
            ("crossref_get_work", {"doi": doi}),
            ("datacite_get_work", {"doi": doi}),
            ("zenodo_get_record", {"id": doi}),
        ):
            fake.reset_log()
            res = await client.call_tool(tool, args)
            service = tool.split("_", 1)[0]
            out[tool] = (res.structured_content, _requests(fake, service))
    return out


@pytest.mark.parametrize(("case", "pasted", "doi"), PASTED, ids=[c for c, _, _ in PASTED])
def test_every_slice_parser_reads_the_same_doi(case: str, pasted: str, doi: str) -> None:
    """The shared parser and the Zenodo id parser give the clean DOI's key for each pasted form."""
    key = parse_doi(doi).key
    assert parse_doi(pasted).key == key, case
    ref = parse_record_ref(pasted)
    assert (ref.input_kind, ref.doi, ref.stripped_doi) == ("external_doi", key, None), case
    assert doi_path_segment(parse_doi(pasted).doi) == doi_path_segment(doi)


@pytest.mark.parametrize(("case", "pasted", "doi"), PASTED, ids=[c for c, _, _ in PASTED])
async def test_pasted_form_sends_the_clean_doi_in_every_slice(
    cache: Services, fake: FakeUpstream, case: str, pasted: str, doi: str
) -> None:
    """Asked first on an empty store with a pasted form (arrows, NBSP, zero-width, U+2010-U+2015, U+2212,
    '#', '%23'), crossref_get_work, datacite_get_work and zenodo_get_record each send the clean DOI:
    Crossref ``/works/`` + the DOI path-encoded (``...-6736%2820%2931180-6``, a SICI's ``#`` as ``%23``),
    DataCite ``query=doi:"<key>"``, Zenodo ``q=doi:"<key>"``; the Crossref work (The Lancet's) is
    stored under the clean key, and a folded dash is echoed as ``normalized_from``.
    """
    key = parse_doi(doi).key
    fake.set_body("zenodo", "/records", {"hits": {"hits": [], "total": 0}, "aggregations": {}})  # no record
    answers = await _ask(cache, fake, pasted)
    crossref, crossref_sent = answers["crossref_get_work"]
    assert crossref_sent[0][0] == "/crossref/works/" + doi_path_segment(doi), case
    assert ("query", f'doi:"{key}"') in answers["datacite_get_work"][1][0][1], case
    assert ("q", f'doi:"{key}"') in answers["zenodo_get_record"][1][0][1], case
    folded = parse_doi(pasted).written
    for tool, (data, _) in answers.items():
        if "error" in data:  # the SICI DOI is not in the recorded corpus: Crossref's declared miss
            assert (doi, tool, data["error"]["data"]["reason"]) == (
                SICI_HASH,
                "crossref_get_work",
                "doi_not_found",
            )
            assert data["error"]["data"]["doi"] == doi
        else:
            assert data.get("normalized_from") == folded, (case, tool)
    if doi == LANCET:
        assert crossref["title"].startswith("RETRACTED: Hydroxychloroquine or chloroquine")
        assert cache.store.get("crossref_work", key) is not None


async def test_a_404_on_a_folded_dash_is_asked_once_more_as_written(
    cache: Services, fake: FakeUpstream
) -> None:
    """A DOI registered with U+2010 hyphens (here The Lancet's recorded work re-registered so, its
    ASCII form answering Crossref's 404): crossref_get_work with the U+2010 form sends the folded DOI,
    gets the 404, asks once more as written and answers the work (title from the corpus) with
    ``normalized_from`` the DOI as written, stored under the folded key; 2 requests in all.
    """
    written = LANCET.replace("-", "\u2010")
    body = corpus_json("crossref/work/10.1016_s0140-6736_20_31180-6.json")
    body["message"]["DOI"] = written.lower()
    fake.set_body(
        "crossref",
        "/works/" + LANCET,
        b"Resource not found.",
        status=404,
        headers={"content-type": "text/plain"},
    )
    fake.set_body("crossref", "/works/" + doi_path_segment(written), body)
    async with Client(mcp_server(cache)) as client:
        res = await client.call_tool("crossref_get_work", {"doi": written})
    data = res.structured_content
    assert not res.is_error, data
    assert data["title"].startswith("RETRACTED: Hydroxychloroquine or chloroquine")
    assert data["normalized_from"] == written
    sent = [r.path for r in fake.requests if r.service == "crossref"]
    assert sent == [
        "/crossref/works/" + doi_path_segment(LANCET),
        "/crossref/works/" + doi_path_segment(written),
    ]
    assert cache.store.get("crossref_work", LANCET.lower()) is not None
