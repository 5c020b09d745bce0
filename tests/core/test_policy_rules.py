"""The freshness rules moved into syncd.road.policy (issue 11 item 2): one table test per rule, no I/O.

Lifetimes per kind, the pool of each kind (which breaker the sweep consults), cursor lifetime,
forced refetch of a held copy, coalescing, "a miss never hides a stored body", stale-if-error,
kept previews, and the typed revalidation outcome with its tally.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from syncd.config import TtlSettings
from syncd.kinds import ALL_STATUSES
from syncd.passes.refresh import stops
from syncd.registry import KINDS, hooks_of
from syncd.road import policy
from syncd.road.local_first import facts_of
from syncd.road.policy import Action, Decision, EntryFacts, Outcome, Result, Tally, UpstreamFacts
from syncd.store.repo import StoredEntry

NOW = 1_800_000_000.0
DAY = 86_400.0
TTL = TtlSettings(crossref_work=7 * DAY, zenodo_record=DAY, search=2 * DAY, entity=30 * DAY, miss=3600.0)


def row(**over: object) -> StoredEntry:
    """A stored ``ok`` work validated an hour before NOW (fields overridable)."""
    base = StoredEntry(
        id=1, kind="crossref_work", key="10.1/x", status="ok", body="{}", content_hash="h1",
        upstream_version=None, doi="10.1/x", concept_key=None, title=None, fetched_at=NOW - 7200,
        validated_at=NOW - 3600, etag=None, last_modified=None, checks=0, changes=0, last_error=None,
        last_error_at=None, volatile=None,
    )  # fmt: skip
    return replace(base, **over)  # type: ignore[arg-type]


def entry(**over: object) -> EntryFacts:
    """The policy's facts of :func:`row`, built as by :func:`~syncd.road.local_first.facts_of`."""
    return facts_of(row(**over))


POOLS = {
    "crossref_work": "crossref_single",
    "crossref_search": "crossref_list",
    "crossref_journal": "crossref_single",
    "crossref_funder": "crossref_single",
    "crossref_member": "crossref_single",
    "crossref_prefix": "crossref_single",
    "doi_ra": "doi",
    "zenodo_record": "zenodo_general",
    "zenodo_search": "zenodo_search",
    "zenodo_versions": "zenodo_general",
    "zenodo_vocab": "zenodo_general",
    "zenodo_entity": "zenodo_general",
    "zenodo_container": "zenodo_general",
    "zenodo_funder": "zenodo_general",
    "zenodo_award": "zenodo_general",
    "datacite_work": "datacite",
    "datacite_search": "datacite",
}


def test_the_kinds_table_lists_the_17_stored_kinds_with_their_pools() -> None:
    """Every stored kind is declared once, with the budget pool its requests (and the sweep) use."""
    assert {k: v.pool for k, v in KINDS.items()} == POOLS


def test_every_kind_has_a_refetch_and_every_refetch_a_kind() -> None:
    """The sweep can revalidate every stored kind; refresh's table names no kind the table lacks."""
    assert all(hooks_of(kind).refetch is not None for kind in KINDS.values())


class _Breakers:
    """A budget stand-in whose breaker is open for exactly one pool."""

    def __init__(self, open_pool: str) -> None:
        self.open_pool = open_pool
        self.asked: list[str] = []

    def offline(self, pool: str) -> bool:
        self.asked.append(pool)
        return pool == self.open_pool


