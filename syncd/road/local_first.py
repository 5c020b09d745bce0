"""The local-first road: read the store, ask :mod:`syncd.road.policy` for a plan, hold the lock, fetch.

Every local-first lookup of every kind goes through :func:`local_first` (the one caller of
:meth:`Runner.claim`)::

    stored, provenance = local_first(svc.runner, WORK, doi.key, fetch, deadline=deadline, force=force)

The runner names no kind and owns no client: it receives the :class:`~syncd.kinds.Kind` (its pool
and ``ttl.*`` setting) and the lookup's ``fetch`` (the lookup's own client, storing what upstream
answered). The road plans (:meth:`Runner.plan`: the stored entry and the policy's decision), claims
the plan (:meth:`Runner.claim`: answered from the store when the policy says so, the policy's
declared error when nothing is stored and upstream cannot be used, or the fetch to do under a
per-entry lock, identical lookups in this process coalesced), then calls ``fetch`` and reports
through :meth:`Claim.fetched` or :meth:`Claim.failed` (stale-if-error, RFC 5861 §4), which build the
provenance through the policy. Batch paths (:mod:`syncd.crossref.lookups_batch`) plan through the
same runner and settle their fetched items through the policy.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, overload

from syncd.budget.buckets import Budget
from syncd.errors import BudgetExhausted, StoreError, StoreUnreachable, UpstreamError
from syncd.kinds import Kind
from syncd.road import policy
from syncd.road.policy import Action, Decision, EntryFacts, Provenance, UpstreamFacts
from syncd.store.repo import EntryContent, Store, StoredEntry
from syncd.upstream.http import Deadline

if TYPE_CHECKING:
    from syncd.config import TtlSettings

__all__ = [
    "Answer",
    "Claim",
    "Lookup",
    "Plan",
    "Runner",
    "facts_of",
    "local_first",
    "unstored_entry",
]

log = logging.getLogger("syncd.cache")

PROBE_SHARE = 0.5
"""Share of the call's remaining deadline a revalidation waits for the store's write lock before it
answers the held entry stale (``store_unavailable``) instead."""

Answer = tuple[StoredEntry, Provenance]
"""A stored entry and where it came from."""


@overload
def facts_of(entry: StoredEntry, ttl_s: float | None = None, *, refetch: bool = False) -> EntryFacts: ...
@overload
def facts_of(entry: None, ttl_s: float | None = None, *, refetch: bool = False) -> None: ...
def facts_of(
    entry: StoredEntry | None, ttl_s: float | None = None, *, refetch: bool = False
) -> EntryFacts | None:
    """The policy's plain facts of a stored ``entry`` (None stays None): the one row -> facts mapping.

    ``ttl_s``: the entry's lifetime in seconds (:func:`syncd.road.policy.ttl_s`), needed only to decide
    freshness; ``refetch``: the held copy must be fetched again whatever its age.
    """
    if entry is None:
        return None
    return EntryFacts(
        entry.validated_at,
        ttl_s,
        refetch,
        status=entry.status,
        fetched_at=entry.fetched_at,
        content_hash=entry.content_hash,
        etag=entry.etag,
        last_modified=entry.last_modified,
        last_error=entry.last_error,
    )


@dataclass(frozen=True)
class Lookup:
    """One answered lookup.

    ``entry`` is the stored entry, ``provenance`` where it came from and, for Zenodo, how the
    requested id led to it (``resolved_from``: ``version``, ``concept_to_latest``, ``external_doi``).
    """

    entry: StoredEntry
    provenance: Provenance
    resolved_from: str | None = None


@dataclass(frozen=True)
class Plan:
    """What the policy decided for one lookup of ``(kind, key)``.

    ``entry`` is the stored entry read before deciding (None when nothing is stored), ``pool`` the
    budget pool of the kind, ``force`` whether the lookup forces a refetch (asked, partial copy,
    expired cursor).
    """

    kind: Kind
    key: str
    pool: str
    deadline: Deadline
    entry: StoredEntry | None
    force: bool
    decision: Decision


class Claim:
    """A claimed plan: ``answer`` (stored, or fetched meanwhile by another caller), or a fetch to do.

    When ``answer`` is None the caller fetches, stores, and returns :meth:`fetched` or :meth:`failed`.
    """

    def __init__(self, store: Store, plan: Plan, answer: Answer | None) -> None:
        self._store = store
        self.plan = plan
        self.answer = answer

    @property
    def entry(self) -> StoredEntry | None:
        """The stored entry the fetch revalidates (None: nothing stored)."""
        return self.plan.entry

    def fetched(self, fresh: StoredEntry) -> Answer:
        """The answer after the fetch stored ``fresh`` (a miss never hides a stored body)."""
        return fresh, policy.after_fetch(facts_of(self.plan.entry), facts_of(fresh))

    def failed(self, exc: UpstreamError | BudgetExhausted) -> Answer:
        """Stale-if-error: the held entry flagged with ``exc.reason`` (recorded beside it).

        Raises:
            UpstreamError, BudgetExhausted: ``exc`` itself when nothing is stored.
        """
        entry = self.plan.entry
        if entry is None:
            raise exc
        log.info("event=serve_stale kind=%s key=%s reason=%s", entry.kind, entry.key, exc.reason)
        if self._store.write_problem() is None:
            # bookkeeping only: the answer is the stored entry whether or not this is recorded (a
            # store that cannot be written logs its cause once)
            with contextlib.suppress(StoreError):
                self._store.mark_error(entry.id, exc.reason)
        return entry, policy.after_failure(facts_of(entry), self.plan.decision, exc.reason)


class Runner:
    """Plans and claims local-first lookups over ``store`` with the shared ``budget``.

    Args:
        store: the shared store.
        budget: the request budget (its pool state feeds the policy; the runner sends no request).
            Its clock (:meth:`~syncd.budget.buckets.Budget.clock`, epoch seconds) is the runner's "now" for
            freshness, so one injected clock moves both (tests).
        ttl: the ``ttl.*`` settings.
        read_only: the store cannot be written by this process: upstream is never asked, stored
            entries are answered (an input of every decision, :class:`syncd.road.policy.UpstreamFacts`).
    """

    def __init__(self, store: Store, budget: Budget, ttl: TtlSettings, *, read_only: bool = False) -> None:
        self._store = store
        self._budget = budget
        self._ttl = ttl
        self.read_only = read_only
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._locks_guard = threading.Lock()

    def unstored(self, exc: StoreUnreachable, kind: Kind, key: str) -> Answer:
        """What upstream answered for ``(kind, key)`` (``exc.content``), unstored (the database is down).

        Raises:
            StoreUnreachable: ``exc`` itself when it carries no content, or the content of another
                entry (a side write of the fetch, e.g. a work of a search page): never answered for this.
        """
        content = exc.content
        if content is None or content.kind != kind.name or content.key != key:
            raise exc
        entry = unstored_entry(exc.content, self._budget.clock())
        log.info("event=answered_unstored kind=%s key=%s cause=unreachable", entry.kind, entry.key)
        return entry, policy.unstored(facts_of(entry), policy.UNREACHABLE_REASON)

    def _lock(self, kind: str, key: str) -> threading.Lock:
        with self._locks_guard:
            if len(self._locks) > 4096:
                self._locks = {k: v for k, v in self._locks.items() if v.locked()}
            return self._locks.setdefault((kind, key), threading.Lock())

    @property
    def store(self) -> Store:
        """The shared store the runner reads."""
        return self._store

    def _decide(self, kind: Kind, entry: StoredEntry | None, deadline: Deadline, force: bool) -> Decision:
        now = self._budget.clock()
        facts = facts_of(entry, policy.ttl_s(self._ttl, kind, entry.status)) if entry else None
        if facts is not None and facts.fresh(now) and not force:
            return Decision(Action.SERVE)  # the warm path reads no budget state
        state = self._budget.state(kind.pool)
        upstream = UpstreamFacts(
            offline=state.offline(now),
            blocked_until=state.blocked_until,
            deadline_left_s=deadline.remaining(),
            read_only=self.read_only,
        )
        return policy.decide(facts, now, upstream, force_refresh=force)

    def plan(
        self,
        kind: Kind,
        key: str,
        entry: StoredEntry | None,
        deadline: Deadline,
        *,
        force: bool = False,
        refetch: bool = False,
    ) -> Plan:
        """The policy's plan for ``(kind, key)`` with ``entry`` as read from the store.

        ``refetch``: the held copy must be fetched again whatever its age (a partial work, an expired
        cursor page); it counts as ``force``.
        """
        force = force or (entry is not None and refetch)
        return Plan(kind, key, kind.pool, deadline, entry, force, self._decide(kind, entry, deadline, force))

    def _settled(self, plan: Plan) -> Answer | None:
        if plan.decision.action is Action.ERROR:
            raise policy.error_for(plan.decision, plan.pool, plan.key, self._budget.pools.service(plan.pool))
        if plan.entry is None:
            return None
        prov = policy.answered(plan.decision, facts_of(plan.entry))
        return (plan.entry, prov) if prov is not None else None

    @contextmanager
    def claim(self, plan: Plan, *, lock_key: str | None = None) -> Iterator[Claim]:
        """Claim ``plan``: answered from the store, or a fetch to do under the entry's lock.

        Under the lock the entry is read again: when another caller stored it meanwhile
        (:func:`syncd.road.policy.coalesced`) that is the answer; otherwise the plan is decided again
        (the pool may have gone offline while waiting). ``lock_key`` overrides the lock's key.

        Raises:
            UpstreamError, BudgetExhausted: the policy's declared error (nothing stored, upstream unusable).
        """
        answer = self._settled(plan)
        if answer is not None or plan.decision.action not in (Action.FETCH, Action.REVALIDATE):
            yield Claim(self._store, plan, answer)
            return
        if plan.entry is not None:  # a held entry is never kept waiting on a store that cannot be written
            cause = self._store.can_write(plan.deadline.remaining() * PROBE_SHARE)
            if cause is not None:
                log.info(
                    "event=serve_stale kind=%s key=%s reason=store_unavailable cause=%s",
                    plan.kind.name,
                    plan.key,
                    cause,
                )
                prov = policy.after_failure(facts_of(plan.entry), plan.decision, "store_unavailable")
                yield Claim(self._store, plan, (plan.entry, prov))
                return
        with (
            self._store.waits_within(plan.deadline.remaining),
            self._lock(plan.kind.name, lock_key or plan.key),
        ):
            again = self._store.get(plan.kind.name, plan.key)
            before, now = facts_of(plan.entry), self._budget.clock()
            if again is not None and policy.coalesced(before, facts_of(again), now, plan.deadline.seconds):
                yield Claim(self._store, plan, (again, policy.from_upstream(facts_of(again))))
                return
            redo = Plan(
                plan.kind,
                plan.key,
                plan.pool,
                plan.deadline,
                plan.entry,
                plan.force,
                self._decide(plan.kind, plan.entry, plan.deadline, plan.force),
            )
            yield Claim(self._store, redo, self._settled(redo))


UNSTORED_ID = 0
"""The ``id`` of an entry built from an upstream answer that was not stored (stored ids start at 1)."""


def unstored_entry(content: EntryContent, now: float) -> StoredEntry:
    """``content`` (what upstream answered now) in the shape of a stored entry, without storing it.

    For an answer the store could not keep (a write lock not had in time, a full disk, the database
    unreachable): fetched and validated ``now`` (epoch seconds), ``id`` :data:`UNSTORED_ID`; its
    provenance is :func:`syncd.road.policy.unstored`.
    """
    return StoredEntry(
        id=UNSTORED_ID,
        kind=content.kind,
        key=content.key,
        status=content.status,
        body=content.body,
        content_hash=content.content_hash,
        upstream_version=content.upstream_version,
        doi=content.doi,
        concept_key=content.concept_key,
        title=content.title,
        fetched_at=now,
        validated_at=now,
        etag=content.etag,
        last_modified=content.last_modified,
        checks=0,
        changes=0,
        last_error=None,
        last_error_at=None,
        volatile=content.volatile,
    )


class _Read(enum.Enum):
    """:func:`local_first`'s default ``held``: read the stored entry from the store."""

    STORE = "store"


