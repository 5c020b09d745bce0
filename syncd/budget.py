"""The shared request budget: one token bucket per upstream pool, kept in the database.

Every process (daemon, each ``syncd mcp``, the CLI; on PostgreSQL, every process of every lab
workstation) takes tokens from the same rows inside one transaction per decision: on SQLite a
``BEGIN IMMEDIATE`` transaction, on PostgreSQL one that first locks the pool's row with
``SELECT ... FOR UPDATE`` (so concurrent takers queue on that row), so the sum of their requests
stays within the pool's rate (requests per second, ``per_s``), its ``burst`` and its ``in_flight``
limit (leases that expire, so a killed process frees its slot). A 429 blocks the pool for every
process until its wait is over. Repeated connection failures open the pool's breaker: while it is
open nobody calls upstream; when it ends, exactly one process gets the probe and the others keep
answering from the store.

Pools (DESIGN.md): ``crossref_single``, ``crossref_list``, ``zenodo_general``, ``zenodo_search``,
``doi``. Interactive calls may use the whole bucket; the daemon leaves ``daemon_reserve`` of it.

Clock: wall-clock ``time.time()`` (shared across processes; freezegun moves it in tests); a clock
that steps backwards refills nothing. Workstations sharing a PostgreSQL budget should keep their
clocks in sync (NTP): a clock running ahead refills no faster, but its 429 blocks end later.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, select, update

from syncd.config import POOLS, PoolLimits, Settings
from syncd.errors import BudgetExhausted, UpstreamOffline
from syncd.store.dialect import insert_ignore
from syncd.store.models import BudgetLease, BudgetPool
from syncd.store.repo import Store

__all__ = ["BREAKER_COOLDOWN_S", "BREAKER_THRESHOLD", "Budget", "Grant", "Lease", "PoolState"]

BREAKER_THRESHOLD = 5
"""Consecutive connection failures that open a pool's breaker."""
BREAKER_COOLDOWN_S = 30.0
"""Seconds a pool stays offline before one probe is let through."""
LEASE_TTL_S = 120.0
"""Seconds after which an in-flight lease of a vanished process is reclaimed."""


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
class Grant:
    """Outcome of one try: ``lease`` when granted, else ``wait_s`` seconds before a token frees."""

    lease: Lease | None
    wait_s: float
    probe: bool = False


@dataclass(frozen=True)
class Lease:
    """One granted request slot; release it when the response is in (or the request failed)."""

    id: str
    pool: str


