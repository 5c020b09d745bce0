"""The shared budget's values and the pure rules reading a pool's row (:mod:`~syncd.budget.buckets`).

Values: :class:`Outcome` (what one attempt came to), :class:`Announcement` (what one answer's headers
said) and :class:`Announced` (an announcement in force), :class:`PoolState`, :class:`Lease`,
:class:`Grant`. Rules, pure functions of a ``budget_pools`` row and the clock (epoch seconds):
the bucket's refill (:func:`refilled`, monotonic within :data:`CLOCK_STEP_S`), the clamps of what a
clock that ran ahead wrote (:func:`blocked_until`, :func:`offline_until`, :func:`healed`), the
announcement in force (:func:`announced`), the lower of the configured and the announced limits
(:func:`effective_limits`), the daemon's share (:func:`daemon_floor`, :func:`window_cap`), the pause
before upstream's window runs dry (:func:`pause_s`) and the refusal a take meets (:func:`refusal_of`,
:func:`refusal_message`).
"""

from __future__ import annotations

import collections
import enum
import math
import threading
from dataclasses import dataclass
from typing import Any

from syncd.budget.pools import PoolLimits

__all__ = [
    "BREAKER_COOLDOWN_S",
    "BREAKER_THRESHOLD",
    "CLOCK_STEP_S",
    "LEASE_MARGIN_S",
    "LEASE_POLL_S",
    "LEASE_TTL_S",
    "MAX_LEASE_S",
    "Announced",
    "Announcement",
    "Grant",
    "Lease",
    "Outcome",
    "PoolState",
    "SendTally",
    "announced",
    "announcement_values",
    "blocked_until",
    "counter_values",
    "daemon_floor",
    "effective_limits",
    "healed",
    "offline_until",
    "pause_s",
    "refilled",
    "refusal_message",
    "refusal_of",
    "stamp",
    "window_cap",
]

BREAKER_THRESHOLD = 5
"""Consecutive connection failures that open a pool's breaker."""
BREAKER_COOLDOWN_S = 30.0
"""Seconds a pool stays offline before one probe is let through."""
LEASE_TTL_S = 120.0
"""Seconds a lease is held when the taker names no deadline (:meth:`Budget.try_acquire` alone)."""
MAX_LEASE_S = 600.0
"""Longest a lease is held, whatever the taker's deadline (seconds)."""
LEASE_MARGIN_S = 1.0
"""Seconds a lease outlives its holder's deadline (the holder may still be closing the connection)."""
LEASE_POLL_S = 0.05
"""Seconds to wait before asking again when every in-flight slot is taken."""
CLOCK_STEP_S = 60.0
"""A stored timestamp more than this many seconds ahead of now was written by a clock that ran ahead
and was corrected since: it is clamped to now (see :mod:`syncd.budget.buckets`). Smaller steps back keep the
bucket monotonic."""


class Outcome(enum.Enum):
    """What one upstream attempt came to, recorded when its lease is released."""

    ANSWERED = "answered"
    """Upstream answered (any HTTP status, 429 included): the breaker closes, failures reset."""
    FAILED = "failed"
    """No usable answer (connection refused or reset, a TLS failure, a body that cannot be decoded, a
    redirect loop): one more failure towards the breaker."""
    TIMED_OUT = "timed_out"
    """No complete answer in time: a failure, and the slot stays taken until the lease expires."""
    NOT_SENT = "not_sent"
    """Nothing reached upstream: the slot and its send are freed, nothing is recorded."""


@dataclass(frozen=True)
class Announcement:
    """What one answer's rate-limit headers said about its pool (None: not said).

    As read by :func:`syncd.upstream.limits.read_announcement`: ``limit`` requests per
    ``interval_s`` seconds; ``in_flight`` concurrent requests (``x-concurrency-limit``); ``api_pool``
    Crossref's pool name (``polite-single``...); ``remaining`` requests left in upstream's window,
    which resets ``reset_s`` seconds after the answer; ``headers`` the rate-limit headers as received
    (``name: value; ...``, bounded).
    """

    limit: int | None = None
    interval_s: float | None = None
    in_flight: int | None = None
    api_pool: str | None = None
    remaining: int | None = None
    reset_s: float | None = None
    headers: str = ""

    @property
    def empty(self) -> bool:
        """True when the answer announced nothing."""
        return (
            self.limit is None and self.in_flight is None and self.api_pool is None and self.remaining is None
        )


