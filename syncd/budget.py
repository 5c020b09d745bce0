"""The shared request budget: one token bucket per upstream pool, kept in the database.

Every process (daemon, each ``syncd mcp``, the CLI; on PostgreSQL, every process of every lab
workstation) shares the same rows, so the sum of their requests stays within each pool's rate
(requests per second, ``per_s``), its ``burst`` and its ``in_flight`` limit. One upstream attempt
costs exactly two write transactions:

1. **take** (:meth:`Budget.try_acquire` / :meth:`Budget.acquire`): one token and one in-flight
   slot (a lease naming its process id and host, expiring at the holder's deadline plus
   :data:`LEASE_MARGIN_S`);
2. **release** (:meth:`Budget.release`): frees the slot and records what upstream did
   (:class:`Outcome`: answered, failed, timed out; a 429's block) in the same transaction.

:meth:`Budget.state` only reads (no write lock). Each write transaction is ``BEGIN IMMEDIATE`` on
SQLite; on PostgreSQL it first locks the pool's row (``SELECT ... FOR UPDATE``) so concurrent
takers queue on that row. The pool rows are created by migration 0003, never while serving.

A 429 blocks the pool for every process until its wait is over, and no wait is longer than
``budget.max_block_s``. Repeated connection failures open the pool's breaker: while it is open
nobody calls upstream; when it ends, exactly one process gets the probe and the others keep
answering from the store. :meth:`Budget.reset` clears blocks and breakers (``syncd cache budget
--reset``).

A lease is freed by its holder, or at the next take once it has expired or, on the same host, once
its process is gone (``kill(pid, 0)``), so a killed process never holds a slot past its deadline.
A lease whose request timed out is kept until it expires: upstream may still be working on it.

Pools (DESIGN.md): ``crossref_single``, ``crossref_list``, ``zenodo_general``, ``zenodo_search``,
``doi``. Interactive calls may use the whole bucket; the daemon leaves ``daemon_reserve`` of it.

Clock: wall-clock ``time.time()`` (shared across processes; freezegun moves it in tests), read
after the pool's row is locked. The bucket is monotonic: its timestamp never moves backwards, so a
clock that steps back (or a writer that read the clock before waiting for the lock) refills
nothing twice. Workstations sharing a PostgreSQL budget should keep their clocks in sync (NTP).
"""

from __future__ import annotations

import enum
import os
import socket
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, select, update

from syncd.config import POOLS, PoolLimits, Settings
from syncd.errors import BudgetExhausted, InvalidInput, StoreError, UpstreamOffline
from syncd.proc import pid_alive
from syncd.store.models import BudgetLease, BudgetPool
from syncd.store.repo import Store

__all__ = [
    "BREAKER_COOLDOWN_S",
    "BREAKER_THRESHOLD",
    "LEASE_MARGIN_S",
    "LEASE_TTL_S",
    "Budget",
    "Grant",
    "Lease",
    "Outcome",
    "PoolState",
]

BREAKER_THRESHOLD = 5
"""Consecutive connection failures that open a pool's breaker."""
BREAKER_COOLDOWN_S = 30.0
"""Seconds a pool stays offline before one probe is let through."""
LEASE_TTL_S = 120.0
"""Seconds a lease is held when the taker names no deadline (:meth:`Budget.try_acquire` alone)."""
LEASE_MARGIN_S = 1.0
"""Seconds a lease outlives its holder's deadline (the holder may still be closing the connection)."""
LEASE_POLL_S = 0.05
"""Seconds to wait before asking again when every in-flight slot is taken."""

_POOLS = BudgetPool.__table__
_LEASES = BudgetLease.__table__


class Outcome(enum.Enum):
    """What one upstream attempt came to, recorded when its lease is released."""

    ANSWERED = "answered"
    """Upstream answered (any HTTP status, 429 included): the breaker closes, failures reset."""
    FAILED = "failed"
    """No answer (connection refused, reset, broken body): one more failure towards the breaker."""
    TIMED_OUT = "timed_out"
    """No complete answer in time: a failure, and the slot stays taken until the lease expires."""
    NOT_SENT = "not_sent"
    """Nothing reached upstream: the slot is freed, nothing is recorded."""


