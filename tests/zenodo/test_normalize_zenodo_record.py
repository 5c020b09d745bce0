"""Tests for syncd.zenodo.views (record view, keys, tombstones, change hashing) and its contract."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from syncd.errors import MalformedResponse
from syncd.zenodo.contracts import GetRecordView, Tombstone, ZenodoRecord
from syncd.zenodo.views import (
    content_hash_projection,
    detect_shape,
    miss_guidance,
    record_keys,
    record_view,
    tombstone_view,
)
from tests.corpus_path import CORPUS

ZENODO = CORPUS / "zenodo"


def _load(rel: str) -> Any:
    return json.loads((ZENODO / rel).read_text(encoding="utf-8"))


def _digest(body: dict[str, Any]) -> str:
    proj = content_hash_projection(body)
    return hashlib.sha256(json.dumps(proj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _all_record_files() -> list[Path]:
    paths = sorted((ZENODO / "record").glob("*.json")) + sorted((ZENODO / "record-history").glob("*.json"))
    return [p for p in paths if not p.name.endswith(".headers.json")]


def _search_hit(rel: str, recid: int) -> dict[str, Any]:
    return next(h for h in _load(rel)["hits"]["hits"] if h["id"] == recid)


# ------------------------------------------------------------------------------------------ RDM


def test_rdm_record_22705923_full_view() -> None:
    """RDM scikit-learn 1.9.1: ids, concept 591564, DOI provider, OAI, code repository, rights,
    related identifier, additional description, unique stats, revision and the one ZIP file.
    """
    view = record_view(_load("record/records-22705923.json"))
    assert view.recid == "22705923"
    assert view.concept_recid == "591564"
    assert view.doi == "10.5281/zenodo.22705923"
    assert view.doi_provider == "datacite"
    assert view.concept_doi == "10.5281/zenodo.591564"
    assert view.oai_id == "oai:zenodo.org:22705923"
    assert view.title == "scikit-learn"
    assert (view.publication_date, view.version, view.publisher) == ("2026-09-11", "1.9.1", "Zenodo")
    assert view.resource_type is not None and view.resource_type.model_dump() == {
        "id": "software",
        "title": "Software",
    }
    assert view.description is not None and view.description.startswith(
        "We're happy to announce the 1.9.1 release."
    )
    assert view.description_truncated is False and view.description_length == len(view.description)
    assert [(d.type, d.length, d.truncated) for d in view.additional_descriptions] == [("Notes", 106, False)]
    assert view.additional_description_count == 1
    assert view.creators[0].name == "The scikit-learn developers" and view.creator_count == 1
    assert view.rights[0].id == "bsd-3-clause"
    assert view.rights[0].url == "https://opensource.org/licenses/BSD-3-Clause"
    assert view.related_identifiers[0].relation == "issupplementto"
    assert view.related_identifiers[0].resource_type == "software"
    assert view.code_repository == "https://github.com/scikit-learn/scikit-learn"
    assert (
        view.versions.index == 47 and view.versions.is_latest is True and view.versions.latest_recid is None
    )
    assert view.stats is not None
    assert (view.stats.this_version.views, view.stats.this_version.downloads) == (64, 6)
    assert (view.stats.all_versions.views, view.stats.all_versions.downloads) == (22820, 2768)
    assert view.revision == 4
    assert view.zenodo_url == "https://zenodo.org/records/22705923"
    assert (view.files.enabled, view.files.count, view.files.total_bytes, view.files.shown) == (
        True,
        1,
        8684206,
        1,
    )
    entry = view.files.entries[0]
    assert entry.key == "scikit-learn/scikit-learn-1.9.1.zip"
    assert entry.md5 == "63498a22114ec6465a79e4d00774cc00"
    assert entry.mimetype == "application/zip"
    assert entry.download_url == (
        "https://zenodo.org/api/records/22705923/files/scikit-learn/scikit-learn-1.9.1.zip/content"
    )


def test_rdm_files_keep_upstream_order_and_encode_keys() -> None:
    """Record 22917909 (9 files, empty files.order): entries in upstream order; '[ ]' in a key is
    percent-encoded in download_url; the organizational creator keeps its type.
    """
    view = record_view(_load("record/records-22917909.json"))
    assert view.files.count == 9 and view.files.shown == 9 and view.files.total_bytes == 56245731
    assert view.files.entries[0].key == "Intensivregister_Deutschland_Versorgungsstufen.csv"
    assert view.files.entries[-1].key == "Metadaten.zip"
    pdf = view.files.entries[7]
    assert pdf.md5 == "724f938aa7497e84a0f6321c9f1ec4dc"
    assert pdf.download_url == (
        "https://zenodo.org/api/records/22917909/files/%5BDokumentation%5D_Intensivkapazitaeten_und_"
        "COVID-19-Intensivbettenbelegung_in_Deutschland.pdf/content"
    )
    assert view.creators[0].name == "Robert Koch-Institut" and view.creators[0].type == "organizational"
    assert view.description is None and view.description_length is None and view.description_truncated is None


def test_rdm_files_order_wins_and_unlisted_entries_follow() -> None:
    """A non-empty files.order sets the entry order; entries it does not list are kept after it."""
    body = _load("record/records-22917909.json")
    body["files"]["order"] = ["Metadaten.zip", "datapackage.json"]
    keys = [e.key for e in record_view(body).files.entries]
    assert keys[:2] == ["Metadaten.zip", "datapackage.json"]
    assert len(keys) == 9 and keys[2] == "Intensivregister_Deutschland_Versorgungsstufen.csv"


def test_md5_only_from_an_md5_prefixed_checksum() -> None:
    """md5 is the checksum without 'md5:'; any other algorithm, or a bare hex, yields no md5."""
    body = _load("record/records-22917909.json")
    entries = body["files"]["entries"]
    entries["Metadaten.zip"]["checksum"] = "sha256:" + "0" * 64
    entries["datapackage.json"]["checksum"] = "c01644767fdb3ab389f33c3508d780ec"
    by_key = {e.key: e for e in record_view(body).files.entries}
    assert by_key["Metadaten.zip"].md5 is None
    assert by_key["datapackage.json"].md5 is None
    assert by_key["Intensivregister_Deutschland_Altersgruppen.csv"].md5 == "7952a0d93a7680ad513926def1c33de6"


def test_rdm_embargoed_record_22837418() -> None:
    """Embargoed record: status embargoed, files restricted until 2035-08-31 with its reason; the files
    block holds only enabled (no count, nothing shown); ORCID and affiliation ROR are read.
    """
    view = record_view(_load("record/records-22837418_embargoed.json"))
    assert view.access.status == "embargoed"
    assert (view.access.record, view.access.files) == ("public", "restricted")
    assert view.access.embargo_active is True
    assert view.access.embargo_until == "2035-08-31"
    assert view.access.embargo_reason is not None and view.access.embargo_reason.startswith(
        "Design documents sealed"
    )
    assert (view.files.enabled, view.files.count, view.files.total_bytes, view.files.shown) == (
        True,
        None,
        None,
        0,
    )
    creator = view.creators[0]
    assert creator.orcid == "0009-0009-2329-9117"
    assert [(a.name, a.ror) for a in creator.affiliations] == [("Old Dominion University", "04zjtrb98")]
    assert creator.role is None  # the creator's "researcher" role is for contributors only
    assert view.keywords == ["pre-registration", "empirical asset pricing", "machine learning"]
    assert view.keyword_count == 3


def test_rdm_restricted_record_22931068_not_latest() -> None:
    """Restricted record: status restricted, an older version (index 28, is_latest false, latest
    recid not in the body), description decoded from Latin-1 entities, inactive embargo omitted.
    """
    view = record_view(_load("record/records-22931068_restricted.json"))
    assert view.access.status == "restricted" and view.access.files == "restricted"
    assert view.access.embargo_active is False and view.access.embargo_until is None
    assert view.versions.model_dump(exclude_none=True) == {"index": 28, "is_latest": False}
    assert view.title == "Estructura de los números primos y su conexión exacta con los ceros de Riemann"
    assert view.description is not None and "autoría" in view.description
    assert view.rights == []


def test_rdm_metadata_only_record_7126368() -> None:
    """Metadata-only deposit: files disabled with count 0 and no entries."""
    view = record_view(_load("record/records-7126368_metadata-only.json"))
    assert view.access.status == "metadata-only"
    assert view.files.model_dump(exclude_none=True) == {
        "enabled": False,
        "count": 0,
        "total_bytes": 0,
        "shown": 0,
        "entries": [],
    }
    assert view.title == "Service-Oriented Integration of SuperTuxKart"


def test_rdm_record_1241_without_doi_with_ec_funding_and_community() -> None:
    """Record 1241 has no DOI at all; its EC FP7 grant and the 'eu' community are read."""
    view = record_view(_load("record/records-1241_no-doi.json"))
    assert view.doi is None and view.concept_doi is None and view.doi_provider is None
    assert view.oai_id == "oai:openaire.cern.ch:1241"
    assert view.funding_count == 1
    assert view.funding[0].model_dump(exclude_none=True) == {
        "funder_id": "00k4n6c32",
        "funder_name": "European Commission",
        "award_id": "00k4n6c32::244578",
        "award_number": "244578",
        "award_acronym": "MEDPRO",
        "award_title": "Prospective Analysis for the Mediterranean Region",
        "award_program": "FP7-SSH",
        "award_url": "https://cordis.europa.eu/projects/244578",
    }
    assert [(c.slug, c.title) for c in view.communities] == [("eu", "EU Open Research Repository")]
    assert view.community_count == 1
    assert view.keyword_count == 4


def test_rdm_search_hit_with_external_doi_provider() -> None:
    """An RDM search hit for a Pensoft DOI reports doi_provider external."""
    body = _load("search/records_q-doi-10.3897-ap.e134190_all-versions_size-2_new-api.json")["hits"]["hits"][
        0
    ]
    view = record_view(body)
    assert view.doi is not None and view.doi.lower() == "10.3897/ap.e134190"
    assert view.doi_provider == "external"
    assert view.publisher == "Pensoft Publishers"


# --------------------------------------------------------------------------------------- legacy


def test_legacy_2022_record_7078768() -> None:
    """Pre-2023 legacy shape: int id, conceptrecid, md5 checksum, keywords, notes as a Notes
    description, CC-BY-4.0 license id lower-cased, isVersionOf relation lower-cased, 0-based
    version index made 1-based, files without mimetype, and no oai id.
    """
    body = _load("record/records-7078768_legacy-2022.json")
    assert detect_shape(body) == "legacy"
    view = record_view(body)
    assert view.recid == "7078768" and view.concept_recid == "7078767"
    assert view.doi == "10.5281/zenodo.7078768" and view.doi_provider == "datacite"
    assert view.concept_doi == "10.5281/zenodo.7078767"
    assert view.oai_id is None
    assert view.title == "Frictionless Data Test Dataset Without Descriptor"
    assert view.resource_type is not None and view.resource_type.model_dump() == {
        "id": "dataset",
        "title": "Dataset",
    }
    assert view.description == "This is a test dataset"
    assert [(d.type, d.text) for d in view.additional_descriptions] == [("Notes", "TDWD")]
    assert view.keywords == ["TDWD"]
    assert [(r.id, r.title) for r in view.rights] == [("cc-by-4.0", "CC-BY-4.0")]
    assert view.related_identifiers[0].model_dump(exclude_none=True) == {
        "identifier": "10.5281/zenodo.7078767",
        "scheme": "doi",
        "relation": "isversionof",
    }
    assert view.versions.model_dump(exclude_none=True) == {"index": 1, "is_latest": True}
    assert view.creators[0].model_dump(exclude_none=True) == {
        "name": "FD Testing",
        "affiliations": [{"name": "TDWD"}],
    }
    assert view.access.model_dump(exclude_none=True) == {
        "status": "open",
        "files": "public",
        "embargo_active": False,
    }
    assert [(e.key, e.size, e.md5) for e in view.files.entries] == [
        ("capitals.csv", 76, "154d822b8c2aa259867067f01c0efee5"),
        ("table.xls", 6144, "3a980d1a559c48978c63c0c1d0d2a8f3"),
    ]
    assert view.files.entries[0].mimetype is None
    assert (
        view.files.entries[0].download_url
        == "https://zenodo.org/api/records/7078768/files/capitals.csv/content"
    )
    assert (view.files.count, view.files.total_bytes) == (2, 6220)
    assert view.revision == 8


def test_legacy_new_platform_record_5244404() -> None:
    """Legacy-compatible body of the RDM platform (2026): 21 creators with string affiliations,
    a community slug, version label, three md5s, a link in the description and the notes.
    """
    view = record_view(_load("record/records-5244404.json"))
    assert view.title == "The Origins of SARS-CoV-2: A Critical Review"
    assert view.creator_count == 21 and len(view.creators) == 21
    assert view.creators[0].name == "Holmes, Edward C"
    assert view.creators[0].affiliations[0].name is not None
    assert view.creators[0].affiliations[0].name.startswith("School of Life and Environmental Sciences")
    assert view.creators[-1].name == "Rambaut, Andrew"
    assert [c.slug for c in view.communities] == ["sars-cov-2-origins"]
    assert view.version == "Authors' final version"
    assert view.resource_type is not None and view.resource_type.id == "publication-article"
    assert view.keywords == ["sars-cov-2", "covid-19", "origins", "zoonosis"]
    assert [e.md5 for e in view.files.entries] == [
        "bdb88fc94708d8fd7d87854031faa8ab",
        "28a4d8215374cda683d236c7ad932ffd",
        "b1b5979db4d4755601b85f160ce664b9",
    ]
    assert view.files.entries[1].download_url == (
        "https://zenodo.org/api/records/5244404/files/Holmes_et_al_(2021)_Cell.pdf/content"
    )
    assert view.additional_descriptions[0].text.startswith("Authors' final peer-reviewed version.")
    assert view.versions.model_dump(exclude_none=True) == {"index": 4, "is_latest": True}
    assert view.revision == 7


def test_legacy_stats_meaning_swapped_at_the_2023_migration() -> None:
    """The flat legacy stats swap meaning across the migration: before it version_* counted all
    versions, after it the bare names do. Read that way, 5244404's counts grow consistently.
    """
    before = record_view(_load("record-history/records-5244404__2023-09-10_legacy.json")).stats
    after = record_view(_load("record-history/records-5244404__2024-01-14.json")).stats
    assert before is not None and after is not None
    assert (before.this_version.downloads, before.all_versions.downloads) == (1448, 75927)
    assert (after.this_version.downloads, after.all_versions.downloads) == (1556, 78096)
    assert before.this_version.views == 2983 and after.this_version.views == 3163
    assert before.all_versions.views == 115459 and after.all_versions.views == 120522


def test_legacy_external_doi_and_methods_description_10794563() -> None:
    """A Dryad dataset on Zenodo: external DOI (provider external, no concept DOI), an ORCID, the
    'method' field as a Methods additional description after Notes.
    """
    view = record_view(_load("record/records-10794563.json"))
    assert view.doi == "10.5061/dryad.66t1g1k7m" and view.doi_provider == "external"
    assert view.concept_doi is None and view.concept_recid == "10794562"
    assert view.creators[0].orcid == "0000-0003-1215-0308"
    assert [d.type for d in view.additional_descriptions] == ["Notes", "Methods"]
    assert view.additional_descriptions[1].text == "The data were collected through a literature search."
    assert [c.slug for c in view.communities] == ["dryad"]


def test_legacy_not_latest_version_names_the_latest() -> None:
    """A 2022 legacy hit that is version 2 of 3 (7089279) gets index 2 and latest_recid 7089818."""
    hit = _search_hit("search/records_creators-FD-Tester_all-versions.json", 7089279)
    view = record_view(hit)
    assert view.versions.model_dump(exclude_none=True) == {
        "index": 2,
        "is_latest": False,
        "latest_recid": "7089818",
    }
    keys = record_keys(hit)
    assert (keys.is_latest, keys.latest_recid, keys.concept_recid) == (False, "7089818", "7089245")


def test_legacy_restricted_and_embargoed_hits_hide_the_manifest() -> None:
    """Legacy restricted (14018227, with 2 grants) and embargoed (15521245, until 2027-04-01) hits
    list no files: count and total_bytes stay absent, files are restricted, grants become funding.
    """
    rel = "search/records_type-dataset_bounds_size-4_new-api_with-grants.json"
    restricted = record_view(_search_hit(rel, 14018227))
    assert restricted.access.model_dump(exclude_none=True) == {
        "status": "restricted",
        "files": "restricted",
        "embargo_active": False,
    }
    assert (restricted.files.enabled, restricted.files.count, restricted.files.total_bytes) == (
        True,
        None,
        None,
    )
    assert restricted.funding_count == 2
    assert restricted.funding[1].model_dump(exclude_none=True) == {
        "funder_id": "01pv73b02",
        "funder_name": "Czech Science Foundation",
        "award_id": "01pv73b02::22-02154S",
        "award_number": "22-02154S",
        "award_title": "Friction and lubrication of small joint implants produced by 3D metal printing "
        "additive technology",
        "award_url": "https://gacr.cz/",
    }
    assert restricted.creators[0].orcid == "0000-0001-7106-9193"
    embargoed = record_view(_search_hit(rel, 15521245))
    assert embargoed.access.status == "embargoed"
    assert embargoed.access.embargo_active is True and embargoed.access.embargo_until == "2027-04-01"
    assert embargoed.files.count is None


# ------------------------------------------------------------------------------------------ caps


def test_description_cap_on_the_34kb_release_notes_of_7391177() -> None:
    """The long description of 7391177 is cut at 4,000 characters with its full length reported."""
    view = record_view(_load("record/records-7391177.json"))
    assert view.description is not None and len(view.description) == 4000
    assert view.description_truncated is True
    assert view.description_length is not None and view.description_length > 20_000
    assert view.creator_count == 16


def test_list_caps_and_totals() -> None:
    """Creators/contributors 25, keywords/funding/related 50, communities 25, additional
    descriptions 5 of 1,000 characters and files 25 are shown, with the totals reported.
    """
    body = _load("record/records-22705923.json")
    m = body["metadata"]
    m["creators"] = m["creators"] * 30
    m["contributors"] = [
        dict(c, role={"id": "editor", "title": {"en": "Editor"}}) for c in m["creators"][:27]
    ]
    m["subjects"] = [{"subject": f"k{i}"} for i in range(60)]
    m["related_identifiers"] = m["related_identifiers"] * 55
    m["funding"] = [{"funder": {"id": "00k4n6c32", "name": "European Commission"}}] * 51
    m["additional_descriptions"] = [{"description": "x" * 1500, "type": {"id": "methods"}}] * 7
    body["parent"]["communities"] = {"entries": [{"slug": f"c{i}"} for i in range(26)]}
    entry = body["files"]["entries"]["scikit-learn/scikit-learn-1.9.1.zip"]
    body["files"]["entries"] = {f"f{i}.zip": dict(entry, key=f"f{i}.zip") for i in range(30)}
    body["files"]["count"] = 30
    view = record_view(body)
    assert (len(view.creators), view.creator_count) == (25, 30)
    assert (len(view.contributors), view.contributor_count) == (25, 27)
    assert view.contributors[0].role == "Editor"
    assert (len(view.keywords), view.keyword_count) == (50, 60)
    assert (len(view.related_identifiers), view.related_identifier_count) == (50, 55)
    assert (len(view.funding), view.funding_count) == (50, 51)
    assert (len(view.communities), view.community_count) == (25, 26)
    assert (len(view.additional_descriptions), view.additional_description_count) == (5, 7)
    first = view.additional_descriptions[0]
    assert (first.type, len(first.text), first.length, first.truncated) == ("methods", 1000, 1500, True)
    assert (view.files.shown, view.files.count, len(view.files.entries)) == (25, 30, 25)


# ------------------------------------------------------------------------------- whole corpus


@pytest.mark.parametrize("path", _all_record_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_recorded_record_body_normalizes(path: Path) -> None:
    """record_view and record_keys run on every recorded record body (record/ and record-history/,
    both shapes), agree on the ids, and the view round-trips through the contract model.
    """
    body = json.loads(path.read_text(encoding="utf-8"))
    view = record_view(body)
    keys = record_keys(body)
    assert view.recid == keys.recid == str(body["id"])
    assert keys.concept_recid == view.concept_recid
    assert keys.doi == (view.doi.lower() if view.doi else None)
    assert keys.revision == view.revision is not None
    assert view.title
    assert view.creator_count == len(body["metadata"]["creators"])
    dumped = view.model_dump(exclude_none=True)
    assert ZenodoRecord.model_validate(dumped) == view
    assert GetRecordView(found=True, input_kind="record_id", record=view).model_dump(exclude_none=True)[
        "record"
    ]


def test_record_keys_lowercase_dois_in_both_shapes() -> None:
    """record_keys ASCII-lowercases DOIs and concept DOIs, RDM and legacy alike."""
    rdm = _load("record/records-22705923.json")
    rdm["pids"]["doi"]["identifier"] = "10.5281/ZENODO.22705923"
    rdm["parent"]["pids"]["doi"]["identifier"] = "10.5281/ZENODO.591564"
    keys = record_keys(rdm)
    assert (keys.doi, keys.concept_doi, keys.concept_recid, keys.revision) == (
        "10.5281/zenodo.22705923",
        "10.5281/zenodo.591564",
        "591564",
        4,
    )
    legacy = _load("record/records-7078768_legacy-2022.json")
    legacy["doi"], legacy["conceptdoi"] = "10.5281/ZENODO.7078768", "10.5281/Zenodo.7078767"
    keys = record_keys(legacy)
    assert (keys.recid, keys.doi, keys.concept_doi, keys.revision, keys.is_latest) == (
        "7078768",
        "10.5281/zenodo.7078768",
        "10.5281/zenodo.7078767",
        8,
        True,
    )


@pytest.mark.parametrize("body", [{}, {"metadata": {"title": "x"}}, [], "text", None])
def test_body_without_id_is_malformed(body: Any) -> None:
    """A body that is not an object or has no id raises MalformedResponse (never stored)."""
    with pytest.raises(MalformedResponse):
        record_view(body)
    with pytest.raises(MalformedResponse):
        record_keys(body)


def test_null_fields_do_not_crash() -> None:
    """Nulls and wrong types where upstream normally has objects give defaults, not exceptions."""
    body = {
        "id": "5",
        "parent": None,
        "pids": {"doi": None},
        "metadata": {"creators": [None, {"person_or_org": 3}]},
        "access": None,
        "files": {"entries": None},
        "stats": None,
        "versions": "x",
    }
    view = record_view(body)
    assert (view.recid, view.title, view.creator_count, view.access.status) == ("5", "", 2, "unknown")
    assert view.files.entries == [] and view.stats is None


# ------------------------------------------------------------------------------- tombstones


def test_tombstone_spam_22705918() -> None:
    """The 410 body of 22705918 becomes {removal_date, removal_reason spam, note, citation_text}."""
    tomb = tombstone_view(_load("error/records-22705918_410_tombstone.json"))
    assert tomb.model_dump(exclude_none=True) == {
        "removal_date": "2026-09-11T10:30:41.939980+00:00",
        "removal_reason": "spam",
        "note": "User was blocked",
        "citation_text": "Doe, J. (2026). A removed spam deposit. Zenodo. https://doi.org/10.5281/zenodo.22705918",
    }


def test_tombstone_retracted_22705920_omits_empty_note() -> None:
    """The retracted record's tombstone has an empty note, which is omitted."""
    tomb = tombstone_view(_load("error/records-22705920_410_tombstone.json"))
    assert tomb.removal_reason == "retracted"
    assert tomb.note is None
    assert tomb.citation_text is not None and "(Version 2.0.0)" in tomb.citation_text


