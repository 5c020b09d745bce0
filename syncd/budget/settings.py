"""The budget's settings: one pool's overrides (``budget.<pool>``) and the budget's own knobs.

A settings module (re-exported by :mod:`syncd.config`, which holds them in ``Settings.budget``). It
names no pool: :func:`syncd.config.compose` adds a ``budget.<pool>`` table (:class:`PoolSettings`) for
each pool a slice declares (``syncd/<slice>/pools.py``) and a ``budget.<setting>`` for each
concurrency group; :meth:`syncd.budget.pools.Pools.limits` lays them over the published limits.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = ["BudgetSettings", "PoolSettings"]


class PoolSettings(BaseModel):
    """Overrides for one budget pool; unset values take the published defaults (see PoolLimits)."""

    per_s: float | None = Field(None, gt=0, description="Sustained requests per second.")
    burst: float | None = Field(None, ge=1, description="Bucket size: requests allowed at once.")
    in_flight: int | None = Field(None, ge=1, description="Concurrent requests across all processes.")


class BudgetSettings(BaseModel):
    """The shared request budget: one token bucket per pool, stored in the database."""

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