@dataclass(frozen=True)
class PoolState:
    """Snapshot of one pool: ``tokens`` now (refilled), ``blocked_until``/``offline_until`` (epoch s)."""

    pool: str
    tokens: float
    limits: PoolLimits
    blocked_until: float
    offline_until: float
    failures: int
    in_flight: int

    def blocked_for(self, now: float) -> float:
        """Seconds until a 429 block ends (0 when not blocked)."""
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

    ``why`` names what was missing when refused: ``blocked`` (a 429), ``tokens`` (the bucket) or
    ``in_flight`` (every slot taken); ``probe`` is True for the one call let through a breaker.
    """

    lease: Lease | None
    wait_s: float
    probe: bool = False
    why: str = ""


class Budget:
    """The shared budget over a :class:`~syncd.store.repo.Store`.

    Args:
        store: the shared store.
        settings: pool limits, the daemon reserve and ``budget.max_block_s``.
        interactive: True for tool calls and the CLI (may use the whole bucket); False for the
            daemon, which leaves ``settings.budget.daemon_reserve`` of each bucket unused.
        clock: wall clock in epoch seconds (default ``time.time``, looked up per call).
        sleep: how to wait (default ``time.sleep``).
    """

    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        interactive: bool = True,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.interactive = interactive
        self.host = socket.gethostname()[:255]
        self._clock = clock
        self._sleep = sleep

    def clock(self) -> float:
        """Current wall-clock time in epoch seconds (looked up per call, so freezegun applies)."""
        return self._clock() if self._clock is not None else time.time()

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (real time unless a sleep function was injected)."""
        (self._sleep or time.sleep)(seconds)

    # --- rows --------------------------------------------------------------------------------------

    @staticmethod
    def _locked_row(conn: Connection, pool: str) -> Any:
        """The pool's row, locked for this transaction (``FOR UPDATE``; the migration created it).

        Raises:
            StoreError: the row is missing (a store not upgraded to migration 0003).
        """
        row = conn.execute(select(_POOLS).where(_POOLS.c.pool == pool).with_for_update()).first()
        if row is None:
            raise StoreError(f"budget pool {pool} missing from the store; run `syncd db upgrade`")
        return row

    def _limits(self, pool: str) -> PoolLimits:
        return self.settings.pool_limits(pool)  # type: ignore[arg-type]

    def _floor(self, limits: PoolLimits) -> float:
        """Tokens this taker must leave in the bucket (the daemon's reserve for interactive calls)."""
        return 0.0 if self.interactive else self.settings.budget.daemon_reserve * limits.burst

    @staticmethod
    def _refilled(row: Any, limits: PoolLimits, now: float) -> float:
        """Tokens at ``now``: never a refill for time before ``updated_at`` (monotonic bucket)."""
        elapsed = max(0.0, now - row.updated_at)
        return min(limits.burst, row.tokens + elapsed * limits.per_s)

    def _blocked_until(self, row: Any) -> float:
        """The row's 429 block, cut to ``max_block_s`` after it was set (heals over-long old blocks)."""
        return min(row.blocked_until, row.updated_at + self.settings.budget.max_block_s)

    def _holder_gone(self, lease: Any) -> bool:
        """True when ``lease`` belongs to a process of this host that no longer exists."""
        if lease.pid is None or lease.host != self.host or lease.pid == os.getpid():
            return False
        return not pid_alive(int(lease.pid))

    def _live(self, leases: Sequence[Any], now: float) -> tuple[list[Any], list[str]]:
        """Split ``leases`` into the live ones and the ids of those to free (expired, holder gone)."""
        live: list[Any] = []
        gone: list[str] = []
        for lease in leases:
            if lease.expires_at <= now or self._holder_gone(lease):
                gone.append(lease.id)
            else:
                live.append(lease)
        return live, gone

    # --- state -----------------------------------------------------------------------------------

    def state(self, pool: str) -> PoolState:
        """A snapshot of ``pool`` (tokens refilled to now; nothing is taken), read without the write lock."""
        limits = self._limits(pool)
        with self.store.read() as conn:
            row = conn.execute(select(_POOLS).where(_POOLS.c.pool == pool)).first()
            leases = conn.execute(
                select(_LEASES.c.id, _LEASES.c.expires_at, _LEASES.c.pid, _LEASES.c.host).where(
                    _LEASES.c.pool == pool
                )
            ).all()
        now = self.clock()
        if row is None:  # not upgraded yet: report the full bucket a first take would find
            return PoolState(pool, float(limits.burst), limits, 0.0, 0.0, 0, 0)
        live, _ = self._live(leases, now)
        return PoolState(
            pool=pool,
            tokens=self._refilled(row, limits, now),
            limits=limits,
            blocked_until=self._blocked_until(row),
            offline_until=row.offline_until,
            failures=row.failures,
            in_flight=len(live),
        )

    def states(self) -> list[PoolState]:
        """Snapshots of every pool, in DESIGN.md order."""
        return [self.state(p) for p in POOLS]

    def offline(self, pool: str) -> bool:
        """True while ``pool``'s breaker is open (read without taking anything)."""
        return self.state(pool).offline(self.clock())

    # --- taking a slot -----------------------------------------------------------------------------

    def try_acquire(self, pool: str, hold_s: float | None = None) -> Grant:
        """Take one token and one in-flight slot of ``pool`` if both are free now; never waits.

        One write transaction. Leases that expired, or whose process on this host is gone, are
        freed first.

        Args:
            pool: the pool name.
            hold_s: the longest the caller may hold the slot (its remaining deadline); the lease
                expires ``hold_s + LEASE_MARGIN_S`` from now (default hold :data:`LEASE_TTL_S`).

        Returns:
            A :class:`Grant` with the lease, or with ``wait_s`` (seconds until the next try may
            succeed: the 429 block, the token refill, or a short poll for a slot).

        Raises:
            UpstreamOffline: the pool's breaker is open (``data["retry_after_s"]`` until the probe).
            StoreError: the store cannot be written.
        """
        limits = self._limits(pool)
        floor = self._floor(limits)
        hold = LEASE_TTL_S if hold_s is None else max(0.0, hold_s)
        with self.store.write() as conn:
            row = self._locked_row(conn, pool)
            now = self.clock()  # read under the lock: no writer can have moved past it since
            if row.offline_until > now:
                raise UpstreamOffline(
                    f"{pool} is offline after repeated failures",
                    retry_after_s=round(row.offline_until - now, 3),
                    pool=pool,
                )
            # the breaker's cooldown is over: this caller is the one probe; the grant holds the others off
            probe = row.failures >= BREAKER_THRESHOLD
            blocked_until = self._blocked_until(row)
            if blocked_until > now:
                return Grant(None, blocked_until - now, why="blocked")
            tokens = self._refilled(row, limits, now)
            if tokens - 1.0 < floor:
                return Grant(None, (1.0 + floor - tokens) / limits.per_s, why="tokens")
            leases = conn.execute(
                select(_LEASES.c.id, _LEASES.c.expires_at, _LEASES.c.pid, _LEASES.c.host).where(
                    _LEASES.c.pool == pool
                )
            ).all()
            live, gone = self._live(leases, now)
            if gone:
                conn.execute(delete(BudgetLease).where(BudgetLease.id.in_(gone)))
            if len(live) >= limits.in_flight:
                return Grant(None, LEASE_POLL_S, why="in_flight")
            lease = Lease(id=uuid.uuid4().hex, pool=pool, expires_at=now + hold + LEASE_MARGIN_S)
            conn.execute(
                _LEASES.insert().values(
                    id=lease.id, pool=pool, expires_at=lease.expires_at, pid=os.getpid(), host=self.host
                )
            )
            values: dict[str, Any] = {"tokens": tokens - 1.0, "updated_at": max(row.updated_at, now)}
            if probe:
                values["offline_until"] = now + BREAKER_COOLDOWN_S
            conn.execute(update(BudgetPool).where(BudgetPool.pool == pool).values(**values))
            return Grant(lease, 0.0, probe=probe)

    def acquire(self, pool: str, max_wait_s: float) -> Lease:
        """Take a token and a slot of ``pool``, waiting at most ``max_wait_s`` seconds for them.

        The lease is held at most the time left of ``max_wait_s`` when it is granted (the caller's
        deadline), plus :data:`LEASE_MARGIN_S`. After a refusal, a waiter looks with a read
        (:meth:`state`) and takes the write lock again only when a take may succeed, so callers
        queueing for a slot or a token do not queue on the database's writer.

        Raises:
            BudgetExhausted: nothing free within ``max_wait_s`` (reason ``rate_limited``,
                ``data["retry_after_s"]`` = the wait that would have been needed).
            UpstreamOffline: the pool's breaker is open.
            StoreError: the store cannot be written.
        """
        start = time.monotonic()
        refused = False
        while True:
            left = max_wait_s - (time.monotonic() - start)
            grant = self._peek(pool) if refused else None
            if grant is None:
                grant = self.try_acquire(pool, hold_s=left)
                if grant.lease is not None:
                    return grant.lease
            refused = True
            left = max_wait_s - (time.monotonic() - start)
            if grant.wait_s > left:
                raise BudgetExhausted(
                    self._refusal(pool, grant), retry_after_s=round(grant.wait_s, 3), pool=pool
                )
            self.sleep(max(0.001, grant.wait_s))

    def _peek(self, pool: str) -> Grant | None:
        """The refusal a take would meet now, read without the write lock; None when it may succeed."""
        state = self.state(pool)
        now = self.clock()
        if state.offline(now):
            return None  # the take raises UpstreamOffline with its own retry_after_s
        floor = self._floor(state.limits)
        if state.blocked_until > now:
            return Grant(None, state.blocked_until - now, why="blocked")
        if state.tokens - 1.0 < floor:
            return Grant(None, (1.0 + floor - state.tokens) / state.limits.per_s, why="tokens")
        if state.in_flight >= state.limits.in_flight:
            return Grant(None, LEASE_POLL_S, why="in_flight")
        return None

    def _refusal(self, pool: str, grant: Grant) -> str:
        if grant.why == "blocked":
            return f"{pool} is blocked after upstream answered HTTP 429"
        if grant.why == "in_flight":
            return f"all {self._limits(pool).in_flight} in-flight request slots of {pool} are taken"
        return f"request budget of {pool} is spent for the current window"

    # --- releasing it, with what upstream said ---------------------------------------------------

    def release(self, lease: Lease, outcome: Outcome = Outcome.NOT_SENT, *, block_s: float = 0.0) -> bool:
        """Free ``lease`` and record ``outcome`` (and a 429's ``block_s``) in one write transaction.

        A ``TIMED_OUT`` lease stays taken until it expires (upstream may still be working on it).
        ``block_s`` > 0 blocks the pool for every process (cut to ``budget.max_block_s``; never
        shortens a block in force).

        Returns:
            True when this outcome opened the breaker.

        Raises:
            StoreError: the store cannot be written.
        """
        with self.store.write() as conn:
            row = self._locked_row(conn, lease.pool)  # pool row first, as a take does (no deadlock)
            if outcome is not Outcome.TIMED_OUT:
                conn.execute(delete(BudgetLease).where(BudgetLease.id == lease.id))
            return self._record(conn, row, outcome, block_s)

    def _record(self, conn: Connection, row: Any, outcome: Outcome, block_s: float) -> bool:
        """Write ``outcome`` and ``block_s`` into the locked pool ``row``; True if the breaker opened."""
        now = self.clock()
        values: dict[str, Any] = {}
        opened = False
        if outcome is Outcome.ANSWERED and (row.failures or row.offline_until):
            values.update(failures=0, offline_until=0.0)
        elif outcome in (Outcome.FAILED, Outcome.TIMED_OUT):
            values["failures"] = row.failures + 1
            if row.failures + 1 >= BREAKER_THRESHOLD:
                values["offline_until"] = now + BREAKER_COOLDOWN_S
                opened = True
        if block_s > 0:
            cap = self.settings.budget.max_block_s
            current = self._blocked_until(row)
            values.update(
                blocked_until=max(current, now + min(block_s, cap)),
                tokens=0.0,
                updated_at=max(row.updated_at, now),
            )
        if values:
            conn.execute(update(BudgetPool).where(BudgetPool.pool == row.pool).values(**values))
        return opened

    def _record_alone(self, pool: str, outcome: Outcome, block_s: float = 0.0) -> bool:
        with self.store.write() as conn:
            return self._record(conn, self._locked_row(conn, pool), outcome, block_s)

    def block(self, pool: str, seconds: float) -> None:
        """Block ``pool`` for every process for ``seconds`` (after a 429; cut to ``max_block_s``)."""
        self._record_alone(pool, Outcome.NOT_SENT, max(0.0, seconds))

    def record_success(self, pool: str) -> None:
        """Upstream answered: close the breaker and reset the failure count."""
        self._record_alone(pool, Outcome.ANSWERED)

    def record_failure(self, pool: str) -> bool:
        """Upstream could not be reached; returns True when this failure opened the breaker."""
        return self._record_alone(pool, Outcome.FAILED)

    def reset(self, pool: str | None = None) -> list[str]:
        """Clear the 429 block and the breaker of ``pool`` (every pool when None); one write transaction.

        Returns:
            The pools reset.

        Raises:
            InvalidInput: ``pool`` is not a budget pool (reason ``invalid_parameter``).
            StoreError: the store cannot be written.
        """
        if pool is not None and pool not in POOLS:
            raise InvalidInput(f"unknown budget pool {pool!r}; expected one of {', '.join(POOLS)}")
        pools = list(POOLS) if pool is None else [pool]
        with self.store.write() as conn:
            conn.execute(
                update(BudgetPool)
                .where(BudgetPool.pool.in_(pools))
                .values(blocked_until=0.0, failures=0, offline_until=0.0)
            )
        return pools
