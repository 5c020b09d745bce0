"""``datacite_get_work`` over the recorded DataCite and doi.org bodies, at the MockTransport seam.

Local-first (one request, then the store; upstream down -> the stored copy flagged stale), the found
arm read from both endpoints' shapes, the typed misses (other agency, does not exist, not public,
unclassified) from doi.org's recorded answers, the caps of a 1,000-creator record, the mailto sent
as DataCite asks, and the content hash that ignores counters.
"""

from __future__ import annotations

import json
from typing import Any

from syncd.datacite import lookups
from syncd.datacite.lookups import WORK
from syncd.datacite.params import doi_url, parse_datacite_doi
from syncd.datacite.tools import get_work
from syncd.registry import hooks_of
from syncd.road.services import Services
from tests.conftest import Clock
from tests.datacite.upstream import Recorded, recorded_json


def _answer(svc: Services, doi: str) -> dict[str, Any]:
    result = get_work(svc, doi)
    assert result.structured_content is not None
    return result.structured_content


def test_an_arxiv_preprint_is_read_once_then_from_the_store(dc: Services, upstream: Recorded) -> None:
    """The arXiv record: its title, 10 creators, repository arxiv.content of provider arxiv; the second
    call is answered from the store with no request.
    """
    upstream.add_work("10.48550/arxiv.2311.16162")
    first = _answer(dc, "https://doi.org/10.48550/arXiv.2311.16162")
    assert first["found"] is True and first["doi"] == "10.48550/arxiv.2311.16162"
    assert first["titles"][0]["title"].startswith("Leveraging Artificial Intelligence Technology")
    assert len(first["creators"]) == 10 and first["creators"][0]["name"] == "Yin, Hui"
    assert first["repository"] == {"repositoryId": "arxiv.content", "name": "arXiv", "providerId": "arxiv"}
    assert (first["resourceTypeGeneral"], first["publicationYear"], first["version"]) == (
        "Preprint",
        2023,
        "1",
    )
    assert first["alternateIdentifiers"] == [{"identifier": "2311.16162", "identifierType": "arXiv"}]
    assert first["cache"]["source"] == "upstream"
    second = _answer(dc, "doi:10.48550/ARXIV.2311.16162")
    assert second["cache"]["source"] == "store"
    assert len(upstream.calls) == 1
    assert upstream.calls[0][2]["query"] == 'doi:"10.48550/arxiv.2311.16162"'


def test_the_mailto_is_sent_in_the_user_agent_and_never_in_the_url(dc: Services, upstream: Recorded) -> None:
    """DataCite identifies a client by an e-mail in its User-Agent: sent there, never as a parameter."""
    upstream.add_work("10.5061/dryad.8515")
    _answer(dc, "10.5061/dryad.8515")
    assert "mailto:lab@example.org" in upstream.user_agents[0]
    assert all("mailto" not in json.dumps(params) for _, _, params in upstream.calls)


def test_the_list_endpoint_record_of_dryad_234(dc: Services, upstream: Recorded) -> None:
    """The anchor's recorded list read of 10.5061/dryad.234: publisher with its ROR id, ROR affiliations,
    counts as reported (264 citations, 56,788 views), rights cc0-1.0, one IsCitedBy relation.
    """
    upstream.add_work(
        "10.5061/dryad.234",
        recorded_json("work-list/dois_client-id-dryad.dryad_sort-citation-count_size-1_include-client.json"),
    )
    data = _answer(dc, "10.5061/DRYAD.234")
    assert data["publisher"] == {"name": "Dryad", "rorId": "00x6h5n95"}
    assert data["creators"][0]["affiliations"] == [
        {"name": "University of Missouri–St. Louis", "rorId": "037cnag11"}
    ]
    assert data["counts"]["citationCount"] == 264 and data["counts"]["viewCount"] == 56788
    assert data["rights"][0]["rightsIdentifier"] == "cc0-1.0" and data["metadataLicense"] == "CC0-1.0"
    assert data["relatedIdentifierCounts"] == {"IsCitedBy": 1}
    assert data["repository"] == {"repositoryId": "dryad.dryad", "name": "DRYAD", "providerId": "dryad"}
    text = get_work(dc, "10.5061/dryad.234").content[0].text  # type: ignore[union-attr]
    assert "citation 264" in text and "view 56,788" in text


