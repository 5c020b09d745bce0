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
from syncd.errors import BudgetExhausted, NotFound, UpstreamError
from syncd.normalize import crossref as crossref_norm
from syncd.normalize import zenodo as zenodo_norm
from syncd.normalize.doi import ParsedDOI
from syncd.normalize.zenodo_id import RecordRef
from syncd.policy import Action, Decision, EntryFacts, UpstreamFacts, decide
from syncd.store.repo import EntryContent, Store, StoredEntry
from syncd.upstream.crossref import CrossrefClient
from syncd.upstream.http import Deadline
from syncd.upstream.zenodo import ZenodoClient

__all__ = ["KIND_TTL", "Cache", "Lookup", "Provenance", "content_hash", "document", "iso", "volatile_json"]

log = logging.getLogger("syncd.cache")

CROSSREF_WORK = "crossref_work"
ZENODO_RECORD = "zenodo_record"

KIND_TTL: dict[str, str] = {
    CROSSREF_WORK: "crossref_work",
    ZENODO_RECORD: "zenodo_record",
}
"""Stored kinds and the ``ttl.*`` setting that gives their lifetime (others: ``ttl.entity``).

Modules that store new kinds register them here (e.g. ``KIND_TTL["crossref_search"] = "search"``).
"""


def volatile_json(kind: str, body: dict[str, Any]) -> str | None:
    """The volatile upstream fields of ``body`` as JSON (Crossref counters and stamps, Zenodo stats)."""
    if kind == CROSSREF_WORK:
        part = {k: body[k] for k in crossref_norm.VOLATILE_FIELDS if k in body}
    elif kind == ZENODO_RECORD:
        part = {"stats": body["stats"]} if "stats" in body else {}
    else:
        return None
    return json.dumps(part, sort_keys=True, separators=(",", ":")) if part else None


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
    ``upstream_error``: the reason code of the failure that made the answer stale.
    """

    source: str
    fetched_at: float
    validated_at: float
    stale: bool
    upstream_error: str | None = None

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

    def ttls(self) -> dict[tuple[str, str], float]:
        """Lifetime per ``(kind, status)`` for every registered kind and every status."""
        return {
            (kind, status): self.ttl(kind, status)
            for kind in KIND_TTL
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
    ) -> tuple[StoredEntry, Provenance]:
        """Answer the entry ``(kind, key)`` local-first; ``fetch(stored_or_None)`` asks upstream and stores.

        Identical lookups in this process are coalesced: while one caller fetches, the others wait
        and then answer from what it stored (one upstream request, one row).

        Raises:
            UpstreamError, BudgetExhausted: nothing stored and upstream could not be used.
        """
        entry = self.store.get(kind, key)
        decision = self._decide(entry, pool, deadline, force)
        if decision.action in (Action.FETCH, Action.REVALIDATE):
            with self._lock(kind, lock_key or key):
                again = self.store.get(kind, key)
                if (
                    again is not None
                    and (entry is None or again.validated_at > entry.validated_at)
                    and again.validated_at >= time.time() - deadline.seconds
                ):
                    return again, Provenance("upstream", again.fetched_at, again.validated_at, stale=False)
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
            return entry, Provenance("store", entry.fetched_at, entry.validated_at, stale=False)
        if decision.action is Action.SERVE_STALE and entry is not None:
            return entry, Provenance(
                "store-stale",
                entry.fetched_at,
                entry.validated_at,
                stale=True,
                upstream_error=decision.reason,
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
            )
        return fresh, Provenance("upstream", fresh.fetched_at, fresh.validated_at, stale=False)

    # --- Crossref ------------------------------------------------------------------------------

    def get_work(self, doi: ParsedDOI, deadline: Deadline | None = None, *, force: bool = False) -> Lookup:
        """The Crossref work for ``doi``: from the store when fresh, else from ``/works/{doi}``.

        Raises:
            NotFound: Crossref holds no record (reason ``doi_not_found``), stored or just fetched.
            UpstreamError, BudgetExhausted: nothing stored and upstream could not be used.
        """
        deadline = deadline or Deadline(self.settings.deadline_s)
        stored, prov = self.local_first(
            CROSSREF_WORK,
            doi.key,
            "crossref_single",
            deadline,
            force,
            lambda e: self._fetch_work(doi, e, deadline),
        )
        if stored.status != "ok":
            raise NotFound(
                f"no Crossref record for DOI {doi.doi}",
                reason="doi_not_found",
                doi=doi.doi,
                cache=prov.as_dict(),
            )
        return Lookup(stored, prov)

    def _fetch_work(self, doi: ParsedDOI, entry: StoredEntry | None, deadline: Deadline) -> StoredEntry:
        answer = self.crossref.get_work(
            doi.doi,
            deadline,
            etag=entry.etag if entry else None,
            last_modified=entry.last_modified if entry else None,
        )
        if answer.status == "not_modified" and entry is not None:
            self.store.mark_validated(entry.id, etag=answer.etag, last_modified=answer.last_modified)
            return self._reload(entry)
        if answer.status != "ok" or answer.message is None:
            content = EntryContent(CROSSREF_WORK, doi.key, "not_found", None, None, doi=doi.key)
        else:
            content = self.work_content(
                doi.key, answer.message, answer.text, answer.etag, answer.last_modified
            )
        stored, changed = self.store.put_content(content)
        log.debug("event=stored kind=crossref_work key=%s changed=%s", doi.key, changed)
        return stored

    @staticmethod
    def work_content(
        key: str,
        message: dict[str, Any],
        raw: str | None,
        etag: str | None = None,
        last_modified: str | None = None,
    ) -> EntryContent:
        """Build the stored form of a Crossref work ``message`` (raw body kept as received)."""
        view = crossref_norm.work_view(message, offset=0, limit=1)
        names = " ".join(
            " ".join(str(a.get(k)) for k in ("given", "family", "name") if a.get(k))
            for a in message.get("author") or []
            if isinstance(a, dict)
        )
        search_text = " ".join(filter(None, (view.containerTitle, names, view.abstract, view.publisher)))
        indexed = (message.get("indexed") or {}).get("date-time")
        return EntryContent(
            kind=CROSSREF_WORK,
            key=key,
            status="ok",
            body=raw
            if raw is not None
            else json.dumps({"status": "ok", "message-type": "work", "message": message}),
            content_hash=content_hash(crossref_norm.content_hash_projection(message)),
            upstream_version=str(indexed) if indexed else None,
            doi=key,
            title=view.title,
            search_text=search_text or None,
            etag=etag,
            last_modified=last_modified,
            volatile=volatile_json(CROSSREF_WORK, message),
        )

    # --- Zenodo --------------------------------------------------------------------------------

    def get_record(self, ref: RecordRef, deadline: Deadline | None = None, *, force: bool = False) -> Lookup:
        """The Zenodo record for ``ref`` (record id, concept id, Zenodo DOI or another DOI).

        Misses (404, 410 tombstone, 403) are answered as stored entries whose ``status`` says so.

        Raises:
            NotFound: ``ref`` is a DOI that no Zenodo record holds (reason ``not_on_zenodo``).
            UpstreamError, BudgetExhausted: nothing stored and upstream could not be used.
        """
        deadline = deadline or Deadline(self.settings.deadline_s)
        resolved_from = "version"
        recid = ref.recid
        if recid is None and ref.doi is not None:
            resolved_from = "external_doi"
            found = self.store.find_by_doi(ZENODO_RECORD, ref.doi)
            if found is not None:
                recid = found.key
            else:
                recid = self.zenodo.find_doi(ref.doi, deadline)
                if recid is None:
                    raise NotFound(
                        f"no Zenodo record holds DOI {ref.doi}", reason="not_on_zenodo", doi=ref.doi
                    )
        assert recid is not None
        concept = self.store.concept_latest(recid)
        target = recid
        if concept is not None:
            target = concept[0]
            resolved_from = "concept_to_latest"
        holder: dict[str, str] = {}

        def fetch(e: StoredEntry | None) -> StoredEntry:
            asked = recid if concept is not None else (e.key if e else recid)
            stored, via = self._fetch_record(asked, e if asked == target else None, deadline)
            holder["via"] = via
            return stored

        stored, prov = self.local_first(ZENODO_RECORD, target, "zenodo_general", deadline, force, fetch)
        if holder.get("via") == "concept_to_latest" or (concept is not None and stored.key != recid):
            resolved_from = "concept_to_latest"
        return Lookup(stored, prov, resolved_from=resolved_from)

    def _fetch_record(
        self, recid: str, entry: StoredEntry | None, deadline: Deadline
    ) -> tuple[StoredEntry, str]:
        answer = self.zenodo.get_record(recid, deadline, etag=entry.etag if entry else None)
        if answer.status == "not_modified" and entry is not None:
            self.store.mark_validated(entry.id, etag=answer.etag, last_modified=answer.last_modified)
            return self._reload(entry), "version"
        if answer.status != "ok" or answer.body is None:
            body = answer.text if answer.status == "gone" else None
            content = EntryContent(
                ZENODO_RECORD, recid, answer.status, body, content_hash(body) if body else None
            )
            stored, _ = self.store.put_content(content)
            return stored, "version"
        keys = zenodo_norm.record_keys(answer.body)
        content = self.record_content(answer.body, answer.text, answer.etag, answer.last_modified)
        stored, changed = self.store.put_content(content)
        log.debug("event=stored kind=zenodo_record key=%s changed=%s", keys.recid, changed)
        via = "version"
        if keys.recid != recid:
            # asked for a concept record id: Zenodo redirected to its latest version
            self.store.set_concept(recid, keys.recid)
            via = "concept_to_latest"
        elif keys.concept_recid and keys.is_latest:
            self.store.set_concept(keys.concept_recid, keys.recid)
        return stored, via

    @staticmethod
    def record_content(
        body: dict[str, Any],
        raw: str | None,
        etag: str | None = None,
        last_modified: str | None = None,
    ) -> EntryContent:
        """Build the stored form of a Zenodo record ``body`` (either JSON shape; raw text kept)."""
        keys = zenodo_norm.record_keys(body)
        view = zenodo_norm.record_view(body)
        names = " ".join(c.name for c in (view.creators or []) if c.name)
        search_text = " ".join(
            filter(None, (names, view.description, " ".join(view.keywords or []), view.doi))
        )
        return EntryContent(
            kind=ZENODO_RECORD,
            key=keys.recid,
            status="ok",
            body=raw if raw is not None else json.dumps(body),
            content_hash=content_hash(zenodo_norm.content_hash_projection(body)),
            upstream_version=str(keys.revision) if keys.revision is not None else None,
            doi=keys.doi,
            concept_key=keys.concept_recid,
            title=view.title,
            search_text=search_text or None,
            etag=etag,
            last_modified=last_modified,
            volatile=volatile_json(ZENODO_RECORD, body),
        )

    # --- daemon / CLI --------------------------------------------------------------------------

    def revalidate(self, entry: StoredEntry, deadline: Deadline | None = None) -> str:
        """Revalidate one stored entry against upstream now.

        Returns ``unchanged``, ``changed`` or ``failed:<reason>``; a failure is recorded beside the
        entry and never touches its body.
        """
        deadline = deadline or Deadline(max(self.settings.deadline_s, 10.0))
        before = entry.content_hash, entry.status
        try:
            if entry.kind == CROSSREF_WORK:
                doi = ParsedDOI(doi=entry.doi or entry.key, key=entry.key, input_form="bare")
                stored = self._fetch_work(doi, entry, deadline)
            else:
                stored, _ = self._fetch_record(entry.key, entry, deadline)
        except (UpstreamError, BudgetExhausted) as exc:
            self.store.mark_error(entry.id, exc.reason)
            return f"failed:{exc.reason}"
        if stored.last_error == "not_found" and stored.validated_at == entry.validated_at:
            return "failed:not_found"
        return "unchanged" if (stored.content_hash, stored.status) == before else "changed"

    def _reload(self, entry: StoredEntry) -> StoredEntry:
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
