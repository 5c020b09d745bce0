"""The toy slice's one budget pool: 5 requests/s, 2 in flight."""

from __future__ import annotations

from typing import TYPE_CHECKING

from syncd.budget.pools import Pool, PoolLimits

if TYPE_CHECKING:
    from syncd.config import Settings

__all__ = ["GROUPS", "POOLS", "TOY"]


def toy_limits(settings: Settings) -> PoolLimits:
    """The toy upstream's published limits."""
    return PoolLimits(per_s=5, burst=5, in_flight=2)


TOY = Pool("toy_notes", "Toy", toy_limits)
POOLS: tuple[Pool, ...] = (TOY,)
GROUPS: tuple[()] = ()
