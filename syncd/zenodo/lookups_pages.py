"""Zenodo JSON pages, local-first: searches, version lists, vocabularies, communities, ZIP listings.

JSON pages are entries, keyed by the canonical JSON of the request (:func:`page_key`):
``zenodo_search`` (``/records?q=...``, ``ttl.search``, search pool), ``zenodo_versions``
(``/records/{id}/versions``, ``ttl.search``), ``zenodo_vocab`` (communities, funders, awards,
licenses, resource types; ``ttl.entity``), ``zenodo_entity`` (one community, used to validate search
filters; ``ttl.entity``) and ``zenodo_container`` (a ZIP listing; ``ttl.zenodo_record``). A 404 is
stored as a ``not_found`` miss with ``ttl.miss``. Search and version pages upsert their hits as
records; funders / awards vocabulary pages store their hits as terms (:mod:`syncd.zenodo.lookups_terms`).
The offline search over stored records is :func:`local_search`.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any

from syncd.errors import MalformedResponse
from syncd.road.local_first import local_first
from syncd.road.policy import Provenance
from syncd.road.services import Services
from syncd.store.content import content_hash
from syncd.store.repo import Store, StoredEntry
from syncd.upstream.http import Deadline, current_deadline
from syncd.zenodo import views as zenodo_norm
from syncd.zenodo.client import RDM_JSON, ZenodoClient
from syncd.zenodo.kinds import PAGE_KINDS
from syncd.zenodo.lookups_fetch import record_content, supersede_older
from syncd.zenodo.lookups_terms import TERM_PATHS, store_terms
from syncd.zenodo.names import (
    ZENODO_RECORD,
    ZENODO_SEARCH,
    ZENODO_VERSIONS,
    ZENODO_VOCAB,
)

__all__ = [
    "PAGE_KINDS",
    "PageLookup",
    "fetch_page",
    "get_page",
    "local_search",
    "page_key",
    "refetch_page",
    "stored_page",
]

log = logging.getLogger("syncd.zenodo.lookups")


_TERM_KINDS = {path: kind for kind, path in TERM_PATHS.items()}
"""The term kind of each funders / awards vocabulary route."""


@dataclass(frozen=True)
class PageLookup:
    """One answered JSON page: ``body`` (parsed; None for a stored 404), its entry and provenance."""

    entry: StoredEntry
    provenance: Provenance
    body: dict[str, Any] | None


def page_key(path: str, params: dict[str, str], accept: str = RDM_JSON) -> str:
    """The store key of a page: canonical JSON of the request (path, normalized params, Accept)."""
    return json.dumps({"a": accept, "p": path, "q": params}, sort_keys=True, separators=(",", ":"))


def _page_projection(kind: str, body: Any) -> Any:
    """What decides "this page changed": hits without usage stats and links (volatile)."""
    if not isinstance(body, dict):
        return body
    out = {k: v for k, v in body.items() if k not in ("links", "aggregations")}
    hits = out.get("hits")
    if isinstance(hits, dict) and isinstance(hits.get("hits"), list):
        out["hits"] = dict(
            hits,
            hits=[zenodo_norm.content_hash_projection(h) if isinstance(h, dict) else h for h in hits["hits"]],
        )
    return out


def _upsert_hits(store: Store, hits: list[Any]) -> int:
    """Store search/version hits as records; returns how many were written.

    New ones are inserted, stored ones replaced only by a newer revision (a record GET stays the
    authority); a stored record whose content the hit repeats (same content hash) counts as confirmed
    now, so a lookup right after the search asks nothing. Concept -> latest is refreshed from
    ``is_latest``. Nothing is written while the lab database cannot be reached (the page is answered
    unstored).
    """
    written = 0
    if store.unreachable() is not None:
        return written
    for hit in hits:
        if not isinstance(hit, dict):
            continue
        try:
            keys = zenodo_norm.record_keys(hit)
            content = record_content(hit, None)
        except Exception:  # a malformed hit is skipped, never fatal for the page
            log.debug("event=skip_hit reason=malformed")
            continue
        stored = store.get(ZENODO_RECORD, keys.recid)
        newer = (
            stored is not None
            and stored.status == "ok"
            and keys.revision is not None
            and stored.upstream_version is not None
            and stored.upstream_version.isdigit()
            and keys.revision > int(stored.upstream_version)
        )
        if stored is None or newer:
            store.put_content(content)
            written += 1
        elif stored.status == "ok" and stored.content_hash == content.content_hash:
            store.mark_validated(stored.id)
        if keys.concept_recid and keys.is_latest:
            store.set_concept(keys.concept_recid, keys.recid)
            supersede_older(store, keys.concept_recid, keys.recid)
    return written


def fetch_page(zenodo: ZenodoClient, store: Store, kind: str, key: str, deadline: Deadline) -> StoredEntry:
    """Ask Zenodo for the page ``key`` (see :func:`page_key`) now and store the answer.

    A 404 is stored as ``not_found`` (miss TTL). Search and version pages upsert their hits as
    records (:func:`_upsert_hits`).

    Raises:
        MalformedResponse: a 200 body that is not a JSON object.
        UpstreamError, BudgetExhausted: upstream could not be used; nothing was written.
    """
    spec = json.loads(key)
    resp = zenodo.get_json(
        spec["p"],
        deadline,
        params=spec["q"] or None,
        pool=PAGE_KINDS[kind].pool,
        accept=(200, 404),
        accept_header=spec["a"],
        parse_json=(200,),
    )
    if resp.status == 404:
        stored, _ = store.put_content(PAGE_KINDS[kind].content(key, "not_found", None, None))
        return stored
    body = resp.json
    if not isinstance(body, dict):
        raise MalformedResponse(f"zenodo: {spec['p']} did not answer a JSON object")
    hits = body.get("hits")
    if kind in (ZENODO_SEARCH, ZENODO_VERSIONS) and not (
        isinstance(hits, dict) and isinstance(hits.get("hits"), list)
    ):
        raise MalformedResponse("zenodo: the answer has no hits list")
    content = PAGE_KINDS[kind].content(key, "ok", resp.text, content_hash(_page_projection(kind, body)))
    stored, changed = store.put_content(content)
    if kind in (ZENODO_SEARCH, ZENODO_VERSIONS) and changed and isinstance(hits, dict):
        _upsert_hits(store, hits["hits"])
    term_kind = _TERM_KINDS.get(spec["p"]) if kind == ZENODO_VOCAB else None
    if term_kind is not None and isinstance(hits, dict) and isinstance(hits.get("hits"), list):
        store_terms(store, term_kind, hits["hits"])
    return stored


def get_page(
    svc: Services,
    kind: str,
    path: str,
    params: dict[str, str],
    deadline: Deadline | None = None,
    *,
    accept: str = RDM_JSON,
    force: bool = False,
) -> PageLookup:
    """A Zenodo JSON page (search, versions, vocabulary, community, funder, ZIP listing), local-first.

    Args:
        svc: the services bundle.
        kind: one of the page kinds of :mod:`syncd.kinds` (``zenodo_search`` pages use the search pool).
        path: the API path, percent-encoded (``/records``, ``/records/1/versions``...).
        params: normalized query parameters (their canonical JSON is the store key).
        deadline: the call's deadline (default ``deadline_s``).
        accept: the ``Accept`` header (RDM JSON; ``application/json`` for file and vocabulary routes).
        force: revalidate even when fresh.

    Raises:
        UpstreamError, BudgetExhausted: nothing stored and upstream could not be used.
    """
    deadline = deadline or current_deadline(svc.settings.deadline_s)
    key = page_key(path, params, accept)
    entry, prov = local_first(
        svc.runner,
        PAGE_KINDS[kind],
        key,
        lambda: fetch_page(svc.upstreams.zenodo, svc.store, kind, key, deadline),
        deadline=deadline,
        force=force,
    )
    body = json.loads(entry.body) if entry.status == "ok" and entry.body else None
    return PageLookup(entry, prov, body if isinstance(body, dict) else None)


def stored_page(
    svc: Services, kind: str, path: str, params: dict[str, str], *, accept: str = RDM_JSON
) -> dict[str, Any] | None:
    """The stored body of a page (see :func:`get_page`), fresh or stale, asking nothing; None if none.

    None too for a stored miss (404) or a body that is not a JSON object.
    """
    entry = svc.store.get(kind, page_key(path, params, accept))
    if entry is None or entry.status != "ok" or not entry.body:
        return None
    try:
        body = json.loads(entry.body)
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def refetch_page(zenodo: ZenodoClient, store: Store, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    """Ask Zenodo again for the stored page ``entry`` and store the answer."""
    return fetch_page(zenodo, store, entry.kind, entry.key, deadline)


def local_search(svc: Services, query: str, limit: int = 200) -> list[StoredEntry]:
    """Stored ``ok`` records matching ``query`` in the full-text index, best first.

    The index covers title, creators, description, keywords and DOI. With no usable terms, the most
    recently fetched records are returned.
    """
    terms = re.findall(r"\w+", re.sub(r"\b[\w.]+:", " ", query or ""), flags=re.UNICODE)
    terms = [t for t in terms if t.upper() not in ("AND", "OR", "NOT")]
    if terms:
        found = svc.store.search(" ".join(terms), kind=ZENODO_RECORD, limit=limit)
        if not found and len(terms) > 1:  # Zenodo ORs bare terms: fall back to any term
            seen: dict[int, StoredEntry] = {}
            for term in terms:
                for e in svc.store.search(term, kind=ZENODO_RECORD, limit=limit):
                    seen.setdefault(e.id, e)
            found = list(seen.values())[:limit]
        return [e for e in found if e.status == "ok"]
    return svc.store.newest(ZENODO_RECORD, limit)