@pytest.mark.parametrize("kind", sorted(POOLS))
def test_the_sweep_consults_the_breaker_of_the_kinds_own_pool(kind: str) -> None:
    """An upstream failure stops the sweep only when the kind's own pool is offline."""
    own = _Breakers(POOLS[kind])
    assert stops(own, kind, "upstream_unavailable") is True  # type: ignore[arg-type]
    assert own.asked == [POOLS[kind]]
    other = _Breakers("zenodo_general" if POOLS[kind] != "zenodo_general" else "crossref_single")
    assert stops(other, kind, "upstream_unavailable") is False  # type: ignore[arg-type]
    assert stops(other, kind, "rate_limited") is True  # type: ignore[arg-type]
    assert stops(own, kind, "malformed_response") is False  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kind", "status", "expected"),
    [
        ("crossref_work", "ok", 7 * DAY),
        ("zenodo_record", "ok", DAY),
        ("zenodo_container", "ok", DAY),
        ("crossref_search", "ok", 2 * DAY),
        ("zenodo_versions", "ok", 2 * DAY),
        ("crossref_journal", "ok", 30 * DAY),
        ("doi_ra", "ok", 30 * DAY),
        ("zenodo_funder", "ok", 30 * DAY),
        ("zenodo_award", "ok", 30 * DAY),
        ("crossref_work", "not_found", 3600.0),
        ("zenodo_record", "gone", 7 * 86400.0),  # ttl.deleted: a deleted record is rechecked weekly
        ("zenodo_record", "restricted", 3600.0),
    ],
)
def test_ttl_per_kind_and_status(kind: str, status: str, expected: float) -> None:
    """An ``ok`` entry lives its kind's ``ttl.*`` setting; any miss lives ``ttl.miss``."""
    assert policy.ttl_s(TTL, KINDS[kind], status) == expected


def test_background_ttls_leave_out_on_demand_pages_and_cover_every_status() -> None:
    """The sweep's lifetimes cover each kind's statuses, without search and version pages."""
    every = policy.ttls(TTL, KINDS.values())
    background = policy.ttls(TTL, KINDS.values(), background=True)
    assert ("zenodo_record", "gone") in every and ("crossref_work", "gone") not in every
    assert {k for k, _ in every} == set(KINDS)
    assert {k for k, _ in background} == set(KINDS) - {
        "crossref_search",
        "zenodo_search",
        "zenodo_versions",
        "datacite_search",
    }
    assert {s for _, s in every} == set(ALL_STATUSES)


@pytest.mark.parametrize(
    ("cursor", "age_s", "expired"),
    [("*", 241.0, True), ("*", 239.0, False), (None, 10_000.0, False), ("abc", 10_000.0, False)],
)
def test_cursor_start_page_lifetime(cursor: str | None, age_s: float, expired: bool) -> None:
    """A stored ``cursor=*`` page is refetched past 240 s (its next-cursor may have expired upstream)."""
    assert policy.cursor_expired(cursor, NOW - age_s, NOW) is expired
    assert policy.cursor_expired(cursor, None, NOW) is False


def test_a_held_copy_marked_refetch_is_revalidated_even_when_fresh() -> None:
    """A partial work or expired cursor page (``refetch``) is asked again within its TTL, not stale."""
    fresh = EntryFacts(NOW - 60, DAY, refetch=True)
    assert decide_now(fresh) == Decision(Action.REVALIDATE, stale=False)
    offline = policy.decide(fresh, NOW, UpstreamFacts(offline=True))
    assert (offline.action, offline.stale, offline.reason) == (
        Action.SERVE_STALE,
        False,
        "upstream_unavailable",
    )
    assert decide_now(EntryFacts(NOW - 60, DAY)).action is Action.SERVE


def decide_now(facts: EntryFacts) -> Decision:
    """The decision for ``facts`` at NOW with upstream usable."""
    return policy.decide(facts, NOW, UpstreamFacts())


@pytest.mark.parametrize(
    ("before_at", "again_at", "coalesced"),
    [
        (None, NOW - 1, True),  # nothing was stored, another caller stored it a second ago
        (NOW - 5000, NOW - 1, True),  # revalidated meanwhile
        (NOW - 5000, NOW - 5000, False),  # nobody touched it: fetch
        (None, NOW - 60, False),  # stored, but longer ago than this call's deadline
    ],
)
def test_coalescing_rule(before_at: float | None, again_at: float, coalesced: bool) -> None:
    """A caller that waited on the fetch lock answers what another stored meanwhile (within its deadline)."""
    before = None if before_at is None else entry(validated_at=before_at)
    again = entry(validated_at=again_at)
    assert policy.coalesced(before, again, NOW, 5.0) is coalesced
    assert policy.coalesced(before, None, NOW, 5.0) is False


def test_a_miss_never_hides_a_stored_body() -> None:
    """Upstream 404 over a held work: the kept body is answered flagged stale with the recorded error."""
    before = entry()
    kept = entry(last_error="doi_not_found")  # the store kept the body, validated_at unchanged
    prov = policy.after_fetch(before, kept)
    assert (prov.source, prov.stale, prov.upstream_error) == ("store-stale", True, "doi_not_found")
    fetched = entry(validated_at=NOW, content_hash="h2")
    assert policy.after_fetch(before, fetched) == policy.Provenance(
        "upstream", NOW - 7200, NOW, False, etag="h2"
    )
    assert policy.after_fetch(None, kept).source == "upstream"


