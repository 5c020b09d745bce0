"""Zenodo lookups through the local-first path: records, searches, versions, vocabularies, files.

Records are stored as entries of kind ``zenodo_record`` (key: the record id; body: the raw record
JSON, either shape); misses as ``not_found`` / ``gone`` (the tombstone JSON) / ``restricted``;
concept record id -> latest version in the ``concepts`` table.

JSON pages are entries too, keyed by the canonical JSON of the request (:func:`page_key`):
``zenodo_search`` (``/records?q=...``, ``ttl.search``, search pool), ``zenodo_versions``
(``/records/{id}/versions``, ``ttl.search``), ``zenodo_vocab`` (communities, funders, awards,
licenses, resource types; ``ttl.entity``), ``zenodo_entity`` (one community, used to validate search
filters; ``ttl.entity``) and ``zenodo_container`` (a ZIP listing; ``ttl.zenodo_record``). A 404 is
stored as a ``not_found`` miss with ``ttl.miss``. Search and version pages upsert their hits as
records. File previews are kept in the ``blobs`` table (kind ``zenodo_preview``).

Funders and awards of Zenodo's vocabularies are entities (``zenodo_funder`` keyed by ROR id,
``zenodo_award`` keyed by ``<ror>::<number>``; ``doi`` their Funder DOI / award DOI), stored from
``GET /api/funders/{ror}`` / ``/api/awards/{id}`` and from every funders/awards vocabulary page, so
a Funder DOI or award DOI resolves from the store once any page named it (:func:`term_by_identifier`).
An external DOI is resolved by a stored search page (``doi:"<doi>"``, ``all_versions``) whose hit,
a whole record, is stored as the record: no second request (:func:`find_doi`).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from syncd import policy
from syncd.cache import Lookup, local_first
from syncd.errors import (
    BudgetExhausted,
    MalformedResponse,
    NotFound,
    StoreError,
    UpstreamError,
    UpstreamUnavailable,
)
from syncd.kinds import ALL_STATUSES, Kind
from syncd.policy import Provenance
from syncd.services import Services
from syncd.store.content import content_hash, document, volatile_json
from syncd.store.repo import EntryContent, Store, StoredEntry
from syncd.upstream.http import Deadline, current_deadline
from syncd.zenodo import views as zenodo_norm
from syncd.zenodo.client import LEGACY_JSON, RDM_JSON, ZenodoClient
from syncd.zenodo.names import (
    ZENODO_AWARD,
    ZENODO_CONTAINER,
    ZENODO_ENTITY,
    ZENODO_FUNDER,
    ZENODO_RECORD,
    ZENODO_SEARCH,
    ZENODO_VERSIONS,
    ZENODO_VOCAB,
)
from syncd.zenodo.params_id import RecordRef
from syncd.zenodo.rules import CONTAINER_RULES, ENTITY_RULES, PAGE_RULES, RECORD_RULES, TERM_RULES

__all__ = [
    "LAST_KNOWN",
    "TERM_PATHS",
    "LastKnown",
    "NotOnZenodo",
    "PageLookup",
    "RecordLookup",
    "concept_fallback_note",
    "conditional_etag",
    "fetch_page",
    "fetch_record",
    "fetch_term",
    "find_doi",
    "find_doi_answer",
    "get_page",
    "get_record",
    "get_term",
    "keep_last_known",
    "last_known",
    "latest_live_version",
    "latest_of_series",
    "latest_version",
    "local_search",
    "miss_error",
    "page_key",
    "record_content",
    "refetch_page",
    "refetch_record",
    "store_terms",
    "stored_page",
    "stored_record",
    "supersede_older",
    "term_by_identifier",
    "term_content",
]

log = logging.getLogger("syncd.zenodo.lookups")

# --------------------------------------------------------------------------------------------------
# the kinds of this slice (their hooks call the fetches below)


def _refetch_record(svc: Services, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    every = svc.settings.zenodo.unconditional_every
    return refetch_record(svc.upstreams.zenodo, svc.store, entry, deadline, unconditional_every=every)


def _refetch_page(svc: Services, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    return refetch_page(svc.upstreams.zenodo, svc.store, entry, deadline)


def _refetch_term(svc: Services, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    return fetch_term(svc.upstreams.zenodo, svc.store, entry.kind, entry.key, deadline)


def load_record(rec: dict[str, Any], raw: str | None) -> EntryContent:
    """A ``zenodo_record`` line of ``syncd cache export``: the record (either JSON shape), tombstone or miss.

    Raises:
        MalformedResponse: an ``ok`` line without a record body, or a key that is not a record id.
    """
    status, body = str(rec.get("status", "ok")), rec.get("body")
    if status == "ok":
        if not isinstance(body, dict):
            raise MalformedResponse("zenodo record without a body")
        return record_content(body, raw, rec.get("etag"), rec.get("last_modified"))
    key = str(rec.get("key", ""))
    if not key.isdigit():
        raise MalformedResponse(f"bad Zenodo record id {key!r}")
    gone = raw if status == "gone" else None
    return RECORD.content(key, status, gone, content_hash(gone) if gone else None)


def record_arrived(store: Store, rec: dict[str, Any], when: float) -> None:
    """After an imported ``ok`` record: note it as its concept's latest version when it says it is."""
    body = rec.get("body")
    if rec.get("status", "ok") != "ok" or not isinstance(body, dict):
        return
    keys = zenodo_norm.record_keys(body)
    if keys.concept_recid and keys.is_latest:
        store.set_concept(keys.concept_recid, keys.recid, now=when)