def test_a_1000_creator_record_is_capped_with_its_totals(dc: Services, upstream: Recorded) -> None:
    """HEPData's ALICE record (1,000 creators): 100 creators shown, the cap reported in truncatedLists;
    of its 43 deposited related identifiers only one carries an identifier (the inspirehep URL, its
    line breaks trimmed), so one is kept and counted.
    """
    upstream.add_work("10.17182/hepdata.77274.v1")
    data = _answer(dc, "10.17182/hepdata.77274.v1")
    assert len(data["creators"]) == 100
    assert data["truncatedLists"] == [{"field": "creators", "shown": 100, "total": 1000}]
    assert data["relatedIdentifierCounts"] == {"IsSupplementTo": 1}
    assert data["relatedIdentifiers"][0]["relatedIdentifier"] == "https://inspirehep.net/literature/1464839"


def test_a_crossref_doi_is_a_typed_miss_naming_crossref(dc: Services, upstream: Recorded) -> None:
    """No DataCite record, doi.org says Crossref: found false, other_agency, the crossref_get_work call."""
    upstream.add_ra("10.1038/nature12373", "ra/ra_10.1038-nature12373_crossref.json")
    data = _answer(dc, "10.1038/nature12373")
    assert (data["found"], data["missReason"], data["registrationAgency"]) == (
        False,
        "other_agency",
        "Crossref",
    )
    assert 'crossref_get_work with {"doi": "10.1038/nature12373"}' in data["guidance"]
    assert "titles" not in data


def test_misses_are_classified_by_doi_org(dc: Services, upstream: Recorded) -> None:
    """doi.org's recorded "DOI does not exist" -> does_not_exist; RA DataCite with no public record ->
    not_public (the anchor pairs the recorded RA answer of 10.5061/dryad.8515 with an empty page).
    """
    upstream.add_ra("10.9999/doesnotexist", "ra/ra_10.9999-doesnotexist_does-not-exist.json")
    upstream.add_ra("10.5061/dryad.8515", "ra/ra_10.5061-dryad.8515_datacite.json")
    missing = _answer(dc, "10.9999/doesnotexist")
    assert (missing["missReason"], "registrationAgency" in missing) == ("does_not_exist", False)
    hidden = _answer(dc, "10.5061/dryad.8515")
    assert (hidden["missReason"], hidden["registrationAgency"]) == ("not_public", "DataCite")


def test_doi_org_unreachable_is_unclassified_and_asked_again(dc: Services, upstream: Recorded) -> None:
    """When doi.org cannot answer the miss is unclassified; the next call asks again (and classifies)."""
    upstream.doi_org_down = True
    assert _answer(dc, "10.1038/nature12373")["missReason"] == "unclassified"
    upstream.doi_org_down = False
    upstream.add_ra("10.1038/nature12373", "ra/ra_10.1038-nature12373_crossref.json")
    assert _answer(dc, "10.1038/nature12373")["missReason"] == "other_agency"


def test_upstream_down_serves_the_stored_record_flagged_stale(
    dc: Services, upstream: Recorded, dc_clock: Clock
) -> None:
    """Past ttl.datacite with DataCite down: the stored PANGAEA record (8 creators), stale=true."""
    upstream.add_work("10.1594/pangaea.836178")
    assert len(_answer(dc, "10.1594/pangaea.836178")["creators"]) == 8
    dc_clock.advance(dc.settings.ttl.datacite + 60)
    upstream.down = True
    data = _answer(dc, "10.1594/pangaea.836178")
    assert len(data["creators"]) == 8 and data["cache"]["stale"] is True
    assert data["cache"]["source"] == "store-stale"


