"""Every freshness decision and the provenance of every answer, as pure functions.

Like requests-cache's ``CacheActions``, this module does no I/O: the lookups ask for a decision
(through :class:`syncd.road.local_first.Runner`) and act on it. Inputs are plain values (:class:`EntryFacts`,
built by the caller from the stored row: :func:`syncd.road.local_first.facts_of`; :class:`UpstreamFacts`), so
every rule is tested without a database or a network. The rules, with the RFC sections they implement:

* the lifetime of an entry per kind and status (:func:`ttl_s`, :func:`ttls`; each kind's ``ttl`` setting
  in its :class:`~syncd.kinds.Kind`);
* the one staleness rule (RFC 9111 §4.2 freshness, clock skew included): :func:`fresh_bounds`, used
  by :meth:`EntryFacts.fresh`, by the CLI's rows and, as :func:`staleness`, by every store query that
  selects or counts stale entries (:class:`syncd.store.staleness.Staleness`);
* serve / revalidate / serve-stale / fetch / error (:func:`decide`), where a held copy that must be
  refetched whatever its age (a partial work, a ``cursor=*`` page past :data:`CURSOR_LIFETIME_S`)
  counts as forced;
* coalescing: a fetch that another caller finished meanwhile is answered from its row
  (:func:`coalesced`);
* a miss never hides a stored body (:func:`after_fetch`), a failure answers what is held
  (:func:`after_failure`);
* kept file previews (:func:`preview_covers`, :func:`preview_rescues`);
* the provenance builders (:func:`from_store`, :func:`stale`, :func:`from_upstream`, :func:`merged`)
  and the typed revalidation :class:`Outcome` with its :class:`Tally`.

Actions (and the RFC sections they implement):
    SERVE       the stored entry is fresh (RFC 9111 §4.2, :func:`fresh_bounds`): answer from the
                store, no request.
    REVALIDATE  the stored entry is past its lifetime, or a refetch is forced: ask upstream within
                the call's deadline (RFC 9111 §4.3: a conditional request where upstream gave
                validators, else the content hash decides "unchanged"); on failure answer the
                stored entry flagged stale (stale-if-error, RFC 5861 §4: :func:`after_failure`).
    SERVE_STALE the stored entry is past its lifetime and upstream cannot be used now (breaker open,
                pool blocked by a 429 however short the block, no time left, read-only store):
                answer it at once, flagged stale with ``upstream_error`` (and ``retry_after_s`` when
                blocked); no request, no retry loop. Upstream failing: stale-if-error (RFC 5861 §4);
                upstream only busy: the stale answer now and the revalidation left to the daemon's
                sweep, syncd's stale-while-revalidate (RFC 5861 §3, revalidated in the background).
    FETCH       nothing stored: fetch from upstream within the budget and the deadline.
    ERROR       nothing stored and upstream cannot be used: a declared error (``reason``), since
                RFC 5861 §4 has nothing to serve.
"""

from __future__ import annotations

import dataclasses
import enum
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from syncd.errors import BudgetExhausted, UpstreamError, UpstreamOffline, UpstreamRateLimited, UpstreamTimeout
from syncd.kinds import Kind
from syncd.road.outcomes import CHANGED, UNCHANGED, Outcome, Result, Tally, failed
from syncd.store.engine import READ_ONLY_HINT
from syncd.store.staleness import Staleness

if TYPE_CHECKING:
    from syncd.config import TtlSettings

__all__ = [
    "CHANGED",
    "CLOCK_SKEW_S",
    "CURSOR_LIFETIME_S",
    "UNCHANGED",
    "Action",
    "Decision",
    "EntryFacts",
    "Outcome",
    "Provenance",
    "Result",
    "Tally",
    "UpstreamFacts",
    "after_failure",
    "after_fetch",
    "answered",
    "coalesced",
    "cursor_expired",
    "decide",
    "error_for",
    "failed",
    "fresh_bounds",
    "from_store",
    "from_upstream",
    "iso",
    "merged",
    "of_bytes",
    "outcome_of",
    "preview_covers",
    "preview_rescues",
    "read_now",
    "stale",
    "staleness",
    "ttl_s",
    "ttls",
    "unstored",
    "unstored_notice",
]

