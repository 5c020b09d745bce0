"""Rate-limit headers of an upstream answer: ``Retry-After``, and the limits announced on every answer.

Pure functions. :func:`parse_retry_after` reads a 429's wait; :func:`read_announcement` reads the
limits into a bounded :class:`~syncd.budget.buckets.Announcement`. What is read (names case-insensitive,
both spellings; SOURCES.md of the corpus):

* Crossref: ``x-rate-limit-limit`` / ``x-ratelimit-limit`` (requests per interval; ``5`` public,
  ``10`` polite single, ``3`` polite list in 2026, ``50`` before), ``x-rate-limit-interval`` /
  ``x-ratelimit-interval`` (``1s``), ``x-concurrency-limit`` (``1`` public, ``3``/``5`` polite),
  ``x-api-pool`` (``public``, ``polite``, ``public-single``, ``polite-single``, ``polite-array``...);
* Zenodo (Flask-Limiter): ``X-RateLimit-Limit`` (its shortest window, per minute: 60 or 133 guest,
  100 with a token, 30 for searches), ``X-RateLimit-Remaining``, ``X-RateLimit-Reset`` (epoch seconds,
  measured against the answer's own ``Date`` so a skewed server clock cancels out; a small number is
  read as seconds from now). Zenodo's ``Retry-After`` on a 200 is not a limit and is not read here.

Headers seen doubled (``x-rate-limit-limit: 50, 50``, or the same header twice, which httpx joins with
``", "``) are comma lists: the most restrictive value wins (the lowest limit, concurrency and
remaining; the longest interval). Hostile or broken values are bounded, never trusted: a value that is
not a plain number is ignored, limits are cut to :data:`MAX_LIMIT`, intervals to
[:data:`MIN_INTERVAL_S`, :data:`MAX_INTERVAL_S`] and a rate under one request per
:data:`SLOWEST_S` seconds is read as that rate, concurrency to [1, :data:`MAX_CONCURRENCY`], a reset to
at most :data:`MAX_RESET_S` ahead, the pool name to 64 characters of ``[A-Za-z0-9._-]``, and the
headers kept for ``syncd cache budget`` to printable ASCII, 64 characters per value, 512 in all.
"""

from __future__ import annotations

import datetime
import email.utils
import math
import re
import time
from collections.abc import Mapping

from syncd.budget.buckets import Announcement

__all__ = [
    "LIMIT_HEADERS",
    "MAX_CONCURRENCY",
    "MAX_INTERVAL_S",
    "MAX_LIMIT",
    "MAX_RESET_S",
    "MIN_INTERVAL_S",
    "SLOWEST_S",
    "http_date",
    "parse_retry_after",
    "read_announcement",
]

LIMIT = ("x-rate-limit-limit", "x-ratelimit-limit")
INTERVAL = ("x-rate-limit-interval", "x-ratelimit-interval")
CONCURRENCY = ("x-concurrency-limit", "x-rate-limit-concurrency")
API_POOL = ("x-api-pool",)
REMAINING = ("x-ratelimit-remaining", "x-rate-limit-remaining")
RESET = ("x-ratelimit-reset", "x-rate-limit-reset")
LIMIT_HEADERS: tuple[str, ...] = (*LIMIT, *INTERVAL, *CONCURRENCY, *API_POOL, *REMAINING, *RESET)
"""Every header name read (lower-case), in the order they are shown."""

MAX_LIMIT = 1_000_000
"""Largest announced limit taken (requests per interval)."""
MIN_INTERVAL_S = 0.001
MAX_INTERVAL_S = 3600.0
"""Shortest and longest announced interval taken (seconds)."""
SLOWEST_S = 60.0
"""An announced rate slower than one request per this many seconds is read as exactly that."""
MAX_CONCURRENCY = 10_000
MAX_REMAINING = 1_000_000_000
MAX_RESET_S = 86_400.0
"""Longest a reset may lie ahead (seconds); the budget cuts the pause to ``max_block_s`` besides."""
EPOCH_FROM = 1_000_000_000
"""A reset at or over this is epoch seconds (2001 onwards); under it, seconds from now."""

_INT = re.compile(r"\d{1,12}")
_INTERVAL = re.compile(r"(\d{1,9}(?:\.\d{1,9})?)\s*([a-z]{0,7})")
_UNIT_S = {
    "ms": 0.001,
    "": 1.0,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "m": 60.0,
    "min": 60.0,
    "mins": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hour": 3600.0,
    "hours": 3600.0,
}
_POOL = re.compile(r"[A-Za-z0-9._-]{1,64}")
_PRINTABLE = re.compile(r"[^\x20-\x7e]")


