"""The budget's pools: names, services, concurrency groups, settings and published limits.

The published limits are DESIGN.md's budget table. Pure data and pydantic models, below
:mod:`syncd.config` (which holds them in ``Settings.budget`` and re-exports every name here) and
:mod:`syncd.budget` (which applies them).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

__all__ = [
    "CONCURRENCY_GROUPS",
    "POOLS",
    "POOL_SERVICES",
    "BudgetSettings",
    "GroupName",
    "PoolLimits",
    "PoolName",
    "PoolSettings",
    "published_group_in_flight",
    "published_limits",
]

PoolName = Literal["crossref_single", "crossref_list", "zenodo_general", "zenodo_search", "doi", "datacite"]
POOLS: tuple[PoolName, ...] = (
    "crossref_single",
    "crossref_list",
    "zenodo_general",
    "zenodo_search",
    "doi",
    "datacite",
)
GroupName = Literal["crossref"]
CONCURRENCY_GROUPS: dict[GroupName, tuple[PoolName, ...]] = {"crossref": ("crossref_single", "crossref_list")}
"""Pools whose in-flight requests count against one limit together: Crossref counts single-record and
list requests of a client together (since December 2025, ``x-concurrency-limit``: polite 5, public 1).
A take locks the rows of the whole group (PostgreSQL, in pool-name order), so the shared count is exact."""


class PoolSettings(BaseModel):
    """Overrides for one budget pool; unset values take the published defaults (see PoolLimits)."""

    per_s: float | None = Field(None, gt=0, description="Sustained requests per second.")
    burst: float | None = Field(None, ge=1, description="Bucket size: requests allowed at once.")
    in_flight: int | None = Field(None, ge=1, description="Concurrent requests across all processes.")


class PoolLimits(BaseModel):
    """Effective limits of one pool: ``per_s`` requests/second, ``burst`` tokens, ``in_flight`` leases."""

    per_s: float
    burst: float
    in_flight: int


POOL_SERVICES: dict[str, str] = {
    "crossref_single": "Crossref",
    "crossref_list": "Crossref",
    "zenodo_general": "Zenodo",
    "zenodo_search": "Zenodo",
    "doi": "doi.org",
    "datacite": "DataCite",
}
"""The public service behind each budget pool (a field of :class:`BudgetSettings`): what messages name."""


class BudgetSettings(BaseModel):
    """The shared request budget: one token bucket per pool, stored in the database."""

    crossref_single: PoolSettings = Field(default_factory=PoolSettings)
    crossref_list: PoolSettings = Field(default_factory=PoolSettings)
    zenodo_general: PoolSettings = Field(default_factory=PoolSettings)
    zenodo_search: PoolSettings = Field(default_factory=PoolSettings)
    doi: PoolSettings = Field(default_factory=PoolSettings)
    datacite: PoolSettings = Field(default_factory=PoolSettings)
    crossref_in_flight: int | None = Field(
        None,
        ge=1,
        description="Concurrent Crossref requests, single-record and list together, across every process "
        "(default: polite pool 5, public pool 1; lowered further by x-concurrency-limit).",
    )
    announce_ttl_s: float = Field(
        600.0,
        gt=0,
        le=86_400,
        description="Seconds a limit upstream announced in its headers (x-rate-limit-*, x-concurrency-limit, "
        "X-RateLimit-*) rules after the last answer that said it; then the configured limits apply again.",
    )
    pace_margin_s: float = Field(
        0.25,
        ge=0,
        le=10,
        description="Seconds of delay between taking a request slot and the request reaching upstream that "
        "pacing allows for: under an announced limit of N per interval, no window of interval plus this "
        "margin holds more than N requests, so jittered arrivals stay under the limit (a larger margin "
        "costs throughput: 10/s is paced at 10 per 1.25 s with 0.25).",
    )
    daemon_reserve: float = Field(
        0.3, ge=0, lt=1, description="Share of each bucket the daemon leaves for interactive calls."
    )
    max_block_s: float = Field(
        300.0,
        gt=0,
        description="Longest a 429's Retry-After may block a pool (seconds); longer waits are cut.",
    )
    fallback_share: float = Field(
        0.5,
        gt=0,
        le=1,
        description="PostgreSQL: while the lab database cannot be reached, this workstation's processes "
        "share a local budget (budget-fallback.db in the local state directory) with this share of every "
        "limit, since other workstations of the lab may be falling back too (1: the whole limits).",
    )


DATACITE_WINDOW_S = 300.0
"""DataCite's rate-limit window: requests are counted per IP per 5 minutes (its "API Rate Limits" page)."""
DATACITE_PER_WINDOW = {True: 1000, False: 500}
"""DataCite's published requests per window: 1,000 when identified by a mailto, 500 anonymous."""


def _datacite_limits(identified: bool) -> PoolLimits:
    """DataCite's tier as a bucket that never passes it: ``burst + per_s x 300 <= limit`` in any window."""
    burst = 20.0 if identified else 10.0
    return PoolLimits(
        per_s=(DATACITE_PER_WINDOW[identified] - burst) / DATACITE_WINDOW_S, burst=burst, in_flight=4
    )


def published_limits(pool: PoolName, *, polite: bool, token: bool, identified: bool = False) -> PoolLimits:
    """The published limits of ``pool`` (the defaults of ``budget.<pool>``).

    Crossref single 10/s, 5 in flight in the polite pool (``polite``: ``crossref.mailto`` set), else
    5/s, 1; Crossref list 3/s, 3 polite, else 1/s, 1 (both within the shared Crossref concurrency,
    :func:`published_group_in_flight`); Zenodo general ~2,000/h sustained with bursts kept under 60/min
    (with a ``token``: 100/min, 5,000/h); Zenodo search 30/min; doi.org 10/s; DataCite 1,000 per
    5 minutes when ``identified`` (a mailto in the User-Agent), else 500 (:func:`_datacite_limits`:
    20 or 10 at once, 3.27/s or 1.63/s sustained, 4 in flight). What upstream announces in its
    headers can only lower these (:mod:`syncd.budget`).
    """
    if pool == "datacite":
        return _datacite_limits(identified)
    if pool == "crossref_single":
        return (
            PoolLimits(per_s=10, burst=10, in_flight=5)
            if polite
            else PoolLimits(per_s=5, burst=5, in_flight=1)
        )
    if pool == "crossref_list":
        return (
            PoolLimits(per_s=3, burst=3, in_flight=3) if polite else PoolLimits(per_s=1, burst=1, in_flight=1)
        )
    if pool == "zenodo_general":
        return (
            PoolLimits(per_s=1.38, burst=15, in_flight=4)
            if token
            else PoolLimits(per_s=0.55, burst=25, in_flight=4)
        )
    if pool == "zenodo_search":
        return PoolLimits(per_s=0.45, burst=3, in_flight=2)
    return PoolLimits(per_s=10, burst=10, in_flight=5)


def published_group_in_flight(polite: bool) -> int:
    """Crossref's concurrency, single-record and list requests together: 5 polite, 1 public (Dec 2025)."""
    return 5 if polite else 1
