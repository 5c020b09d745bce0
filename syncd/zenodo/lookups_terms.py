"""Funders and awards of Zenodo's vocabularies, stored as entities (local-first).

``zenodo_funder`` is keyed by ROR id, ``zenodo_award`` by ``<ror>::<number>``; ``doi`` is their
Funder DOI / award DOI. They are stored from ``GET /api/funders/{ror}`` / ``/api/awards/{id}`` and
from every funders/awards vocabulary page (:func:`store_terms`), so a Funder DOI or award DOI
resolves from the store once any page named it (:func:`syncd.zenodo.lookups.term_by_identifier`).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from syncd.errors import MalformedResponse
from syncd.road.local_first import Lookup, local_first
from syncd.road.services import Services
from syncd.store.content import content_hash
from syncd.store.repo import EntryContent, Store, StoredEntry
from syncd.upstream.http import Deadline, current_deadline
from syncd.zenodo import views as zenodo_norm
from syncd.zenodo.client import LEGACY_JSON, ZenodoClient
from syncd.zenodo.kinds import TERM_KINDS
from syncd.zenodo.names import ZENODO_AWARD, ZENODO_FUNDER

__all__ = [
    "TERM_KINDS",
    "TERM_PATHS",
    "fetch_term",
    "get_term",
    "store_terms",
    "stored_term_key",
    "stored_terms",
    "term_content",
]


TERM_PATHS: dict[str, str] = {ZENODO_FUNDER: "/funders", ZENODO_AWARD: "/awards"}
"""The Zenodo vocabulary route of each entity kind (``GET {path}/{id}``, ``{path}?q=``)."""


def term_content(kind: str, body: dict[str, Any], raw: str | None = None) -> EntryContent:
    """The stored form of one funder or award of Zenodo's vocabulary (``body`` as Zenodo sends it).

    Key: its ``id`` (ROR id, or ``<ror>::<number>``); ``doi``: its ``doi`` identifier, lowercased
    (Funder DOI ``10.13039/...``, award DOI such as CORDIS ``10.3030/...``); title: name or title.

    Raises:
        MalformedResponse: ``body`` has no ``id``.
    """
    key = body.get("id")
    if not isinstance(key, str) or not key:
        raise MalformedResponse(f"zenodo: a {kind} entry without an id")
    doi = zenodo_norm.identifier_of(body.get("identifiers"), "doi")
    held = body.get("funder")
    funder: dict[str, Any] = held if isinstance(held, dict) else {}
    title = body.get("name") or zenodo_norm.i18n(body.get("title")) or body.get("acronym")
    words = (title, body.get("acronym"), body.get("number"), funder.get("name"), body.get("country_name"))
    return TERM_KINDS[kind].content(
        key=key,
        status="ok",
        body=raw if raw is not None else json.dumps(body, ensure_ascii=False),
        content_hash=content_hash(body),
        doi=doi.lower() if doi else None,
        title=title if isinstance(title, str) else None,
        search_text=" ".join(w for w in words if isinstance(w, str) and w) or None,
    )


def store_terms(store: Store, kind: str, hits: list[Any]) -> int:
    """Store each funder/award ``hits`` entry of a vocabulary page as its entity; returns how many.

    An unchanged entry only has its validation bumped (Zenodo just confirmed it); a malformed hit is
    skipped. Nothing is written while the lab database cannot be reached.
    """
    stored = 0
    if store.unreachable() is not None:
        return stored
    for hit in hits:
        if not isinstance(hit, dict):
            continue
        try:
            store.put_content(term_content(kind, hit))
        except MalformedResponse:
            continue
        stored += 1
    return stored


def fetch_term(zenodo: ZenodoClient, store: Store, kind: str, key: str, deadline: Deadline) -> StoredEntry:
    """Ask Zenodo for one funder (``GET /funders/{ror}``) or award (``GET /awards/{id}``) and store it.

    A 404 is stored as ``not_found`` (``ttl.miss``).

    Raises:
        MalformedResponse: a 200 body that is not an entry with an id.
        UpstreamError, BudgetExhausted: upstream could not be used; nothing was written.
    """
    resp = zenodo.get_json(
        f"{TERM_PATHS[kind]}/{quote(key, safe=':')}",
        deadline,
        accept=(200, 404),
        accept_header=LEGACY_JSON,
        parse_json=(200,),
    )
    if resp.status == 404:
        stored, _ = store.put_content(TERM_KINDS[kind].content(key, "not_found", None, None))
        return stored
    body = resp.json
    if not isinstance(body, dict):
        raise MalformedResponse(f"zenodo: {TERM_PATHS[kind]}/{key} did not answer a JSON object")
    stored, _ = store.put_content(term_content(kind, body, resp.text))
    return stored


def get_term(svc: Services, kind: str, key: str, deadline: Deadline | None = None) -> Lookup:
    """One funder (by ROR id) or award (by award id), local-first (``ttl.entity``; misses ``ttl.miss``).

    Raises:
        UpstreamError, BudgetExhausted: nothing stored and upstream could not be used.
    """
    deadline = deadline or current_deadline(svc.settings.deadline_s)
    entry, prov = local_first(
        svc.runner,
        TERM_KINDS[kind],
        key,
        lambda: fetch_term(svc.upstreams.zenodo, svc.store, kind, key, deadline),
        deadline=deadline,
    )
    return Lookup(entry, prov)


def stored_terms(svc: Services, kind: str, words: str, limit: int) -> list[StoredEntry]:
    """Stored ``ok`` funders or awards (``kind``) matching ``words`` in the full-text index, best first.

    Asks nothing (the offline candidates when Zenodo's vocabulary cannot be asked); at most ``limit``
    entries are searched; none for no words.
    """
    found = svc.store.search(words, kind=kind, limit=limit) if words else []
    return [e for e in found if e.status == "ok"]


def stored_term_key(svc: Services, kind: str, doi: str) -> str | None:
    """The key (ROR id, award id) of the stored ``ok`` funder or award holding ``doi`` (as given), or None."""
    held = svc.store.find_by_doi(kind, doi)
    return held.key if held is not None and held.status == "ok" else None