RECORD = Kind(
    ZENODO_RECORD,
    "zenodo_record",
    "zenodo_general",
    ALL_STATUSES,
    RECORD_RULES,
    refetch=_refetch_record,
    load=load_record,
    arrived=record_arrived,
)
"""``zenodo_record``: one version, ``GET /api/records/{id}`` (``ttl.zenodo_record``; tombstones too)."""

PAGE_KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(ZENODO_SEARCH, "search", "zenodo_search", rules=PAGE_RULES, refetch=_refetch_page),
        Kind(ZENODO_VERSIONS, "search", "zenodo_general", rules=PAGE_RULES, refetch=_refetch_page),
        Kind(ZENODO_VOCAB, "entity", "zenodo_general", rules=PAGE_RULES, refetch=_refetch_page),
        Kind(ZENODO_ENTITY, "entity", "zenodo_general", rules=ENTITY_RULES, refetch=_refetch_page),
        Kind(
            ZENODO_CONTAINER, "zenodo_record", "zenodo_general", rules=CONTAINER_RULES, refetch=_refetch_page
        ),
    )
}
"""The kinds stored as whole pages (:func:`get_page`): searches, version lists, vocabularies, communities,
file containers, by name."""

TERM_KINDS: dict[str, Kind] = {
    name: Kind(name, "entity", "zenodo_general", rules=TERM_RULES, refetch=_refetch_term)
    for name in (ZENODO_FUNDER, ZENODO_AWARD)
}
"""One term of Zenodo's funders / awards vocabulary (``ttl.entity``), by name."""

OWN_KINDS: dict[str, Kind] = {k.name: k for k in (RECORD, *PAGE_KINDS.values(), *TERM_KINDS.values())}
"""The kinds these lookups store, by name."""


def _content(
    kind: str, key: str, status: str, body: str | None, content_hash: str | None, **fields: Any
) -> EntryContent:
    return OWN_KINDS[kind].content(key, status, body, content_hash, **fields)


@dataclass(frozen=True)
class RecordLookup(Lookup):
    """A record lookup and what it learnt on the way, so no caller goes back to the store.

    ``notes``: sentences the answer says (the concept route of the asked id is a stored 404/410
    and the newest live version answers, :func:`concept_fallback_note`); ``last_known``: a deleted
    record's last good metadata (:func:`last_known`; None for any other status or when syncd never
    held it).
    """

    notes: tuple[str, ...] = ()
    last_known: LastKnown | None = None


def _learnt(svc: Services, ref: RecordRef, found: Lookup) -> RecordLookup:
    """``found`` with the notes and the last known copy its entry calls for (stored reads only)."""
    entry = found.entry
    note = concept_fallback_note(svc.store, ref, entry) if entry.status == "ok" else None
    known = last_known(svc.store, entry) if entry.status == "gone" else None
    return RecordLookup(
        entry, found.provenance, found.resolved_from, notes=(note,) if note else (), last_known=known
    )


