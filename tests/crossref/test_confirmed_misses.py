"""A DOI a ``filter=doi:`` list answer leaves out is confirmed alone before it is a miss (issue 27 item 6).

A list answer can leave a DOI out for other reasons than absence (aliases, characters the filter syntax
mangles, index lag between routes). Crossref sits at the httpx.MockTransport seam: its list answer is
built from the recorded works (tests/corpus/crossref/work/) minus the ones a test drops, its
``/works/{doi}`` answer is the recorded body, Crossref's plain-text 404, or a 503.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from syncd.crossref import lookups as crossref
from syncd.crossref.lookups_batch import get_works
from syncd.crossref.names import CROSSREF_WORK
from syncd.errors import NotFound
from syncd.normalize.doi import parse_doi
from syncd.road.services import Services
from tests.corpus_path import CORPUS
from tests.helpers import mock_services

RAPTOR = "10.1101/598821"
LANCET = "10.1016/s0140-6736(20)31180-6"
MISSING = "10.1371/journal.pone.9999990"


def _message(doi: str) -> dict[str, Any]:
    path = CORPUS / "crossref" / "work" / (re.sub(r"[/()]", "_", doi).replace("__", "_") + ".json")
    message: dict[str, Any] = json.loads(path.read_text("utf-8"))["message"]
    return message


class Crossref:
    """The list answer leaves out ``dropped``; ``/works/{doi}`` answers ``single_status`` (200: the body)."""

    def __init__(self) -> None:
        self.dropped: set[str] = set()
        self.single_status = 200
        self.singles: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.host == "doi.test":
            return httpx.Response(200, json=[{"DOI": request.url.path[4:], "RA": "Crossref"}])
        wanted = request.url.params.get("filter")
        if wanted is not None:
            keys = [k[4:] for k in wanted.split(",")]
            items = [_message(k) for k in keys if k not in self.dropped and k != MISSING]
            body = {"status": "ok", "message-type": "work-list", "message": {"items": items}}
            return httpx.Response(200, json=body)
        doi = request.url.path.removeprefix("/works/")
        self.singles.append(doi)
        if self.single_status != 200 or doi == MISSING:
            status = 404 if doi == MISSING else self.single_status
            return httpx.Response(status, text="Resource not found." if status == 404 else "busy")
        return httpx.Response(200, json={"status": "ok", "message-type": "work", "message": _message(doi)})


@pytest.fixture
def upstream() -> Crossref:
    return Crossref()


@pytest.fixture
def svc(tmp_path: Path, upstream: Crossref) -> Iterator[Services]:
    with mock_services(tmp_path / "misses.db", upstream, deadline_s=5.0) as services:
        yield services


def test_a_work_the_list_left_out_is_found_on_its_own(svc: Services, upstream: Crossref) -> None:
    """The list leaves the Lancet paper out: its own /works/{doi} answers it, so it is found (retracted
    title as recorded) and stored whole, never a stored miss.

    Before: it was stored as doi_not_found for ttl.miss and crossref_get_work answered that.
    """
    upstream.dropped = {LANCET}
    lancet, raptor = get_works(svc, [LANCET, RAPTOR]).items
    assert upstream.singles == [LANCET]
    assert lancet.lookup is not None and lancet.error is None
    assert lancet.lookup.entry.title is not None
    assert lancet.lookup.entry.title.startswith("RETRACTED: Hydroxychloroquine or chloroquine")
    assert raptor.lookup is not None and raptor.lookup.entry.title is not None
    stored = svc.store.get(CROSSREF_WORK, LANCET)
    assert stored is not None and stored.status == "ok"


def test_a_miss_is_stored_only_after_its_own_404(svc: Services, upstream: Crossref) -> None:
    """A DOI Crossref does not hold: left out of the list, then /works/{doi} says 404: doi_not_found
    (agency Crossref from doi.org), stored as a miss that crossref_get_work then answers with no request.
    """
    missing, _ = get_works(svc, [MISSING, RAPTOR]).items
    assert upstream.singles == [MISSING]
    assert isinstance(missing.error, NotFound) and missing.error.reason == "doi_not_found"
    assert missing.error.data["registrationAgency"] == "Crossref"
    held = svc.store.get(CROSSREF_WORK, MISSING)
    assert held is not None and held.status == "not_found"
    with pytest.raises(NotFound):
        crossref.get_work(svc, parse_doi(MISSING))
    assert upstream.singles == [MISSING]  # the confirmed miss is trusted


def test_an_unconfirmed_miss_is_never_stored_nor_trusted(svc: Services, upstream: Crossref) -> None:
    """The list leaves the Lancet paper out and its /works/{doi} answers 503: doi_unconfirmed (retryable,
    the cause named), nothing stored for it; crossref_get_work then asks Crossref and finds the work.
    """
    upstream.dropped = {LANCET}
    upstream.single_status = 503
    lancet, raptor = get_works(svc, [LANCET, RAPTOR]).items
    assert lancet.error is not None and lancet.error.reason == "doi_unconfirmed"
    assert lancet.error.data["cause"] == "upstream_unavailable"
    assert raptor.lookup is not None
    assert svc.store.get(CROSSREF_WORK, LANCET) is None
    upstream.single_status = 200
    asked = len(upstream.singles)
    work = crossref.get_work(svc, parse_doi(LANCET))
    assert len(upstream.singles) == asked + 1 and work.provenance.source == "upstream"
    assert work.entry.title is not None and work.entry.title.startswith("RETRACTED: Hydroxychloroquine")
