"""``work_view`` / ``content_hash_projection`` against the recorded Crossref ``/works/{doi}`` corpus."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from syncd.crossref.contracts import WorkView
from syncd.crossref.views import VOLATILE_FIELDS, content_hash_projection, work_view
from syncd.errors import InvalidInput, MalformedResponse
from tests.corpus_path import CORPUS

WORK_DIR = CORPUS / "crossref" / "work"
WORKS = sorted(p for p in WORK_DIR.glob("*.json") if not p.name.endswith(".headers.json"))


@cache
def _load(name: str) -> dict[str, Any]:
    return json.loads((WORK_DIR / f"{name}.json").read_text(encoding="utf-8"))["message"]


def message(name: str) -> dict[str, Any]:
    """A fresh deep copy of a recorded work message (tests may mutate it)."""
    return copy.deepcopy(_load(name))


def view(name: str, **kwargs: int) -> dict[str, Any]:
    return work_view(message(name), **kwargs).model_dump(exclude_none=True)


# --- whole corpus ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", WORKS, ids=lambda p: p.stem)
def test_every_recorded_work_builds_a_view(path: Path) -> None:
    """``work_view`` runs on every real ``/works/{doi}`` body; the DOI is Crossref's, no value is null,
    and the dumped view validates back into the contract model.
    """
    body = json.loads(path.read_text(encoding="utf-8"))
    assert body["message-type"] == "work"
    dumped = work_view(body["message"]).model_dump(exclude_none=True)
    assert dumped["doi"] == body["message"]["DOI"]
    assert "null" not in json.dumps(dumped)
    assert WorkView.model_validate(dumped).model_dump(exclude_none=True) == dumped


def test_output_schema_describes_every_field() -> None:
    """Every model and every property of the ``crossref_get_work`` output schema has a description."""
    schema = WorkView.model_json_schema()
    models = [schema, *schema.get("$defs", {}).values()]
    for model in models:
        assert model.get("description"), model.get("title")
        for name, prop in model["properties"].items():
            assert prop.get("description"), f"{model.get('title')}.{name}"
    assert schema["required"] == ["doi"]
    assert {"authorCount", "nextOffset", "truncated", "shown", "cap", "notice", "articleNumber"} <= set(
        schema["properties"]
    )


# --- core fields -----------------------------------------------------------------------------------


def test_raptor_preprint_fields() -> None:
    """10.1101/598821: title, type, 24 authors, ORCID relayed as deposited (URI), preprint relation, dates."""
    v = view("10.1101_598821")
    assert v["title"] == "Raptor genomes reveal evolutionary signatures of predatory and nocturnal lifestyles"
    assert v["type"] == "posted-content"
    assert v["authorCount"] == 24 and len(v["authors"]) == 24 and v["offset"] == 0
    assert v["authors"][0] == {"given": "Yun Sung", "family": "Cho", "sequence": "first"}
    assert message("10.1101_598821")["author"][1]["ORCID"] == "http://orcid.org/0000-0002-6558-1091"
    assert v["authors"][1]["orcid"] == "http://orcid.org/0000-0002-6558-1091"  # as Crossref relays it
    assert v["relations"] == [
        {
            "type": "is-preprint-of",
            "idType": "doi",
            "assertedBy": "subject",
            "ids": ["10.1186/s13059-019-1793-1"],
        }
    ]
    assert v["published"] == {"year": 2019, "month": 4, "day": 5}  # only `issued` is deposited
    assert v["publisher"] == "Cold Spring Harbor Laboratory"
    # the anchor keeps the section titles and joins sections with single spaces (issue 25 item 1)
    assert v["abstract"].startswith("Abstract Background Birds of prey (raptors) are dominant apex predators")
    assert "\n" not in v["abstract"] and "Results" in v["abstract"]
    assert "nextOffset" not in v and "notice" not in v


def test_journal_article_locators_and_counts() -> None:
    """10.1371/journal.pone.0033693: container, volume/issue/page, ISSN, license, counts, editor."""
    v = view("10.1371_journal.pone.0033693")
    assert v["title"].startswith("Methylphenidate Exposure Induces Dopamine Neuron Loss")
    assert (v["containerTitle"], v["volume"], v["issue"], v["page"]) == ("PLoS ONE", "7", "3", "e33693")
    assert v["issn"] == ["1932-6203"]
    assert v["isReferencedByCount"] == 72 and v["referencesCount"] == 70
    assert v["licenses"] == [
        {
            "url": "http://creativecommons.org/licenses/by/4.0/",
            "contentVersion": "unspecified",
            "delayInDays": 0,
        }
    ]
    assert v["editors"] == [{"given": "Cesario V.", "family": "Borlongan", "sequence": "first"}]
    assert v["published"] == {"year": 2012, "month": 3, "day": 21}
    assert v["language"] == "en"


def test_article_number_is_relayed_beside_volume_and_issue() -> None:
    """10.1103/physrevd.109.023023 deposits ``article-number`` 023023 (leading zero kept), no page."""
    v = view("10.1103_physrevd.109.023023")
    assert (v["volume"], v["issue"], v["articleNumber"]) == ("109", "2", "023023")
    assert "page" not in v
    assert v["issn"] == ["2470-0010", "2470-0029"]


def test_isbn_subtitle_and_editor_of_a_book() -> None:
    """10.1039/9781788019972: ISBN list, subtitle "Theory and Applications", an editor and no authors."""
    v = view("10.1039_9781788019972")
    assert v["title"] == "Long-lived Nuclear Spin Order"
    assert v["subtitle"] == "Theory and Applications"
    assert v["isbn"] == ["9781788015684"]
    assert len(v["editors"]) == 1
    assert "authors" not in v and "authorCount" not in v
    assert view("10.1017_9781108348843")["isbn"] == ["9781108348843", "9781108425728", "9781108443241"]


def test_empty_deposited_strings_are_absent() -> None:
    """``title: [""]`` (10.7600/jspfsm.56.60), ``title: []`` (10.1371/journal.pmed.0030277.g001) and
    ``subtitle: [""]`` (10.4018/978-1-4666-9588-7.les2) give absent fields, never empty strings.
    """
    assert "title" not in view("10.7600_jspfsm.56.60")
    assert "title" not in view("10.1371_journal.pmed.0030277.g001")
    v = view("10.4018_978-1-4666-9588-7.les2")
    assert v["title"] == '"Racial Epithet"' and "subtitle" not in v


def test_title_markup_is_normalized() -> None:
    """A title with ``<i>`` markup (10.1101/2020.12.01.406702) comes back as plain one-line text."""
    assert view("10.1101_2020.12.01.406702")["title"] == (
        "Identification of a novel cationic glycolipid in Streptococcus agalactiae that contributes to "
        "brain entry and meningitis"
    )


def test_links_and_abstract_of_an_elife_paper() -> None:
    """10.7554/elife.01567: text-mining links with content type, and a JATS abstract as plain text."""
    v = view("10.7554_elife.01567")
    assert v["links"][0] == {
        "url": "https://cdn.elifesciences.org/articles/01567/elife-01567-v1.pdf",
        "contentType": "application/pdf",
        "intendedApplication": "text-mining",
    }
    assert "<" not in v["abstract"]
    assert v["articleNumber"] == "e01567"


# --- published date chain --------------------------------------------------------------------------


def test_all_null_issued_means_no_published_date() -> None:
    """10.1007/12080.1874-1746 (a journal record) has only ``issued: [[null]]``: ``published`` is absent."""
    assert "published" not in view("10.1007_12080.1874-1746")


def test_partial_date_stops_at_null_component() -> None:
    """The Lancet 10.1016/s0140-6736(20)31180-6 deposits ``[[2020, 5]]``; a null month stops the read."""
    assert view("10.1016_s0140-6736_20_31180-6")["published"] == {"year": 2020, "month": 5}
    msg = message("10.1371_journal.pone.0033693")
    msg["published"] = {"date-parts": [[2012, None, 21]]}
    assert work_view(msg).model_dump(exclude_none=True)["published"] == {"year": 2012}


def test_chain_advances_only_when_a_source_names_nothing() -> None:
    """``published: [[null]]`` names nothing, so the chain reads ``published-print`` next."""
    msg = message("10.1371_journal.pone.0033693")
    msg["published"] = {"date-parts": [[None]]}
    msg["published-print"] = {"date-parts": [[2011, 12]]}
    assert work_view(msg).model_dump(exclude_none=True)["published"] == {"year": 2011, "month": 12}


# --- author paging ---------------------------------------------------------------------------------


def test_author_page_with_more_remaining() -> None:
    """10.1101/598821 with limit 10: authors 1-10 of 24, nextOffset 10, truncated, shown, cap, notice."""
    v = view("10.1101_598821", limit=10)
    assert [a["family"] for a in v["authors"]][:2] == ["Cho", "Jun"]
    assert (v["authorCount"], v["offset"], v["nextOffset"], v["truncated"], v["shown"], v["cap"]) == (
        24,
        0,
        10,
        True,
        10,
        10,
    )
    assert v["notice"].startswith("Showing authors 1–10 of 24; call again with offset=10")


def test_last_author_page_has_no_next_offset() -> None:
    """Offset 20 limit 10 of 24 authors: 4 shown, no nextOffset/truncated, notice says last page."""
    v = view("10.1101_598821", offset=20, limit=10)
    assert len(v["authors"]) == 4 and v["offset"] == 20
    assert not {"nextOffset", "truncated", "shown", "cap"} & set(v)
    assert v["notice"] == "Showing authors 21–24 of 24; this is the last page of authors."
    assert v["title"].startswith("Raptor genomes")  # every other field on every page


def test_offset_past_end_is_explained() -> None:
    """Offset 24 of 24 authors: an empty page and an explanation naming the last page's offset."""
    v = view("10.1101_598821", offset=24)
    assert v["authors"] == [] and v["authorCount"] == 24
    assert "offset=24 is past the end of the author list (24 authors)" in v["notice"]
    assert "Call again with offset=0 for the last page (authors 1–24)" in v["notice"]


