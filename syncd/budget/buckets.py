"""The shared request budget: one token bucket per upstream pool, kept in the database.

Every process (daemon, each ``syncd mcp``, the CLI; on PostgreSQL, every process of every lab
workstation) shares the same rows, so the sum of their requests stays within each pool's rate
(requests per second, ``per_s``), its ``burst`` and its ``in_flight`` limit. One upstream attempt
costs exactly two write transactions:

1. **take** (:meth:`Budget.try_acquire` / :meth:`Budget.acquire`): one token and one in-flight
   slot (a lease naming its process id and host, expiring at the holder's deadline plus
   :data:`LEASE_MARGIN_S`), logged as a send (``budget_sends``);
2. **release** (:meth:`Budget.release`): frees the slot and records what upstream did
   (:class:`Outcome`: answered, failed, timed out; a 429's block; the limits its headers announced,
   :class:`Announcement`) in the same transaction.

:meth:`Budget.state` only reads (no write lock). Each write transaction is ``BEGIN IMMEDIATE`` on
SQLite; on PostgreSQL it first locks the pool's row (``SELECT ... FOR UPDATE``) so concurrent
takers queue on that row; a take of a pool of a concurrency group (:class:`~syncd.budget.pools.Group`)
locks the rows of the whole group in one statement (in pool-name order), so the group's shared
in-flight count is exact; a release locks its own row only. A declared pool's missing row is made
by the write that needs it (:func:`syncd.budget.sql.create_rows`): a new pool needs no migration.

**What upstream announces rules.** Each answer's rate-limit headers (Crossref ``x-rate-limit-limit``
/ ``-interval``, ``x-concurrency-limit``, ``x-api-pool``; Zenodo ``X-RateLimit-Limit/-Remaining/
-Reset``; read by :mod:`syncd.upstream.limits`) are stored on the pool's row. For
``budget.announce_ttl_s`` after the last answer that said it, the effective limits are the lower of
the configured and the announced ones:

* ``N`` requests per ``I`` seconds: no window of ``I + budget.pace_margin_s`` seconds holds more
  than ``N`` sends of the pool (a sliding window over ``budget_sends``, every process counted; the
  margin absorbs the delay between a send and the request's arrival, so jittered arrivals stay
  under ``N`` in every ``I``); the bucket's rate is cut to ``N / (I + margin)``, its burst to ``N``.
  A send is dated by the moment its request left (``sent_at``, given to :meth:`Budget.release`;
  until then by its take), not by its take alone: a request that left late (a busy machine, a slow
  commit between take and send) arrives late and counts where upstream counts it. A send still
  in flight after the window has slid past its take counts until it is released (it may arrive
  any moment), so no sequence of takes puts ``N + 1`` arrivals in any ``I``;
* a concurrency limit caps the pool's in-flight slots and, for Crossref, the in-flight requests of
  ``crossref_single`` and ``crossref_list`` together (:meth:`~syncd.budget.pools.Pools.group_in_flight`);
* ``remaining`` at or under the pool's in-flight limit pauses the pool until the announced reset
  (``block_reason = "remaining"``), before upstream runs dry and answers 429.

An expired announcement is ignored (a raised limit is picked up from the next answer; a lowered one
stops ruling once nobody has been told it for a while).

A 429 blocks the pool for every process until its wait is over, and no wait is longer than
``budget.max_block_s``. Repeated connection failures open the pool's breaker: while it is open
nobody calls upstream; when it ends, exactly one process gets the probe and the others keep
answering from the store. :meth:`Budget.reset` clears blocks and breakers and fills the bucket
(``syncd cache budget --reset``).

A lease is freed by its holder, or at the next take once it has expired or, on the same host, once
its process is gone (``kill(pid, 0)``), so a killed process never holds a slot past its deadline.
A lease whose request timed out is kept until it expires: upstream may still be working on it.

The pools are those the slices declare (:class:`~syncd.budget.pools.Pools`, handed in). Interactive calls
may use the whole bucket and window; the daemon leaves ``daemon_reserve`` of each.

Clock: wall-clock ``time.time()`` (shared across processes; freezegun moves it in tests), read
after the pool's row is locked. The bucket is monotonic: its timestamp never moves backwards, so a
small backward step (a writer that read the clock before waiting for the lock, hosts a few seconds
apart) refills nothing twice. A timestamp more than :data:`CLOCK_STEP_S` ahead of now was written by a
clock that ran ahead and was corrected (suspend/resume, a VM, NTP). Such timestamps are clamped when
read (so the answer does not depend on who looks first) and healed by the next write: the bucket
refills from now; a 429 block, a pause or an open breaker that ends further ahead than
``max_block_s`` (:data:`BREAKER_COOLDOWN_S`) and was written with the clock ahead is void (a real one
is learned again from the next answer; one set under a longer ``max_block_s`` is cut to the current
one); a lease, a send or an announcement dated in the future counts as expired. No block ever
outlasts ``max_block_s`` from now. Workstations sharing a PostgreSQL budget should keep their clocks
in sync (NTP).
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, delete, or_, select, update

from syncd.budget import sql
from syncd.budget.pools import PoolLimits, Pools
from syncd.budget.rules import (
    BREAKER_COOLDOWN_S,
    BREAKER_THRESHOLD,
    CLOCK_STEP_S,
    LEASE_MARGIN_S,
    LEASE_POLL_S,
    LEASE_TTL_S,
    MAX_LEASE_S,
    Announced,
    Announcement,
    Grant,
    Lease,
    Outcome,
    PoolState,
    SendTally,
    announced,
    announcement_values,
    blocked_until,
    counter_values,
    daemon_floor,
    effective_limits,
    healed,
    offline_until,
    pause_s,
    refilled,
    refusal_message,
    refusal_of,
    stamp,
    window_cap,
)
from syncd.errors import BudgetExhausted, InvalidInput, StoreError, UpstreamOffline
from syncd.proc import pid_alive
from syncd.store.models import BudgetLease, BudgetPool, BudgetSend
from syncd.store.repo import Store

if TYPE_CHECKING:
    from syncd.config import Settings

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
    "Budget",
    "Grant",
    "Lease",
    "Outcome",
    "PoolState",
]

SENDS_KEEP_S = 120.0
"""Seconds a send is kept at least (longer when an announced window is longer)."""
PRUNE_EVERY = 32
"""A budget prunes the old sends of a pool at its first take and then every this many takes."""


class Budget:
    """The shared budget over a :class:`~syncd.store.repo.Store`.

    Args:
        store: the shared store.
        settings: pool limits, the daemon reserve, ``budget.max_block_s``, ``budget.announce_ttl_s``
            and ``budget.pace_margin_s``.
        pools: the pools the slices declare (:data:`syncd.registry.POOLS`): names, services, published
            limits, concurrency groups; the budget names none itself.
        interactive: True for tool calls and the CLI (may use the whole bucket and window); False for
            the daemon, which leaves ``settings.budget.daemon_reserve`` of each unused.
        clock: wall clock in epoch seconds (default ``time.time``, looked up per call).
        sleep: how to wait (default ``time.sleep``).
    ``sent``: the requests this process let reach upstream (:class:`SendTally`).
    """

    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        pools: Pools,
        interactive: bool = True,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.pools = pools
        self.interactive = interactive
        self.host = socket.gethostname()[:255]
        self._clock = clock
        self._sleep = sleep
        self._takes = 0
        self.sent = SendTally()

    def clock(self) -> float:
        """Current wall-clock time in epoch seconds (looked up per call, so freezegun applies)."""
        return self._clock() if self._clock is not None else time.time()

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (real time unless a sleep function was injected)."""
        (self._sleep or time.sleep)(seconds)

    # --- rows --------------------------------------------------------------------------------------

    def _locked_row(self, conn: Connection, pool: str) -> Any:
        """The pool's row, locked for this transaction (``FOR UPDATE``), created first when missing.

        Raises:
            StoreError: the row is missing and ``pool`` is not a declared pool.
        """
        row = conn.execute(sql.ROW_LOCKED, {"pool": pool}).first()
        if row is None and pool in self.pools:
            sql.create_rows(conn, [pool])
            row = conn.execute(sql.ROW_LOCKED, {"pool": pool}).first()
        if row is None:
            raise StoreError(f"budget pool {pool} missing from the store and not a declared pool")
        return row

    def _rows(self, conn: Connection, pool: str, *, lock: bool) -> tuple[Any, list[Any]]:
        """``pool``'s row and those of the other pools of its concurrency group, in one statement.

        With ``lock``, every row returned is locked for this transaction (``FOR UPDATE``, in pool-name
        order, so takers of every pool of a group queue on the same first row and never deadlock; on
        SQLite ``BEGIN IMMEDIATE`` already serializes writers), the missing ones created first
        (:func:`syncd.budget.sql.create_rows`).

        Raises:
            StoreError: ``pool``'s row is missing (not yet made, or ``pool`` is not a declared pool).
        """
        members = list(self.pools.members(pool))
        statement = sql.ROWS_LOCKED if lock else sql.ROWS
        rows = conn.execute(statement, {"members": members}).all()
        if lock and len(rows) < len(members):
            sql.create_rows(conn, [m for m in members if m in self.pools and m not in {r.pool for r in rows}])
            rows = conn.execute(statement, {"members": members}).all()
        own = next((r for r in rows if r.pool == pool), None)
        if own is None:
            raise StoreError(f"budget pool {pool} missing from the store and not a declared pool")
        return own, [r for r in rows if r.pool != pool]

    def _limits(self, pool: str) -> PoolLimits:
        return self.pools.limits(self.settings, pool)

    def _floor(self, limits: PoolLimits) -> float:
        """Tokens this taker leaves in the bucket: none when interactive, else the daemon's reserve."""
        return 0.0 if self.interactive else daemon_floor(limits, self.settings.budget.daemon_reserve)

    def _cap(self, state: PoolState) -> int | None:
        """Sends this taker may find in the announced window: all when interactive (None), else fewer."""
        if self.interactive or state.window_limit is None:
            return None
        return window_cap(state.window_limit, self.settings.budget.daemon_reserve)

    def _heal(self, conn: Connection, row: Any, now: float) -> Any:
        """Write back the clamped timestamps a clock that ran ahead left on ``row``; the row as healed."""
        values = healed(row, now, self.settings.budget.max_block_s)
        if not values:
            return row
        conn.execute(update(BudgetPool).where(BudgetPool.pool == row.pool).values(**values))
        return conn.execute(select(sql.POOLS).where(sql.POOLS.c.pool == row.pool)).first()

    def _holder_gone(self, lease: Any) -> bool:
        """True when ``lease`` belongs to a process of this host that no longer exists."""
        if lease.pid is None or lease.host != self.host or lease.pid == os.getpid():
            return False
        return not pid_alive(int(lease.pid))

    def _live(self, leases: Sequence[Any], now: float) -> tuple[list[Any], list[str]]:
        """Split ``leases`` into the live ones and the ids of those to free.

        Freed: expired, holder gone, or expiring further ahead than any lease can be held (written by a
        clock that ran ahead).
        """
        live: list[Any] = []
        gone: list[str] = []
        latest = now + MAX_LEASE_S + LEASE_MARGIN_S + CLOCK_STEP_S
        for lease in leases:
            if lease.expires_at <= now or lease.expires_at > latest or self._holder_gone(lease):
                gone.append(lease.id)
            else:
                live.append(lease)
        return live, gone

    def _snapshot(
        self, conn: Connection, pool: str, row: Any, others: list[Any], now: float
    ) -> tuple[PoolState, list[str]]:
        """The :class:`PoolState` of ``pool`` from its ``row`` and its group's ``others``; leases to free."""
        configured = self._limits(pool)
        margin, ttl = self.settings.budget.pace_margin_s, self.settings.budget.announce_ttl_s
        said = announced(row, now, ttl)
        limits = effective_limits(configured, said, margin)
        group = self.pools.group_of(pool)
        members = self.pools.members(pool)
        leases = conn.execute(sql.GROUP_LEASES, {"members": list(members)}).all()
        live, gone = self._live(leases, now)
        group_limit: int | None = None
        if group is not None:
            group_limit = self.pools.group_in_flight(self.settings, group)
            for member in [row, *others]:
                member_said = announced(member, now, ttl)
                if member_said is not None and member_said.in_flight is not None:
                    group_limit = max(1, min(group_limit, member_said.in_flight))
        window_limit: int | None = None
        window_s = 0.0
        sends: tuple[float, ...] = ()
        if said is not None and said.limit is not None and said.interval_s:
            window_limit, window_s = said.limit, said.interval_s + margin
            window = {
                "pool": pool,
                "since": now - window_s,
                "until": now + CLOCK_STEP_S,
                "most": window_limit,
            }
            sends = tuple(conn.execute(sql.WINDOW, window).scalars())
            mine = [lease.id for lease in live if lease.pool == pool]
            if mine:  # in flight longer than the window: counted until released, re-checked each poll
                since = now - window_s
                held = conn.execute(sql.IN_FLIGHT_SENDS, {"ids": mine, "since": since}).scalars().all()
                pending = (since + LEASE_POLL_S,) * len(held)
                sends = tuple(sorted(sends + pending, reverse=True)[:window_limit])
        state = PoolState(
            pool=pool,
            tokens=refilled(row, limits, now),
            limits=limits,
            blocked_until=blocked_until(row, now, self.settings.budget.max_block_s),
            offline_until=offline_until(row, now),
            failures=row.failures,
            in_flight=sum(1 for lease in live if lease.pool == pool),
            configured=configured,
            block_reason=row.block_reason,
            announced=said,
            window_limit=window_limit,
            window_s=window_s,
            window_sends=sends,
            group=group,
            group_in_flight=len(live) if group is not None else 0,
            group_limit=group_limit,
        )
        return state, gone

    # --- state -----------------------------------------------------------------------------------

    def state(self, pool: str) -> PoolState:
        """A snapshot of ``pool`` (tokens refilled to now; nothing is taken), read without the write lock."""
        with self.store.read() as conn:
            try:
                row, others = self._rows(conn, pool, lock=False)
            except StoreError:  # no row yet: report the full bucket the first take creates
                limits = self._limits(pool)
                return PoolState(pool, float(limits.burst), limits, 0.0, 0.0, 0, 0, configured=limits)
            state, _ = self._snapshot(conn, pool, row, others, self.clock())
        return state

    def states(self) -> list[PoolState]:
        """Snapshots of every pool, in DESIGN.md order."""
        return [self.state(p) for p in self.pools.names]

    def offline(self, pool: str) -> bool:
        """True while ``pool``'s breaker is open (read without taking anything)."""
        return self.state(pool).offline(self.clock())

    # --- taking a slot -----------------------------------------------------------------------------

    def try_acquire(self, pool: str, hold_s: float | None = None) -> Grant:
        """Take one token and one in-flight slot of ``pool`` if both are free now; never waits.

        One write transaction. Leases that expired, or whose process on this host is gone, are
        freed first; sends older than the window are pruned; timestamps left by a clock that ran
        ahead are healed.

        Args:
            pool: the pool name.
            hold_s: the longest the caller may hold the slot (its remaining deadline); the lease
                expires ``hold_s + LEASE_MARGIN_S`` from now (default hold :data:`LEASE_TTL_S`, at
                most :data:`MAX_LEASE_S`).

        Returns:
            A :class:`Grant` with the lease, or with ``wait_s`` (seconds until the next try may
            succeed: the 429 block or pause, the token refill, the window, or a short poll for a slot).

        Raises:
            UpstreamOffline: the pool's breaker is open (``data["retry_after_s"]`` until the probe).
            StoreError: the store cannot be written.
        """
        hold = min(MAX_LEASE_S, LEASE_TTL_S if hold_s is None else max(0.0, hold_s))
        with self.store.write() as conn:
            row, others = self._rows(conn, pool, lock=True)
            now = self.clock()  # read under the lock: no writer can have moved past it since
            row = self._heal(conn, row, now)
            offline_at = offline_until(row, now)
            if offline_at > now:
                raise UpstreamOffline(
                    f"{pool} is offline after repeated failures",
                    retry_after_s=round(offline_at - now, 3),
                    pool=pool,
                    service=self.pools.service(pool),
                )
            # the breaker's cooldown is over: this caller is the one probe; the grant holds the others off
            probe = row.failures >= BREAKER_THRESHOLD
            state, gone = self._snapshot(conn, pool, row, others, now)
            if gone:
                conn.execute(delete(BudgetLease).where(BudgetLease.id.in_(gone)))
            refusal = refusal_of(state, now, self._floor(state.limits), self._cap(state))
            if refusal is not None:
                return refusal
            self._takes += 1
            if self._takes % PRUNE_EVERY == 1:  # old sends never count (the window is a range): prune
                keep = max(SENDS_KEEP_S, state.window_s)
                conn.execute(
                    delete(BudgetSend).where(
                        BudgetSend.pool == pool,
                        or_(BudgetSend.at <= now - keep, BudgetSend.at > now + CLOCK_STEP_S),
                    )
                )
            lease = Lease(id=uuid.uuid4().hex, pool=pool, expires_at=now + hold + LEASE_MARGIN_S)
            conn.execute(
                sql.INSERT_LEASE,
                {
                    "id": lease.id,
                    "pool": pool,
                    "expires_at": lease.expires_at,
                    "pid": os.getpid(),
                    "host": self.host,
                },
            )
            conn.execute(sql.INSERT_SEND, {"id": lease.id, "pool": pool, "at": now})
            values: dict[str, Any] = {
                "tokens": state.tokens - 1.0,
                "updated_at": max(stamp(row, now), now),
            }
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
                    self._refusal(pool, grant),
                    retry_after_s=round(grant.wait_s, 3),
                    pool=pool,
                    service=self.pools.service(pool),
                )
            self.sleep(max(0.001, grant.wait_s))

    def _peek(self, pool: str) -> Grant | None:
        """The refusal a take would meet now, read without the write lock; None when it may succeed."""
        state = self.state(pool)
        now = self.clock()
        if state.offline(now):
            return None  # the take raises UpstreamOffline with its own retry_after_s
        return refusal_of(state, now, self._floor(state.limits), self._cap(state))

    def _refusal(self, pool: str, grant: Grant) -> str:
        return refusal_message(pool, grant, self.state(pool), self.pools.service(pool))

    # --- releasing it, with what upstream said ---------------------------------------------------

    def release(
        self,
        lease: Lease,
        outcome: Outcome = Outcome.NOT_SENT,
        *,
        block_s: float = 0.0,
        announced: Announcement | None = None,
        sent_at: float | None = None,
    ) -> bool:
        """Free ``lease`` and record ``outcome``, a 429's ``block_s`` and what the answer ``announced``.

        One write transaction. A ``TIMED_OUT`` lease stays taken until it expires (upstream may still be
        working on it); a ``NOT_SENT`` one gives its send back. ``sent_at`` (epoch s, the budget's
        clock): the moment the request left; the send is dated by it from now on (never earlier than
        its take, never later than now), so the window counts it where upstream does. ``block_s`` > 0
        blocks the pool for every process (cut to ``budget.max_block_s``; never shortens a block in
        force). An announcement is stored on the pool's row (the limits it names rule for
        ``budget.announce_ttl_s``); a ``remaining`` at or under the pool's in-flight limit pauses the
        pool until the announced reset.

        Returns:
            True when this outcome opened the breaker.

        Raises:
            StoreError: the store cannot be written.
        """
        self.sent.add(lease.pool, outcome)  # sent, whether or not the bookkeeping below is written
        with self.store.write() as conn:
            row = self._locked_row(conn, lease.pool)  # one row only, so never a lock cycle with a take
            if outcome is not Outcome.TIMED_OUT:
                conn.execute(sql.DELETE_LEASE, {"lease_id": lease.id})
            if outcome is Outcome.NOT_SENT:
                conn.execute(sql.DELETE_SEND, {"lease_id": lease.id})
            elif sent_at is not None:
                conn.execute(sql.SENT_AT, {"lease_id": lease.id, "sent_at": min(sent_at, self.clock())})
            return self._record(conn, row, outcome, block_s, announced)

    def _record(
        self,
        conn: Connection,
        row: Any,
        outcome: Outcome,
        block_s: float,
        announced: Announcement | None = None,
    ) -> bool:
        """Write ``outcome``, ``block_s`` and ``announced`` into the locked ``row``; True: breaker opened.

        Timestamps a clock that ran ahead left on ``row`` are healed first; counters: :func:`counter_values`.
        """
        now = self.clock()
        row = self._heal(conn, row, now)
        values = counter_values(outcome, block_s, BudgetPool.requests_total, BudgetPool.rate_limited_total)
        opened = False
        if outcome is Outcome.ANSWERED and (row.failures or row.offline_until):
            values.update(failures=0, offline_until=0.0)
        elif outcome in (Outcome.FAILED, Outcome.TIMED_OUT):
            values["failures"] = row.failures + 1
            if row.failures + 1 >= BREAKER_THRESHOLD:
                values["offline_until"] = now + BREAKER_COOLDOWN_S
                opened = True
        cap = self.settings.budget.max_block_s
        current = blocked_until(row, now, cap)
        if announced is not None and not announced.empty:
            values.update(announcement_values(announced, now))
            pause = pause_s(announced, self._limits(row.pool).in_flight)
            if pause > 0 and block_s <= 0 and now + min(pause, cap) > current:
                limits = self._limits(row.pool)
                values.update(
                    blocked_until=now + min(pause, cap),
                    block_reason="remaining",
                    tokens=refilled(row, limits, now),
                    updated_at=max(stamp(row, now), now),
                )
        if block_s > 0:
            values.update(
                blocked_until=max(current, now + min(block_s, cap)),
                block_reason="429",
                tokens=0.0,
                updated_at=max(stamp(row, now), now),
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
        """Clear the block (429 or pause) and the breaker of ``pool`` (every pool when None); fill its bucket.

        One write transaction. The bucket is full from now (``tokens`` = the configured burst,
        ``updated_at`` = now), whatever a clock that ran ahead left in it. The announced limits stay
        (they are what upstream said; they expire by themselves).

        Returns:
            The pools reset.

        Raises:
            InvalidInput: ``pool`` is not a budget pool (reason ``invalid_parameter``).
            StoreError: the store cannot be written.
        """
        if pool is not None and pool not in self.pools:
            raise InvalidInput(f"unknown budget pool {pool!r}; expected one of {', '.join(self.pools.names)}")
        pools: list[str] = list(self.pools.names) if pool is None else [pool]
        with self.store.write() as conn:
            now = self.clock()
            for name in pools:
                conn.execute(
                    update(BudgetPool)
                    .where(BudgetPool.pool == name)
                    .values(
                        blocked_until=0.0,
                        block_reason=None,
                        failures=0,
                        offline_until=0.0,
                        tokens=float(self._limits(name).burst),
                        updated_at=now,
                    )
                )
        return pools