@pytest.mark.parametrize("body", [None, {}, {"status": 410}, {"tombstone": "garbage"}, {"tombstone": None}])
def test_unreadable_410_body_gives_empty_tombstone(body: Any) -> None:
    """An unreadable or tombstone-less 410 body gives an empty tombstone."""
    assert tombstone_view(body).model_dump(exclude_none=True) == {}


def test_miss_guidance_strings() -> None:
    """The four guidance strings quote the id, the tombstone date and reason, or the DOI's doi.org URL."""
    tomb = tombstone_view(_load("error/records-22705918_410_tombstone.json"))
    assert miss_guidance("deleted", "22705918", tomb) == (
        "Record 22705918 was removed from Zenodo on 2026-09-11 (reason: spam); only its tombstone citation "
        "remains. Find a replacement or another version by title with zenodo_search_records."
    )
    assert "an unrecorded date (reason: not given)" in miss_guidance("deleted", "1", Tombstone())
    not_found = miss_guidance("not_found", "999999999999")
    assert not_found.startswith("No Zenodo record has id 999999999999; it may never have existed.")
    assert 'doi:"10.5281/zenodo.999999999999" with all_versions true' in not_found
    assert "restricted to authorized users" in miss_guidance("restricted", "22931068")
    assert "https://doi.org/10.3897/ap.e134190" in miss_guidance("not_on_zenodo", "10.3897/ap.e134190")
    with pytest.raises(ValueError, match="unknown miss kind"):
        miss_guidance("gone", "1")