CLOCK_SKEW_S = 5.0
"""A ``validated_at`` more than this many seconds after "now" means the clock stepped back (or another
host's clock runs ahead): the entry's age is unknown, so it is not fresh (:func:`fresh_bounds`, issue 27:
a timestamp written in the future is stale now)."""

CURSOR_LIFETIME_S = 240.0
"""A stored ``cursor=*`` page older than this is refetched: its ``next-cursor`` may have expired upstream
(Crossref keeps cursors about 5 minutes, BC-19)."""


# --------------------------------------------------------------------------------------------------
# lifetimes


def ttl_s(ttl: TtlSettings, kind: Kind, status: str) -> float:
    """Lifetime (s) of a ``kind`` entry: ``ok`` its ``ttl.*``, ``gone`` ``ttl.deleted``, else ``ttl.miss``.

    A deleted record (``gone``) is rechecked rarely; the other misses hourly by default.
    """
    setting = kind.ttl
    if status == "gone":
        return ttl.deleted
    if status != "ok":
        return ttl.miss
    return float(getattr(ttl, setting))


def ttls(
    ttl: TtlSettings, kinds: Iterable[Kind], *, background: bool = False
) -> dict[tuple[str, str], float]:
    """Lifetime per ``(kind name, status)`` for each of ``kinds`` and each status it can have.

    With ``background`` (the daemon's sweep), search and version pages are left out: they are
    fetched again when someone asks, so background revalidation never spends the tight search
    budgets (Crossref list pool 3/s, Zenodo search ~30/min) on pages nobody reads.
    """
    return {
        (kind.name, status): ttl_s(ttl, kind, status)
        for kind in kinds
        if not (background and kind.on_demand)
        for status in kind.statuses
    }


def cursor_expired(cursor: str | None, validated_at: float | None, now: float) -> bool:
    """Whether a stored ``cursor=*`` page must be refetched: older than :data:`CURSOR_LIFETIME_S`."""
    return cursor == "*" and validated_at is not None and now - validated_at > CURSOR_LIFETIME_S


class Action(enum.Enum):
    """What the local-first path does for one lookup."""

    SERVE = "serve"
    REVALIDATE = "revalidate"
    SERVE_STALE = "serve_stale"
    FETCH = "fetch"
    ERROR = "error"


def fresh_bounds(ttl_s: float, now: float) -> tuple[float, float]:
    """The one staleness rule: an entry is fresh at ``now`` while ``before < validated_at <= after``.

    Freshness (RFC 9111 §4.2): the entry's age (``now - validated_at``, seconds) is below its lifetime
    ``ttl_s``; a lifetime of 0 or less is never fresh. Clock skew (issue 27, clocks that jump): a
    ``validated_at`` more than :data:`CLOCK_SKEW_S` after ``now`` was written by a clock that ran
    ahead (or stepped back since), so its age is unknown and the entry is stale now, never fresh
    "until the clock catches up". Returns ``(before, after)`` in epoch seconds; ``before == after``
    when nothing is fresh. :meth:`EntryFacts.fresh`, the CLI's entry rows and the store's stale
    queries (:func:`staleness`) all derive from this function.
    """
    after = now + CLOCK_SKEW_S
    return (now - ttl_s if ttl_s > 0 else after), after


def staleness(ttls: Mapping[tuple[str, str], float], now: float) -> Staleness:
    """The bounds of :func:`fresh_bounds` at ``now`` for each ``(kind, status)`` lifetime in ``ttls``.

    Handed to the store's stale queries (:meth:`syncd.store.repo.Store.stale`,
    :meth:`~syncd.store.repo.Store.counts`, :func:`syncd.store.maintenance.list_entries`), which turn
    them into SQL (:meth:`syncd.store.staleness.Staleness.clause`); pairs not in ``ttls`` are never stale.
    """
    _, after = fresh_bounds(0.0, now)
    return Staleness({pair: fresh_bounds(ttl, now)[0] for pair, ttl in ttls.items()}, after)


