"""Upstream clients: conditional requests, Retry-After honoured, polite User-Agent, DOI path encoding."""

from __future__ import annotations

import pytest

from syncd.crossref.lookups import get_work
from syncd.normalize.doi import parse_doi
from syncd.registry import open_services
from syncd.road.services import Services
from tests.conftest import Clock
from tests.fakeupstream import FakeUpstream

RAPTOR = "10.1101/598821"


def test_last_modified_is_replayed_as_if_modified_since(
    cache: Services, fake: FakeUpstream, injected_clock: Clock
) -> None:
    """A stored Last-Modified goes back as If-Modified-Since; the 304 only bumps validated_at."""
    fake.last_modified = True
    first = get_work(cache, parse_doi(RAPTOR)).entry
    assert first.last_modified
    cache.settings.ttl.crossref_work = 0.001
    injected_clock.advance(1.0)  # older than its 1 ms lifetime: stale (the injected clock, no sleep)
    second = get_work(cache, parse_doi(RAPTOR))
    sent = fake.requests[-1].headers
    assert sent.get("if-modified-since") == first.last_modified
    assert second.provenance.source == "upstream"
    assert (second.entry.body, second.entry.fetched_at) == (first.body, first.fetched_at)
    assert second.entry.validated_at > first.validated_at


def test_retry_after_is_honoured_within_the_deadline(
    cache: Services, fake: FakeUpstream, injected_clock: Clock
) -> None:
    """A 429 with Retry-After: 1 is waited out and retried once: the call succeeds with 2 requests after
    one wait of the 1 s asked (the injected clock's, not slept), within the deadline.
    """
    fake.fault("rate_limit", retry_after=1, times=1, service="crossref")
    svc = open_services(cache.settings, cache.store, clock=injected_clock, sleep=injected_clock.sleep)
    try:
        lookup = get_work(svc, parse_doi(RAPTOR))
    finally:
        svc.close()
    assert (
        lookup.entry.title
        == "Raptor genomes reveal evolutionary signatures of predatory and nocturnal lifestyles"
    )
    assert fake.count("/works", service="crossref") == 2
    assert (
        sum(injected_clock.slept) == pytest.approx(1.0, abs=0.05)
        and sum(injected_clock.slept) < cache.settings.deadline_s
    )


def test_polite_user_agent_and_encoded_sici_path(cache: Services, fake: FakeUpstream) -> None:
    """Crossref requests carry mailto in the User-Agent (never the query); SICI characters are encoded."""
    try:
        get_work(cache, parse_doi("10.1175/1520-0477(1996)077<0935:WOTWSM>2.0.CO;2"))
    except Exception as exc:  # not in the corpus: a declared not-found
        assert getattr(exc, "reason", None) == "doi_not_found"
    req = next(r for r in fake.requests if r.service == "crossref")
    assert "mailto:ci@example.org" in req.headers["user-agent"]
    assert "mailto" not in req.query
    assert req.path.endswith("/works/10.1175/1520-0477%281996%29077%3C0935%3AWOTWSM%3E2.0.CO%3B2")