def local_first(
    runner: Runner,
    kind: Kind,
    key: str,
    fetch: Callable[[], StoredEntry],
    *,
    deadline: Deadline,
    held: StoredEntry | _Read | None = _Read.STORE,
    force: bool = False,
    refetch: bool = False,
) -> Answer:
    """The local-first road for ``(kind, key)``: the stored entry, or ``fetch()``'s, with its provenance.

    Fresh (RFC 9111 §4.2): answered from the store, no request. Stale or missing: ``fetch()`` asks
    upstream under the entry's lock within ``deadline`` and stores the answer (validation, RFC 9111
    §4.3); when upstream cannot be used the held entry is answered flagged stale (stale-if-error,
    RFC 5861 §4). While the lab database (PostgreSQL) cannot be reached nothing reads as stored and
    upstream's answer is answered unstored (:meth:`Runner.unstored`: ``stored: false``,
    ``store_error: store_unreachable``).

    Args:
        runner: the process's runner (store and budget).
        kind: the stored kind (its pool and ``ttl.*`` setting decide).
        key: the entry's key.
        fetch: asks upstream now and returns the stored entry (raises
            :class:`~syncd.errors.UpstreamError` / :class:`~syncd.errors.BudgetExhausted` on failure).
        deadline: the call's deadline.
        held: the stored entry when the caller read it already (None: nothing stored); by default
            the road reads it from the store.
        force: revalidate even when fresh.
        refetch: the held copy must be fetched again whatever its age (a partial work, an expired
            cursor page).

    Raises:
        UpstreamError, BudgetExhausted: nothing stored and upstream could not be used (the policy's
            declared error).
    """
    entry = runner.store.get(kind.name, key) if isinstance(held, _Read) else held
    plan = runner.plan(kind, key, entry, deadline, force=force, refetch=refetch)
    with runner.claim(plan) as claim:
        if claim.answer is not None:
            return claim.answer
        try:
            return claim.fetched(fetch())
        except StoreUnreachable as exc:
            return runner.unstored(exc, kind, key)
        except (UpstreamError, BudgetExhausted) as exc:
            return claim.failed(exc)