@dataclass(frozen=True)
class EntryFacts:
    """The facts of one stored entry the policy decides on (epoch seconds; ``ttl_s`` in seconds).

    Built by the caller from the stored row (:func:`syncd.road.local_first.facts_of`); the policy never
    sees the
    store's row type. ``validated_at``: when upstream last confirmed the content (the age's origin,
    RFC 9111 §4.2.3); ``ttl_s``: its lifetime for its kind and status (:func:`ttl_s`; None when the
    caller only wants a provenance, then :meth:`fresh` cannot be asked); ``fetched_at``: when the
    body was stored (None: same as ``validated_at``); ``content_hash``: syncd's own validator of the
    content (the ``etag`` of every answer); ``etag`` / ``last_modified``: upstream's validators
    (RFC 9111 §4.3.1 conditional request); ``last_error``: the reason code of the last failed
    revalidation or kept miss (None after a success).
    """

    validated_at: float
    ttl_s: float | None = None
    refetch: bool = False
    """The held copy must be fetched again whatever its age (a partial work, an expired cursor page)."""
    status: str = "ok"
    fetched_at: float | None = None
    content_hash: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    last_error: str | None = None

    @property
    def stored_at(self) -> float:
        """When the held body was stored (``fetched_at``, else ``validated_at``), epoch seconds."""
        return self.validated_at if self.fetched_at is None else self.fetched_at

    def age_s(self, now: float) -> float:
        """Seconds since upstream last confirmed the entry (never negative)."""
        return max(0.0, now - self.validated_at)

    def fresh(self, now: float) -> bool:
        """True while the entry is within its lifetime (:func:`fresh_bounds`, RFC 9111 §4.2).

        A ``validated_at`` more than :data:`CLOCK_SKEW_S` ahead of ``now`` is a clock that stepped
        back: the age is unknown, so the entry is not fresh (revalidated, or answered stale), never
        fresh "until the clock catches up". (The runner's ``now`` never moves backwards either:
        :class:`syncd.road.local_first.Runner`.)

        Raises:
            ValueError: the facts carry no lifetime (``ttl_s`` None).
        """
        if self.ttl_s is None:
            raise ValueError("EntryFacts without ttl_s: freshness cannot be decided")
        before, after = fresh_bounds(self.ttl_s, now)
        return before < self.validated_at <= after


@dataclass(frozen=True)
class UpstreamFacts:
    """State of the upstream pool: breaker open, 429 block end (epoch seconds), time left (seconds).

    ``read_only``: the store cannot be written by this process, so upstream is never asked (an answer
    could not be stored): stored entries are answered, stale ones flagged :data:`READ_ONLY_REASON`.
    """

    offline: bool = False
    blocked_until: float = 0.0
    deadline_left_s: float = 5.0
    read_only: bool = False


READ_ONLY_REASON = "store_read_only"
"""``cache.upstream_error`` of a stale answer served because the store is read-only for this user."""
UNREACHABLE_REASON = "store_unreachable"
"""``cache.store_error`` of an upstream answer not stored because the lab database cannot be reached."""


@dataclass(frozen=True)
class Decision:
    """The outcome of :func:`decide`.

    ``action``, whether the answer will be flagged ``stale``, and for SERVE_STALE and ERROR the
    ``reason`` code (``upstream_unavailable``, ``rate_limited``, ``request_timeout``)
    with ``retry_after_s`` when a wait is known.
    """

    action: Action
    stale: bool = False
    reason: str | None = None
    retry_after_s: float | None = None