def test_thousands_of_authors_page_through_completely() -> None:
    """BC-13: the ATLAS Higgs paper 10.1016/j.physletb.2012.08.020 has 2932 authors; the default page
    carries 25, and paging with limit 500 visits every author exactly once, Aad first, Zwalinski last.
    """
    first = view("10.1016_j.physletb.2012.08.020")
    assert first["authorCount"] == 2932 and len(first["authors"]) == 25 and first["nextOffset"] == 25
    assert first["notice"].startswith("Showing authors 1–25 of 2,932; call again with offset=25")  # issue 25
    families: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = view("10.1016_j.physletb.2012.08.020", offset=offset, limit=500)
        families += [a["family"] for a in page["authors"]]
        offset = page.get("nextOffset")
    assert len(families) == 2932
    assert (families[0], families[-1]) == ("Aad", "Zwalinski")


@pytest.mark.parametrize(("offset", "limit"), [(-1, 25), (0, 0), (0, 501)])
def test_out_of_range_paging_is_invalid_input(offset: int, limit: int) -> None:
    """``offset`` < 0 and ``limit`` outside 1..500 raise ``InvalidInput(reason="invalid_parameter")``."""
    with pytest.raises(InvalidInput) as err:
        work_view(message("10.1101_598821"), offset=offset, limit=limit)
    assert err.value.reason == "invalid_parameter"


