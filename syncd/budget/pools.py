"""What a budget pool is (the declaration a slice makes) and the table of them the budget is handed.

Each upstream slice declares its pools in its own ``pools.py`` (:class:`Pool`: name, the service
messages name, the rule giving its published limits for the settings; a :class:`Group` for pools
whose in-flight requests count together); the composition root :mod:`syncd.registry` composes them
into one :class:`Pools` table and hands it to :class:`syncd.budget.buckets.Budget` (through
:meth:`syncd.road.services.Services.open`). No upstream is named here: the budget reads a pool's name,
service, limits and group from the table it was given.

The pools' settings (``budget.<pool>`` overrides, a group's ``budget.<group>_in_flight``) are in
:class:`syncd.budget.settings.BudgetSettings`; :meth:`Pools.limits` lays them over the published
limits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel

from syncd.budget.settings import PoolSettings

if TYPE_CHECKING:
    from syncd.config import Settings

__all__ = ["Group", "GroupName", "Pool", "PoolLimits", "PoolName", "Pools"]

PoolName = str
"""A budget pool's name (``budget_pools.pool``, the ``budget.<pool>`` settings section)."""
GroupName = str
"""A concurrency group's name (:class:`Group`)."""


class PoolLimits(BaseModel):
    """Effective limits of one pool: ``per_s`` requests/second, ``burst`` tokens, ``in_flight`` leases."""

    per_s: float
    burst: float
    in_flight: int


@dataclass(frozen=True)
class Pool:
    """One budget pool, as its slice declares it.

    ``name``: the pool's row (``budget_pools.pool``, added by a migration) and its ``budget.<name>``
    settings section; ``service``: the public service behind it, what messages name ("Crossref");
    ``published(settings)``: its published limits for these settings (a mailto, a token: each slice
    reads its own section); ``group``: the :class:`Group` whose in-flight count it shares, if any.
    """

    name: PoolName
    service: str
    published: Callable[[Settings], PoolLimits]
    group: GroupName | None = None


@dataclass(frozen=True)
class Group:
    """Pools whose in-flight requests count against one limit together (every process).

    ``name``: the group's name; ``setting``: the ``budget.<setting>`` field overriding its limit
    (unset: the published one; composed into the settings from the group by
    :func:`syncd.config.compose`), described by ``description``; ``published(settings)``: its
    published limit (requests in flight). A take locks the rows of the whole group (PostgreSQL, in
    pool-name order), so the shared count is exact.
    """

    name: GroupName
    setting: str
    published: Callable[[Settings], int]
    description: str = ""


class Pools:
    """The budget's pools, in the order given (``syncd cache budget`` lists them so).

    Args:
        pools: every pool (names unique).
        groups: the concurrency groups the pools name (each named by at least one pool).

    Raises:
        ValueError: a name declared twice, a pool naming an undeclared group, or a group no pool names.
    """

    def __init__(self, pools: Sequence[Pool], groups: Sequence[Group] = ()) -> None:
        self._pools = {p.name: p for p in pools}
        self._groups = {g.name: g for g in groups}
        if len(self._pools) != len(pools) or len(self._groups) != len(groups):
            raise ValueError("a budget pool or group is declared twice")
        for pool in pools:
            if pool.group is not None and pool.group not in self._groups:
                raise ValueError(f"budget pool {pool.name} names an undeclared group {pool.group}")
        for group in groups:
            if not any(p.group == group.name for p in pools):
                raise ValueError(f"no budget pool is in the group {group.name}")

    @property
    def names(self) -> tuple[PoolName, ...]:
        """Every pool's name, in order."""
        return tuple(self._pools)

    def __iter__(self) -> Iterator[Pool]:
        return iter(self._pools.values())

    def __contains__(self, name: object) -> bool:
        return name in self._pools

    def __getitem__(self, name: PoolName) -> Pool:
        """The pool called ``name``.

        Raises:
            KeyError: no such pool.
        """
        return self._pools[name]

    def service(self, name: PoolName) -> str:
        """The public service behind pool ``name`` (``name`` itself for a pool not declared)."""
        pool = self._pools.get(name)
        return pool.service if pool is not None else name

    def services(self) -> dict[PoolName, str]:
        """Each pool's service by pool name."""
        return {p.name: p.service for p in self._pools.values()}

    def group_of(self, name: PoolName) -> GroupName | None:
        """The concurrency group of pool ``name`` (None: it counts alone, or is not declared)."""
        pool = self._pools.get(name)
        return pool.group if pool is not None else None

    def members(self, name: PoolName) -> tuple[PoolName, ...]:
        """The pools counted with ``name``: its group's pools (in order), else ``(name,)``."""
        group = self.group_of(name)
        if group is None:
            return (name,)
        return tuple(p.name for p in self._pools.values() if p.group == group)

    def limits(self, settings: Settings, name: PoolName) -> PoolLimits:
        """Configured limits of pool ``name``: ``budget.<name>`` values over its published limits.

        What upstream announces in its headers can only lower these (:mod:`syncd.budget.buckets`).

        Raises:
            KeyError: no such pool.
        """
        base = self._pools[name].published(settings)
        over = getattr(settings.budget, name, None)
        if not isinstance(over, PoolSettings):
            return base
        return PoolLimits(
            per_s=over.per_s if over.per_s is not None else base.per_s,
            burst=over.burst if over.burst is not None else base.burst,
            in_flight=over.in_flight if over.in_flight is not None else base.in_flight,
        )

    def group_in_flight(self, settings: Settings, group: GroupName) -> int:
        """Configured concurrency of ``group`` (requests in flight, all processes).

        Its ``budget.<setting>`` when set, else its published limit.

        Raises:
            KeyError: no such group.
        """
        declared = self._groups[group]
        configured = getattr(settings.budget, declared.setting, None)
        return configured if isinstance(configured, int) else declared.published(settings)

    def groups(self) -> tuple[Group, ...]:
        """Every concurrency group, in order."""
        return tuple(self._groups.values())
