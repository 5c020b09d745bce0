"""``datacite_get_citation`` and ``datacite_list_reference`` over the recorded bodies.

APA text is DataCite's content negotiation, and offline the stored record renders DataCite's own
rendering of 10.5061/dryad.8515 (byte for byte, HTML and text); CSL JSON offline too; RIS is
DataCite's negotiation (its recorded renderer failures); a Crossref DOI is the typed miss pointing
at Crossref's own content negotiation; the argument errors come before any request; the reference
topics hold the contract's counts.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from syncd.datacite.tools import get_citation, get_work, list_reference
from syncd.datacite.views_reference import TOPICS, reference
from syncd.road.services import Services
from tests.datacite.upstream import Recorded, recorded_json

DEFAULT_8515 = recorded_json("non-json/text-x-bibliography_10.5061-dryad.8515_default.exchange.json")


def _call(svc: Services, doi: str, **kwargs: Any) -> dict[str, Any]:
    result = get_citation(svc, doi, **kwargs)
    assert result.structured_content is not None
    return result.structured_content


def test_apa_is_datacites_rendering_and_the_stored_record_renders_it_offline(
    dc: Services, upstream: Recorded
) -> None:
    """APA text is DataCite's content negotiation (one request, the recorded rendering); with DataCite
    down, the record datacite_get_work stored renders the same citation locally, byte for byte (HTML),
    the text form with tags stripped and entities decoded, flagged stale.
    """
    upstream.add_work("10.5061/dryad.8515")
    upstream.add_render("text-x-bibliography_10.5061-dryad.8515_default.exchange.json")
    data = _call(dc, "10.5061/dryad.8515")
    assert data["citationHtml"] == DEFAULT_8515["body_text"]
    assert (data["style"], data["renderedLocally"]) == ("apa", False)
    assert data["mediaType"] == "text/x-bibliography"
    assert [p for _, p, _ in upstream.calls] == ["/dois/text/x-bibliography/10.5061/dryad.8515"]
    get_work(dc, "10.5061/dryad.8515")  # the record is stored
    upstream.down = True
    offline = _call(dc, "10.5061/dryad.8515")
    assert offline["citationHtml"] == DEFAULT_8515["body_text"] and offline["renderedLocally"] is True
    assert offline["citation"].startswith("Ollomo, B., Durand, P.") and "&amp;" not in offline["citation"]
    assert offline["cache"]["stale"] is True and offline["cache"]["upstream_error"] == "upstream_unavailable"


def test_csl_json_offline_from_the_stored_record(dc: Services, upstream: Recorded) -> None:
    """CSL JSON from the stored record with DataCite down: type dataset, 8 authors, DOI upper-case."""
    upstream.add_work("10.5061/dryad.8515")
    get_work(dc, "10.5061/dryad.8515")
    upstream.down = True
    item = json.loads(_call(dc, "10.5061/dryad.8515", format="csl_json")["citation"])
    assert (item["type"], len(item["author"]), item["DOI"]) == ("dataset", 8, "10.5061/DRYAD.8515")
    assert item["issued"] == {"date-parts": [[2011, 2, 1]]}


def test_other_formats_are_datacites_negotiation(dc: Services, upstream: Recorded) -> None:
    """RIS goes to GET /dois/application/x-research-info-systems/{doi} (MIME bare, DOI encoded): the
    recorded renderer 400 is format_unavailable naming the answer, the recorded 500 render_failed.
    """
    upstream.add_work("10.5061/dryad.8515")
    path = "/dois/application/x-research-info-systems/10.5061%2Fdryad.8515"
    failed = json.dumps(recorded_json("error/negotiation_400_renderer-failed.json"))
    upstream.renders[(path, "")] = (400, failed)
    data = _call(dc, "10.5061/dryad.8515", format="ris")
    assert data["error"]["data"]["reason"] == "format_unavailable"
    assert "renderer failure (400)" in data["error"]["message"]
    broken = json.dumps(recorded_json("error/negotiation_500_renderer-failed.json"))
    upstream.renders[(path, "")] = (500, broken)
    data = _call(dc, "10.5061/dryad.8515", format="ris")
    assert (data["error"]["data"]["reason"], data["error"]["data"]["status"]) == ("render_failed", 500)


def test_a_crossref_doi_points_at_crossrefs_negotiation(dc: Services, upstream: Recorded) -> None:
    """The miss: other_agency Crossref; guidance names doi.org with the BibTeX Accept type."""
    upstream.add_ra("10.1038/nature12373", "ra/ra_10.1038-nature12373_crossref.json")
    data = _call(dc, "10.1038/nature12373", format="bibtex")
    assert (data["found"], data["missReason"], data["registrationAgency"]) == (
        False,
        "other_agency",
        "Crossref",
    )
    assert "Accept: application/x-bibtex" in data["guidance"] and data["format"] == "bibtex"


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"format": "bibtex", "style": "ieee"}, "style_requires_text"),
        ({"locale": "tl-PH"}, "unsupported_locale"),
        ({"locale": "hy"}, "unsupported_locale"),
    ],
)
def test_argument_errors_before_any_request(
    dc: Services, upstream: Recorded, kwargs: dict[str, Any], reason: str
) -> None:
    """A style with a machine format, and the locales DataCite renders as APA en-US, are refused first."""
    data = _call(dc, "10.5061/dryad.8515", **kwargs)
    assert data["error"]["data"]["reason"] == reason
    assert upstream.calls == []


def test_reference_topics_hold_the_contracts_counts() -> None:
    """resource_types 34, relation_types 39 (each inverse points back within its group), fields of
    science 48, citation locales 61, sort orders 7, identifier formats 8; values unique per topic.
    """
    counts = {t: len(reference(t)["entries"]) for t in TOPICS}
    assert {k: counts[k] for k in ("resource_types", "relation_types", "fields_of_science")} == {
        "resource_types": 34,
        "relation_types": 39,
        "fields_of_science": 48,
    }
    assert (counts["citation_locales"], counts["sort_orders"], counts["identifier_formats"]) == (61, 7, 8)
    relations = {e["value"]: e for e in reference("relation_types")["entries"]}
    for value, entry in relations.items():
        inverse = entry.get("inverse")
        if inverse is not None:
            assert relations[inverse]["inverse"] == value and relations[inverse]["group"] == entry["group"]
    assert [v for v, e in relations.items() if "inverse" not in e] == ["IsPublishedIn", "Other"]
    for topic in TOPICS:
        values = [e["value"] for e in reference(topic)["entries"]]
        assert len(values) == len(set(values)), topic


def test_the_reference_text_is_a_table(dc: Services) -> None:
    """The text: a title, the topic line with the count, a five-column table with escaped cells."""
    text = list_reference(dc, "sort_orders").content[0].text  # type: ignore[union-attr]
    assert "**Topic:** sort_orders · 7 entries" in text
    assert "| most_cited | sort=-citation-count |  |  |  |" in text