def test_message_without_doi_is_malformed() -> None:
    """BC-07: a 200 body whose ``DOI`` is ``""`` is a malformed response, not a view."""
    msg = message("10.1101_598821")
    msg["DOI"] = ""
    with pytest.raises(MalformedResponse):
        work_view(msg)


# --- updates and notices ---------------------------------------------------------------------------


def test_correction_notice_points_at_the_notice_doi() -> None:
    """10.1371/journal.pone.0033693 is ``updated-by`` a publisher correction; the notice lists it first."""
    v = view("10.1371_journal.pone.0033693")
    assert v["updatedBy"] == [
        {
            "doi": "10.1371/annotation/c76da2c1-ccb8-4797-94c1-359d3ceceeda",
            "type": "correction",
            "source": "publisher",
            "updated": {"year": 2012, "month": 5, "day": 8},
        }
    ]
    notice_lines = v["notice"].split("\n")
    assert notice_lines[0].startswith("Updates are recorded against this work: correction (publisher).")
    assert "crossref_get_work on its updatedBy doi" in notice_lines[0]
    assert len(notice_lines) == 1  # all 6 authors fit on the default page: no paging line


def test_in_place_update_is_qualified() -> None:
    """10.1371/journal.ppat.1008184 is a ``new_version`` of itself: the notice says it is its own notice."""
    v = view("10.1371_journal.ppat.1008184")
    assert (
        v["updatedBy"]
        == v["updateTo"]
        == [
            {
                "doi": "10.1371/journal.ppat.1008184",
                "type": "new_version",
                "source": "publisher",
                "updated": {"year": 2020, "month": 1, "day": 30},
            }
        ]
    )
    assert "new_version (publisher)" in v["notice"]
    assert "made in place" in v["notice"] and "crossref_get_work on its updatedBy doi" not in v["notice"]
    assert v["relations"] == [
        {
            "type": "new_version",
            "idType": "doi",
            "assertedBy": "object",
            "ids": ["10.1371/journal.ppat.1008184"],
        }
    ]