def decide(
    entry: EntryFacts | None,
    now: float,
    upstream: UpstreamFacts,
    *,
    force_refresh: bool = False,
) -> Decision:
    """Choose serve / revalidate / serve-stale / fetch / error for one lookup.

    The rules, as the HTTP caching RFCs name them: a fresh entry is served without a request
    (RFC 9111 §4.2, freshness from the kind's ``ttl.*``); a stale or forced one is revalidated (RFC 9111
    §4.3: a conditional request where upstream gave validators, else our content hash decides); when
    upstream cannot be used (breaker open, 429 block, no time left, read-only store) a held entry is
    served stale and flagged (stale-if-error, RFC 5861 §4), and with nothing held the declared error
    is raised by the caller.

    Args:
        entry: the stored entry's facts, or None when nothing is stored.
        now: current time, epoch seconds.
        upstream: the pool's breaker, 429 block and the call's remaining deadline.
        force_refresh: revalidate even a fresh entry (``syncd cache refresh``); ``entry.refetch``
            counts as forced.
    """
    force_refresh = force_refresh or (entry is not None and entry.refetch)
    blocked_for = max(0.0, upstream.blocked_until - now)
    unusable_reason: str | None = None
    retry_after: float | None = None
    if upstream.read_only:
        unusable_reason = READ_ONLY_REASON
    elif upstream.offline:
        unusable_reason = "upstream_unavailable"
    elif blocked_for > 0 and (entry is not None or blocked_for >= upstream.deadline_left_s):
        # a held entry is answered at once under any block; with nothing held a short block is waited
        unusable_reason, retry_after = "rate_limited", round(blocked_for, 3)
    elif upstream.deadline_left_s <= 0:
        unusable_reason = "request_timeout"

    if entry is None:
        if unusable_reason is not None:
            return Decision(Action.ERROR, reason=unusable_reason, retry_after_s=retry_after)
        return Decision(Action.FETCH)
    if entry.fresh(now) and not force_refresh:
        return Decision(Action.SERVE)
    stale = not entry.fresh(now)
    if unusable_reason is not None:
        return Decision(Action.SERVE_STALE, stale=stale, reason=unusable_reason, retry_after_s=retry_after)
    return Decision(Action.REVALIDATE, stale=stale)


def error_for(
    decision: Decision, pool: str, key: str = "", service: str | None = None
) -> UpstreamError | BudgetExhausted:
    """The declared error of an ERROR decision for ``key`` in ``pool`` (nothing stored, upstream unusable).

    ``service``: the public service behind ``pool`` (:meth:`syncd.budget.pools.Pools.service`), put in the
    error's data so the client is told the service, never the pool.
    """
    named = {"pool": pool, "service": service} if service is not None else {"pool": pool}
    if decision.reason == READ_ONLY_REASON:
        return UpstreamOffline(
            f"{key} is not stored, and the store is read-only for this user (no upstream request)",
            hint=READ_ONLY_HINT,
            **named,
        )
    if decision.reason == "rate_limited":
        return UpstreamRateLimited(
            f"{pool} is rate limited and nothing is stored", retry_after_s=decision.retry_after_s, **named
        )
    if decision.reason == "request_timeout":
        return UpstreamTimeout(f"no time left to ask upstream ({service or pool})")
    return UpstreamOffline(f"upstream ({pool}) is offline and nothing is stored", **named)


def coalesced(before: EntryFacts | None, again: EntryFacts | None, now: float, window_s: float) -> bool:
    """Whether another caller fetched the entry while this one waited: answer ``again`` without a request.

    True when the entry re-read under the fetch lock (``again``) was confirmed after the one read
    before (``before``, None when nothing was stored) and within the last ``window_s`` seconds (the
    call's deadline).
    """
    return (
        again is not None
        and (before is None or again.validated_at > before.validated_at)
        and again.validated_at >= now - window_s
    )


# --------------------------------------------------------------------------------------------------
# provenance


