"""The local-first decision (syncd.road.policy.decide) is pure: every branch, no I/O."""

from __future__ import annotations

from syncd.road.policy import Action, EntryFacts, UpstreamFacts, decide

NOW = 1_800_000_000.0
DAY = 86_400.0


def test_fresh_entry_is_served_without_upstream() -> None:
    """A stored entry younger than its TTL is served from the store, not revalidated."""
    d = decide(EntryFacts(validated_at=NOW - 3600, ttl_s=DAY), NOW, UpstreamFacts())
    assert d.action is Action.SERVE
    assert d.stale is False


def test_stale_entry_is_revalidated_when_upstream_usable() -> None:
    """An entry past its TTL is revalidated, and the answer is known to be stale until then."""
    d = decide(EntryFacts(validated_at=NOW - 2 * DAY, ttl_s=DAY), NOW, UpstreamFacts())
    assert d.action is Action.REVALIDATE
    assert d.stale is True


def test_stale_entry_served_stale_when_breaker_open() -> None:
    """With the pool offline, a stale entry is answered at once, flagged upstream_unavailable."""
    d = decide(EntryFacts(NOW - 2 * DAY, DAY), NOW, UpstreamFacts(offline=True))
    assert (d.action, d.stale, d.reason) == (Action.SERVE_STALE, True, "upstream_unavailable")


def test_stale_entry_served_stale_when_blocked_past_deadline() -> None:
    """A 429 block longer than the call's deadline serves stale with rate_limited and the wait."""
    d = decide(EntryFacts(NOW - 2 * DAY, DAY), NOW, UpstreamFacts(blocked_until=NOW + 30, deadline_left_s=5))
    assert d.action is Action.SERVE_STALE
    assert d.reason == "rate_limited"
    assert d.retry_after_s == 30


def test_short_block_serves_the_stale_entry_at_once() -> None:
    """A held stale entry under a block shorter than the deadline is answered now, no wait (issue 17, 3)."""
    d = decide(EntryFacts(NOW - 2 * DAY, DAY), NOW, UpstreamFacts(blocked_until=NOW + 1, deadline_left_s=5))
    assert (d.action, d.reason, d.retry_after_s) == (Action.SERVE_STALE, "rate_limited", 1)


def test_short_block_with_nothing_stored_still_fetches() -> None:
    """Nothing stored and a block that ends within the deadline: fetch (the budget waits out the block)."""
    d = decide(None, NOW, UpstreamFacts(blocked_until=NOW + 1, deadline_left_s=5))
    assert d.action is Action.FETCH


def test_missing_entry_is_fetched() -> None:
    """Nothing stored and upstream usable: fetch."""
    assert decide(None, NOW, UpstreamFacts()).action is Action.FETCH


def test_missing_entry_with_upstream_offline_is_a_declared_error() -> None:
    """Nothing stored and the breaker open: an error with reason upstream_unavailable, no request."""
    d = decide(None, NOW, UpstreamFacts(offline=True))
    assert (d.action, d.reason) == (Action.ERROR, "upstream_unavailable")


def test_missing_entry_while_blocked_reports_the_wait() -> None:
    """Nothing stored while the pool is blocked past the deadline: rate_limited with retry_after_s."""
    d = decide(None, NOW, UpstreamFacts(blocked_until=NOW + 60, deadline_left_s=5))
    assert (d.action, d.reason, d.retry_after_s) == (Action.ERROR, "rate_limited", 60)


def test_force_refresh_revalidates_fresh_entry() -> None:
    """force_refresh revalidates a fresh entry; the answer is not flagged stale."""
    d = decide(EntryFacts(NOW - 10, DAY), NOW, UpstreamFacts(), force_refresh=True)
    assert (d.action, d.stale) == (Action.REVALIDATE, False)


def test_no_deadline_left_serves_stale_with_timeout() -> None:
    """No time left in the call: a stale entry is served with request_timeout."""
    d = decide(EntryFacts(NOW - 2 * DAY, DAY), NOW, UpstreamFacts(deadline_left_s=0))
    assert (d.action, d.reason) == (Action.SERVE_STALE, "request_timeout")


def test_clock_behind_validated_at_is_not_fresh() -> None:
    """A clock that stepped back (validated_at 100 s in the future) makes the age unknown: revalidate.

    Within CLOCK_SKEW_S (5 s) of "now" a future validated_at is ordinary skew and still fresh.
    """
    facts = EntryFacts(NOW + 100, DAY)
    assert facts.age_s(NOW) == 0
    assert facts.fresh(NOW) is False
    assert decide(facts, NOW, UpstreamFacts()).action is Action.REVALIDATE
    assert EntryFacts(NOW + 2, DAY).fresh(NOW) is True