def test_retraction_watch_entries_keep_record_id_and_are_not_merged() -> None:
    """10.1016/j.apsusc.2007.01.131: a Retraction Watch retraction (record 11459) and a publisher erratum
    naming the same notice DOI stay two entries; the notice lists both types with their sources.
    """
    v = view("10.1016_j.apsusc.2007.01.131")
    assert v["title"].startswith("RETRACTED: Relative performances of effective medium formulations")
    assert v["updatedBy"] == [
        {
            "doi": "10.1016/j.apsusc.2017.07.145",
            "type": "retraction",
            "source": "retraction-watch",
            "recordId": "11459",
            "updated": {"year": 2017, "month": 7, "day": 24},
        },
        {
            "doi": "10.1016/j.apsusc.2017.07.145",
            "type": "erratum",
            "source": "publisher",
            "updated": {"year": 2017, "month": 10, "day": 31},
        },
    ]
    assert "retraction (retraction-watch); erratum (publisher)" in v["notice"]


def test_update_without_source_keeps_source_absent() -> None:
    """10.1103/physrevd.97.012001's ``update-to`` (type ``corrected``) has no ``source``; it is relayed
    without one. The work also has 306 authors: the notice carries paging after no update line.
    """
    v = view("10.1103_physrevd.97.012001")
    assert v["updateTo"] == [
        {
            "doi": "10.1103/physrevd.97.012001",
            "type": "corrected",
            "updated": {"year": 2018, "month": 3, "day": 22},
        }
    ]
    assert v["authorCount"] == 306
    assert v["notice"].startswith("Showing authors 1–25 of 306; call again with offset=25")
    assert v["title"].startswith("First measurement of the νμ charged-current cross section")


def test_update_notice_comes_before_paging_guidance() -> None:
    """The Lancet retracted paper 10.1016/s0140-6736(20)31180-6 with limit 2: the update notice (each type
    once, its sources in first-seen order) comes first, then the paging line.
    """
    v = view("10.1016_s0140-6736_20_31180-6", limit=2)
    first, second = v["notice"].split("\n")
    assert first.startswith(
        "Updates are recorded against this work: expression_of_concern (retraction-watch)"
    )
    assert (
        "; correction (retraction-watch); retraction (retraction-watch, publisher); erratum (publisher)."
        in first
    )
    assert second.startswith("Showing authors 1–2 of 4; call again with offset=2")
    assert len(v["updatedBy"]) == 7 and len(v["updateTo"]) == 4


