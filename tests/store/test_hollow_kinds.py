"""Nothing lost, for every stored kind: a hollow 200 never replaces a stored body (issue 30 item 3).

Each kind's store rules (:class:`syncd.store.rules.StoreRules`, declared by its slice) name what every
real answer of the kind carries. The recorded corpus bodies of each kind pass (no real answer is
refused); the nearly empty answers an adversary sent (``{}``, ``{"status": "ok"}``, an envelope with an
empty ``message``, a page without ``hits``) are refused as ``malformed_response`` and the stored body
stays, served as before.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from syncd.errors import MalformedResponse
from syncd.registry import KINDS
from syncd.store import guard
from syncd.store.content import content_hash
from syncd.store.repo import Store
from tests.corpus_path import CORPUS

CORPUS_DIRS: dict[str, list[str]] = {
    "crossref_search": ["crossref/work-list", "crossref/journal-list", "crossref/funder-list"],
    "crossref_journal": ["crossref/journal"],
    "crossref_funder": ["crossref/funder"],
    "crossref_member": ["crossref/member"],
    "crossref_prefix": ["crossref/prefix"],
    "zenodo_search": ["zenodo/search"],
    "zenodo_versions": ["zenodo/versions"],
    "zenodo_vocab": ["zenodo/vocabulary"],
    "zenodo_entity": ["zenodo/community"],
    "zenodo_container": ["zenodo/container"],
    "zenodo_funder": ["zenodo/funder"],
    "crossref_work": ["crossref/work"],
    "zenodo_record": ["zenodo/record"],
    "datacite_work": ["datacite/work", "datacite/work-history"],
    "datacite_search": ["datacite/work-list", "datacite/repository-list", "datacite/event-list"],
}
"""The recorded answers of each kind (``tests/corpus/``)."""

HOLLOW = [
    "{}",
    '{"status": "ok"}',
    '{"status":"ok","message-type":"journal","message":{}}',
    '{"status":"ok","message-type":"work","message":{}}',
    '{"hits": {}}',
    "[]",
]
"""Nearly empty 200 bodies of the adversary run."""

RA_BODY = '[{"DOI": "10.1038", "RA": "Crossref"}]'
"""doi.org's ``/ra/10.1038`` answer (the shape of every ``/ra/`` answer: a list of one object)."""


def _bodies(kind: str) -> list[tuple[str, str]]:
    out = []
    for rel in CORPUS_DIRS.get(kind, []):
        for path in sorted((CORPUS / rel).glob("*.json")):
            if path.name.endswith(".headers.json"):
                continue
            text = path.read_text(encoding="utf-8")
            try:
                json.loads(text)
            except ValueError:
                continue
            out.append((path.name, text))
    return out


def _first_body(kind: str) -> str:
    if kind == "doi_ra":
        return RA_BODY
    if kind == "zenodo_award":
        hits = json.loads((CORPUS / "zenodo/vocabulary/awards_q-SYMBA_page-1_size-10.json").read_text())
        return json.dumps(hits["hits"]["hits"][0])
    return _bodies(kind)[0][1]


def test_every_kind_declares_what_a_real_answer_carries() -> None:
    """All 17 kinds have hollow-body rules; each kind with recorded answers has them in the corpus."""
    assert len(KINDS) == 17
    assert [name for name, kind in KINDS.items() if not kind.rules.required] == []
    assert set(CORPUS_DIRS) | {"doi_ra", "zenodo_award"} == set(KINDS)


@pytest.mark.parametrize("kind", sorted(CORPUS_DIRS))
def test_no_recorded_answer_of_a_kind_is_refused(kind: str) -> None:
    """Every recorded ``ok`` body of the kind carries what its rules require (no false refusal)."""
    bodies = _bodies(kind)
    assert bodies, kind
    rules = KINDS[kind].rules
    assert [name for name, text in bodies if guard.missing(rules, "ok", text)] == []


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_hollow_answer_keeps_the_stored_body(tmp_path: Path, kind: str) -> None:
    """Over a stored real body of each kind, every hollow 200 is refused and the stored body stays."""
    store = Store.open(f"sqlite:///{tmp_path / 'hollow.db'}")
    try:
        spec = KINDS[kind]
        real = _first_body(kind)
        stored, _ = store.put_content(spec.content("k1", "ok", real, content_hash(real), title="kept"))
        refused = 0
        for hollow in HOLLOW:
            if not guard.missing(spec.rules, "ok", hollow) and spec.rules.checked(json.loads(hollow)) is None:
                continue  # a shape the kind's checks do not apply to (e.g. a list for an envelope kind)
            with pytest.raises(MalformedResponse) as raised:
                store.put_content(spec.content("k1", "ok", hollow, content_hash(hollow)))
            assert raised.value.reason == "malformed_response"
            refused += 1
        assert refused >= 1, kind
        again = store.get(kind, "k1")
        assert again is not None and again.body == real and again.content_hash == stored.content_hash
        assert again.title == "kept"
    finally:
        store.close()


def test_a_journal_emptied_by_upstream_is_refused_naming_the_missing_keys(tmp_path: Path) -> None:
    """A journal envelope with an empty message names ``ISSN`` and ``title`` as missing (PLOS ONE kept)."""
    spec = KINDS["crossref_journal"]
    text = (CORPUS / "crossref/journal/journals-1932-6203.json").read_text(encoding="utf-8")
    assert json.loads(text)["message"]["title"] == "PLoS ONE"
    hollow = '{"status":"ok","message-type":"journal","message":{}}'
    assert guard.missing(spec.rules, "ok", hollow) == ["ISSN", "title"]
    assert guard.missing(spec.rules, "ok", text) == []
