"""What the store and the shared budget hold now, read for ``/metrics``, ``/healthz`` and ``/status``.

Read at request time (a scrape, a page view), never cached: entries per kind and status with the
stale count (:meth:`syncd.store.repo.Store.counts`, the TTLs of :func:`syncd.road.policy.ttls`), every
budget pool (:meth:`syncd.budget.buckets.Budget.states` plus the ``requests_total`` / ``rate_limited_total``
counters of ``budget_pools``, migration 0011: every process sharing the store counted), the watch
lists with their last successful walk (``sync_state``), and the change feed (``changes``).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

from sqlalchemy import func, select

from syncd.daemon.alerts import CURSOR as ALERT_CURSOR
from syncd.normalize.changes import ALERT_TYPES
from syncd.passes.watches import describe
from syncd.registry import KINDS, SERIES_DOI_PREFIXES
from syncd.road import policy
from syncd.road.services import Services
from syncd.store.changes import StoredChange, latest_change_id, list_changes
from syncd.store.models import BudgetPool, Change
from syncd.store.repo import Store
from syncd.store.watches import get_sync_state, list_sync_states, list_watches, walk_status

__all__ = ["Facts", "PoolFacts", "WatchFacts", "read_facts", "recent_alerts", "recent_changes"]


@dataclass(frozen=True)
class PoolFacts:
    """One budget pool now.

    ``requests_total`` requests that reached upstream and ``rate_limited_total`` 429s among them
    (every process, since the store was made); ``tokens``/``burst``/``per_s`` (requests per second)
    and ``in_flight``/``in_flight_limit`` the effective limits; ``blocked_for_s`` seconds left of a
    429 block or a pause; ``announced_*`` what upstream's rate-limit headers last said (None: nothing
    in force); ``window_sends`` requests sent in the announced window.
    """

    pool: str
    requests_total: int
    rate_limited_total: int
    tokens: float
    burst: float
    per_s: float
    in_flight: int
    in_flight_limit: int
    blocked_for_s: float
    block_reason: str | None
    offline: bool
    failures: int
    announced_limit: int | None
    announced_interval_s: float | None
    announced_in_flight: int | None
    announced_remaining: int | None
    api_pool: str | None
    window_sends: int


@dataclass(frozen=True)
class WatchFacts:
    """One watch and how its walks went.

    ``watch`` its one-line description, ``status`` its walk status
    (:func:`syncd.store.watches.walk_status`), ``last_success_at`` (epoch s, None: never), works
    ``seen`` of ``total`` by the current or last Crossref walk.
    """

    id: int
    kind: str
    watch: str
    label: str | None
    status: str
    last_success_at: float | None
    seen: int | None
    total: int | None


@dataclass(frozen=True)
class Facts:
    """Everything read at one time ``now`` (epoch s).

    ``entries``: rows of ``{"kind", "status", "entries", "stale", "fresh"}``; ``changes_latest_id``
    the newest change id (grows with every change recorded, 0 for an empty feed); ``changes_by_type``
    changes kept in the feed per type; ``alerts_pending`` watched changes past the alert cursor not
    yet looked at (None before the first alert pass); ``write_problem`` why the store cannot be
    written (None: it can).
    """

    now: float
    entries: list[dict[str, object]]
    pools: list[PoolFacts]
    watches: list[WatchFacts]
    changes_latest_id: int
    changes_by_type: dict[str, int]
    alerts_pending: int | None
    database_size_bytes: int | None
    write_problem: str | None


def _counters(store: Store) -> dict[str, tuple[int, int]]:
    """``budget_pools`` counters: pool -> (requests_total, rate_limited_total)."""
    with store.read() as conn:
        rows = conn.execute(select(BudgetPool.pool, BudgetPool.requests_total, BudgetPool.rate_limited_total))
        return {r.pool: (int(r.requests_total or 0), int(r.rate_limited_total or 0)) for r in rows}


def _pools(svc: Services, now: float) -> list[PoolFacts]:
    counted = _counters(svc.store)
    out = []
    for s in svc.budget.states():
        said = s.announced
        requests, refused = counted.get(s.pool, (0, 0))
        out.append(
            PoolFacts(
                pool=s.pool,
                requests_total=requests,
                rate_limited_total=refused,
                tokens=round(s.tokens, 3),
                burst=float(s.limits.burst),
                per_s=float(s.limits.per_s),
                in_flight=s.in_flight,
                in_flight_limit=s.limits.in_flight,
                blocked_for_s=round(s.blocked_for(now), 1),
                block_reason=(s.block_reason or "429") if s.blocked_until > now else None,
                offline=s.offline(now),
                failures=s.failures,
                announced_limit=said.limit if said else None,
                announced_interval_s=said.interval_s if said else None,
                announced_in_flight=said.in_flight if said else None,
                announced_remaining=said.remaining if said else None,
                api_pool=said.api_pool if said else None,
                window_sends=len(s.window_sends),
            )
        )
    return out


def _watches(store: Store, now: float) -> list[WatchFacts]:
    states = list_sync_states(store)
    out = []
    for w in list_watches(store):
        st = states.get(f"watch:{w.id}")
        out.append(
            WatchFacts(
                id=w.id,
                kind=w.kind,
                watch=describe(w),
                label=w.label,
                status=walk_status(st, now),
                last_success_at=st.last_success_at if st else None,
                seen=st.seen if st else None,
                total=st.total if st else None,
            )
        )
    return out


def _changes_by_type(store: Store) -> dict[str, int]:
    counts: Counter[str] = Counter()
    with store.read() as conn:
        for types, n in conn.execute(select(Change.types, func.count()).group_by(Change.types)):
            for t in str(types).split(","):
                if t:
                    counts[t] += int(n)
    return dict(sorted(counts.items()))


def _alerts_pending(store: Store, latest: int) -> int | None:
    state = get_sync_state(store, ALERT_CURSOR)
    cursor = (state.checkpoint or {}).get("change_id") if state is not None else None
    if not isinstance(cursor, int):
        return None
    if latest <= cursor:
        return 0
    pending = list_changes(
        store,
        after_id=cursor,
        types=ALERT_TYPES,
        watched_only=True,
        series_prefixes=SERIES_DOI_PREFIXES,
        limit=1000,
    )
    return len(pending)


def read_facts(svc: Services, now: float | None = None) -> Facts:
    """Read the store and the budget of ``svc`` now (several read transactions, no write).

    Raises:
        StoreError: the store cannot be read.
    """
    now = time.time() if now is None else now
    latest = latest_change_id(svc.store)
    return Facts(
        now=now,
        entries=svc.store.counts(policy.staleness(policy.ttls(svc.settings.ttl, KINDS.values()), now)),
        pools=_pools(svc, now),
        watches=_watches(svc.store, now),
        changes_latest_id=latest,
        changes_by_type=_changes_by_type(svc.store),
        alerts_pending=_alerts_pending(svc.store, latest),
        database_size_bytes=svc.store.size_bytes(),
        write_problem=svc.store.write_problem(),
    )


def recent_changes(store: Store, limit: int = 20) -> list[StoredChange]:
    """The newest ``limit`` changes of the feed, newest first."""
    return list_changes(store, limit=limit)


def recent_alerts(store: Store, limit: int = 20) -> list[StoredChange]:
    """The newest ``limit`` alerting changes (watched retractions, withdrawals, deletions), newest first."""
    return list_changes(
        store, types=ALERT_TYPES, watched_only=True, series_prefixes=SERIES_DOI_PREFIXES, limit=limit
    )
