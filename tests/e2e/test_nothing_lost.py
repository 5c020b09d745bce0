"""Nothing lost (issue 17 item 1): hollow and shrunk upstream answers never replace a stored record.

The lookups run over ``httpx.MockTransport`` answering recorded corpus bodies; the hostile answers
are the ones the adversarial run met (a work holding only its DOI, a record without metadata). Time
moves with freezegun, never with sleeps.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from freezegun import freeze_time

from syncd.crossref import lookups as crossref
from syncd.crossref.names import CROSSREF_WORK
from syncd.crossref.rules import WORK_RULES
from syncd.errors import MalformedResponse
from syncd.normalize.doi import parse_doi
from syncd.road.services import Services
from syncd.store import guard
from syncd.store.repo import EntryContent, Store
from syncd.zenodo import lookups as zenodo
from syncd.zenodo.names import ZENODO_RECORD
from syncd.zenodo.params_id import parse_record_ref
from syncd.zenodo.rules import RECORD_RULES
from tests.corpus_path import CORPUS
from tests.helpers import mock_services

DOI = "10.1038/srep16696"
WORK_BODY = (CORPUS / "crossref" / "work" / "10.1038_srep16696.json").read_text(encoding="utf-8")
RECORD_BODY = (CORPUS / "zenodo" / "record" / "records-22917909.json").read_text(encoding="utf-8")
HOLLOW_WORK = '{"status":"ok","message-type":"work","message":{"DOI":"10.1038/srep16696"}}'
HOLLOW_RECORD = '{"id": "22917909", "metadata": {}, "files": []}'


class Answers:
    """One mutable answer per host (status, text); every request counted."""

    def __init__(self) -> None:
        self.crossref = (200, WORK_BODY)
        self.zenodo = (200, RECORD_BODY)
        self.requests = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        status, body = self.crossref if "crossref" in request.url.host else self.zenodo
        return httpx.Response(status, text=body, headers={"content-type": "application/json"})


@pytest.fixture
def answers() -> Answers:
    """Crossref answers the full srep16696 work, Zenodo record 22917909, until a test changes them."""
    return Answers()


@pytest.fixture
def svc(tmp_path: Path, answers: Answers) -> Iterator[Services]:
    """Services over a fresh SQLite store; all clients on the one MockTransport."""
    with mock_services(tmp_path / "lost.db", answers) as services:
        yield services


def _later(days: float) -> dt.datetime:
    return dt.datetime.now(dt.UTC) + dt.timedelta(days=days)


def _references(body: str | None) -> int:
    return len(json.loads(body or "{}")["message"].get("reference") or [])


def test_the_required_keys_come_from_the_corpus() -> None:
    """Every recorded Crossref work and Zenodo record passes the hollow check; the hollow bodies fail it."""
    works = [p for p in (CORPUS / "crossref" / "work").glob("*.json") if not p.name.endswith("headers.json")]
    records = [
        p
        for folder in ("record", "record-history")
        for p in (CORPUS / "zenodo" / folder).glob("*.json")
        if not p.name.endswith("headers.json")
    ]
    assert len(works) >= 70 and len(records) >= 20
    assert [p.name for p in works if guard.missing(WORK_RULES, "ok", p.read_text(encoding="utf-8"))] == []
    assert [p.name for p in records if guard.missing(RECORD_RULES, "ok", p.read_text(encoding="utf-8"))] == []
    assert guard.missing(WORK_RULES, "ok", HOLLOW_WORK) == ["type"]
    assert guard.missing(RECORD_RULES, "ok", HOLLOW_RECORD) == ["metadata.title"]


def test_a_hollow_work_never_replaces_the_stored_one(svc: Services, answers: Answers) -> None:
    """A 200 holding only the DOI over the stored 30 KB work: body unchanged, answered stale, 62 refs kept."""
    first = crossref.get_work(svc, parse_doi(DOI))
    assert first.provenance.source == "upstream" and _references(first.entry.body) == 62
    answers.crossref = (200, HOLLOW_WORK)
    with freeze_time(_later(8), tick=True):
        again = crossref.get_work(svc, parse_doi(DOI))
    assert again.provenance.source == "store-stale" and again.provenance.stale is True
    assert again.provenance.upstream_error == "malformed_response"
    stored = svc.store.get(CROSSREF_WORK, DOI)
    assert stored is not None and stored.body == WORK_BODY and len(WORK_BODY) == 30131
    assert stored.title is not None and stored.title.startswith("Single-molecule FRET studies")
    assert _references(stored.body) == 62
    assert svc.store.previous_bodies(stored.id) == []  # nothing was replaced, nothing set aside


def test_a_hollow_work_with_nothing_stored_is_malformed_response(svc: Services, answers: Answers) -> None:
    """With nothing stored the hollow body is refused as malformed_response and nothing is written."""
    answers.crossref = (200, HOLLOW_WORK)
    with pytest.raises(MalformedResponse) as err:
        crossref.get_work(svc, parse_doi(DOI))
    assert err.value.reason == "malformed_response" and err.value.data["missing"] == ["type"]
    assert svc.store.get(CROSSREF_WORK, DOI) is None


def test_a_hollow_zenodo_record_never_replaces_the_stored_one(svc: Services, answers: Answers) -> None:
    """A record without metadata.title over the stored record: answered stale, stored body unchanged."""
    zenodo.get_record(svc, parse_record_ref("22917909"))
    answers.zenodo = (200, HOLLOW_RECORD)
    with freeze_time(_later(2), tick=True):
        again = zenodo.get_record(svc, parse_record_ref("22917909"), force=True)
    assert again.provenance.upstream_error == "malformed_response"
    stored = svc.store.get(ZENODO_RECORD, "22917909")
    assert stored is not None and stored.body == RECORD_BODY


def test_a_shrunk_work_is_stored_only_after_a_second_answer(svc: Services, answers: Answers) -> None:
    """A valid work without its references: held back (suspicious_shrink) once, stored when confirmed.

    The replaced 30 KB body is kept in previous_bodies with its 62 references.
    """
    crossref.get_work(svc, parse_doi(DOI))
    shrunk = json.loads(WORK_BODY)
    del shrunk["message"]["reference"]
    shrunk["message"]["reference-count"] = 0
    answers.crossref = (200, json.dumps(shrunk))
    with freeze_time(_later(8), tick=True):
        held = crossref.get_work(svc, parse_doi(DOI))
        assert held.provenance.source == "store-stale"
        assert held.provenance.upstream_error == "suspicious_shrink"
        assert _references(svc.store.get(CROSSREF_WORK, DOI).body) == 62  # type: ignore[union-attr]
        confirmed = crossref.get_work(svc, parse_doi(DOI), force=True)
    assert confirmed.provenance.source == "upstream" and confirmed.provenance.upstream_error is None
    stored = svc.store.get(CROSSREF_WORK, DOI)
    assert stored is not None and _references(stored.body) == 0 and stored.last_error is None
    kept = svc.store.previous_bodies(stored.id)
    assert [(k["role"], _references(k["body"])) for k in kept] == [("previous", 62)]


def test_replaced_bodies_are_kept_for_the_retention_period(tmp_path: Path) -> None:
    """Every replacement sets the old body aside; prune drops the ones older than keep_previous_s."""
    store = Store.open(f"sqlite:///{tmp_path / 'keep.db'}", keep_previous_s=3600.0)
    try:
        bodies = [WORK_BODY, WORK_BODY.replace("Single-molecule", "Single molecule")]
        for i, body in enumerate(bodies):
            entry, changed = store.put_content(
                EntryContent(CROSSREF_WORK, DOI, "ok", body, f"h{i}", rules=WORK_RULES), now=1000.0 + i
            )
            assert changed
        assert [k["body"] for k in store.previous_bodies(entry.id)] == [WORK_BODY]
        assert store.prune_previous(now=1001.0 + 3599.0) == 0
        assert store.prune_previous(now=1001.0 + 3601.0) == 1
        assert store.previous_bodies(entry.id) == []
    finally:
        store.close()
