"""The local-first path: look in the store, decide with :func:`syncd.policy.decide`, act, answer.

:class:`Cache` is what the MCP tools, the CLI and the daemon call. It carries out the policy's
decision: answer from the store, revalidate against upstream (conditionally, within the call's
deadline and the shared budget), fetch what is missing, or answer the stored entry flagged stale
when upstream fails (stale-if-error). Every answer comes with its :class:`Provenance`.

"Changed" is decided by a hash of the normalized upstream content with the volatile parts left out
(:func:`content_hash`); an unchanged answer only bumps ``validated_at``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from syncd.budget import Budget
from syncd.config import Settings
from syncd.errors import BudgetExhausted, UpstreamError
from syncd.policy import Action, Decision, EntryFacts, UpstreamFacts, decide
from syncd.store.repo import Store, StoredEntry
from syncd.upstream.crossref import CrossrefClient
from syncd.upstream.http import Deadline
from syncd.upstream.zenodo import ZenodoClient

__all__ = [
    "CROSSREF_WORK",
    "KIND_TTL",
    "REFETCHERS",
    "ZENODO_RECORD",
    "Cache",
    "Lookup",
    "Provenance",
    "content_hash",
    "document",
    "iso",
    "register_kind",
    "volatile_json",
]

log = logging.getLogger("syncd.cache")

CROSSREF_WORK = "crossref_work"
ZENODO_RECORD = "zenodo_record"

KIND_TTL: dict[str, str] = {}
"""Stored kinds and the ``ttl.*`` setting that gives their lifetime (unlisted kinds: ``ttl.entity``);
filled by :func:`register_kind`.
"""


Refetcher = Callable[["Cache", StoredEntry, Deadline], StoredEntry]
REFETCHERS: dict[str, Refetcher] = {}
"""Per kind: how to ask upstream again for a stored entry and store the answer (registered by the
``syncd.lookups`` modules; used by :meth:`Cache.revalidate`, the daemon and ``syncd cache refresh``).
"""


def register_kind(kind: str, ttl_setting: str, refetch: Refetcher | None = None) -> None:
    """Declare a stored ``kind``: its ``ttl.*`` setting name and, if it can be revalidated, how."""
    KIND_TTL[kind] = ttl_setting
    if refetch is not None:
        REFETCHERS[kind] = refetch


def volatile_json(fields: dict[str, Any]) -> str | None:
    """JSON of the volatile upstream fields to refresh in place (None when there are none)."""
    return json.dumps(fields, sort_keys=True, separators=(",", ":")) if fields else None


def document(entry: StoredEntry) -> dict[str, Any]:
    """The stored upstream object of ``entry`` with its refreshed volatile fields laid over it.

    For a Crossref work this is the ``message``; for a Zenodo record the record body. Raises
    ``ValueError`` when the stored body is not JSON (it always is: only parsed JSON is stored).
    """
    body: Any = json.loads(entry.body or "{}")
    if entry.kind == CROSSREF_WORK and isinstance(body, dict) and isinstance(body.get("message"), dict):
        body = body["message"]
    if entry.volatile and isinstance(body, dict):
        body.update(json.loads(entry.volatile))
    return body if isinstance(body, dict) else {}


def content_hash(projection: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of ``projection`` (keys sorted, no whitespace)."""
    blob = json.dumps(projection, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


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
    tell whether an answer changed since an earlier one.
    """

    source: str
    fetched_at: float
    validated_at: float
    stale: bool
    upstream_error: str | None = None
    etag: str | None = None

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
        return out


@dataclass(frozen=True)
class Lookup:
    """One answered lookup.

    ``entry`` is the stored entry, ``provenance`` where it came from and, for Zenodo, how the
    requested id led to it (``resolved_from``: ``version``, ``concept_to_latest``, ``external_doi``).
    """

    entry: StoredEntry
    provenance: Provenance
    resolved_from: str | None = None


class Cache:
    """Local-first access to Crossref works and Zenodo records.

    Args:
        settings: syncd settings (TTLs, deadline, upstream URLs, budget).
        store: the shared store.
        interactive: True for tools and CLI; False for the daemon (leaves the budget reserve).
        transport: optional httpx transport for every upstream client (tests).
    """

    def __init__(
        self,
        settings: Settings,
        store: Store,
        *,
        interactive: bool = True,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        import syncd.lookups  # noqa: F401  (registers every stored kind; imported late: it imports us)

        self.settings = settings
        self.store = store
        self.budget = Budget(store, settings, interactive=interactive)
        self.crossref = CrossrefClient(settings, self.budget, transport=transport)
        self.zenodo = ZenodoClient(settings, self.budget, transport=transport)
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._locks_guard = threading.Lock()

    def _lock(self, kind: str, key: str) -> threading.Lock:
        with self._locks_guard:
            if len(self._locks) > 4096:
                self._locks = {k: v for k, v in self._locks.items() if v.locked()}
            return self._locks.setdefault((kind, key), threading.Lock())

    def close(self) -> None:
        """Close upstream connections (the store is closed by its owner)."""
        self.crossref.close()
        self.zenodo.close()

    # --- policy plumbing -----------------------------------------------------------------------

    def ttl(self, kind: str, status: str) -> float:
        """Lifetime in seconds of an entry: per-kind TTL for ``ok``, the miss TTL otherwise."""
        if status != "ok":
            return self.settings.ttl.miss
        return float(getattr(self.settings.ttl, KIND_TTL.get(kind, "entity")))

    def ttls(self, *, background: bool = False) -> dict[tuple[str, str], float]:
        """Lifetime per ``(kind, status)`` for every registered kind and every status.

        With ``background`` (the daemon's sweep), search and version pages are left out: they are
        fetched again when someone asks, so background revalidation never spends the tight search
        budgets (Crossref list pool 3/s, Zenodo search ~30/min) on pages nobody reads.
        """
        return {
            (kind, status): self.ttl(kind, status)
            for kind, setting in KIND_TTL.items()
            if not (background and setting == "search")
            for status in ("ok", "not_found", "gone", "restricted")
        }

    def _decide(self, entry: StoredEntry | None, pool: str, deadline: Deadline, force: bool) -> Decision:
        now = time.time()
        facts = EntryFacts(entry.validated_at, self.ttl(entry.kind, entry.status)) if entry else None
        if facts is not None and facts.fresh(now) and not force:
            return Decision(Action.SERVE)  # the warm path reads no budget state
        state = self.budget.state(pool)
        upstream = UpstreamFacts(
            offline=state.offline(now),
            blocked_until=state.blocked_until,
            deadline_left_s=deadline.remaining(),
        )
        return decide(facts, now, upstream, force_refresh=force)

    def local_first(
        self,
        kind: str,
        key: str,
        pool: str,
        deadline: Deadline,
        force: bool,
        fetch: Callable[[StoredEntry | None], StoredEntry],
        *,
        lock_key: str | None = None,
        refetch_if: Callable[[StoredEntry | None], bool] | None = None,
    ) -> tuple[StoredEntry, Provenance]:
        """Answer the entry ``(kind, key)`` local-first; ``fetch(stored_or_None)`` asks upstream and stores.

        ``refetch_if(stored)`` True forces a fetch even of a fresh entry (a partial copy).
        Identical lookups in this process are coalesced: while one caller fetches, the others wait
        and then answer from what it stored (one upstream request, one row).

        Raises:
            UpstreamError, BudgetExhausted: nothing stored and upstream could not be used.
        """
        entry = self.store.get(kind, key)
        if refetch_if is not None and not force and refetch_if(entry):
            force = True
        decision = self._decide(entry, pool, deadline, force)
        if decision.action in (Action.FETCH, Action.REVALIDATE):
            with self._lock(kind, lock_key or key):
                again = self.store.get(kind, key)
                if (
                    again is not None
                    and (entry is None or again.validated_at > entry.validated_at)
                    and again.validated_at >= time.time() - deadline.seconds
                ):
                    return again, Provenance(
                        "upstream", again.fetched_at, again.validated_at, stale=False, etag=again.content_hash
                    )
                return self._act(entry, pool, deadline, force, fetch)
        return self._act(entry, pool, deadline, force, fetch, decision)

    def _act(
        self,
        entry: StoredEntry | None,
        pool: str,
        deadline: Deadline,
        force: bool,
        fetch: Callable[[StoredEntry | None], StoredEntry],
        decision: Decision | None = None,
    ) -> tuple[StoredEntry, Provenance]:
        decision = decision or self._decide(entry, pool, deadline, force)
        if decision.action is Action.SERVE and entry is not None:
            return entry, Provenance(
                "store", entry.fetched_at, entry.validated_at, stale=False, etag=entry.content_hash
            )
        if decision.action is Action.SERVE_STALE and entry is not None:
            return entry, Provenance(
                "store-stale",
                entry.fetched_at,
                entry.validated_at,
                stale=True,
                upstream_error=decision.reason,
                etag=entry.content_hash,
            )
        if decision.action is Action.ERROR:
            raise _error_for(decision, pool)
        try:
            fresh = fetch(entry)
        except (UpstreamError, BudgetExhausted) as exc:
            if entry is None:
                raise
            log.info("event=serve_stale kind=%s key=%s reason=%s", entry.kind, entry.key, exc.reason)
            self.store.mark_error(entry.id, exc.reason)
            return entry, Provenance(
                "store-stale",
                entry.fetched_at,
                entry.validated_at,
                stale=decision.stale,
                upstream_error=exc.reason,
                etag=entry.content_hash,
            )
        if (
            fresh.last_error
            and entry is not None
            and fresh.status == "ok"
            and fresh.validated_at == entry.validated_at
        ):
            # upstream said 404 for a work we hold: keep serving the stored body, flagged (BC-09)
            return fresh, Provenance(
                "store-stale",
                fresh.fetched_at,
                fresh.validated_at,
                stale=True,
                upstream_error=fresh.last_error,
                etag=fresh.content_hash,
            )
        return fresh, Provenance(
            "upstream", fresh.fetched_at, fresh.validated_at, stale=False, etag=fresh.content_hash
        )

    # --- daemon / CLI --------------------------------------------------------------------------

    def revalidate(self, entry: StoredEntry, deadline: Deadline | None = None) -> str:
        """Revalidate one stored entry against upstream now (through its kind's registered refetcher).

        Returns ``unchanged``, ``changed`` or ``failed:<reason>``; a failure is recorded beside the
        entry and never touches its body.
        """
        deadline = deadline or Deadline(max(self.settings.deadline_s, 10.0))
        refetch = REFETCHERS.get(entry.kind)
        if refetch is None:
            return "failed:unsupported_kind"
        before = entry.content_hash, entry.status
        try:
            stored = refetch(self, entry, deadline)
        except (UpstreamError, BudgetExhausted) as exc:
            self.store.mark_error(entry.id, exc.reason)
            return f"failed:{exc.reason}"
        if stored.last_error and stored.validated_at == entry.validated_at:
            return f"failed:{stored.last_error}"
        return "unchanged" if (stored.content_hash, stored.status) == before else "changed"

    def reload(self, entry: StoredEntry) -> StoredEntry:
        """The current stored state of ``entry`` (itself if it vanished)."""
        fresh = self.store.get_by_id(entry.id)
        return fresh if fresh is not None else entry


def _error_for(decision: Decision, pool: str) -> UpstreamError | BudgetExhausted:
    from syncd.errors import UpstreamOffline, UpstreamRateLimited, UpstreamTimeout

    if decision.reason == "rate_limited":
        return UpstreamRateLimited(
            f"{pool} is rate limited and nothing is stored", retry_after_s=decision.retry_after_s, pool=pool
        )
    if decision.reason == "request_timeout":
        return UpstreamTimeout(f"no time left to ask upstream ({pool})")
    return UpstreamOffline(f"upstream ({pool}) is offline and nothing is stored", pool=pool)