def get_record(
    svc: Services, ref: RecordRef, deadline: Deadline | None = None, *, force: bool = False
) -> RecordLookup:
    """The Zenodo record for ``ref`` (record id, concept id, Zenodo DOI or another DOI).

    Misses (404, 410 tombstone, 403) are answered as stored entries whose ``status`` says so; the
    answer carries what was learnt on the way (:class:`RecordLookup`).

    Raises:
        NotOnZenodo: ``ref`` is a DOI that no Zenodo record holds (reason ``not_on_zenodo``), with the
            provenance of the DOI search that decided it.
        UpstreamError, BudgetExhausted: nothing stored and upstream could not be used.
    """
    deadline = deadline or current_deadline(svc.settings.deadline_s)
    resolved_from = "version"
    recid = ref.recid
    if recid is None and ref.doi is not None:
        resolved_from = "external_doi"
        searched: list[Provenance] = []
        found = svc.store.find_by_doi(ZENODO_RECORD, ref.doi)
        if found is None:
            found = _doi_search(svc, ref.doi, deadline, searched)
        if found is None and ref.stripped_doi:  # the as-given form first, the stripped one on a miss
            found = svc.store.find_by_doi(ZENODO_RECORD, ref.stripped_doi) or _doi_search(
                svc, ref.stripped_doi, deadline, searched
            )
        if found is None:
            raise NotOnZenodo(ref.doi, _least_fresh(searched))
        recid = found.key
    assert recid is not None
    latest = latest_version(svc.store, recid)
    target = latest or recid
    if latest is not None:
        resolved_from = "concept_to_latest"
    held = svc.store.get(ZENODO_RECORD, target)
    vias: list[str] = []

    def fetch() -> StoredEntry:
        asked = recid if latest is not None else (held.key if held else recid)
        fresh, via = fetch_record(
            svc.upstreams.zenodo,
            svc.store,
            asked,
            held if asked == target else None,
            deadline,
            unconditional_every=svc.settings.zenodo.unconditional_every,
        )
        vias.append(via)
        return fresh

    stored, prov = local_first(svc.runner, RECORD, target, fetch, deadline=deadline, held=held, force=force)
    if "concept_to_latest" in vias or (latest is not None and stored.key != recid):
        resolved_from = "concept_to_latest"
    never_held = stored.title is None and stored.concept_key is None  # a deleted version keeps both
    if stored.status in ("not_found", "gone") and stored.key == recid and latest is None and never_held:
        live = latest_live_version(svc, recid, deadline)
        if live is not None:
            return _learnt(svc, ref, live)
    return _learnt(svc, ref, Lookup(stored, prov, resolved_from=resolved_from))


class NotOnZenodo(NotFound):
    """No Zenodo record holds ``doi`` (reason ``not_on_zenodo``).

    ``provenance`` is that of the stored DOI search page that decided the miss (``store`` when a fresh
    stored page said so, ``upstream`` when Zenodo was asked in this call, ``store-stale`` when a stale
    page answered because Zenodo could not be used): a miss answer carries the same ``cache`` block as
    a found one.
    """

    def __init__(self, doi: str, provenance: Provenance) -> None:
        super().__init__(f"no Zenodo record holds DOI {doi}", reason="not_on_zenodo", doi=doi)
        self.provenance = provenance


def _least_fresh(provenances: list[Provenance]) -> Provenance:
    """The provenance an answer built from several pages carries: a stale one first, else the oldest.

    With none (the DOI was found nowhere without asking), a store answer of now.
    """
    if not provenances:
        return policy.now_from("store")
    return min(provenances, key=lambda p: (not p.stale, p.validated_at))


def _doi_search(
    svc: Services, doi: str, deadline: Deadline, provenances: list[Provenance]
) -> StoredEntry | None:
    """:func:`find_doi`, appending the provenance of the search page that answered to ``provenances``."""
    found, provenance = find_doi_answer(svc, doi, deadline)
    provenances.append(provenance)
    return found


def find_doi(svc: Services, doi: str, deadline: Deadline) -> StoredEntry | None:
    """The stored Zenodo record holding ``doi`` (any version), found through a search; None if none does.

    See :func:`find_doi_answer` (this is its record, without the search page's provenance).
    """
    return find_doi_answer(svc, doi, deadline)[0]


