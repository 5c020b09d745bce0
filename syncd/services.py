"""The dependency bundles handed down to tools, lookups, the sweep and the CLI.

:class:`Upstreams` holds the three HTTP clients (Crossref, Zenodo, doi.org); :class:`Services` holds
the settings, the store, the budget, the upstreams and the local-first :class:`~syncd.cache.Runner`.
Whoever opens a :class:`Services` closes it (the store is closed by its own owner).
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from syncd.budget import Budget
from syncd.cache import Runner
from syncd.config import Settings
from syncd.store.repo import Store
from syncd.upstream.crossref import CrossrefClient
from syncd.upstream.doi import DoiClient
from syncd.upstream.zenodo import ZenodoClient

__all__ = ["Services", "Upstreams"]


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
    ) -> Services:
        """Build the bundle over ``store``.

        Args:
            settings: syncd settings (TTLs, deadline, upstream URLs, budget).
            store: the shared store (not closed by :meth:`close`).
            interactive: True for tools and CLI; False for the daemon (leaves the budget reserve).
            transport: optional httpx transport for every upstream client (tests).
        """
        budget = Budget(store, settings, interactive=interactive)
        return cls(
            settings,
            store,
            budget,
            Upstreams.open(settings, budget, transport),
            Runner(store, budget, settings.ttl),
        )

    def close(self) -> None:
        """Close upstream connections (the store is closed by its owner)."""
        self.upstreams.close()
