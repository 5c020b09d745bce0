"""The dependency bundles handed down to tools, lookups, the sweep and the CLI.

:class:`Upstreams` holds the three HTTP clients (Crossref, Zenodo, doi.org); :class:`Services` holds
the settings, the store, the budget, the upstreams and the local-first :class:`~syncd.cache.Runner`.
Whoever opens a :class:`Services` closes it (the store is closed by its own owner).

Over a PostgreSQL lab database the budget is a :class:`~syncd.budget_fallback.LabBudget`: while the
database cannot be reached it takes tokens from this workstation's local share.

Over a store this user cannot write (:func:`syncd.store.engine.is_read_only`) the bundle is
read-only: :class:`ReadOnlyBudget` reads every pool as offline and takes nothing, and
the runner is told (``read_only``, an input of every policy decision): it answers from the store only
(a stale entry flagged ``store_read_only``, a missing one refused with a message naming the fix), so
no request is sent and nothing is written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from syncd.budget import Announcement, Budget, Grant, Lease, Outcome, PoolState
from syncd.budget_fallback import LabBudget
from syncd.cache import Runner
from syncd.config import Settings
from syncd.crossref.client import CrossrefClient
from syncd.doiorg.client import DoiClient
from syncd.errors import StoreError, UpstreamOffline
from syncd.policy import READ_ONLY_REASON
from syncd.store.dialect import is_postgresql
from syncd.store.engine import READ_ONLY_HINT, is_read_only
from syncd.store.repo import Store
from syncd.upstream.check import UpstreamCheck, check_upstreams
from syncd.zenodo.client import ZenodoClient

__all__ = ["READ_ONLY_REASON", "ReadOnlyBudget", "Services", "Upstreams"]
READ_ONLY_OFFLINE_S = 3600.0
"""How far ahead a read-only budget reports each pool offline (seconds, rolling)."""


class ReadOnlyBudget(Budget):
    """The budget over a read-only store: every pool reads offline, nothing is taken or recorded.

    :meth:`try_acquire` raises :class:`~syncd.errors.UpstreamOffline` (no request can be paid for,
    since the budget rows cannot be written); the recording methods do nothing.
    """

    def state(self, pool: str) -> PoolState:
        """The stored snapshot of ``pool``, reported offline for the next :data:`READ_ONLY_OFFLINE_S`."""
        snapshot = super().state(pool)
        return dataclasses.replace(snapshot, offline_until=self.clock() + READ_ONLY_OFFLINE_S)

    def try_acquire(self, pool: str, hold_s: float | None = None) -> Grant:
        """Never grants: raises UpstreamOffline naming the read-only store and the fix."""
        raise UpstreamOffline(
            f"no upstream request: the store is read-only for this user ({pool})",
            hint=READ_ONLY_HINT,
            pool=pool,
        )

    def release(
        self,
        lease: Lease,
        outcome: Outcome = Outcome.NOT_SENT,
        *,
        block_s: float = 0.0,
        announced: Announcement | None = None,
    ) -> bool:
        """Nothing to free (no lease is ever granted)."""
        return False

    def block(self, pool: str, seconds: float) -> None:
        """Not recorded (read-only store)."""

    def record_success(self, pool: str) -> None:
        """Not recorded (read-only store)."""

    def record_failure(self, pool: str) -> bool:
        """Not recorded (read-only store); never opens the breaker."""
        return False

    def reset(self, pool: str | None = None) -> list[str]:
        """Refused: raises StoreError (the budget rows cannot be written)."""
        raise StoreError(f"the store is read-only for this user; {READ_ONLY_HINT}")


@dataclass(frozen=True, eq=False)
class Upstreams:
    """The upstream clients, sharing one budget: ``crossref``, ``zenodo`` and ``doi`` (doi.org)."""

    crossref: CrossrefClient
    zenodo: ZenodoClient
    doi: DoiClient

    @classmethod
    def open(
        cls, settings: Settings, budget: Budget, transport: httpx.BaseTransport | None = None
    ) -> Upstreams:
        """The three clients over ``budget``; ``transport`` (tests) is given to all three."""
        return cls(
            CrossrefClient(settings, budget, transport=transport),
            ZenodoClient(settings, budget, transport=transport),
            DoiClient(settings, budget, transport=transport),
        )

    def check(self, settings: Settings, *, read_only: bool = False) -> list[UpstreamCheck]:
        """One cheap request per service to tell a wrong base URL (:mod:`syncd.upstream.check`).

        ``read_only``: the store is read-only, nothing is asked (every check ``skipped``).
        """
        clients = {
            "crossref": (self.crossref.http, settings.crossref.base_url),
            "zenodo": (self.zenodo.http, settings.zenodo.base_url),
            "doi": (self.doi.http, settings.doi.base_url),
        }
        return check_upstreams(clients, self.crossref.http.budget, settings.deadline_s, read_only=read_only)

    def close(self) -> None:
        """Close the three clients' connections."""
        self.crossref.close()
        self.zenodo.close()
        self.doi.close()


@dataclass(frozen=True, eq=False)
class Services:
    """Everything a tool, lookup or sweep needs: settings, store, budget, upstream clients, runner."""

    settings: Settings
    store: Store
    budget: Budget
    upstreams: Upstreams
    runner: Runner

    @classmethod
    def open(
        cls,
        settings: Settings,
        store: Store,
        *,
        interactive: bool = True,
        transport: httpx.BaseTransport | None = None,
        read_only: bool | None = None,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> Services:
        """Build the bundle over ``store``.

        Args:
            settings: syncd settings (TTLs, deadline, upstream URLs, budget).
            store: the shared store (not closed by :meth:`close`).
            interactive: True for tools and CLI; False for the daemon (leaves the budget reserve).
            transport: optional httpx transport for every upstream client (tests).
            read_only: answer from the store only (default: whether the store was opened read-only).
            clock: the wall clock of the budget and the runner's freshness decisions, epoch seconds
                (default ``time.time``; tests inject one to age entries without sleeping).
            sleep: how the budget and the upstream retries wait, seconds (default ``time.sleep``;
                tests inject one that moves their clock instead).
        """
        if read_only is None:
            read_only = is_read_only(store.engine)
        budget_cls = ReadOnlyBudget if read_only else LabBudget if is_postgresql(store.engine) else Budget
        budget = budget_cls(store, settings, interactive=interactive, clock=clock, sleep=sleep)
        return cls(
            settings,
            store,
            budget,
            Upstreams.open(settings, budget, transport),
            Runner(store, budget, settings.ttl, read_only=read_only),
        )

    @property
    def read_only(self) -> bool:
        """True when this bundle answers from the store only (the store is read-only for this user)."""
        return isinstance(self.budget, ReadOnlyBudget)

    def close(self) -> None:
        """Close upstream connections and a local fallback budget (the store is closed by its owner)."""
        self.upstreams.close()
        if isinstance(self.budget, LabBudget):
            self.budget.close()