def find_doi_answer(svc: Services, doi: str, deadline: Deadline) -> tuple[StoredEntry | None, Provenance]:
    """The stored Zenodo record holding ``doi`` (any version) and the provenance of the search that found it.

    The record is None when no Zenodo record holds the DOI.

    ``GET /records?q=doi:"<doi>"&all_versions=true&size=2`` (search pool) is a stored page
    (``ttl.search``, so a repeat asks nothing). The hit whose DOI matches case-insensitively wins,
    else the first. A search hit is the whole record in the same RDM serialization as
    ``GET /records/{id}`` (with ``custom_fields``; only the request-specific ``links`` may differ), so
    it is stored as the record unless a newer revision is stored, and a stored copy of the same
    revision counts as confirmed by this answer: the caller answers from the store without a second
    request (issue 13, kind 6).

    Raises:
        UpstreamError, BudgetExhausted: nothing stored for this search and upstream could not be used;
            ``UpstreamUnavailable`` when the search route answered 404 (Zenodo never does for a search).
    """
    params = {"q": f'doi:"{doi}"', "all_versions": "true", "size": "2"}
    page = get_page(svc, ZENODO_SEARCH, "/records", params, deadline)
    if page.entry.status == "not_found":  # Zenodo answers a search with hits, never a 404
        raise UpstreamUnavailable(f"zenodo: the search for DOI {doi} answered 404", doi=doi)
    block = (page.body or {}).get("hits")
    hits = [h for h in (block.get("hits") or [] if isinstance(block, dict) else []) if isinstance(h, dict)]
    chosen: dict[str, Any] | None = None
    for hit in hits:
        pid = ((hit.get("pids") or {}).get("doi") or {}).get("identifier") or hit.get("doi")
        if isinstance(pid, str) and pid.lower() == doi.lower():
            chosen = hit
            break
    chosen = chosen or (hits[0] if hits else None)
    if chosen is None:
        return None, page.provenance
    try:
        keys = zenodo_norm.record_keys(chosen)
        content = record_content(chosen, json.dumps(chosen, ensure_ascii=False))
    except (MalformedResponse, ValueError, KeyError, TypeError):
        return None, page.provenance
    held = svc.store.get(ZENODO_RECORD, keys.recid)
    if (
        held is not None
        and held.status in ("gone", "restricted")
        and held.validated_at >= page.entry.validated_at
    ):
        return held, page.provenance  # the record route said so after this page was stored
    held_rev = held.upstream_version if held is not None and held.status == "ok" else None
    if held_rev is None or not held_rev.isdigit() or (keys.revision or 0) > int(held_rev):
        stored, _ = svc.store.put_content(content)
        return stored, page.provenance
    assert held is not None
    if keys.revision == int(held_rev) and page.entry.validated_at > held.validated_at:
        svc.store.mark_validated(held.id, now=page.entry.validated_at)
        return svc.store.get_by_id(held.id) or held, page.provenance
    return held, page.provenance


def latest_live_version(svc: Services, concept_recid: str, deadline: Deadline) -> Lookup | None:
    """The newest live version of the series ``concept_recid``, through a search, or None.

    For a concept id (or concept DOI) the concept route answered 404/410 (its latest version was
    deleted): ``/records?q=parent.id:<id>&allversions=true&sort=version`` (search pool, the page
    stored) lists the live versions newest first; the first one is stored as the concept's latest
    and answered (``resolved_from`` ``concept_to_latest``; :func:`concept_fallback_note` says how).
    None when the search fails or lists no version of that concept (a plain missing record id).
    """
    params = {"q": f"parent.id:{concept_recid}", "allversions": "true", "sort": "version", "size": "5"}
    try:
        page = get_page(svc, ZENODO_SEARCH, "/records", params, deadline)
    except (UpstreamError, BudgetExhausted) as exc:
        log.info("event=concept_fallback concept=%s found=none reason=%s", concept_recid, exc.reason)
        return None
    hits = (page.body or {}).get("hits") or {}
    for hit in hits.get("hits") or [] if isinstance(hits, dict) else []:
        try:
            keys = zenodo_norm.record_keys(hit)
        except (MalformedResponse, ValueError, KeyError, TypeError):
            continue
        entry = svc.store.get(ZENODO_RECORD, keys.recid)
        if keys.concept_recid != concept_recid or entry is None or entry.status != "ok":
            continue
        svc.store.set_concept(concept_recid, keys.recid)
        log.info("event=concept_fallback concept=%s latest=%s", concept_recid, keys.recid)
        return Lookup(entry, page.provenance, resolved_from="concept_to_latest")
    return None