def iso(ts: float) -> str:
    """Epoch seconds -> ISO 8601 UTC with a ``Z`` suffix, second precision."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


@dataclass(frozen=True)
class Provenance:
    """Where an answer came from (DESIGN.md "Every tool answer says where it came from").

    ``source``: ``store`` (fresh, no request), ``upstream`` (fetched or confirmed by upstream in
    this call) or ``store-stale`` (past its lifetime and upstream could not be used).
    ``upstream_error``: the reason code of the failure that made the answer stale. ``etag``: syncd's
    own validator for the content (the content hash), the same for every upstream, so a client can
    tell whether an answer changed since an earlier one. ``store_error``: the answer came from
    upstream but could not be stored (the reason code, ``store_unavailable``): the next call asks
    upstream again.
    """

    source: str
    fetched_at: float
    validated_at: float
    stale: bool
    upstream_error: str | None = None
    etag: str | None = None
    store_error: str | None = None

    def as_dict(self, now: float | None = None) -> dict[str, Any]:
        """The ``cache`` block of a tool answer (times ISO 8601 UTC, ``age_s`` in seconds)."""
        now = time.time() if now is None else now
        out: dict[str, Any] = {
            "source": self.source,
            "fetched_at": iso(self.fetched_at),
            "validated_at": iso(self.validated_at),
            "age_s": round(max(0.0, now - self.validated_at), 3),
            "stale": self.stale,
        }
        if self.upstream_error:
            out["upstream_error"] = self.upstream_error
        if self.etag:
            out["etag"] = f'"{self.etag[:32]}"'
        if self.store_error:
            out["stored"] = False
            out["store_error"] = self.store_error
        return out


def read_now(now: float) -> Provenance:
    """An answer the store's own index or feed gives at ``now`` (epoch s), no entry behind it: fresh, age 0.

    The reference index (``syncd_cited_by``) and the change feed (``syncd_list_changes``) answer so.
    """
    return Provenance("store", now, now, stale=False)


def from_store(entry: EntryFacts) -> Provenance:
    """A fresh stored entry answered without a request (RFC 9111 §4.2)."""
    return Provenance("store", entry.stored_at, entry.validated_at, stale=False, etag=entry.content_hash)


def stale(entry: EntryFacts, reason: str | None, *, is_stale: bool = True) -> Provenance:
    """A stored entry answered because upstream could not be used (``reason``: the failure's code).

    Stale-if-error (RFC 5861 §4), or served stale while the revalidation waits for the sweep (RFC
    5861 §3); ``is_stale`` False for a fresh entry answered so (a forced refresh that could not be made).
    """
    return Provenance(
        "store-stale",
        entry.stored_at,
        entry.validated_at,
        stale=is_stale,
        upstream_error=reason,
        etag=entry.content_hash,
    )


def from_upstream(entry: EntryFacts) -> Provenance:
    """An entry fetched or confirmed by upstream in this call (RFC 9111 §4.3.3/§4.3.4: a 304 or a 200)."""
    return Provenance("upstream", entry.stored_at, entry.validated_at, stale=False, etag=entry.content_hash)


def unstored(entry: EntryFacts, reason: str) -> Provenance:
    """An answer upstream gave in this call that could not be stored (``reason``: why, a reason code).

    ``entry`` is the facts of the answer in stored form (:func:`syncd.road.local_first.unstored_entry`); the
    ``cache`` block says ``source: upstream``, ``stored: false`` and ``store_error``.
    """
    return Provenance(
        "upstream",
        entry.stored_at,
        entry.validated_at,
        stale=False,
        etag=entry.content_hash,
        store_error=reason,
    )


def unstored_notice(prov: Provenance) -> str | None:
    """The notice of an answer that was not stored (:func:`unstored`), or None for any other."""
    return unstored_sentence(prov.store_error)


def unstored_sentence(store_error: str | None) -> str | None:
    """The notice of an answer whose ``cache.store_error`` is ``store_error`` (None: stored, no notice).

    Added once for every tool by the MCP server's answer envelope (:mod:`syncd.server.app`).
    """
    if store_error == UNREACHABLE_REASON:
        return (
            "The lab cache (PostgreSQL) cannot be reached: this answer came from upstream and was not "
            "stored; syncd tries the database again every 30 s and stores answers once it is back."
        )
    if store_error:
        return f"This answer came from upstream but could not be stored ({store_error})."
    return None


def answered(decision: Decision, entry: EntryFacts) -> Provenance | None:
    """The provenance of a decision answered from the store (SERVE, SERVE_STALE), else None."""
    if decision.action is Action.SERVE:
        return from_store(entry)
    if decision.action is Action.SERVE_STALE:
        return stale(entry, decision.reason, is_stale=decision.stale)
    return None


def after_fetch(before: EntryFacts | None, fresh: EntryFacts) -> Provenance:
    """The provenance of what a fetch stored; a miss never hides a stored body.

    When upstream said 404 for a body we hold, the store kept the body and recorded the error
    (``last_error``, ``validated_at`` unchanged): the answer is that body flagged stale (BC-09).
    """
    if (
        fresh.last_error
        and before is not None
        and fresh.status == "ok"
        and fresh.validated_at == before.validated_at
    ):
        return stale(fresh, fresh.last_error)
    return from_upstream(fresh)


def after_failure(entry: EntryFacts, decision: Decision, reason: str) -> Provenance:
    """Stale-if-error (RFC 5861 §4): the held ``entry`` answered after upstream failed with ``reason``."""
    return stale(entry, reason, is_stale=decision.stale)


def merged(*provs: Provenance | None) -> Provenance:
    """One provenance for an answer built from several entries.

    The least trustworthy one wins (``store-stale`` over ``upstream`` over ``store``), times the oldest.
    """
    given = [p for p in provs if p is not None]
    rank = {"store-stale": 0, "upstream": 1, "store": 2}
    worst = min(given, key=lambda p: rank.get(p.source, 0))
    return Provenance(
        worst.source,
        min(p.fetched_at for p in given),
        min(p.validated_at for p in given),
        stale=any(p.stale for p in given),
        upstream_error=next((p.upstream_error for p in given if p.upstream_error), None),
    )


# --------------------------------------------------------------------------------------------------
# kept file previews


def flagged_stale(prov: Provenance, reason: str | None = None) -> Provenance:
    """``prov`` flagged stale (a partial copy answered, a page built from a stale store), ``reason`` kept.

    ``reason``: the failure that made it stale (default: ``prov``'s own ``upstream_error``).
    """
    return dataclasses.replace(prov, stale=True, upstream_error=reason or prov.upstream_error)


def now_from(source: str, now: float | None = None, *, reason: str | None = None) -> Provenance:
    """An answer made now without a stored entry behind it (a built-in table, a search of nothing held).

    ``source``: ``store`` (syncd's own knowledge), ``upstream`` (asked now) or ``store-stale`` (stale,
    with ``reason``).
    """
    now = time.time() if now is None else now
    return Provenance(source, now, now, stale=source == "store-stale", upstream_error=reason)


def from_many(
    fetched_at: Iterable[float], validated_at: Iterable[float], reason: str | None = None
) -> Provenance:
    """A stale answer assembled from several stored entries: the oldest fetch and validation times.

    Offline search answers (stored works or records matching the terms, upstream not asked):
    ``store-stale``, ``reason`` the failure that sent the search to the mirror (if any). With no
    entries, a stale answer of now.
    """
    now = time.time()
    return Provenance(
        "store-stale",
        min(fetched_at, default=now),
        min(validated_at, default=now),
        stale=True,
        upstream_error=reason,
    )


def preview_covers(kept_size: int, file_size: int | None, offset: int, length: int) -> bool:
    """Whether a kept preview of ``kept_size`` bytes answers ``[offset, offset+length)`` without a request."""
    whole = file_size is not None and kept_size >= file_size
    return whole or offset + length <= kept_size


def preview_rescues(kept_size: int, offset: int) -> bool:
    """Whether a kept preview holds part of a range upstream failed to serve (answered, flagged)."""
    return offset < kept_size


def of_bytes(record: Provenance, source: str, upstream_error: str | None, now: float) -> Provenance:
    """The provenance of file bytes shown with ``record``'s provenance (``zenodo_read_file``).

    Bytes read from upstream now are ``upstream`` (fetched and validated ``now``); bytes from the kept
    preview keep the record's times as ``store``, or ``store-stale`` with ``upstream_error`` when
    upstream failed (or the record itself was stale).
    """
    if source == "upstream":
        return Provenance("upstream", now, now, stale=False, etag=record.etag)
    if upstream_error:
        return replace(record, source="store-stale", stale=True, upstream_error=upstream_error)
    return record if record.source == "store-stale" else replace(record, source="store")


# --------------------------------------------------------------------------------------------------
# revalidation outcomes (the types: :mod:`syncd.road.outcomes`)


def outcome_of(before: EntryFacts, stored: EntryFacts) -> Outcome:
    """The outcome of a refetch (validation, RFC 9111 §4.3) of ``before`` that stored ``stored``.

    A recorded error with ``validated_at`` unchanged is a failure (the body was kept); otherwise
    changed when the content hash or the status moved.
    """
    if stored.last_error and stored.validated_at == before.validated_at:
        return failed(stored.last_error)
    same = (stored.content_hash, stored.status) == (before.content_hash, before.status)
    return UNCHANGED if same else CHANGED
