"""The local-first decision, as one pure function: stored entry + now + settings -> what to do.

Like requests-cache's ``CacheActions``, this module does no I/O; :mod:`syncd.cache` carries the
decision out. Inputs are plain values so every branch is tested without a database or a network.

Actions:
    SERVE       the stored entry is fresh: answer from the store, no request.
    REVALIDATE  the stored entry is past its lifetime: ask upstream (conditionally) within the
                call's deadline; on failure answer the stored entry flagged stale (stale-if-error).
    SERVE_STALE the stored entry is past its lifetime and upstream cannot be used now (breaker open,
                pool blocked by a 429, no time left): answer it flagged stale with ``upstream_error``.
    FETCH       nothing stored: fetch from upstream within the budget and the deadline.
    ERROR       nothing stored and upstream cannot be used: a declared error (``reason``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["Action", "Decision", "EntryFacts", "UpstreamFacts", "decide"]


class Action(enum.Enum):
    """What the local-first path does for one lookup."""

    SERVE = "serve"
    REVALIDATE = "revalidate"
    SERVE_STALE = "serve_stale"
    FETCH = "fetch"
    ERROR = "error"


@dataclass(frozen=True)
class EntryFacts:
    """What the policy needs to know about a stored entry (epoch seconds; ``ttl_s`` in seconds)."""

    validated_at: float
    ttl_s: float

    def age_s(self, now: float) -> float:
        """Seconds since upstream last confirmed the entry (never negative)."""
        return max(0.0, now - self.validated_at)

    def fresh(self, now: float) -> bool:
        """True while the entry is within its lifetime."""
        return self.age_s(now) < self.ttl_s


@dataclass(frozen=True)
class UpstreamFacts:
    """State of the upstream pool: breaker open, 429 block end (epoch seconds), time left (seconds)."""

    offline: bool = False
    blocked_until: float = 0.0
    deadline_left_s: float = 5.0


@dataclass(frozen=True)
class Decision:
    """The outcome of :func:`decide`.

    ``action``, whether the answer will be flagged ``stale``, and for SERVE_STALE and ERROR the
    ``reason`` code (``upstream_unavailable``, ``rate_limited``, ``request_timeout``)
    with ``retry_after_s`` when a wait is known.
    """

    action: Action
    stale: bool = False
    reason: str | None = None
    retry_after_s: float | None = None


def decide(
    entry: EntryFacts | None,
    now: float,
    upstream: UpstreamFacts,
    *,
    force_refresh: bool = False,
) -> Decision:
    """Choose serve / revalidate / serve-stale / fetch / error for one lookup.

    Args:
        entry: the stored entry's facts, or None when nothing is stored.
        now: current time, epoch seconds.
        upstream: the pool's breaker, 429 block and the call's remaining deadline.
        force_refresh: revalidate even a fresh entry (``syncd cache refresh``).
    """
    blocked_for = max(0.0, upstream.blocked_until - now)
    unusable_reason: str | None = None
    retry_after: float | None = None
    if upstream.offline:
        unusable_reason = "upstream_unavailable"
    elif blocked_for > 0 and blocked_for >= upstream.deadline_left_s:
        unusable_reason, retry_after = "rate_limited", round(blocked_for, 3)
    elif upstream.deadline_left_s <= 0:
        unusable_reason = "request_timeout"

    if entry is None:
        if unusable_reason is not None:
            return Decision(Action.ERROR, reason=unusable_reason, retry_after_s=retry_after)
        return Decision(Action.FETCH)
    if entry.fresh(now) and not force_refresh:
        return Decision(Action.SERVE)
    stale = not entry.fresh(now)
    if unusable_reason is not None:
        return Decision(Action.SERVE_STALE, stale=stale, reason=unusable_reason, retry_after_s=retry_after)
    return Decision(Action.REVALIDATE, stale=stale)