@dataclass(frozen=True)
class Announced:
    """An announcement as stored for a pool and still in force (:class:`Announcement` plus when).

    ``at``: when the answer came (epoch s); ``expires_at``: when it stops ruling (``at`` +
    ``budget.announce_ttl_s``); ``reset_at``: the end of upstream's window (epoch s) if announced.
    """

    limit: int | None
    interval_s: float | None
    in_flight: int | None
    api_pool: str | None
    remaining: int | None
    reset_at: float | None
    headers: str
    at: float
    expires_at: float


@dataclass(frozen=True)
class PoolState:
    """Snapshot of one pool at ``now``.

    ``tokens`` (refilled to now), ``limits`` the effective limits (configured, lowered by what upstream
    announced), ``configured`` the settings' limits, ``blocked_until``/``offline_until`` (epoch s, clamped
    to the clock), ``block_reason`` (``429``/``remaining``), ``failures``, ``in_flight`` (live leases of
    the pool). ``announced``: the announcement in force, if any. ``window_limit`` sends at most in any
    ``window_s`` seconds (an announced limit; None: no window); ``window_sends`` the send times in the
    current window, newest first (at most ``window_limit``; a send is dated by when its request left,
    and one still in flight past the window as leaving the window a poll from now: it counts until it
    is released). ``group``: the concurrency group, its
    live leases ``group_in_flight`` and limit ``group_limit``.
    """

    pool: str
    tokens: float
    limits: PoolLimits
    blocked_until: float
    offline_until: float
    failures: int
    in_flight: int
    configured: PoolLimits | None = None
    block_reason: str | None = None
    announced: Announced | None = None
    window_limit: int | None = None
    window_s: float = 0.0
    window_sends: tuple[float, ...] = ()
    group: str | None = None
    group_in_flight: int = 0
    group_limit: int | None = None

    def blocked_for(self, now: float) -> float:
        """Seconds until a 429 block (or a pause before upstream runs dry) ends (0 when not blocked)."""
        return max(0.0, self.blocked_until - now)

    def offline(self, now: float) -> bool:
        """True while the breaker is open."""
        return self.offline_until > now


@dataclass(frozen=True)
class Lease:
    """One granted request slot; release it when the response is in (or the request failed).

    ``expires_at`` (epoch seconds): when any later take may free it, if its holder has not.
    """

    id: str
    pool: str
    expires_at: float = 0.0


@dataclass(frozen=True)
class Grant:
    """Outcome of one try: ``lease`` when granted, else ``wait_s`` seconds before a token frees.

    ``why`` names what was missing when refused: ``blocked`` (a 429), ``paused`` (upstream's window
    nearly spent), ``tokens`` (the bucket), ``window`` (the announced requests per interval),
    ``in_flight`` (every slot of the pool taken) or ``group_in_flight`` (every slot of its
    concurrency group taken); ``probe`` is True for the one call let through a breaker.
    """

    lease: Lease | None
    wait_s: float
    probe: bool = False
    why: str = ""


def effective_limits(configured: PoolLimits, said: Announced | None, margin_s: float) -> PoolLimits:
    """The lower of the ``configured`` limits and those ``said`` (paced over ``interval + margin_s``).

    ``N`` per ``I`` s: at most ``N / (I + margin_s)`` requests/second, a burst of at most ``N``; an
    announced concurrency caps ``in_flight``. Never under 1 request in flight or a burst of 1.
    """
    if said is None:
        return configured
    per_s, burst, in_flight = configured.per_s, configured.burst, configured.in_flight
    if said.limit is not None and said.interval_s:
        per_s = min(per_s, said.limit / (said.interval_s + margin_s))
        burst = max(1.0, min(burst, float(said.limit)))
    if said.in_flight is not None:
        in_flight = max(1, min(in_flight, said.in_flight))
    return PoolLimits(per_s=per_s, burst=burst, in_flight=in_flight)