# -------------------------------------------------------------------------- change detection


_HISTORY_5244404 = [
    "record-history/records-5244404__2023-09-10_legacy.json",  # W/"4", pre-migration serializer
    "record-history/records-5244404__2024-01-14.json",  # W/"4", RDM platform's legacy serializer
    "record-history/records-5244404__2024-09-27.json",  # W/"7", revision bump 2024-07-18
    "record-history/records-5244404__2025-05-07.json",  # W/"7", stats/links/"swh": {} only
    "record-history/records-5244404__2026-07-23.json",  # W/"7", stats/links only
    "record/records-5244404.json",  # the same bytes as 2026-07-23
]


def test_history_bodies_differing_only_in_volatile_parts_hash_equal() -> None:
    """Record 5244404 kept W/"7" from 2024-09 to 2026-07 while stats, links and an empty "swh" moved:
    those four bodies project to one hash, although their raw bytes differ.
    """
    same = [_load(rel) for rel in _HISTORY_5244404[2:]]
    assert len({json.dumps(b, sort_keys=True) for b in same[:3]}) == 3  # really different bodies
    assert len({_digest(b) for b in same}) == 1


def test_history_bodies_with_real_changes_hash_differently() -> None:
    """The migration (new serializer, file order, license id case) and the 2024-07 revision bump
    (revision 4→7, modified/updated) are real changes: the first three 5244404 bodies all differ,
    as do 3871094 2024-01 vs 2026 (revision 2→5) and 7078768 2022 vs 2025 (migration).
    """
    digests = [_digest(_load(rel)) for rel in _HISTORY_5244404[:3]]
    assert len(set(digests)) == 3
    assert _digest(_load("record-history/records-3871094__2024-01-14.json")) != _digest(
        _load("record/records-3871094.json")
    )
    assert _digest(_load("record/records-7078768_legacy-2022.json")) != _digest(
        _load("record-history/records-7078768__2025-07-26.json")
    )


