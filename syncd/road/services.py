"""The dependency bundles handed down to tools, lookups, the sweep and the CLI.

:class:`Upstreams` holds the upstream HTTP clients by name; :class:`Services` holds the settings, the
store, the budget, the upstreams and the local-first :class:`~syncd.road.local_first.Runner`. Whoever opens a
:class:`Services` closes it (the store is closed by its own owner).

This module names no upstream: each slice declares its client constructor (a :class:`ClientFactory`)
and the composition root hands them over (:data:`syncd.registry.CLIENTS`,
:func:`syncd.registry.open_services`). A client is reached by its name,
``services.upstreams.crossref``. Likewise a slice that answers DOIs of a registration agency
declares an :data:`AgencyRecords` function and the root hands them over by agency
(``services.agencies["datacite"]``): the Crossref batch asks it for the DOIs Crossref says another
agency registered, without importing that slice.

Over a PostgreSQL lab database the budget is a :class:`~syncd.budget.fallback.LabBudget`: while the
database cannot be reached it takes tokens from this workstation's local share.

Over a store this user cannot write (:func:`syncd.store.engine.is_read_only`) the bundle is
read-only: :class:`ReadOnlyBudget` reads every pool as offline and takes nothing, and
the runner is told (``read_only``, an input of every policy decision): it answers from the store only
(a stale entry flagged ``store_read_only``, a missing one refused with a message naming the fix), so
no request is sent and nothing is written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from syncd.budget.buckets import Announcement, Budget, Grant, Lease, Outcome, PoolState
from syncd.budget.fallback import LabBudget
from syncd.budget.pools import Pools
from syncd.errors import StoreError, UpstreamOffline
from syncd.road.local_first import Runner
from syncd.road.policy import READ_ONLY_REASON
from syncd.store.dialect import is_postgresql
from syncd.store.engine import READ_ONLY_HINT, is_read_only
from syncd.store.repo import Store
from syncd.upstream.check import UpstreamCheck, check_upstreams
from syncd.upstream.http import UpstreamHTTP
from syncd.upstream.probe import Probe

if TYPE_CHECKING:
    import httpx

    from syncd.config import Settings

__all__ = [
    "READ_ONLY_REASON",
    "AgencyRecords",
    "ClientFactory",
    "DataVersion",
    "Judged",
    "ReadOnlyBudget",
    "Services",
    "UpstreamClient",
    "Upstreams",
    "Verdicts",
]
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
            service=self.pools.service(pool),
        )

    def release(
        self,
        lease: Lease,
        outcome: Outcome = Outcome.NOT_SENT,
        *,
        block_s: float = 0.0,
        announced: Announcement | None = None,
        sent_at: float | None = None,
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


class UpstreamClient(Protocol):
    """What the bundle needs of a client: its :class:`~syncd.upstream.http.UpstreamHTTP` and ``close``."""

    @property
    def http(self) -> UpstreamHTTP:
        """The client's HTTP layer (budget, pool, base URL)."""
        ...

    def close(self) -> None:
        """Close the client's connections."""
        ...


class ClientFactory(Protocol):
    """A slice's client constructor: ``(settings, budget, transport=None) -> client``.

    ``transport`` (tests: an ``httpx.MockTransport``) replaces the network for every request.
    """

    def __call__(
        self, settings: Settings, budget: Budget, *, transport: httpx.BaseTransport | None = None
    ) -> UpstreamClient:
        """A new client over ``budget`` (no connection is made before its first request)."""
        ...


class Upstreams:
    """The upstream clients sharing one budget, by name (``crossref``, ``zenodo``, ``doi``...).

    A client is an attribute of its name (``upstreams.crossref``; ``AttributeError`` for a name the
    bundle does not hold) or :meth:`client`. Each name is also the client's settings section
    (``settings.crossref.base_url``).
    """

    __slots__ = ("_clients", "_probes")

    def __init__(self, clients: Mapping[str, UpstreamClient], probes: Sequence[Probe] = ()) -> None:
        self._clients = dict(clients)
        self._probes = tuple(probes)

    @classmethod
    def open(
        cls,
        factories: Mapping[str, ClientFactory],
        settings: Settings,
        budget: Budget,
        transport: httpx.BaseTransport | None = None,
        probes: Sequence[Probe] = (),
    ) -> Upstreams:
        """One client per factory over ``budget``, in the factories' order; ``transport`` (tests) to all.

        ``probes``: the clients' base-URL checks (:meth:`check`), as the slices declare them.
        """
        clients = {name: make(settings, budget, transport=transport) for name, make in factories.items()}
        return cls(clients, probes)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._clients[name]
        except KeyError:
            raise AttributeError(f"no upstream client {name!r}") from None

    def client(self, name: str) -> UpstreamClient:
        """The client called ``name``.

        Raises:
            KeyError: no client of that name.
        """
        return self._clients[name]

    @property
    def names(self) -> tuple[str, ...]:
        """The clients' names, in the order they were opened."""
        return tuple(self._clients)

    def check(self, settings: Settings, *, read_only: bool = False) -> list[UpstreamCheck]:
        """One cheap request per probed service to tell a wrong base URL (:mod:`syncd.upstream.check`).

        The probes this bundle was handed (:data:`syncd.registry.PROBES`); ``read_only``: the store is
        read-only, nothing is asked (every check ``skipped``).
        """
        clients = {
            name: (client.http, getattr(settings, name).base_url) for name, client in self._clients.items()
        }
        budget = next(iter(self._clients.values())).http.budget
        return check_upstreams(clients, budget, settings.deadline_s, self._probes, read_only=read_only)

    def close(self) -> None:
        """Close every client's connections."""
        for client in self._clients.values():
            client.close()