@pytest.mark.parametrize(("stale", "expected"), [(True, True), (False, False)])
def test_stale_if_error_answers_the_held_entry(stale: bool, expected: bool) -> None:
    """Upstream failing during a revalidation answers the held entry, flagged with the failure's reason."""
    prov = policy.after_failure(entry(), Decision(Action.REVALIDATE, stale=stale), "request_timeout")
    assert (prov.source, prov.stale, prov.upstream_error, prov.etag) == (
        "store-stale",
        expected,
        "request_timeout",
        "h1",
    )


@pytest.mark.parametrize(
    ("action", "source"), [(Action.SERVE, "store"), (Action.SERVE_STALE, "store-stale"), (Action.FETCH, None)]
)
def test_answered_decisions(action: Action, source: str | None) -> None:
    """SERVE and SERVE_STALE are answered from the store; the others need upstream."""
    prov = policy.answered(Decision(action, stale=True, reason="rate_limited"), entry())
    assert (prov.source if prov else None) == source


@pytest.mark.parametrize(
    ("kept", "file_size", "offset", "length", "covers"),
    [
        (1000, 5000, 0, 500, True),
        (1000, 5000, 600, 500, False),
        (1000, 1000, 600, 500, True),  # the whole file is kept
        (1000, None, 0, 1000, True),
        (1000, None, 0, 1001, False),
    ],
)
def test_kept_preview_covers_a_range(
    kept: int, file_size: int | None, offset: int, length: int, covers: bool
) -> None:
    """A kept preview answers a range it holds (or the whole file) without a request."""
    assert policy.preview_covers(kept, file_size, offset, length) is covers


def test_kept_preview_rescues_a_failed_read_from_inside_it() -> None:
    """When upstream fails, a kept preview answers any range that starts inside it."""
    assert policy.preview_rescues(1000, 999) is True
    assert policy.preview_rescues(1000, 1000) is False


@pytest.mark.parametrize(
    ("after", "outcome"),
    [
        ({}, policy.UNCHANGED),
        ({"validated_at": NOW}, policy.UNCHANGED),
        ({"validated_at": NOW, "content_hash": "h2"}, policy.CHANGED),
        ({"validated_at": NOW, "status": "not_found"}, policy.CHANGED),
        ({"last_error": "doi_not_found"}, Outcome(Result.FAILED, "doi_not_found")),
    ],
)
def test_revalidation_outcome(after: dict[str, object], outcome: Outcome) -> None:
    """A refetch is unchanged, changed (hash or status moved) or failed (error kept beside the body)."""
    assert policy.outcome_of(entry(), entry(**after)) == outcome


def test_tally_counts_outcomes_and_merges() -> None:
    """One tally for batch, sweep and CLI: counts per result, failures per reason; printed as before."""
    tally = Tally()
    for o in (policy.UNCHANGED, policy.CHANGED, policy.failed("rate_limited"), policy.failed("rate_limited")):
        tally.add(o)
    other = Tally()
    other.add(policy.failed("upstream_unavailable"))
    tally.merge(other)
    assert (tally.checked, tally.unchanged, tally.changed, tally.failed) == (5, 1, 1, 3)
    assert tally.failures == {"rate_limited": 2, "upstream_unavailable": 1}
    assert [str(o) for o in (policy.UNCHANGED, policy.failed("x"))] == ["unchanged", "failed:x"]


@pytest.mark.parametrize(
    ("reason", "error", "retry"),
    [
        ("rate_limited", "rate_limited", 12.5),
        ("request_timeout", "request_timeout", None),
        (None, "upstream_unavailable", None),
    ],
)
def test_error_for_a_decision_with_nothing_stored(
    reason: str | None, error: str, retry: float | None
) -> None:
    """Nothing stored and upstream unusable: the declared error with the decision's reason code."""
    exc = policy.error_for(Decision(Action.ERROR, reason=reason, retry_after_s=retry), "crossref_single")
    assert exc.reason == error
