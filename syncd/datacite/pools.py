"""The DataCite slice's budget pool, sized to DataCite's published limit.

DataCite counts requests per IP per 5 minutes (its "API Rate Limits" page): 1,000 when the client is
identified by a mailto in its User-Agent (``datacite.mailto``, else ``crossref.mailto``:
:attr:`syncd.config.Settings.datacite_mailto`), 500 anonymous. The pool is a bucket that never
passes the tier in any window (``burst + per_s x 300 <= limit``): 20 or 10 at once, 3.27/s or
1.63/s sustained, 4 in flight.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from syncd.budget.pools import Pool, PoolLimits
from syncd.datacite.settings import contact

if TYPE_CHECKING:
    from syncd.config import Settings

__all__ = ["DATACITE", "DATACITE_PER_WINDOW", "DATACITE_WINDOW_S", "GROUPS", "POOLS"]

DATACITE_WINDOW_S = 300.0
"""DataCite's rate-limit window: requests are counted per IP per 5 minutes (its "API Rate Limits" page)."""
DATACITE_PER_WINDOW = {True: 1000, False: 500}
"""DataCite's published requests per window: 1,000 when identified by a mailto, 500 anonymous."""


def datacite_limits(settings: Settings) -> PoolLimits:
    """DataCite's tier as a bucket that never passes it: ``burst + per_s x 300 <= limit`` in any window."""
    identified = contact(settings) is not None
    burst = 20.0 if identified else 10.0
    return PoolLimits(
        per_s=(DATACITE_PER_WINDOW[identified] - burst) / DATACITE_WINDOW_S, burst=burst, in_flight=4
    )


DATACITE = Pool("datacite", "DataCite", datacite_limits)
"""``datacite``: every DataCite REST API request."""

POOLS: tuple[Pool, ...] = (DATACITE,)
"""The slice's pools."""
GROUPS: tuple[()] = ()
"""No concurrency group."""