def concept_fallback_note(store: Store, asked: RecordRef, entry: StoredEntry) -> str | None:
    """A notice when ``entry`` answers a concept id whose own route is a stored miss (404/410), else None."""
    if asked.recid is None or asked.recid == entry.key:
        return None
    miss = store.get(ZENODO_RECORD, asked.recid)
    if miss is None or miss.status not in ("not_found", "gone"):
        return None
    code = "410 (deleted)" if miss.status == "gone" else "404"
    return (
        f"Zenodo's concept route for {asked.recid} answered {code}; record {entry.key} is the newest live "
        "version of the series, found through a search of its versions."
    )


def latest_version(store: Store, recid: str) -> str | None:
    """The stored latest version id when ``recid`` is a known concept record id, else None."""
    concept = store.concept_latest(recid)
    return concept[0] if concept is not None else None


def latest_of_series(
    svc: Services, recid: str, concept_recid: str | None, deadline: Deadline | None = None
) -> str | None:
    """The newest version's record id of the series of version ``recid`` (not itself the latest).

    Local first: the stored concept -> latest mapping (``concepts`` table) answers while it is fresh
    (``ttl.zenodo_record``, the lifetime of the record it names): another version, or None when it
    names ``recid`` itself (the newest live version, a newer one deleted). Otherwise
    ``GET /records/{recid}/versions/latest`` without following the redirect (zenodo_general pool,
    :meth:`~syncd.zenodo.client.ZenodoClient.latest_version`) reads the id from ``Location``; the
    mapping is stored (when ``concept_recid`` is known) and older stored versions stop claiming to be
    the latest (:func:`supersede_older`). When Zenodo cannot be asked (offline, budget spent, an
    error), a stale stored mapping still answers; with none, or on Zenodo's 404, None: the caller
    leaves ``latest_recid`` out, it never fails the call for it.
    """
    now = svc.budget.clock()
    try:
        known = svc.store.concept_latest(concept_recid) if concept_recid else None
    except StoreError:  # the store cannot be read: Zenodo is asked
        known = None
    stale = known[0] if known is not None and known[0] != recid else None
    if known is not None:
        before, after = policy.fresh_bounds(svc.settings.ttl.zenodo_record, now)
        if before < known[1] <= after:  # fresh; naming this very version (its newer one deleted): none
            return stale
    if svc.read_only:
        return stale
    try:
        deadline = deadline or current_deadline(svc.settings.deadline_s)
        latest = svc.upstreams.zenodo.latest_version(recid, deadline)
    except (UpstreamError, BudgetExhausted) as exc:
        log.info("event=latest_version recid=%s found=%s reason=%s", recid, stale or "none", exc.reason)
        return stale
    if latest is None:  # Zenodo's 404, or a Location naming no record
        log.info("event=latest_version recid=%s found=%s answer=no_record_id", recid, stale or "none")
        return stale
    if latest == recid:  # Zenodo says this version is the newest after all: nothing to name
        return None
    if concept_recid:
        try:  # a side write: the answer names the latest even when the store cannot keep it
            svc.store.set_concept(concept_recid, latest, now=now)
            supersede_older(svc.store, concept_recid, latest)
        except StoreError as exc:
            log.warning(
                "event=latest_version_unstored recid=%s latest=%s reason=%s", recid, latest, exc.reason
            )
    return latest


def stored_record(store: Store, ref: RecordRef) -> StoredEntry | None:
    """The stored record ``ref`` names, with no request: a concept id reads its latest version.

    None when nothing is stored (a DOI not yet resolved to a record id included).
    """
    if ref.recid is not None:
        return store.get(ZENODO_RECORD, latest_version(store, ref.recid) or ref.recid)
    return store.find_by_doi(ZENODO_RECORD, ref.doi) if ref.doi else None


_MISSES = {
    "not_found": ("record_not_found", "no Zenodo record has this id"),
    "gone": ("record_deleted", "the record was deleted (a tombstone is stored)"),
    "restricted": ("record_restricted", "the record's metadata is restricted"),
}