def stamp(row: Any, now: float) -> float:
    """The bucket's timestamp as it counts now: ``updated_at``, or now when it is a clock step ahead."""
    return now if row.updated_at > now + CLOCK_STEP_S else float(row.updated_at)


def refilled(row: Any, limits: PoolLimits, now: float) -> float:
    """Tokens at ``now``: never a refill for time before ``updated_at`` (monotonic bucket)."""
    elapsed = max(0.0, now - stamp(row, now))
    return float(min(limits.burst, row.tokens + elapsed * limits.per_s))


def blocked_until(row: Any, now: float, max_block_s: float) -> float:
    """The row's 429 block or pause (epoch s), never more than ``max_block_s`` from now.

    One ending further ahead was written by a clock that ran ahead (void: 0), or set under a longer
    ``max_block_s`` (cut to ``max_block_s`` after it was set).
    """
    if row.blocked_until <= now + max_block_s:
        return float(row.blocked_until)
    if row.updated_at > now + CLOCK_STEP_S:
        return 0.0
    return float(min(row.blocked_until, row.updated_at + max_block_s))


def offline_until(row: Any, now: float) -> float:
    """The row's open breaker (epoch s); one ending past a cooldown from now is void (clock ahead)."""
    return float(row.offline_until) if row.offline_until <= now + BREAKER_COOLDOWN_S else 0.0


def announced(row: Any, now: float, ttl_s: float) -> Announced | None:
    """The announcement stored on ``row`` if in force: said less than ``ttl_s`` ago, not dated ahead."""
    at = getattr(row, "announced_at", None)
    if at is None or at <= now - ttl_s or at > now + CLOCK_STEP_S:
        return None
    return Announced(
        limit=row.announced_limit,
        interval_s=row.announced_interval_s,
        in_flight=row.announced_in_flight,
        api_pool=row.announced_pool,
        remaining=row.announced_remaining,
        reset_at=row.announced_reset_at,
        headers=row.announced_headers or "",
        at=at,
        expires_at=at + ttl_s,
    )


def healed(row: Any, now: float, max_block_s: float) -> dict[str, Any]:
    """The columns of ``row`` to write back clamped (what a clock that ran ahead left); empty if none."""
    values: dict[str, Any] = {}
    if row.blocked_until > now + max_block_s:
        values["blocked_until"] = blocked_until(row, now, max_block_s)
    if row.offline_until > now + BREAKER_COOLDOWN_S:
        values["offline_until"] = offline_until(row, now)
    if row.updated_at > now + CLOCK_STEP_S:
        values["updated_at"] = now
    if row.announced_at is not None and row.announced_at > now + CLOCK_STEP_S:
        values["announced_at"] = None
    return values


def announcement_values(said: Announcement, now: float) -> dict[str, Any]:
    """The ``budget_pools`` columns of an announcement received at ``now``."""
    return {
        "announced_at": now,
        "announced_limit": said.limit,
        "announced_interval_s": said.interval_s,
        "announced_in_flight": said.in_flight,
        "announced_pool": said.api_pool,
        "announced_remaining": said.remaining,
        "announced_reset_at": None if said.reset_s is None else now + said.reset_s,
        "announced_headers": said.headers[:512] or None,
    }


def daemon_floor(limits: PoolLimits, reserve: float) -> float:
    """Tokens the daemon leaves in the bucket for interactive calls: ``reserve`` of the burst.

    Never more than ``burst - 1``: the daemon can always take from a full bucket, even of burst 1.
    """
    return max(0.0, min(reserve * limits.burst, limits.burst - 1.0))


def window_cap(limit: int, reserve: float) -> int:
    """Sends the daemon may find in an announced window of ``limit`` before it waits (leaving ``reserve``)."""
    return max(1, limit - math.ceil(reserve * limit))


