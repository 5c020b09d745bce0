"""Tests for syncd.zenodo.params_id.parse_record_ref: the anchors' identifier table."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from syncd.errors import InvalidInput
from syncd.zenodo.params_id import RecordRef, parse_record_ref
from tests.corpus_path import CORPUS

ZENODO = CORPUS / "zenodo"


def _load(rel: str) -> Any:
    return json.loads((ZENODO / rel).read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("raw", "recid", "kind"),
    [
        ("22705923", "22705923", "record_id"),
        ("  22705923  ", "22705923", "record_id"),
        ("22705923.", "22705923", "record_id"),
        ("22705923;", "22705923", "record_id"),
        ("591564", "591564", "record_id"),  # scikit-learn's concept recid: still record_id
        ("zenodo.22705923", "22705923", "zenodo_doi"),
        ("ZENODO.22705923", "22705923", "zenodo_doi"),
        ("10.5281/zenodo.22705923", "22705923", "zenodo_doi"),
        ("10.5281/ZENODO.22705923", "22705923", "zenodo_doi"),
        ("doi:10.5281/zenodo.22705923", "22705923", "zenodo_doi"),
        ("DOI: 10.5281/zenodo.22705923", "22705923", "zenodo_doi"),
        ("10.5281/zenodo.22705923,", "22705923", "zenodo_doi"),
        ("<10.5281/zenodo.1>", "1", "zenodo_doi"),
        ('"10.5281/zenodo.591564"', "591564", "zenodo_doi"),
        ("'10.5281/zenodo.591564'", "591564", "zenodo_doi"),
        ("“10.5281/zenodo.591564”", "591564", "zenodo_doi"),
        ('<"22705923">', "22705923", "record_id"),
        ("<https://doi.org/10.5281/zenodo.591564>.", "591564", "url"),
    ],
)
def test_accepted_non_url_forms(raw: str, recid: str, kind: str) -> None:
    """Digits, zenodo.N, Zenodo DOIs (any case, doi: prefix) and wrapped forms give the recid and kind."""
    ref = parse_record_ref(raw)
    assert ref == RecordRef(kind, recid, None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("raw", "recid"),
    [
        ("https://doi.org/10.5281/zenodo.591564", "591564"),
        ("http://dx.doi.org/10.5281/zenodo.591564", "591564"),
        ("https://www.doi.org/10.5281/ZENODO.591564", "591564"),
        ("doi.org/10.5281/zenodo.591564", "591564"),
        ("https://doi.org/10.5281%2Fzenodo.591564", "591564"),
        ("https://zenodo.org/records/22705923", "22705923"),
        ("https://zenodo.org/record/22705923", "22705923"),
        ("https://www.zenodo.org/records/22705923", "22705923"),
        ("zenodo.org/records/22705923", "22705923"),
        ("HTTPS://ZENODO.ORG/RECORDS/22705923", "22705923"),
        ("https://zenodo.org/records/22705923?preview=1#files", "22705923"),
        ("https://zenodo.org/records/22705923/", "22705923"),
        ("https://zenodo.org/records/22705923.", "22705923"),
        (
            "https://zenodo.org/records/22705923/files/scikit-learn/scikit-learn-1.9.1.zip?download=1",
            "22705923",
        ),
        ("https://zenodo.org/api/records/22705923", "22705923"),
        ("https://zenodo.org/doi/10.5281/zenodo.591564", "591564"),
        ("https://zenodo.org/badge/DOI/10.5281/zenodo.591564.svg", "591564"),
        ("<https://zenodo.org/records/1>", "1"),
    ],
)
def test_accepted_url_forms(raw: str, recid: str) -> None:
    """doi.org and zenodo.org links (scheme optional, query/fragment ignored) give the recid as url."""
    assert parse_record_ref(raw) == RecordRef("url", recid, None)


def test_external_doi_is_lowercased_and_keeps_the_as_given_form() -> None:
    """Another DOI is an external_doi keyed ASCII-lowercased; the Dryad DOI of record 10794563 is one."""
    body = _load("record/records-10794563.json")
    ref = parse_record_ref(body["doi"].upper())
    assert ref == RecordRef("external_doi", None, "10.5061/dryad.66t1g1k7m")
    assert parse_record_ref("doi:10.3897/AP.E134190") == RecordRef("external_doi", None, "10.3897/ap.e134190")


def test_external_doi_with_trailing_punctuation_offers_a_stripped_form() -> None:
    """A trailing '.' is kept in doi (tried first) and dropped in stripped_doi (tried on a miss)."""
    ref = parse_record_ref("10.3897/ap.e134190.")
    assert ref.doi == "10.3897/ap.e134190."
    assert ref.stripped_doi == "10.3897/ap.e134190"
    assert ref.input_kind == "external_doi"


def test_external_doi_from_doi_org_url_has_kind_url() -> None:
    """A doi.org link to a non-Zenodo DOI is an external DOI whose input_kind is url."""
    assert parse_record_ref("https://doi.org/10.3897/ap.e134190") == RecordRef(
        "url", None, "10.3897/ap.e134190"
    )


def test_record_ref_is_frozen() -> None:
    """RecordRef is an immutable value (it is used as a cache key)."""
    ref = parse_record_ref("22705923")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ref.recid = "1"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("https://zenodo.org/badge/latestdoi/12345678", "GitHub repository id"),
        ("https://sandbox.zenodo.org/records/1", "different Zenodo instance"),
        ("sandbox.zenodo.org/records/1", "different Zenodo instance"),
        ("https://evilzenodo.org/records/22705923", "not zenodo.org"),
        ("evilzenodo.org/records/22705923", "not zenodo.org"),
        ("https://zenodo.org.evil.com/records/22705923", "not zenodo.org"),
        ("https://zenodo.org@evil.com/records/22705923", "not zenodo.org"),
        ("https://example.org/records/22705923", "not zenodo.org"),
        ("ftp://zenodo.org/records/1", "http(s) URL"),
        ("https://zenodo.org/communities/symbaproject", "does not name a record"),
        ("https://zenodo.org/search?q=climate", "does not name a record"),
        ("https://zenodo.org/api/files/d24cde89-1d38-4713-b6f2-6a3796e458a6/capitals.csv", "does not name"),
        ("https://doi.org/not-a-doi", "not a well-formed DOI"),
        ("10.12/too-short-registrant", "not a well-formed DOI"),
        ("climate model", "not a Zenodo record id, DOI"),
        ("doi:22705923", "not a Zenodo record id, DOI"),
        ("", "empty"),
        ("   ", "empty"),
        ("<>", "empty"),
        ("“”", "empty"),
        ("1" * 501, "longer than 500"),
    ],
)
def test_rejected_forms(raw: str, message: str) -> None:
    """Refused inputs raise InvalidInput with reason invalid_identifier and a message saying why."""
    with pytest.raises(InvalidInput) as info:
        parse_record_ref(raw)
    assert info.value.reason == "invalid_identifier"
    assert message in info.value.message


def test_500_characters_is_still_accepted_and_message_echo_is_capped() -> None:
    """The bound is 500 characters after trimming; an error message quotes at most ~120 of the input."""
    assert parse_record_ref(" " + "1" * 500 + " ").recid == "1" * 500
    with pytest.raises(InvalidInput) as info:
        parse_record_ref("not-an-id-" + "x" * 300)
    assert len(info.value.message) < 200


_VERSION_LINK_KEYS = (
    "self",
    "html",
    "self_html",
    "badge",
    "doi",
    "self_doi",
    "self_doi_html",
    "preview_html",
)
_CONCEPT_LINK_KEYS = ("conceptbadge", "conceptdoi", "parent", "parent_html", "parent_doi_html")


def _corpus_records() -> list[Path]:
    paths = sorted((ZENODO / "record").glob("*.json")) + sorted((ZENODO / "record-history").glob("*.json"))
    return [p for p in paths if not p.name.endswith(".headers.json")]


@pytest.mark.parametrize("path", _corpus_records(), ids=lambda p: p.name)
def test_every_link_in_recorded_bodies_parses_back_to_its_record(path: Path) -> None:
    """Each zenodo.org/doi.org link Zenodo itself serves in a record body (both shapes, every
    generation: /record/N, /records/N, /api/records/N, /badge/doi/…svg, /doi/10.5281/…, file
    /content links with raw spaces or parentheses) parses to that record's recid, or concept recid;
    a doi.org link to an external DOI (Dryad, record 10794563) parses to that DOI.
    """
    body = json.loads(path.read_text(encoding="utf-8"))
    recid = str(body["id"])
    concept = body.get("conceptrecid") or body.get("parent", {}).get("id")
    links = body.get("links", {})
    checked = 0
    for key in _VERSION_LINK_KEYS:
        if key in links:
            ref = parse_record_ref(links[key])
            if ref.doi is not None:  # record 10794563 links its external Dryad DOI
                assert ref == RecordRef("url", None, body["doi"].lower()), (key, links[key])
            else:
                assert ref.recid == recid, (key, links[key])
            checked += 1
    for key in _CONCEPT_LINK_KEYS:
        if key in links and concept:
            assert parse_record_ref(links[key]).recid == concept, (key, links[key])
            checked += 1
    if "doi_url" in body and body["doi"].startswith("10.5281/"):
        assert parse_record_ref(body["doi_url"]) == RecordRef("url", recid, None)
        checked += 1
    if body.get("doi", "").startswith("10.5281/"):
        assert parse_record_ref(body["doi"]) == RecordRef("zenodo_doi", recid, None)
        checked += 1
    for entry in body["files"] if isinstance(body.get("files"), list) else []:
        file_link = entry.get("links", {}).get("self", "")
        if "/api/records/" in file_link:
            assert parse_record_ref(file_link).recid == recid
            checked += 1
    if path.name.startswith("records-5244404__2026"):
        # A file key with parentheses inside a /files/…/content link.
        assert "Holmes_et_al_(2021)_Cell.pdf" in json.dumps(body["files"])
    assert checked or "links" not in body