def miss_error(entry: StoredEntry, label: str) -> NotFound:
    """The declared error for a stored record miss (``not_found``, ``gone``, ``restricted``) of ``label``."""
    reason, what = _MISSES.get(entry.status, ("record_not_found", entry.status))
    return NotFound(f"{label}: {what}", reason=reason)


def fetch_record(
    zenodo: ZenodoClient,
    store: Store,
    recid: str,
    entry: StoredEntry | None,
    deadline: Deadline,
    *,
    unconditional_every: int = 0,
) -> tuple[StoredEntry, str]:
    """Ask Zenodo for record ``recid`` now and store the answer; returns ``(entry, resolved_from)``.

    ``resolved_from`` is ``concept_to_latest`` when ``recid`` was a concept id that Zenodo redirected
    to its latest version (the mapping is stored), else ``version``. The request is conditional on
    the stored ETag except every ``unconditional_every``-th revalidation (:func:`conditional_etag`).
    Whenever a latest version is learnt, older stored versions stop claiming to be the latest
    (:func:`supersede_older`).

    Raises:
        UpstreamError, BudgetExhausted: upstream could not be used; nothing was written.
    """
    answer = zenodo.get_record(recid, deadline, etag=conditional_etag(entry, unconditional_every))
    if answer.status == "not_modified" and entry is not None:
        store.mark_validated(entry.id, etag=answer.etag, last_modified=answer.last_modified)
        return store.get_by_id(entry.id) or entry, "version"
    if answer.status != "ok" or answer.body is None:
        body = answer.text if answer.status == "gone" else None
        held = entry if entry is not None else store.get(ZENODO_RECORD, recid)
        if answer.status == "gone" and held is not None and held.status == "ok":
            keep_last_known(store, held)
        content = _content(  # a tombstone keeps the title and DOI it was known by
            ZENODO_RECORD,
            recid,
            answer.status,
            body,
            content_hash(body) if body else None,
            doi=held.doi if held is not None and answer.status == "gone" else None,
            concept_key=held.concept_key if held is not None and answer.status == "gone" else None,
            title=held.title if held is not None and answer.status == "gone" else None,
        )
        stored, _ = store.put_content(content)
        return stored, "version"
    keys = zenodo_norm.record_keys(answer.body)
    content = record_content(answer.body, answer.text, answer.etag, answer.last_modified)
    stored, changed = store.put_content(content)
    log.debug("event=stored kind=zenodo_record key=%s changed=%s", keys.recid, changed)
    via = "version"
    if keys.recid != recid:
        # asked for a concept record id: Zenodo redirected to its latest version
        store.set_concept(recid, keys.recid)
        supersede_older(store, recid, keys.recid)
        via = "concept_to_latest"
    elif keys.concept_recid and keys.is_latest:
        store.set_concept(keys.concept_recid, keys.recid)
        supersede_older(store, keys.concept_recid, keys.recid)
    return stored, via


def conditional_etag(entry: StoredEntry | None, every: int) -> str | None:
    """The ETag to send with a record revalidation, or None for an unconditional GET.

    Zenodo's ETag is the record's revision (``W/"4"``): it does not move when a newer version of the
    series is published, so ``versions.is_latest`` could stay stale forever behind 304s. Every
    ``every``-th check (``zenodo.unconditional_every``; 1: always unconditional; 0: always
    conditional) is sent without ``If-None-Match``.
    """
    if entry is None or not entry.etag:
        return None
    if every >= 1 and entry.checks > 0 and entry.checks % every == 0:
        return None
    return entry.etag


def _not_latest(body: dict[str, Any], latest_recid: str) -> dict[str, Any]:
    """Top-level keys laid over a stored version's body so it says it is not the latest (either shape)."""
    if isinstance(body.get("versions"), dict):
        return {"versions": {**body["versions"], "is_latest": False}}
    metadata = body.get("metadata")
    relations = metadata.get("relations") if isinstance(metadata, dict) else None
    chain = relations.get("version") if isinstance(relations, dict) else None
    if isinstance(chain, list) and chain and isinstance(chain[0], dict):
        first = {**chain[0], "is_last": False, "last_child": {"pid_type": "recid", "pid_value": latest_recid}}
        return {"metadata": {**metadata, "relations": {**relations, "version": [first, *chain[1:]]}}}
    return {}