def test_projection_drops_volatile_parts_keeps_content_and_copies() -> None:
    """The projection has no stats, no links at any depth and no empty top-level keys; a metadata edit
    changes the hash; the input body is not modified.
    """
    body = _load("record/records-5244404.json")
    original = copy.deepcopy(body)
    proj = content_hash_projection(body)
    assert body == original
    assert "stats" not in proj and "links" not in proj and "swh" not in proj
    assert all("links" not in f for f in proj["files"])
    assert proj["revision"] == 7 and proj["updated"] == "2024-07-18T18:54:12.932791+00:00"
    edited = copy.deepcopy(body)
    edited["metadata"]["title"] += " (corrected)"
    assert _digest(edited) != _digest(body)
    restat = copy.deepcopy(body)
    restat["stats"]["unique_views"] += 1000
    restat["links"]["new_link"] = "https://zenodo.org/api/records/5244404/new"
    assert _digest(restat) == _digest(body)


def test_projection_reduces_rdm_community_entries() -> None:
    """RDM parent.communities.entries keep only id, slug and title: a community's own edit is not a
    change of the record.
    """
    body = _load("record/records-1241_no-doi.json")
    touched = copy.deepcopy(body)
    touched["parent"]["communities"]["entries"][0]["updated"] = "2026-10-01T00:00:00+00:00"
    touched["parent"]["communities"]["entries"][0]["metadata"]["description"] = "new community text"
    assert _digest(touched) == _digest(body)
    retitled = copy.deepcopy(body)
    retitled["parent"]["communities"]["entries"][0]["metadata"]["title"] = "EU Open Research Repository (new)"
    assert _digest(retitled) != _digest(body)