class Budget:
    """The shared budget over a :class:`~syncd.store.repo.Store`.

    Args:
        store: the shared store.
        settings: pool limits and the daemon reserve.
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
        self._clock = clock
        self._sleep = sleep

    def clock(self) -> float:
        """Current wall-clock time in epoch seconds (looked up per call, so freezegun applies)."""
        return self._clock() if self._clock is not None else time.time()

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (real time unless a sleep function was injected)."""
        (self._sleep or time.sleep)(seconds)

    # --- state -----------------------------------------------------------------------------------

    def _row(self, conn: Any, pool: str, now: float) -> Any:
        """The pool's row, locked for this transaction (``FOR UPDATE``; created full when missing)."""
        limits = self.settings.pool_limits(pool)  # type: ignore[arg-type]
        table = BudgetPool.__table__
        locked = select(table).where(table.c.pool == pool).with_for_update()
        row = conn.execute(locked).first()
        if row is None:
            insert_ignore(
                conn,
                table,
                {
                    "pool": pool,
                    "tokens": float(limits.burst),
                    "updated_at": now,
                    "blocked_until": 0.0,
                    "failures": 0,
                    "offline_until": 0.0,
                },
            )
            row = conn.execute(locked).one()
        return row

    def _refilled(self, row: Any, limits: PoolLimits, now: float) -> float:
        elapsed = max(0.0, now - row.updated_at)
        return min(limits.burst, row.tokens + elapsed * limits.per_s)

    def state(self, pool: str) -> PoolState:
        """A snapshot of ``pool`` (tokens refilled to now; nothing is taken)."""
        now = self.clock()
        limits = self.settings.pool_limits(pool)  # type: ignore[arg-type]
        with self.store.write() as conn:
            row = self._row(conn, pool, now)
            in_flight = conn.execute(
                select(func.count())
                .select_from(BudgetLease)
                .where(BudgetLease.pool == pool, BudgetLease.expires_at > now)
            ).scalar_one()
            return PoolState(
                pool=pool,
                tokens=self._refilled(row, limits, now),
                limits=limits,
                blocked_until=row.blocked_until,
                offline_until=row.offline_until,
                failures=row.failures,
                in_flight=int(in_flight),
            )

    def states(self) -> list[PoolState]:
        """Snapshots of every pool, in DESIGN.md order."""
        return [self.state(p) for p in POOLS]

    # --- taking tokens ---------------------------------------------------------------------------

    def try_acquire(self, pool: str) -> Grant:
        """Take one token and one in-flight slot of ``pool`` if both are free now; never waits.

        Returns a :class:`Grant` with the lease, or with ``wait_s`` (seconds until the next try may
        succeed: the 429 block, the token refill, or a short poll for a slot).

        Raises:
            UpstreamOffline: the pool's breaker is open (``data["retry_after_s"]`` until the probe).
        """
        now = self.clock()
        limits = self.settings.pool_limits(pool)  # type: ignore[arg-type]
        floor = 0.0 if self.interactive else self.settings.budget.daemon_reserve * limits.burst
        with self.store.write() as conn:
            row = self._row(conn, pool, now)
            probe = False
            if row.offline_until > now:
                raise UpstreamOffline(
                    f"{pool} is offline after repeated failures",
                    retry_after_s=round(row.offline_until - now, 3),
                    pool=pool,
                )
            if row.failures >= BREAKER_THRESHOLD:
                # The breaker's cooldown is over: this caller is the one probe; hold the others off.
                probe = True
            if row.blocked_until > now:
                return Grant(None, row.blocked_until - now)
            tokens = self._refilled(row, limits, now)
            if tokens - 1.0 < floor:
                wait = (1.0 + floor - tokens) / limits.per_s
                conn.execute(
                    update(BudgetPool).where(BudgetPool.pool == pool).values(tokens=tokens, updated_at=now)
                )
                return Grant(None, wait)
            conn.execute(delete(BudgetLease).where(BudgetLease.pool == pool, BudgetLease.expires_at <= now))
            in_flight = conn.execute(
                select(func.count()).select_from(BudgetLease).where(BudgetLease.pool == pool)
            ).scalar_one()
            if in_flight >= limits.in_flight:
                return Grant(None, 0.05)
            lease = Lease(id=uuid.uuid4().hex, pool=pool)
            conn.execute(
                BudgetLease.__table__.insert().values(id=lease.id, pool=pool, expires_at=now + LEASE_TTL_S)
            )
            values: dict[str, Any] = {"tokens": tokens - 1.0, "updated_at": now}
            if probe:
                values["offline_until"] = now + BREAKER_COOLDOWN_S
            conn.execute(update(BudgetPool).where(BudgetPool.pool == pool).values(**values))
            return Grant(lease, 0.0, probe=probe)

    def acquire(self, pool: str, max_wait_s: float) -> Lease:
        """Take a token of ``pool``, waiting at most ``max_wait_s`` seconds for one.

        Raises:
            BudgetExhausted: no token within ``max_wait_s`` (reason ``rate_limited``,
                ``data["retry_after_s"]`` = the wait that would have been needed).
            UpstreamOffline: the pool's breaker is open.
        """
        start = time.monotonic()
        while True:
            grant = self.try_acquire(pool)
            if grant.lease is not None:
                return grant.lease
            left = max_wait_s - (time.monotonic() - start)
            if grant.wait_s > left:
                raise BudgetExhausted(
                    f"request budget of {pool} is spent for the current window",
                    retry_after_s=round(grant.wait_s, 3),
                    pool=pool,
                )
            self.sleep(max(0.001, grant.wait_s))

    def release(self, lease: Lease) -> None:
        """Free the in-flight slot of ``lease``."""
        with self.store.write() as conn:
            conn.execute(delete(BudgetLease).where(BudgetLease.id == lease.id))

    # --- what upstream said ------------------------------------------------------------------------

    def block(self, pool: str, seconds: float) -> None:
        """Block ``pool`` for every process for ``seconds`` (after a 429); never shortens a block."""
        now = self.clock()
        with self.store.write() as conn:
            row = self._row(conn, pool, now)
            until = max(row.blocked_until, now + max(0.0, seconds))
            conn.execute(
                update(BudgetPool)
                .where(BudgetPool.pool == pool)
                .values(blocked_until=until, tokens=0.0, updated_at=now)
            )

    def record_success(self, pool: str) -> None:
        """Upstream answered: close the breaker and reset the failure count."""
        now = self.clock()
        with self.store.write() as conn:
            row = self._row(conn, pool, now)
            if row.failures or row.offline_until:
                conn.execute(
                    update(BudgetPool).where(BudgetPool.pool == pool).values(failures=0, offline_until=0.0)
                )

    def record_failure(self, pool: str) -> bool:
        """Upstream could not be reached; returns True when this failure opened the breaker."""
        now = self.clock()
        with self.store.write() as conn:
            row = self._row(conn, pool, now)
            failures = row.failures + 1
            values: dict[str, Any] = {"failures": failures}
            opened = failures >= BREAKER_THRESHOLD
            if opened:
                values["offline_until"] = now + BREAKER_COOLDOWN_S
            conn.execute(update(BudgetPool).where(BudgetPool.pool == pool).values(**values))
            return opened

    def offline(self, pool: str) -> bool:
        """True while ``pool``'s breaker is open (read without taking anything)."""
        return self.state(pool).offline(self.clock())