def refusal_of(state: PoolState, now: float, floor: float, cap: int | None) -> Grant | None:
    """The refusal a take meets in ``state`` (breaker aside), or None when it may be granted.

    ``floor``: tokens the taker leaves; ``cap``: sends it may find in the window (None: the
    announced limit). A block comes first; of the bucket and the window, the one that frees last;
    then the pool's slots, then its group's.
    """
    if state.blocked_until > now:
        why = "paused" if state.block_reason == "remaining" else "blocked"
        return Grant(None, state.blocked_until - now, why=why)
    waits: list[Grant] = []
    if state.tokens - 1.0 < floor:
        waits.append(Grant(None, (1.0 + floor - state.tokens) / state.limits.per_s, why="tokens"))
    if state.window_limit is not None:
        most = state.window_limit if cap is None else cap
        if len(state.window_sends) >= most:
            frees_at = state.window_sends[most - 1] + state.window_s
            waits.append(Grant(None, max(0.001, frees_at - now), why="window"))
    if waits:
        return max(waits, key=lambda grant: grant.wait_s)
    if state.in_flight >= state.limits.in_flight:
        return Grant(None, LEASE_POLL_S, why="in_flight")
    if state.group_limit is not None and state.group_in_flight >= state.group_limit:
        return Grant(None, LEASE_POLL_S, why="group_in_flight")
    return None


def pause_s(said: Announcement, in_flight: int) -> float:
    """Seconds to pause a pool after ``said``: until its reset once ``remaining`` is low, else 0.

    Low: at or under the pool's in-flight limit ``in_flight`` (lowered by an announced concurrency):
    the requests other processes may have on their way. Without a reset, the announced interval (else
    a minute).
    """
    if said.remaining is None:
        return 0.0
    if said.remaining > min(in_flight, said.in_flight or in_flight):
        return 0.0
    if said.reset_s is not None:
        return said.reset_s
    return said.interval_s or 60.0


def refusal_message(pool: str, grant: Grant, state: PoolState, service: str) -> str:
    """What a refused take says (a :class:`~syncd.errors.BudgetExhausted` message) for ``grant.why``.

    ``service``: the public service behind ``pool`` (:meth:`syncd.budget.pools.Pools.service`), named when
    the pools of its concurrency group are full together.
    """
    if grant.why == "blocked":
        return f"{pool} is blocked after upstream answered HTTP 429"
    if grant.why == "paused":
        return f"{pool} is paused: upstream said its request window is nearly spent, until it resets"
    if grant.why == "in_flight":
        return f"all {state.limits.in_flight} in-flight request slots of {pool} are taken"
    if grant.why == "group_in_flight":
        return (
            f"all {state.group_limit} in-flight {service} request slots are taken (its pools count together)"
        )
    if grant.why == "window":
        said = state.announced
        per = f"{said.limit} per {said.interval_s:g} s" if said and said.interval_s else "its limit"
        return f"{pool} has sent the {per} upstream announces for the current window"
    return f"request budget of {pool} is spent for the current window"


def counter_values(outcome: Outcome, block_s: float, requests: Any, rate_limited: Any) -> dict[str, Any]:
    """The ``budget_pools`` counter updates (migration 0011) of one released attempt.

    An attempt that reached upstream (any outcome but ``NOT_SENT``) adds one to ``requests_total``; a
    429 (an answer that carries a block) one to ``rate_limited_total``. ``requests`` and
    ``rate_limited`` are the two columns (SQL expressions ``column + 1`` are returned).
    """
    if outcome is Outcome.NOT_SENT:
        return {}
    values: dict[str, Any] = {"requests_total": requests + 1}
    if outcome is Outcome.ANSWERED and block_s > 0:
        values["rate_limited_total"] = rate_limited + 1
    return values


class SendTally:
    """Requests one process let reach upstream, per pool (thread-safe): what a command reports sent.

    Counts every attempt but ``NOT_SENT`` (answered, failed or timed out, retries included).
    """

    def __init__(self) -> None:
        self._counts: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()

    def add(self, pool: str, outcome: Outcome) -> None:
        """Count one released attempt of ``pool`` (nothing for ``NOT_SENT``)."""
        if outcome is not Outcome.NOT_SENT:
            with self._lock:
                self._counts[pool] += 1

    def of(self, pool: str) -> int:
        """Requests of ``pool`` so far."""
        with self._lock:
            return self._counts[pool]

    def total(self) -> int:
        """Requests of every pool together."""
        with self._lock:
            return sum(self._counts.values())
