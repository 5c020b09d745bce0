"""DataCite lookups through the local-first road: works, list pages, the offline mirror search.

Every lookup goes through :func:`syncd.road.local_first.local_first` with this slice's kinds, keyed as
follows:

=================== ==================================================================================
kind                key
=================== ==================================================================================
``datacite_work``   lower-cased DOI; body ``{"data", "included"}`` (``ok``) or the classified miss
                    ``{"missReason", "registrationAgency"?}`` (``not_found``)
``datacite_search`` canonical JSON ``{"route", "params"}`` of a list call (``/dois``, ``/repositories``)
=================== ==================================================================================

A DOI DataCite holds no public record of is asked of doi.org (``GET /ra/{doi}``, the ``doi`` pool)
and stored as a miss with its reason (``../shared/spec/datacite.md`` §3): ``not_public`` (DataCite's
own DOI, Registered/Draft or just registered), ``other_agency`` (with the agency), ``does_not_exist``,
or ``unclassified`` when doi.org did not answer (then asked again on the next lookup). The records of
a ``/dois`` search page are stored as partial works (the page asks for a subset of fields) when the
store holds none: they feed the offline search, and ``get_work`` fetches the whole record when it
meets one.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from syncd.datacite.kinds import LIST, WORK
from syncd.datacite.lookups_content import is_partial, work_content
from syncd.datacite.names import DATACITE_WORK
from syncd.datacite.params import list_key
from syncd.datacite.views import (
    stored_body,
)
from syncd.errors import BudgetExhausted, MalformedResponse, UpstreamError
from syncd.normalize.doi import ParsedDOI
from syncd.road import policy
from syncd.road.local_first import Lookup, facts_of, local_first
from syncd.road.policy import Provenance
from syncd.road.services import Services
from syncd.store.content import content_hash
from syncd.store.repo import EntryContent, Store, StoredEntry
from syncd.upstream.http import Deadline, current_deadline

__all__ = [
    "LIST",
    "WORK",
    "Miss",
    "Page",
    "classify_ra",
    "fetch_list",
    "fetch_work",
    "fetch_works",
    "fetched_now",
    "get_work",
    "is_partial",
    "list_page",
    "mirror_search",
    "miss_of",
    "store_miss",
    "stored_work",
    "work_content",
]

log = logging.getLogger("syncd.datacite.lookups")


# --------------------------------------------------------------------------------------------------
# exported lines (the ``load`` hook of ``datacite_work``, :mod:`syncd.datacite.kinds_hooks`)
# --------------------------------------------------------------------------------------------------


def load_work(rec: dict[str, Any], raw: str | None) -> EntryContent:
    """A ``datacite_work`` line of ``syncd cache export``: a record (either endpoint's shape) or its miss.

    Raises:
        MalformedResponse: an ``ok`` line without a record object.
    """
    status, body = str(rec.get("status", "ok")), rec.get("body")
    key = str(rec.get("key", "")).lower()
    if status == "ok":
        data = body.get("data") if isinstance(body, dict) else None
        if isinstance(data, list):
            data = data[0] if data else None
        if not isinstance(data, dict):
            raise MalformedResponse("datacite work without a data object")
        included = body.get("included") if isinstance(body, dict) else None
        return work_content(key, stored_body(data, included if isinstance(included, list) else None))
    if not key:
        raise MalformedResponse("datacite entry without a key")
    return WORK.content(key, status, raw, None, doi=key)


# --------------------------------------------------------------------------------------------------
# works
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Miss:
    """Why DataCite holds no public record of a DOI: ``reason`` (contract ``missReason``) and ``agency``."""

    reason: str
    agency: str | None = None


def classify_ra(agency: str | None, status: str) -> Miss:
    """The miss of a DOI from doi.org's ``/ra/{doi}`` answer (``agency``, ``status`` of :class:`RaAnswer`).

    ``DataCite`` -> ``not_public``; another agency -> ``other_agency`` (the agency verbatim); a status
    answer ("DOI does not exist", "Invalid DOI") -> ``does_not_exist``.
    """
    if agency is not None:
        if agency.strip().lower() == "datacite":
            return Miss("not_public", agency)
        return Miss("other_agency", agency)
    return Miss("does_not_exist") if status in ("not_found", "invalid") else Miss("unclassified")


def miss_of(entry: StoredEntry) -> Miss:
    """The classified miss stored with a ``not_found`` work (``unclassified`` when none was stored)."""
    try:
        body = json.loads(entry.body or "{}")
    except ValueError:
        body = {}
    reason = body.get("missReason") if isinstance(body, dict) else None
    if not isinstance(reason, str):
        return Miss("unclassified")
    agency = body.get("registrationAgency")
    return Miss(reason, agency if isinstance(agency, str) else None)


def _miss_content(svc: Services, key: str, deadline: Deadline) -> EntryContent:
    """Ask doi.org which agency holds ``key`` and build the classified miss to store."""
    try:
        answer = svc.upstreams.doi.ra(key, deadline)
    except (UpstreamError, BudgetExhausted) as exc:
        log.info("event=ra_unavailable doi=%s reason=%s", key, exc.reason)
        miss = Miss("unclassified")
    else:
        miss = classify_ra(answer.agency, answer.status)
    body: dict[str, Any] = {"missReason": miss.reason}
    if miss.agency is not None:
        body["registrationAgency"] = miss.agency
    return WORK.content(key, "not_found", json.dumps(body), content_hash(body), doi=key)


def fetch_work(svc: Services, key: str, deadline: Deadline, as_written: str | None = None) -> StoredEntry:
    """Ask DataCite for the DOI ``key`` now and store the answer (the record, or the classified miss).

    ``as_written``: the DOI as the caller wrote it when a non-ASCII dash of it was folded for ``key``
    (:attr:`syncd.normalize.doi.ParsedDOI.retry_form`); asked once more when DataCite holds no
    record of ``key``, its record stored under ``key``.

    Raises:
        UpstreamError, BudgetExhausted: DataCite could not be used; nothing was written.
    """
    found = svc.upstreams.datacite.get_works([key], deadline)
    body = found.get(key)
    if body is None and as_written is not None:
        log.info("event=retry_as_written key=%s", key)
        body = svc.upstreams.datacite.get_works([as_written], deadline).get(as_written.lower())
    content = work_content(key, body) if body is not None else _miss_content(svc, key, deadline)
    stored, changed = svc.store.put_content(content)
    log.debug("event=stored kind=datacite_work key=%s changed=%s", key, changed)
    return stored


def fetch_works(svc: Services, keys: list[str], deadline: Deadline) -> dict[str, StoredEntry]:
    """Ask DataCite for the whole records of ``keys`` (lower-cased DOIs, at most 50) in one request.

    Each record answered is stored; returns the stored entries by DOI (a DOI left out is not asked
    of doi.org here).

    Raises:
        ValueError: more than 50 DOIs.
        UpstreamError, BudgetExhausted: DataCite could not be used; nothing was written.
    """
    found = svc.upstreams.datacite.get_works(keys, deadline)
    stored: dict[str, StoredEntry] = {}
    for key, body in found.items():
        try:
            stored[key], _ = svc.store.put_content(work_content(key, body))
        except MalformedResponse as exc:  # a poison record never stops the others
            log.info("event=skip_item kind=datacite_work key=%s reason=%s", key, exc.reason)
    return stored


def store_miss(svc: Services, key: str, deadline: Deadline) -> StoredEntry:
    """Store the classified miss of ``key``, a DOI a list answer just left out (asks doi.org why).

    Raises:
        StoreError: the store could not be written.
    """
    stored, _ = svc.store.put_content(_miss_content(svc, key, deadline))
    return stored


def fetched_now(entry: StoredEntry) -> Lookup:
    """The lookup of an entry this call just fetched and stored (:func:`fetch_works`, :func:`store_miss`)."""
    return Lookup(entry, policy.from_upstream(facts_of(entry)))


def stored_work(svc: Services, key: str) -> StoredEntry | None:
    """The stored ``datacite_work`` of the DOI ``key`` (no request; None when not stored)."""
    return svc.store.get(DATACITE_WORK, key)


def get_work(
    svc: Services, doi: ParsedDOI, deadline: Deadline | None = None, *, force: bool = False
) -> Lookup:
    """The DataCite record of ``doi``, local-first: the stored entry (``ok`` or the classified miss).

    A partial record (from a search page) and an ``unclassified`` miss are asked again; when DataCite
    cannot be reached they are answered flagged stale.

    Raises:
        UpstreamError, BudgetExhausted: nothing stored and DataCite could not be used.
    """
    deadline = deadline or current_deadline(svc.settings.deadline_s)
    held = svc.store.get(DATACITE_WORK, doi.key)
    again = is_partial(held) or (
        held is not None and held.status != "ok" and miss_of(held).reason == "unclassified"
    )
    stored, prov = local_first(
        svc.runner,
        WORK,
        doi.key,
        lambda: fetch_work(svc, doi.key, deadline, doi.retry_form),
        deadline=deadline,
        held=held,
        force=force,
        refetch=again,
    )
    if is_partial(stored) and not prov.stale:
        prov = policy.flagged_stale(prov)
    return Lookup(stored, prov)


# --------------------------------------------------------------------------------------------------
# list pages
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Page:
    """One answered list call: the page ``body`` (``data``, ``included``, ``meta``, ``links``), provenance."""

    body: dict[str, Any]
    provenance: Provenance


def _linking_copy(record: dict[str, Any]) -> bool:
    """Whether a ``/dois`` record is another agency's linking copy (``relationships.client`` is null)."""
    relationships = record.get("relationships")
    client = relationships.get("client") if isinstance(relationships, dict) else None
    return isinstance(client, dict) and "data" in client and client["data"] is None


def _upsert_records(store: Store, body: dict[str, Any]) -> int:
    """Store the records of a ``/dois`` page as partial works where nothing is stored; never over one.

    A linking copy (``relationships.client.data: null``, another agency's DOI an ``ids=`` page
    answers) is not a DataCite work and is never stored.
    """
    included = body.get("included") if isinstance(body.get("included"), list) else None
    written = 0
    for record in body.get("data") or []:
        attributes = record.get("attributes") if isinstance(record, dict) else None
        doi = attributes.get("doi") if isinstance(attributes, dict) else None
        if not isinstance(doi, str) or store.get(DATACITE_WORK, doi.lower()) is not None:
            continue
        if _linking_copy(record):
            continue
        try:
            content = work_content(doi.lower(), stored_body(record, included), partial=True)
        except MalformedResponse:
            continue
        store.put_content(content)
        written += 1
    return written


def fetch_list(svc: Services, route: str, params: dict[str, str], deadline: Deadline) -> StoredEntry:
    """Ask DataCite for one list page now and store it (``datacite_search``); a ``/dois`` page's records too.

    Raises:
        UpstreamRejected: DataCite refused the query (HTTP 400; never stored).
        UpstreamError, BudgetExhausted: DataCite could not be used; nothing was written.
    """
    answer = svc.upstreams.datacite.get_list(route, params, deadline)
    body = answer.body
    projection = {
        "data": body.get("data"),
        "meta": body.get("meta"),
        "next": (body.get("links") or {}).get("next"),
    }
    content = LIST.content(list_key(route, params), "ok", answer.text, content_hash(projection))
    stored, _ = svc.store.put_content(content)
    if route == "/dois":
        log.debug("event=upsert_works written=%d", _upsert_records(svc.store, body))
    return stored


def list_page(
    svc: Services,
    route: str,
    params: dict[str, str],
    deadline: Deadline | None = None,
    *,
    force: bool = False,
) -> Page:
    """One list page, local-first (``datacite_search`` keyed by :func:`~syncd.datacite.params.list_key`).

    Raises:
        UpstreamRejected: DataCite refused the query (never answered from the store).
        UpstreamError, BudgetExhausted: nothing stored and DataCite could not be used.
    """
    deadline = deadline or current_deadline(svc.settings.deadline_s)
    stored, prov = local_first(
        svc.runner,
        LIST,
        list_key(route, params),
        lambda: fetch_list(svc, route, params, deadline),
        deadline=deadline,
        force=force,
    )
    body = json.loads(stored.body or "{}") if stored.status == "ok" else {}
    return Page(body if isinstance(body, dict) else {}, prov)


# --------------------------------------------------------------------------------------------------
# offline: full-text search over the stored works
# --------------------------------------------------------------------------------------------------


def mirror_search(
    svc: Services, text: str, *, offset: int, rows: int
) -> tuple[list[StoredEntry], int, Provenance | None]:
    """Stored DataCite works matching any term of ``text`` (the store's full-text index, best first).

    Asks nothing: read from ``svc.store`` alone (the queries call this instead of reading the store).

    Returns ``(entries, total_local_matches, provenance)``; the provenance is ``store-stale`` with the
    oldest ``validated_at`` of the page (None when nothing matched).
    """
    terms = [t for t in text.split() if any(ch.isalnum() for ch in t)]
    if not terms:
        return [], 0, None
    entries, total = svc.store.search_page(terms, kind=DATACITE_WORK, offset=offset, limit=rows)
    entries = [e for e in entries if e.status == "ok"]
    if not entries:
        return [], total, None
    prov = policy.from_many((e.fetched_at for e in entries), (e.validated_at for e in entries))
    return entries, total, prov