# -------------------------------------------------------------------------------- contract


def test_contract_schema_matches_the_seed() -> None:
    """ZenodoRecord's required fields are the seed's list; optional fields advertise no null type;
    counts are JSON numbers; objects refuse extra keys; every property has a description.
    """
    schema = GetRecordView.model_json_schema()
    record = schema["$defs"]["ZenodoRecord"]
    assert record["required"] == [
        "recid", "title", "additional_descriptions", "additional_description_count", "creators",
        "creator_count", "contributors", "contributor_count", "keywords", "keyword_count", "rights",
        "access", "funding", "funding_count", "related_identifiers", "related_identifier_count",
        "communities", "community_count", "versions", "files", "zenodo_url",
    ]  # fmt: skip
    assert record["properties"]["doi"]["type"] == "string"
    assert record["properties"]["creator_count"]["type"] == "number"
    assert record["additionalProperties"] is False
    assert "required" not in schema
    assert schema["$defs"]["Continuation"]["required"] == ["field", "unit", "shown", "total", "id", "cursor"]
    assert schema["$defs"]["AdditionalDescription"]["required"] == ["text", "length", "truncated"]
    assert schema["$defs"]["Person"]["required"] == ["name", "affiliations"]
    defs = schema["$defs"]
    for name, definition in [("GetRecordView", schema), *defs.items()]:
        for prop, spec in definition.get("properties", {}).items():
            # pydantic leaves out a field description equal to that of the model it references.
            target = defs.get(spec.get("$ref", "").rsplit("/", 1)[-1], {})
            assert spec.get("description") or target.get("description"), (name, prop)