# --- relations -------------------------------------------------------------------------------------


def test_relations_group_by_type_id_type_and_asserting_party() -> None:
    """10.1364/oe.572415: ``has-preprint`` entries split by asserting party, in Crossref order."""
    assert view("10.1364_oe.572415")["relations"] == [
        {
            "type": "has-preprint",
            "idType": "doi",
            "assertedBy": "subject",
            "ids": ["10.1364/opticaopen.29459153"],
        },
        {
            "type": "has-preprint",
            "idType": "doi",
            "assertedBy": "object",
            "ids": ["10.1364/opticaopen.29459153", "10.1364/opticaopen.29459153.v1"],
        },
    ]


def test_relations_with_mixed_id_types_and_empty_cites() -> None:
    """10.53731/ybhah-9jy85 mixes doi and issn relations; an empty ``cites: []`` (10.1017/s0376892913000179)
    yields no relations at all.
    """
    assert view("10.53731_ybhah-9jy85")["relations"] == [
        {"type": "is-version-of", "idType": "doi", "assertedBy": "subject", "ids": ["10.53731/q5ges-cp507"]},
        {"type": "is-version-of", "idType": "doi", "assertedBy": "object", "ids": ["10.53731/q5ges-cp507"]},
        {"type": "is-part-of", "idType": "issn", "assertedBy": "subject", "ids": ["2749-9952"]},
    ]
    assert "relations" not in view("10.1017_s0376892913000179")


# --- funders and affiliations ----------------------------------------------------------------------


def test_ror_only_funder_keeps_ror_and_no_name() -> None:
    """10.53731/r79s4nh-97aq74v-ag4t1 deposits a funder with only a ROR id and an award: kept, no name."""
    assert view("10.53731_r79s4nh-97aq74v-ag4t1")["funders"] == [{"ror": "00k4n6c32", "award": ["777523"]}]


def test_named_funders_with_doi_and_award() -> None:
    """10.7554/elife.03714: HHMI with its Funder Registry DOI and award 55007431, in deposited order."""
    funders = view("10.7554_elife.03714")["funders"]
    assert funders[0] == {
        "name": "Howard Hughes Medical Institute",
        "doi": "10.13039/100000011",
        "award": ["55007431"],
    }
    assert len(funders) == len(message("10.7554_elife.03714")["funder"])


def test_award_only_funder_is_kept() -> None:
    """10.3389/fgene.2017.00147 deposits ``{"award": ["LM2015047"]}`` with no funder identity: kept as is."""
    assert {"award": ["LM2015047"]} in view("10.3389_fgene.2017.00147")["funders"]


def test_ror_only_affiliations() -> None:
    """10.1364/oe.572415: affiliations deposited only as ROR ids become ``{ror}`` entries; the
    family name ``O’Sullivan`` keeps its typographic apostrophe.
    """
    author = view("10.1364_oe.572415")["authors"][0]
    assert author["family"] == "O’Sullivan"
    assert author["affiliation"] == [
        {"ror": "https://ror.org/007ecwd34"},
        {"ror": "https://ror.org/03265fv13"},
    ]
    assert "role" not in author


# --- content hash projection -----------------------------------------------------------------------


def test_projection_drops_volatile_fields_only() -> None:
    """``indexed``, ``score``, ``deposited`` and citation counts are removed; every other key stays."""
    msg = message("10.1371_journal.pone.0033693")
    projected = content_hash_projection(msg)
    assert {"indexed", "score", "deposited", "is-referenced-by-count"} <= set(msg)
    assert set(projected) == set(msg) - VOLATILE_FIELDS
    assert projected["updated-by"] == msg["updated-by"] and projected["title"] == msg["title"]