def supersede_older(store: Store, concept_recid: str, latest_recid: str) -> int:
    """Stored versions of ``concept_recid`` other than ``latest_recid`` stop claiming ``is_latest: true``.

    Their stored body is left as Zenodo sent it; the correction is laid over it through the entry's
    volatile fields (read by :func:`syncd.store.content.document`) and the stored ETag is dropped so
    the next revalidation is unconditional. Returns how many versions were corrected.
    """
    corrected = 0
    for entry_id in store.series_ids(ZENODO_RECORD, concept_recid, besides=latest_recid):
        entry = store.get_by_id(entry_id)
        if entry is None:
            continue
        body = document(entry)
        try:
            claims = zenodo_norm.record_keys(body).is_latest
        except (MalformedResponse, ValueError, KeyError, TypeError):
            continue
        overlay = _not_latest(body, latest_recid) if claims else {}
        if not overlay:
            continue
        volatile = {**json.loads(entry.volatile or "{}"), **overlay}
        store.overlay_volatile(entry_id, volatile_json(volatile))
        corrected += 1
        log.info("event=superseded recid=%s concept=%s latest=%s", entry.key, concept_recid, latest_recid)
    return corrected


LAST_KNOWN = "last_known"
"""``previous_bodies.role`` of the last good body of a record Zenodo later deleted (kept as long as the
tombstone, never pruned by ``store.keep_previous_s``)."""


@dataclass(frozen=True)
class LastKnown:
    """The last good body stored of a record now deleted: ``body`` (parsed), ``fetched_at`` (epoch s)."""

    body: dict[str, Any]
    fetched_at: float


def keep_last_known(store: Store, held: StoredEntry) -> None:
    """Keep ``held``'s good body beside the tombstone about to replace it (role :data:`LAST_KNOWN`)."""
    store.keep_body(held, LAST_KNOWN, "gone")
    log.info("event=last_known_kept recid=%s title=%r", held.key, held.title)


def last_known(store: Store, entry: StoredEntry) -> LastKnown | None:
    """The last good metadata of the deleted record ``entry``, or None when syncd never held it.

    The kept :data:`LAST_KNOWN` body, else the newest replaced ``ok`` body still kept.
    """
    kept = [b for b in store.previous_bodies(entry.id) if b["status"] == "ok" and b["body"]]
    kept.sort(key=lambda b: b["role"] != LAST_KNOWN)  # stable: the last-known row first, then newest
    for row in kept:
        try:
            body = json.loads(row["body"])
        except ValueError:
            continue
        if isinstance(body, dict):
            return LastKnown(body, float(row["fetched_at"]))
    return None


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
    search_text = " ".join(filter(None, (names, view.description, " ".join(view.keywords or []), view.doi)))
    return _content(
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
        volatile=volatile_json({"stats": body["stats"]} if "stats" in body else {}),
    )


def refetch_record(
    zenodo: ZenodoClient,
    store: Store,
    entry: StoredEntry,
    deadline: Deadline,
    *,
    unconditional_every: int = 0,
) -> StoredEntry:
    """Ask Zenodo again for the stored record ``entry`` (conditionally but every Nth) and store the answer."""
    stored, _ = fetch_record(
        zenodo, store, entry.key, entry, deadline, unconditional_every=unconditional_every
    )
    return stored


# --------------------------------------------------------------------------------------------------
# JSON pages: searches, version lists, vocabularies, entities (community/funder), ZIP listings.


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
        pool=OWN_KINDS[kind].pool,
        accept=(200, 404),
        accept_header=spec["a"],
        parse_json=(200,),
    )
    if resp.status == 404:
        stored, _ = store.put_content(_content(kind, key, "not_found", None, None))
        return stored
    body = resp.json
    if not isinstance(body, dict):
        raise MalformedResponse(f"zenodo: {spec['p']} did not answer a JSON object")
    hits = body.get("hits")
    if kind in (ZENODO_SEARCH, ZENODO_VERSIONS) and not (
        isinstance(hits, dict) and isinstance(hits.get("hits"), list)
    ):
        raise MalformedResponse("zenodo: the answer has no hits list")
    content = _content(kind, key, "ok", resp.text, content_hash(_page_projection(kind, body)))
    stored, changed = store.put_content(content)
    if kind in (ZENODO_SEARCH, ZENODO_VERSIONS) and changed:
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
    store: Store, kind: str, path: str, params: dict[str, str], *, accept: str = RDM_JSON
) -> dict[str, Any] | None:
    """The stored body of a page (see :func:`get_page`), fresh or stale, asking nothing; None if none.

    None too for a stored miss (404) or a body that is not a JSON object.
    """
    entry = store.get(kind, page_key(path, params, accept))
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


