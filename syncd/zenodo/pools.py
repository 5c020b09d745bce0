"""The Zenodo slice's budget pools: general requests and searches.

Zenodo's published limits (DESIGN.md's budget table): general requests ~2,000/h sustained with bursts
kept under 60/min (with a personal access token, ``zenodo.token``: 100/min, 5,000/h); searches
30/min. What Zenodo announces (``X-RateLimit-*``) can only lower these (:mod:`syncd.budget.buckets`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from syncd.budget.pools import Pool, PoolLimits
from syncd.zenodo.settings import SECTION

if TYPE_CHECKING:
    from syncd.config import Settings

__all__ = ["GENERAL", "GROUPS", "POOLS", "SEARCH"]

SERVICE = "Zenodo"
"""What messages call the service behind these pools."""


def general_limits(settings: Settings) -> PoolLimits:
    """Records, files, versions: 1.38/s, 15 at once with a token; else 0.55/s (~2,000/h), 25; 4 in flight."""
    if SECTION.of(settings).token is not None:
        return PoolLimits(per_s=1.38, burst=15, in_flight=4)
    return PoolLimits(per_s=0.55, burst=25, in_flight=4)


def search_limits(settings: Settings) -> PoolLimits:
    """``/records`` searches: 30/min (0.45/s with a burst of 3), 2 in flight."""
    return PoolLimits(per_s=0.45, burst=3, in_flight=2)


GENERAL = Pool("zenodo_general", SERVICE, general_limits)
"""``zenodo_general``: records, files, versions."""
SEARCH = Pool("zenodo_search", SERVICE, search_limits)
"""``zenodo_search``: ``/records`` searches."""

POOLS: tuple[Pool, ...] = (GENERAL, SEARCH)
"""The slice's pools, in ``syncd cache budget`` order."""
GROUPS: tuple[()] = ()
"""No concurrency group: each pool counts its own in-flight requests."""
