"""The request budget over a lab database (PostgreSQL) that falls back to this workstation's share.

The shared budget lives in the database (:mod:`syncd.budget.buckets`), so while the lab database cannot be
reached (:meth:`~syncd.store.repo.Store.unreachable`) no token could be taken and every lookup would
fail although upstream is healthy. :class:`LabBudget` then takes its tokens from a local budget: the
same :class:`~syncd.budget.buckets.Budget` over an SQLite file in this machine's state directory
(:data:`FALLBACK_FILE` in :func:`~syncd.store.paths.local_state_dir`), shared by every syncd process of this
machine (so the one-budget-per-machine promise holds), under the configured limits scaled by
``budget.fallback_share`` (default 0.5): other workstations of the lab may be falling back at the same
time, each with its own share, so together they may send up to ``share x workstations`` of a limit.

One warning is logged when the budget falls back (``event=budget_fallback``) and one when the lab
database is back (``event=budget_lab_back``). A lease taken from the local budget is released there,
whenever the release comes; a lease of the lab budget whose release finds the database gone expires
by itself (its deadline plus the lease margin).
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from syncd.budget.buckets import Announcement, Budget, Grant, Lease, Outcome, PoolState
from syncd.budget.pools import Pools
from syncd.budget.settings import PoolSettings
from syncd.errors import StoreError
from syncd.store.paths import local_state_dir
from syncd.store.repo import Store

if TYPE_CHECKING:
    from syncd.config import Settings

__all__ = ["FALLBACK_FILE", "LabBudget", "fallback_settings"]

log = logging.getLogger("syncd.budget")

FALLBACK_FILE = "budget-fallback.db"
"""The local budget's SQLite file, in :func:`~syncd.store.paths.local_state_dir`."""

T = TypeVar("T")


def fallback_settings(settings: Settings, pools: Pools) -> Settings:
    """``settings`` with the configured limits of every pool of ``pools`` scaled by ``budget.fallback_share``.

    Rate (requests per second) and burst scaled (burst at least 1), in-flight slots and each
    concurrency group's limit (:class:`~syncd.budget.pools.Group`) scaled down to whole requests (at least 1).
    """
    share = settings.budget.fallback_share
    update: dict[str, PoolSettings | int] = {}
    for pool in pools.names:
        limits = pools.limits(settings, pool)
        update[pool] = PoolSettings(
            per_s=limits.per_s * share,
            burst=max(1.0, limits.burst * share),
            in_flight=max(1, math.floor(limits.in_flight * share)),
        )
    for group in pools.groups():
        update[group.setting] = max(1, math.floor(pools.group_in_flight(settings, group.name) * share))
    budget = settings.budget.model_copy(update=update)
    return settings.model_copy(update={"budget": budget})


class LabBudget(Budget):
    """The budget over the lab database, falling back to a local share while it cannot be reached.

    Same arguments as :class:`~syncd.budget.buckets.Budget`; ``fallback_url`` (tests) overrides where the
    local budget is kept (default: :data:`FALLBACK_FILE` in the local state directory).
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
        fallback_url: str | None = None,
    ) -> None:
        super().__init__(store, settings, pools=pools, interactive=interactive, clock=clock, sleep=sleep)
        self._fallback_url = fallback_url
        self._local: Budget | None = None
        self._local_leases: set[str] = set()
        self._guard = threading.Lock()
        self.falling_back = False
        """True while tokens come from the local budget."""

    @property
    def local(self) -> Budget:
        """The local budget (its SQLite file opened, and migrated, on first use)."""
        with self._guard:
            if self._local is None:
                url = self._fallback_url or f"sqlite:///{local_state_dir() / FALLBACK_FILE}"
                self._local = Budget(
                    Store.open(url),
                    fallback_settings(self.settings, self.pools),
                    pools=self.pools,
                    interactive=self.interactive,
                    clock=self._clock,
                    sleep=self._sleep,
                )
            return self._local

    def _fallback(self) -> Budget | None:
        """The local budget while the lab database cannot be reached, else None (logged on change)."""
        if self.store.unreachable() is None:
            if self.falling_back:
                self.falling_back = False
                log.warning("event=budget_lab_back answers='the lab budget is used again'")
            return None
        local = self.local
        if not self.falling_back:
            self.falling_back = True
            log.warning(
                "event=budget_fallback file=%s share=%s reason='the lab database cannot be reached'",
                local.store.engine.url.database,
                self.settings.budget.fallback_share,
            )
        return local

    def _route(self, lab: Callable[[], T], local: Callable[[Budget], T]) -> T:
        """``lab()``, or ``local(the local budget)`` while (or once a try finds) the database unreachable."""
        fallback = self._fallback()
        if fallback is None:
            try:
                return lab()
            except StoreError:
                fallback = self._fallback()
                if fallback is None:
                    raise
        return local(fallback)

    def state(self, pool: str) -> PoolState:
        """:meth:`Budget.state` of the lab budget, or of the local one (see the module docstring)."""
        return self._route(lambda: super(LabBudget, self).state(pool), lambda b: b.state(pool))

    def try_acquire(self, pool: str, hold_s: float | None = None) -> Grant:
        """:meth:`Budget.try_acquire` from the lab budget, or from the local one (its lease kept there)."""

        def local(budget: Budget) -> Grant:
            grant = budget.try_acquire(pool, hold_s)
            if grant.lease is not None:
                with self._guard:
                    self._local_leases.add(grant.lease.id)
            return grant

        return self._route(lambda: super(LabBudget, self).try_acquire(pool, hold_s), local)

    def release(
        self,
        lease: Lease,
        outcome: Outcome = Outcome.NOT_SENT,
        *,
        block_s: float = 0.0,
        announced: Announcement | None = None,
        sent_at: float | None = None,
    ) -> bool:
        """:meth:`Budget.release` where ``lease`` was taken.

        A lab lease whose release finds the database unreachable expires by itself; what upstream did
        (a 429's block, a failure) is then recorded on the local budget, which is the one in use.
        """
        with self._guard:
            taken_locally = lease.id in self._local_leases
            self._local_leases.discard(lease.id)
        if taken_locally:
            return self.local.release(lease, outcome, block_s=block_s, announced=announced, sent_at=sent_at)
        return self._route(
            lambda: super(LabBudget, self).release(
                lease, outcome, block_s=block_s, announced=announced, sent_at=sent_at
            ),
            lambda b: b._record_alone(lease.pool, outcome, block_s),
        )

    def block(self, pool: str, seconds: float) -> None:
        """:meth:`Budget.block` on the budget in use."""
        self._route(lambda: super(LabBudget, self).block(pool, seconds), lambda b: b.block(pool, seconds))

    def record_success(self, pool: str) -> None:
        """:meth:`Budget.record_success` on the budget in use."""
        self._route(lambda: super(LabBudget, self).record_success(pool), lambda b: b.record_success(pool))

    def record_failure(self, pool: str) -> bool:
        """:meth:`Budget.record_failure` on the budget in use."""
        return self._route(
            lambda: super(LabBudget, self).record_failure(pool), lambda b: b.record_failure(pool)
        )

    def reset(self, pool: str | None = None) -> list[str]:
        """:meth:`Budget.reset` on the budget in use."""
        return self._route(lambda: super(LabBudget, self).reset(pool), lambda b: b.reset(pool))

    def close(self) -> None:
        """Close the local budget's store (when it was opened)."""
        with self._guard:
            if self._local is not None:
                self._local.store.close()
                self._local = None