# --------------------------------------------------------------------------------------------------
# Vocabulary entities: funders and awards

TERM_PATHS: dict[str, str] = {ZENODO_FUNDER: "/funders", ZENODO_AWARD: "/awards"}
"""The Zenodo vocabulary route of each entity kind (``GET {path}/{id}``, ``{path}?q=``)."""
_TERM_KINDS = {path: kind for kind, path in TERM_PATHS.items()}


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
    funder = body.get("funder") if isinstance(body.get("funder"), dict) else {}
    title = body.get("name") or zenodo_norm.i18n(body.get("title")) or body.get("acronym")
    words = (title, body.get("acronym"), body.get("number"), funder.get("name"), body.get("country_name"))
    return _content(
        kind=kind,
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
        stored, _ = store.put_content(_content(kind, key, "not_found", None, None))
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


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def term_by_identifier(
    svc: Services, kind: str, identifier: str, deadline: Deadline | None = None
) -> Lookup | None:
    """The funder or award whose identifier (a DOI, lowercased, or a URL) is ``identifier``; None if none.

    The store first: an entity holding that DOI is answered through :func:`get_term` (fresh: no
    request; stale: revalidated by its id, or served stale when Zenodo cannot be used). Otherwise
    Zenodo's vocabulary is asked ``GET /funders|/awards?q=identifiers.identifier:"<id>"&size=1`` (a
    stored ``zenodo_vocab`` page, whose hits are stored as entities) and the hit that carries the
    identifier (any case) is returned.

    Raises:
        UpstreamError, BudgetExhausted: nothing stored answers and upstream could not be used.
    """
    deadline = deadline or current_deadline(svc.settings.deadline_s)
    held = svc.store.find_by_doi(kind, identifier.lower())
    if held is not None and held.status == "ok":
        return get_term(svc, kind, held.key, deadline)
    params = {"q": f"identifiers.identifier:{_quoted(identifier)}", "size": "1"}
    page = get_page(svc, ZENODO_VOCAB, TERM_PATHS[kind], params, deadline, accept=LEGACY_JSON)
    block = (page.body or {}).get("hits")
    for hit in block.get("hits") or [] if isinstance(block, dict) else []:
        ids = hit.get("identifiers") if isinstance(hit, dict) else None
        names = {str(i.get("identifier", "")).lower() for i in ids or [] if isinstance(i, dict)}
        if identifier.lower() in names and isinstance(hit.get("id"), str):
            found = svc.store.get(kind, hit["id"])
            if found is None:  # a page served from the store before its hits were kept as entities
                found, _ = svc.store.put_content(term_content(kind, hit))
            return Lookup(found, page.provenance)
    return None


# --------------------------------------------------------------------------------------------------
# Offline search over stored records


def local_search(store: Store, query: str, limit: int = 200) -> list[StoredEntry]:
    """Stored ``ok`` records matching ``query`` in the full-text index, best first.

    The index covers title, creators, description, keywords and DOI. With no usable terms, the most
    recently fetched records are returned.
    """
    terms = re.findall(r"\w+", re.sub(r"\b[\w.]+:", " ", query or ""), flags=re.UNICODE)
    terms = [t for t in terms if t.upper() not in ("AND", "OR", "NOT")]
    if terms:
        found = store.search(" ".join(terms), kind=ZENODO_RECORD, limit=limit)
        if not found and len(terms) > 1:  # Zenodo ORs bare terms: fall back to any term
            seen: dict[int, StoredEntry] = {}
            for term in terms:
                for e in store.search(term, kind=ZENODO_RECORD, limit=limit):
                    seen.setdefault(e.id, e)
            found = list(seen.values())[:limit]
        return [e for e in found if e.status == "ok"]
    return store.newest(ZENODO_RECORD, limit)