def test_a_zenodo_doi_names_the_zenodo_tool(dc: Services, upstream: Recorded) -> None:
    """Zenodo DOIs are DataCite's too: the record is answered, with zenodoRecordId and a notice."""
    upstream.add_work("10.5281/zenodo.1196821")
    data = _answer(dc, "10.5281/zenodo.1196821")
    assert data["found"] is True and len(data["creators"]) == 6
    assert data["zenodoRecordId"] == "1196821" and "zenodo_get_record" in data["notice"]


def test_both_endpoint_shapes_hash_alike_and_counters_do_not_count() -> None:
    """The /dois/{doi} body and the same record as a list item store one hash; a changed view count
    does not change it (counters are volatile), a changed title does.
    """
    single = recorded_json("work/10.5061_dryad.8515.json")
    as_item = lookups.work_content(
        "10.5061/dryad.8515", {"data": single["data"], "included": single["included"]}
    )
    counted = json.loads(json.dumps(single))
    counted["data"]["attributes"]["viewCount"] = 99999
    recounted = lookups.work_content(
        "10.5061/dryad.8515", {"data": counted["data"], "included": counted["included"]}
    )
    renamed = json.loads(json.dumps(single))
    renamed["data"]["attributes"]["titles"][0]["title"] = "Another title"
    retitled = lookups.work_content(
        "10.5061/dryad.8515", {"data": renamed["data"], "included": renamed["included"]}
    )
    assert as_item.content_hash == recounted.content_hash != retitled.content_hash


def test_invalid_doi_and_resolver_url() -> None:
    """``10.12/x`` is invalid_doi; the resolver URL encodes ``#``, ``%`` and ``<`` and keeps ``/``."""
    try:
        parse_datacite_doi("10.12/x")
    except Exception as exc:
        assert getattr(exc, "reason", None) == "invalid_doi"
    else:
        raise AssertionError("10.12/x was accepted")
    assert doi_url("10.1000/a#b%c<d,e/f") == "https://doi.org/10.1000/a%23b%25c%3Cd,e/f"


def test_stored_works_are_revalidated_fifty_to_a_request(
    dc: Services, upstream: Recorded, dc_clock: Clock
) -> None:
    """The sweep's batch hook: three stored records past their TTL are revalidated by one
    ``query=doi:("a" OR "b" OR "c")`` request; an unchanged record (same content hash) only has its
    validated_at bumped, the retitled one is stored with a ``title`` change.
    """
    dois = ["10.48550/arxiv.2311.16162", "10.48550/arxiv.1902.02534", "10.5063/f1m61h5x"]
    for doi in dois:
        upstream.add_work(doi)
        get_work(dc, doi)
    changed = upstream.works["10.5063/f1m61h5x"]
    changed["data"][0]["attributes"]["titles"][0]["title"] = "A retitled KNB package"
    both = {"data": [upstream.works[d]["data"][0] for d in dois], "included": [], "meta": {"total": 3}}
    for page in (upstream.works[d] for d in dois):
        both["included"] += page["included"]
    upstream.add_list(lambda path, q: path == "/dois" and q.get("query", "").startswith("doi:("), both)
    before = len(upstream.calls)
    entries = [lookups.stored_work(dc, d) for d in dois]
    report = hooks_of(WORK).revalidate_many.run(dc, entries, lambda *a: None)  # type: ignore[union-attr, arg-type]
    assert (report.list_requests, report.single_requests, report.unchanged, report.changed) == (1, 0, 2, 1)
    assert len(upstream.calls) == before + 1
    assert upstream.calls[-1][2]["query"].count(" OR ") == 2
    assert lookups.stored_work(dc, "10.5063/f1m61h5x").title == "A retitled KNB package"  # type: ignore[union-attr]