def http_date(value: str | None) -> float | None:
    """Epoch seconds of an HTTP-date (RFC 9110 IMF-fixdate and the obsolete forms), or None."""
    if not value:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000" or no zone: HTTP dates are always UTC
        when = when.replace(tzinfo=datetime.UTC)
    return when.timestamp()


def parse_retry_after(value: str | None, now: float | None = None, date: str | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header; None if absent or unreadable.

    Args:
        value: the header: delta-seconds (``"120"``) or an HTTP-date.
        now: the local wall clock in epoch seconds (default ``time.time()``).
        date: the response's own ``Date`` header. An HTTP-date ``Retry-After`` is measured against
            it when it parses (both come from the server's clock, so a skewed server clock cancels
            out), else against ``now``.
    """
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    when = http_date(value)
    if when is None:
        return None
    sent = http_date(date)
    reference = sent if sent is not None else (time.time() if now is None else now)
    return max(0.0, when - reference)


def _values(headers: Mapping[str, str], names: tuple[str, ...]) -> list[str]:
    """The comma-separated values of every header of ``names`` present (stripped, non-empty)."""
    found: list[str] = []
    for name in names:
        raw = headers.get(name)
        if raw is None:
            continue
        found += [part.strip() for part in str(raw)[:1024].split(",") if part.strip()]
    return found


def _ints(values: list[str], low: int, high: int) -> list[int]:
    return [min(high, max(low, int(v))) for v in values if _INT.fullmatch(v)]


def _interval_s(value: str) -> float | None:
    """``1s``, ``500ms``, ``1m``, ``60`` -> seconds (bounded), or None when unreadable."""
    match = _INTERVAL.fullmatch(value.lower())
    if match is None or match.group(2) not in _UNIT_S:
        return None
    seconds = float(match.group(1)) * _UNIT_S[match.group(2)]
    if not math.isfinite(seconds) or seconds <= 0:
        return None
    return min(MAX_INTERVAL_S, max(MIN_INTERVAL_S, seconds))


def _shown(headers: Mapping[str, str]) -> str:
    """The rate-limit headers present, as ``name: value; ...`` (printable ASCII, bounded)."""
    parts = []
    for name in LIMIT_HEADERS:
        raw = headers.get(name)
        if raw is not None:
            parts.append(f"{name}: {_PRINTABLE.sub('?', str(raw))[:64]}")
    return "; ".join(parts)[:512]


def read_announcement(
    headers: Mapping[str, str],
    *,
    default_interval_s: float,
    now: float,
) -> Announcement | None:
    """The limits an answer's ``headers`` announce, bounded (see the module docstring); None if none.

    Args:
        headers: the answer's headers, names lower-cased (as :class:`~syncd.upstream.http.Response` has them).
        default_interval_s: the interval of a limit sent without one (Crossref 1 s; Zenodo's per-minute
            window, 60 s).
        now: the local clock (epoch s), for a reset given in epoch seconds without a readable ``Date``.
    """
    limits = _ints(_values(headers, LIMIT), 1, MAX_LIMIT)
    intervals = [s for s in (_interval_s(v) for v in _values(headers, INTERVAL)) if s is not None]
    concurrency = _ints(_values(headers, CONCURRENCY), 1, MAX_CONCURRENCY)
    pools = [p for p in _values(headers, API_POOL) if _POOL.fullmatch(p)]
    remaining = _ints(_values(headers, REMAINING), 0, MAX_REMAINING)
    resets = _ints(_values(headers, RESET), 0, 10**12)
    limit = min(limits) if limits else None
    interval = max(intervals) if intervals else (default_interval_s if limit is not None else None)
    if limit is not None and interval is not None:
        interval = min(interval, limit * SLOWEST_S)  # never slower than one request per SLOWEST_S
    reset_s: float | None = None
    if resets:
        reset = min(resets)
        if reset >= EPOCH_FROM:
            sent = http_date(headers.get("date"))
            reset_s = reset - (sent if sent is not None else now)
        else:
            reset_s = float(reset)
        reset_s = min(MAX_RESET_S, max(0.0, reset_s))
    said = Announcement(
        limit=limit,
        interval_s=interval,
        in_flight=min(concurrency) if concurrency else None,
        api_pool=pools[0] if pools else None,
        remaining=min(remaining) if remaining else None,
        reset_s=reset_s,
        headers=_shown(headers),
    )
    return None if said.empty else said