def test_projection_ignores_reindexing_but_sees_metadata_changes() -> None:
    """A re-index (new ``indexed``/``score``/citation count) leaves the projection equal; a new title or a
    new ``updated-by`` entry changes it.
    """
    base = message("10.1101_598821")
    reindexed = copy.deepcopy(base)
    reindexed["indexed"] = {"date-parts": [[2030, 1, 1]], "date-time": "2030-01-01T00:00:00Z", "timestamp": 0}
    reindexed["score"] = 99.0
    reindexed["is-referenced-by-count"] = base["is-referenced-by-count"] + 10
    assert json.dumps(content_hash_projection(reindexed), sort_keys=True) == json.dumps(
        content_hash_projection(base), sort_keys=True
    )
    retitled = copy.deepcopy(base)
    retitled["title"] = ["Raptor genomes, corrected"]
    assert content_hash_projection(retitled) != content_hash_projection(base)
    corrected = copy.deepcopy(base)
    corrected["updated-by"] = [{"DOI": "10.1101/x", "type": "correction", "source": "publisher"}]
    assert content_hash_projection(corrected) != content_hash_projection(base)


def test_deposit_dependent_fields_from_the_corpus() -> None:
    """event, institutions/subtype/groupTitle, degree/approved, clinical trials, assertions, memberId,
    containerTitles come through as deposited (seed README), and are absent when not deposited.
    """
    from syncd.crossref.views import work_view

    def view(name: str) -> Any:
        return work_view(json.loads((WORK_DIR / name).read_text())["message"])

    iccv = view("10.1109_iccv.2007.4408927.json")
    assert iccv.event is not None
    assert iccv.event.name == "2007 IEEE 11th International Conference on Computer Vision"
    assert iccv.event.location == "Rio de Janeiro, Brazil"
    assert (iccv.event.start.year, iccv.event.start.month, iccv.event.start.day) == (2007, 10, 14)
    preprint = view("10.1101_2020.12.01.406702.json")
    assert preprint.institutions is not None and preprint.institutions[0].name == "bioRxiv"
    assert (preprint.subtype, preprint.groupTitle) == ("preprint", "Microbiology")
    thesis = view("10.14264_uql.2020.791.json")
    assert thesis.degree == ["PhD Thesis"] and thesis.approved is not None
    trials = view("10.1136_esmoopen-2020-000776.json")
    assert trials.clinicalTrialNumbers is not None
    assert trials.clinicalTrialNumbers[0].number == "nct03797326"
    assert trials.clinicalTrialNumbers[0].registry == "10.18810/clinical-trials-gov"
    actao = view("10.1016_j.actao.2019.01.006.json")
    assert actao.assertions is not None and actao.assertions[0].value == "Elsevier"
    assert actao.assertions[0].label == "This article is maintained by"
    assert actao.memberId == "78"
    assert actao.containerTitles == ["Acta Oecologica"]
    assert iccv.degree is None and iccv.clinicalTrialNumbers is None


def test_orcid_in_crossrefs_https_form_is_relayed_unchanged() -> None:
    """Issue 13.1: NumPy's paper (10.1038/s41586-020-2649-2) gives K. Jarrod Millman's ORCID as Crossref
    sends it, https://orcid.org/0000-0002-5263-5070, not the bare iD.
    """
    v = view("10.1038_s41586-020-2649-2")
    millman = v["authors"][1]
    assert (millman["given"], millman["family"]) == ("K. Jarrod", "Millman")
    assert millman["orcid"] == "https://orcid.org/0000-0002-5263-5070"


def test_update_dates_are_crossref_date_parts() -> None:
    """Issue 13.1: updatedBy[].updated is {year, month, day} as Crossref's date-parts give it, no string."""
    updated = view("10.1371_journal.pone.0033693")["updatedBy"][0]["updated"]
    assert updated == {"year": 2012, "month": 5, "day": 8}
    assert message("10.1371_journal.pone.0033693")["updated-by"][0]["updated"]["date-parts"] == [[2012, 5, 8]]
