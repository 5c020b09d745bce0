"""The doi.org slice's budget pool: registration-agency and content-negotiation lookups.

doi.org publishes no limit; syncd keeps to 10/s, 5 in flight (DESIGN.md's budget table).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from syncd.budget.pools import Pool, PoolLimits

if TYPE_CHECKING:
    from syncd.config import Settings

__all__ = ["DOI", "GROUPS", "POOLS"]


def doi_limits(settings: Settings) -> PoolLimits:
    """10/s, a burst of 10, 5 in flight, whatever the settings."""
    return PoolLimits(per_s=10, burst=10, in_flight=5)


DOI = Pool("doi", "doi.org", doi_limits)
"""``doi``: ``GET /ra/{doi}`` and the DOI resolver."""

POOLS: tuple[Pool, ...] = (DOI,)
"""The slice's pools."""
GROUPS: tuple[()] = ()
"""No concurrency group."""