AgencyRecords = Callable[["Services", Sequence[str]], dict[str, dict[str, Any]]]
"""``records(services, dois)``: a registration agency's summary of each of ``dois`` (lower-cased keys),
local-first within the running call's deadline and budget: ``{"agency", "found", "title"?, ...,
"cache"}`` (found), ``{"agency", "found": False, "missReason", ...}`` (the agency holds none) or
``{"agency", "found": False, "reason"}`` (it could not be asked now). Never raises for one DOI."""


class DataVersion(Protocol):
    """The version of a data file a verdict rests on (the Retraction Watch file's)."""

    @property
    def sha256(self) -> str:
        """The file's SHA-256 (hex)."""
        ...

    @property
    def rows(self) -> int:
        """Its rows."""
        ...

    @property
    def imported_at(self) -> float:
        """When it was imported (epoch seconds)."""
        ...

    @property
    def source(self) -> str:
        """Where it was read (a path or URL)."""
        ...

    @property
    def commit(self) -> str | None:
        """The git commit of the checkout it was read from, if any."""
        ...


class Judged(Protocol):
    """A work's retraction verdict as the slice giving verdicts returns it (its JSON form on demand)."""

    @property
    def dataset(self) -> DataVersion | None:
        """The data version the verdict rests on (None: no data imported)."""
        ...

    def as_dict(self, iso: Any = None) -> dict[str, Any]:
        """JSON form; ``iso`` formats epoch seconds (:func:`syncd.road.policy.iso`)."""
        ...


Verdicts = Callable[["Services", Sequence[Any]], Sequence["Judged | None"]]
"""``verdicts(services, items)``: the retraction verdict of each of a works batch's items, in order (None:
an input that is not a DOI); from the store and the data it holds, no request beyond stored pages. Handed
by the composition root from the slice that gives verdicts (the Retraction Watch slice's
:func:`syncd.retractions.verdicts.work_verdicts`), so the Crossref batch gives them without importing it."""


@dataclass(frozen=True, eq=False)
class Services:
    """Everything a tool, lookup or sweep needs: settings, store, budget, upstream clients, runner.

    ``agencies``: each registration agency's :data:`AgencyRecords` by lower-cased agency name (from
    the composition root; empty: no other agency is asked). ``verdicts``: the :data:`Verdicts` of the
    slice giving retraction verdicts (None: no such slice; items carry none).
    """

    settings: Settings
    store: Store
    budget: Budget
    upstreams: Upstreams
    runner: Runner
    agencies: Mapping[str, AgencyRecords] = field(default_factory=dict)
    verdicts: Verdicts | None = None

    @classmethod
    def open(
        cls,
        settings: Settings,
        store: Store,
        *,
        clients: Mapping[str, ClientFactory],
        interactive: bool = True,
        transport: httpx.BaseTransport | None = None,
        read_only: bool | None = None,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], None] | None = None,
        agencies: Mapping[str, AgencyRecords] | None = None,
        verdicts: Verdicts | None = None,
        pools: Pools,
        probes: Sequence[Probe] = (),
    ) -> Services:
        """Build the bundle over ``store``.

        Args:
            settings: syncd settings (TTLs, deadline, upstream URLs, budget).
            store: the shared store (not closed by :meth:`close`).
            clients: each upstream's client constructor by name (:data:`syncd.registry.CLIENTS`).
            interactive: True for tools and CLI; False for the daemon (leaves the budget reserve).
            transport: optional httpx transport for every upstream client (tests).
            read_only: answer from the store only (default: whether the store was opened read-only).
            clock: the wall clock of the budget and the runner's freshness decisions, epoch seconds
                (default ``time.time``; tests inject one to age entries without sleeping).
            sleep: how the budget and the upstream retries wait, seconds (default ``time.sleep``;
                tests inject one that moves their clock instead).
            agencies: each registration agency's records by lower-cased name
                (:data:`syncd.registry.AGENCIES`).
            verdicts: the works' retraction verdicts (:data:`syncd.registry.VERDICTS`).
            pools: the budget's pools, as the slices declare them (:data:`syncd.registry.POOLS`).
            probes: the upstreams' base-URL checks (:data:`syncd.registry.PROBES`; none: nothing checked).
        """
        if read_only is None:
            read_only = is_read_only(store.engine)
        budget_cls = ReadOnlyBudget if read_only else LabBudget if is_postgresql(store.engine) else Budget
        budget = budget_cls(store, settings, pools=pools, interactive=interactive, clock=clock, sleep=sleep)
        return cls(
            settings,
            store,
            budget,
            Upstreams.open(clients, settings, budget, transport, probes),
            Runner(store, budget, settings.ttl, read_only=read_only),
            dict(agencies or {}),
            verdicts,
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
