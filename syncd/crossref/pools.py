"""The Crossref slice's budget pools: single-record and list requests, counted together in flight.

Crossref's published limits (DESIGN.md's budget table; since December 2025, ``x-rate-limit-*`` and
``x-concurrency-limit``): in the polite pool (``crossref.mailto`` set) single-record requests 10/s,
list requests 3/s, 5 in flight together; in the public pool 5/s, 1/s, 1 in flight. What Crossref
announces in its headers can only lower these (:mod:`syncd.budget.buckets`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from syncd.budget.pools import Group, Pool, PoolLimits
from syncd.crossref.settings import SECTION

if TYPE_CHECKING:
    from syncd.config import Settings

__all__ = ["GROUPS", "LIST", "POOLS", "SINGLE"]

SERVICE = "Crossref"
"""What messages call the service behind these pools."""


def _polite(settings: Settings) -> bool:
    return bool(SECTION.of(settings).mailto)


def single_limits(settings: Settings) -> PoolLimits:
    """Single-record requests (``/works/{doi}``, journals, funders...): 10/s, 5 in flight polite; 5/s, 1."""
    if _polite(settings):
        return PoolLimits(per_s=10, burst=10, in_flight=5)
    return PoolLimits(per_s=5, burst=5, in_flight=1)


def list_limits(settings: Settings) -> PoolLimits:
    """List requests (queries, filters, cursors): 3/s, 3 in flight polite; 1/s, 1 public."""
    if _polite(settings):
        return PoolLimits(per_s=3, burst=3, in_flight=3)
    return PoolLimits(per_s=1, burst=1, in_flight=1)


def group_in_flight(settings: Settings) -> int:
    """Crossref's concurrency, single-record and list requests together: 5 polite, 1 public (Dec 2025)."""
    return 5 if _polite(settings) else 1


GROUP = Group(
    "crossref",
    "crossref_in_flight",
    group_in_flight,
    "Concurrent Crossref requests, single-record and list together, across every process "
    "(default: polite pool 5, public pool 1; lowered further by x-concurrency-limit).",
)
"""Crossref counts a client's single-record and list requests in flight together
(``budget.crossref_in_flight`` overrides the limit)."""
SINGLE = Pool("crossref_single", SERVICE, single_limits, group=GROUP.name)
"""``crossref_single``: every single-record route."""
LIST = Pool("crossref_list", SERVICE, list_limits, group=GROUP.name)
"""``crossref_list``: queries, filters, cursors."""

POOLS: tuple[Pool, ...] = (SINGLE, LIST)
"""The slice's pools, in ``syncd cache budget`` order."""
GROUPS: tuple[Group, ...] = (GROUP,)
"""The slice's concurrency groups."""
