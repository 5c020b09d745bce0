"""Zenodo lookups by identifier through the local-first road: a record, its series, a funder or award.

A record is asked by record id, concept id, Zenodo DOI or another DOI (:func:`get_record`); the
answer carries what was learnt on the way (:class:`RecordLookup`). An external DOI is resolved by a
stored search page (``doi:"<doi>"``, ``all_versions``) whose hit, a whole record, is stored as the
record: no second request (:func:`find_doi`). A concept whose own route is a 404/410 answers its
newest live version (:func:`latest_live_version`); a version names its series' newest
(:func:`latest_of_series`). A funder or award is found by its DOI (:func:`term_by_identifier`).

What a record fetch stores: :mod:`syncd.zenodo.lookups_fetch`; pages:
:mod:`syncd.zenodo.lookups_pages`; terms: :mod:`syncd.zenodo.lookups_terms`; files:
:mod:`syncd.zenodo.lookups_files`.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from syncd.errors import (
    BudgetExhausted,
    MalformedResponse,
    NotFound,
    StoreError,
    UpstreamError,
    UpstreamUnavailable,
)
from syncd.road import policy
from syncd.road.local_first import Lookup, local_first
from syncd.road.policy import Provenance
from syncd.road.services import Services
from syncd.store.repo import Store, StoredEntry
from syncd.upstream.http import Deadline, current_deadline
from syncd.zenodo import views as zenodo_norm
from syncd.zenodo.client import LEGACY_JSON
from syncd.zenodo.lookups_fetch import (
    RECORD,
    LastKnown,
    fetch_record,
    last_known,
    latest_version,
    record_content,
    stored_record,
    supersede_older,
)
from syncd.zenodo.lookups_pages import get_page
from syncd.zenodo.lookups_terms import TERM_PATHS, get_term, term_content
from syncd.zenodo.names import ZENODO_RECORD, ZENODO_SEARCH, ZENODO_VOCAB
from syncd.zenodo.params_id import RecordRef
from syncd.zenodo.settings import SECTION

__all__ = [
    "NotOnZenodo",
    "RecordLookup",
    "concept_fallback_note",
    "find_doi",
    "find_doi_answer",
    "get_record",
    "held_latest",
    "held_record",
    "latest_live_version",
    "latest_of_series",
    "term_by_identifier",
]

log = logging.getLogger("syncd.zenodo.lookups")


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
            unconditional_every=SECTION.of(svc.settings).unconditional_every,
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


def latest_of_series(
    svc: Services,
    recid: str,
    concept_recid: str | None,
    deadline: Deadline | None = None,
    *,
    name_itself: bool = False,
) -> str | None:
    """The newest version's record id of the series of version ``recid`` (not itself the latest).

    ``name_itself``: when ``recid`` is the newest version, answer ``recid`` rather than None (the
    series' ``latest_recid`` of ``zenodo_list_versions``, which names the latest whichever version
    was asked; ``zenodo_get_record``'s ``versions.latest_recid`` names only another version).

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
    stale = known[0] if known is not None and (name_itself or known[0] != recid) else None
    if known is not None:
        before, after = policy.fresh_bounds(policy.ttl_s(svc.settings.ttl, RECORD, "ok"), now)
        if before < known[1] <= after:  # fresh; naming this very version (its newer one deleted): none
            return stale
    if svc.read_only:
        return stale
    try:
        deadline = deadline or current_deadline(svc.settings.deadline_s)
        latest: str | None = svc.upstreams.zenodo.latest_version(recid, deadline)
    except (UpstreamError, BudgetExhausted) as exc:
        log.info("event=latest_version recid=%s found=%s reason=%s", recid, stale or "none", exc.reason)
        return stale
    if latest is None:  # Zenodo's 404, or a Location naming no record
        log.info("event=latest_version recid=%s found=%s answer=no_record_id", recid, stale or "none")
        return stale
    if latest == recid:  # Zenodo says this version is the newest after all: nothing to name
        return recid if name_itself else None
    if concept_recid:
        try:  # a side write: the answer names the latest even when the store cannot keep it
            svc.store.set_concept(concept_recid, latest, now=now)
            supersede_older(svc.store, concept_recid, latest)
        except StoreError as exc:
            log.warning(
                "event=latest_version_unstored recid=%s latest=%s reason=%s", recid, latest, exc.reason
            )
    return latest


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


def held_record(svc: Services, ref: RecordRef) -> StoredEntry | None:
    """The stored record ``ref`` names, asking nothing (a concept id reads its latest version); None if none.

    See :func:`~syncd.zenodo.lookups_fetch.stored_record`.
    """
    return stored_record(svc.store, ref)


def held_latest(svc: Services, recid: str) -> str | None:
    """The stored latest version id when ``recid`` is a known concept record id, else None; asks nothing."""
    return latest_version(svc.store, recid)
