"""Issue 43, DataCite: the remaining value differences from the anchor server (contract fidelity, round 3).

At the ``httpx.MockTransport`` seam over the recorded DataCite and doi.org bodies (:class:`Recorded`): a
429's wait as ``error.data.retryAfter``, citations rendered by DataCite's content negotiation first (the
stored record answers only offline), the APA-variant notice, and the locales reference note.
"""

from __future__ import annotations

from typing import Any

from syncd.datacite import lookups
from syncd.datacite.tools import get_citation, get_work, list_reference, trace_relations
from syncd.road.services import Services
from tests.datacite.upstream import Recorded, recorded_json


def _sc(result: Any) -> dict[str, Any]:
    assert result.structured_content is not None
    return dict(result.structured_content)


def test_rate_limited_get_work_carries_retry_after_in_whole_seconds(dc: Services, upstream: Recorded) -> None:
    """DataCite answering 429 with ``Retry-After: 120``: rate_limited, ``error.data.retryAfter`` 120
    (whole seconds) and retryable; a second call while the pool is blocked says the remaining wait,
    rounded up to 120 s.
    """
    upstream.throttled = {"Retry-After": "120"}
    first = _sc(get_work(dc, "10.5061/dryad.8515"))["error"]
    assert (first["code"], first["data"]["reason"], first["data"]["retryable"]) == (
        -32003,
        "rate_limited",
        True,
    )
    assert first["data"]["retryAfter"] == 120 and "120 s" in first["message"]
    again = _sc(get_work(dc, "10.5061/dryad.8516"))["error"]
    assert again["data"]["reason"] == "rate_limited" and again["data"]["retryAfter"] == 120


def test_citation_locales_note_names_the_rejected_csl_locales(dc: Services) -> None:
    """datacite_list_reference citation_locales: 61 locales, tl-PH and hy-AM not among them, and a note
    saying CSL's tl-PH and hy-AM are not listed and are rejected.
    """
    ref = _sc(list_reference(dc, "citation_locales"))
    values = [e["value"] for e in ref["entries"]]
    assert len(values) == 61 and "tl-PH" not in values and "hy-AM" not in values
    assert any("tl-PH and hy-AM are not listed and are rejected" in note for note in ref["notes"])


def test_citation_renders_a_doi_the_search_index_does_not_find(dc: Services, upstream: Recorded) -> None:
    """10.5061/dryad.8515 outside the search index (``query=doi:"…"`` finds nothing) but rendered by
    ``/dois/text/x-bibliography/{doi}`` (the recorded exchange): one content-negotiation request, found,
    the recorded citation; the lookup is never sent.
    """
    upstream.add_render("text-x-bibliography_10.5061-dryad.8515_default.exchange.json")
    data = _sc(get_citation(dc, "10.5061/dryad.8515"))
    assert (data["found"], data["renderedLocally"]) == (True, False)
    assert data["citation"].startswith("Ollomo, B., Durand, P., Prugnolle, F.")
    assert [path for _, path, _ in upstream.calls] == ["/dois/text/x-bibliography/10.5061/dryad.8515"]


def test_apa_variant_style_names_the_variant(dc: Services, upstream: Recorded) -> None:
    """``style=apa-6th-edition`` rendered by DataCite exactly like its default (the recorded APA text of
    10.5061/dryad.8515): the rendering, with the notice naming the variant it could not confirm.
    """
    path, _ = upstream.add_render("text-x-bibliography_10.5061-dryad.8515_default.exchange.json")
    upstream.renders[(path, "style=apa-6th-edition")] = upstream.renders[(path, "")]
    data = _sc(get_citation(dc, "10.5061/dryad.8515", style="apa-6th-edition"))
    assert data["found"] is True and data["style"] == "apa-6th-edition"
    assert data["notice"] == (
        "The APA variant 'apa-6th-edition' could not be confirmed: DataCite renders it like its APA default."
    )


def test_bibtex_of_a_record_datacite_holds_is_never_not_found(dc: Services, upstream: Recorded) -> None:
    """10.5061/dryad.8515 cited as text, then asked as BibTeX where the negotiation answers 404 (DataCite's
    recorded 404 body) while DataCite holds the record: format_unavailable naming the DOI, not the
    "Not found in DataCite" miss.
    """
    upstream.add_work("10.5061/dryad.8515")
    upstream.add_render("text-x-bibliography_10.5061-dryad.8515_default.exchange.json")
    assert _sc(get_citation(dc, "10.5061/dryad.8515"))["found"] is True
    result = get_citation(dc, "10.5061/dryad.8515", format="bibtex")
    error = _sc(result)["error"]
    assert error["data"]["reason"] == "format_unavailable"
    assert error["message"] == (
        "DataCite holds 10.5061/dryad.8515 but its content negotiation has no bibtex rendering of it (404)"
    )
    assert "Not found in DataCite" not in result.content[0].text  # type: ignore[union-attr]


def test_trace_of_dryad_8515_hydrates_the_citing_article_as_the_anchor_does(
    dc: Services, upstream: Recorded
) -> None:
    """10.5061/dryad.8515 (recorded record and Event Data) with 10.1371/journal.ppat.1000446 answered as
    the linking copy the anchor's test serves (``client: null``): the article node is hydrated through
    one ``GET /dois?ids=10.1371/journal.ppat.1000446`` request (the spec's fields, ``page[size]=10``),
    not a DataCite DOI, and carries the copy's title, type, year and counts, field for field the
    anchor's node; the linking copy is not stored as a DataCite work.
    """
    ppat = "10.1371/journal.ppat.1000446"
    copy = {
        "id": ppat,
        "type": "dois",
        "attributes": {
            "doi": ppat,
            "titles": [{"title": "A new malaria agent in African hominids"}],
            "types": {"resourceTypeGeneral": "Text", "resourceType": "JournalArticle"},
            "publicationYear": 2009,
            "citationCount": 7,
            "versionCount": 0,
        },
        "relationships": {"client": {"data": None}},
    }
    upstream.add_work("10.5061/dryad.8515")
    upstream.add_work(ppat, {"data": [copy], "included": [], "meta": {"total": 1}, "links": {}})
    events = recorded_json("event-list/events_doi-10.5061-dryad.8515_citation-types.json")
    upstream.add_list(lambda path, params: path == "/events", events)
    upstream.add_list(lambda path, params: path == "/dois", {"data": [], "meta": {"total": 0}, "links": {}})
    nodes = _sc(trace_relations(dc, "10.5061/dryad.8515"))["nodes"]
    assert nodes[1] == {
        "id": ppat,
        "idType": "DOI",
        "depth": 1,
        "hydrated": True,
        "isDataCiteDoi": False,
        "title": "A new malaria agent in African hominids",
        "resourceTypeGeneral": "Text",
        "publicationYear": 2009,
        "citationCount": 7,
        "versionCount": 0,
    }
    assert nodes[0]["title"] == "Data from: A new malaria agent in African hominids." and nodes[0]["hydrated"]
    hydration = [params for _, path, params in upstream.calls if path == "/dois" and "ids" in params]
    assert hydration == [
        {
            "ids": ppat,
            "sort": "-created",
            "fields[dois]": "doi,titles,types,publicationYear,citationCount,versionCount,client",
            "affiliation": "true",
            "publisher": "true",
            "page[size]": "10",
        }
    ]
    assert not any(
        params.get("query", "").startswith("doi:") and ppat in params["query"]
        for _, _, params in upstream.calls
    )
    assert lookups.stored_work(dc, ppat) is None
