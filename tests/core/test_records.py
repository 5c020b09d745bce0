"""The record sources behind ``syncd cache show/get/refresh/evict``: which slice an identifier belongs to
(the registry decides, the command line never branches on the upstream) and fetch-if-missing for
``cache refresh`` (:func:`syncd.passes.refresh.named_entries`, generic over any source).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from syncd.errors import InvalidInput, NotFound
from syncd.kinds import Kind
from syncd.normalize.doi import ParsedDOI
from syncd.passes.refresh import named_entries
from syncd.registry import RECORD_KINDS, RECORD_SOURCES, resolve_record
from syncd.road import policy
from syncd.road.local_first import Lookup
from syncd.road.records import RecordAnswer, RecordSource
from syncd.store.repo import StoredEntry
from syncd.zenodo.params_id import RecordRef

RAPTOR = "10.1101/598821"
"""A Crossref work of the recorded corpus (tests/corpus/)."""
ZENODO = "5244404"
"""A Zenodo record of the recorded corpus."""


@pytest.mark.parametrize(
    ("ident", "upstream", "key"),
    [
        (ZENODO, "zenodo", ZENODO),
        (f"10.5281/zenodo.{ZENODO}", "zenodo", ZENODO),
        (f"https://zenodo.org/records/{ZENODO}", "zenodo", ZENODO),
        (f"https://doi.org/10.5281/zenodo.{ZENODO}", "zenodo", ZENODO),
        (RAPTOR, "crossref", RAPTOR),
        (f"https://doi.org/{RAPTOR.upper()}", "crossref", RAPTOR),
        (f"doi:{RAPTOR}", "crossref", RAPTOR),
    ],
)
def test_auto_gives_zenodo_forms_to_zenodo_and_any_other_doi_to_crossref(
    ident: str, upstream: str, key: str
) -> None:
    """``--kind auto``: a record id, Zenodo DOI or zenodo.org / doi.org link to one is Zenodo's; another
    DOI (bare, ``doi:``, doi.org URL, any case) is a Crossref work keyed by its lower-cased DOI.
    """
    source, ref = resolve_record(ident)
    assert source.name == upstream
    assert source.kind.name == RECORD_KINDS[upstream]
    if upstream == "zenodo":
        assert isinstance(ref, RecordRef) and ref.recid == key
    else:
        assert isinstance(ref, ParsedDOI) and ref.key == key


def test_an_explicit_upstream_parses_with_that_source_only() -> None:
    """``--kind zenodo`` reads a Crossref DOI as an external DOI to look for on Zenodo (no record id);
    ``--kind crossref`` refuses a bare Zenodo record id (not a DOI), reason ``invalid_parameter``.
    """
    source, ref = resolve_record(RAPTOR, "zenodo")
    assert source.name == "zenodo" and ref.recid is None and ref.doi == RAPTOR
    with pytest.raises(InvalidInput) as refused:
        resolve_record(ZENODO, "crossref")
    assert refused.value.reason == "invalid_parameter"


def test_neither_form_and_an_unknown_upstream_are_declared_errors() -> None:
    """Text that is neither a Zenodo form nor a DOI is refused as "Not a DOI"; an upstream holding no
    records is refused naming the sources there are (never a KeyError).
    """
    with pytest.raises(InvalidInput, match="Not a DOI"):
        resolve_record("not a doi")
    with pytest.raises(InvalidInput, match="one of crossref, zenodo, datacite") as unknown:
        resolve_record(RAPTOR, "retractions")
    assert unknown.value.reason == "invalid_parameter"
    assert list(RECORD_SOURCES) == ["crossref", "zenodo", "datacite"]


def _entry(key: str) -> StoredEntry:
    return StoredEntry(
        id=1,
        kind="toy_record",
        key=key,
        status="ok",
        body="{}",
        content_hash=None,
        upstream_version=None,
        doi=None,
        concept_key=None,
        title=None,
        fetched_at=0.0,
        validated_at=0.0,
        etag=None,
        last_modified=None,
        checks=0,
        changes=0,
        last_error=None,
        last_error_at=None,
        volatile=None,
    )


@dataclass
class _Toy:
    """A record source defined only here: ``held`` keys are stored, ``known`` ones upstream has."""

    held: set[str]
    known: set[str]
    fetched: list[tuple[str, bool]] = field(default_factory=list)

    def source(self) -> RecordSource[str]:
        def fetch(svc: Any, ref: str, force: bool) -> Lookup:
            self.fetched.append((ref, force))
            if ref not in self.known:
                raise NotFound(f"no toy record {ref}", reason="not_found")
            return Lookup(_entry(ref), policy.from_many([0.0], [0.0]))

        return RecordSource(
            name="toy",
            kind=Kind("toy_record", "entity", "doi"),
            parse=str.strip,
            stored=lambda store, ref: _entry(ref) if ref in self.held else None,
            answer=RecordAnswer(fetch=fetch, view=lambda entry, label: {}),
        )


def test_refresh_fetches_what_is_not_stored_and_lists_what_upstream_does_not_know() -> None:
    """``named_entries``: a stored record is handed back for revalidation (no fetch); one not stored is
    fetched now, forced, and counted; one upstream does not know is listed as given, in order.
    """
    toy = _Toy(held={"a"}, known={"b"})
    source = toy.source()
    svc = SimpleNamespace(store=None)  # the toy source never reads the bundle
    named = named_entries(svc, [("A ", source, "a"), ("B", source, "b"), ("C", source, "c")])  # type: ignore[arg-type]
    assert [e.key for e in named.entries] == ["a"]
    assert named.fetched == 1 and named.not_found == ["C"]
    assert toy.fetched == [("b", True), ("c", True)]
