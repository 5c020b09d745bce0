"""Crossref lookups through the local-first path: works, search pages, entities.

Lookups take the :class:`~syncd.road.services.Services` bundle, ask its runner for the policy's plan,
fetch with the Crossref client when the plan says so (doi.org's registration agency of a
missing DOI through :mod:`syncd.doiorg.lookups`), and store what upstream answers as
entries (their TTL settings and pools: :mod:`syncd.kinds`), keyed as follows:

=================== ======================================================
kind                key
=================== ======================================================
``crossref_work``   ASCII-lowercased DOI (body: raw ``/works/{doi}`` JSON)
``crossref_search`` canonical JSON ``{"route", "params"}`` of a list call
``crossref_journal`` ISSN (``NNNN-NNNX``)
``crossref_funder`` registry id (``100000001``)
``crossref_member`` member id
``crossref_prefix`` prefix (``10.1038``)
=================== ======================================================

The works of a full (no ``select``) ``/works`` search page are upserted as ``crossref_work`` entries marked
partial (``message-type: work-list-item``; list items carry no reference list): they feed the offline
full-text index, a partial entry never replaces a full record, and ``get_work`` fetches the full record
when it meets one (answering the partial copy, flagged stale, if Crossref cannot be reached).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

from syncd.crossref import views as crossref_norm
from syncd.crossref.client import CrossrefClient, EntityAnswer
from syncd.crossref.kinds import ENTITY_KINDS, LIST, WORK, stored_work
from syncd.crossref.names import (
    CROSSREF_FUNDER,
    CROSSREF_JOURNAL,
    CROSSREF_MEMBER,
    CROSSREF_PREFIX,
    CROSSREF_SEARCH,
    CROSSREF_WORK,
)
from syncd.crossref.views_lines import line_item, list_line
from syncd.crossref.views_references import cited_dois
from syncd.doiorg.lookups import registration_agency
from syncd.errors import BudgetExhausted, MalformedResponse, NotFound, UpstreamError, UpstreamUnavailable
from syncd.kinds import Kind
from syncd.normalize.doi import ParsedDOI, is_zenodo_doi, parse_doi
from syncd.road import policy
from syncd.road.local_first import Lookup, local_first
from syncd.road.policy import Provenance
from syncd.road.services import Services
from syncd.store.content import content_hash, volatile_json
from syncd.store.repo import EntryContent, Store, StoredEntry
from syncd.upstream.http import Deadline, current_deadline

__all__ = [
    "ENTITY_ROUTES",
    "PARTIAL_MESSAGE_TYPE",
    "WORK",
    "Page",
    "fetch_entity",
    "fetch_list",
    "fetch_work",
    "get_entity",
    "get_work",
    "is_partial",
    "line_of",
    "list_page",
    "message_of",
    "refetch_list",
    "search_key",
    "stored_work",
    "work_content",
]

log = logging.getLogger("syncd.crossref.lookups")

PARTIAL_MESSAGE_TYPE = "work-list-item"
"""``message-type`` of a stored work that came from a search page (no reference list; refetched whole)."""

ENTITY_ROUTES: dict[str, tuple[Callable[[str], str], str]] = {
    CROSSREF_JOURNAL: (lambda k: f"/journals/{k}", "journal"),
    CROSSREF_FUNDER: (lambda k: f"/funders/10.13039/{k}", "funder"),
    CROSSREF_MEMBER: (lambda k: f"/members/{k}", "member"),
    CROSSREF_PREFIX: (lambda k: f"/prefixes/{k}", "prefix"),
}
"""Entity kind -> (key -> request path, expected ``message-type``)."""

_VOLATILE_ENTITY_KEYS = frozenset({"last-status-check-time", "indexed", "score", "next-cursor"})


def _strip_volatile(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_volatile(v) for k, v in value.items() if k not in _VOLATILE_ENTITY_KEYS}
    if isinstance(value, list):
        return [_strip_volatile(v) for v in value]
    return value


# --------------------------------------------------------------------------------------------------
# exported lines (the ``load`` hook of ``crossref_work``, :mod:`syncd.crossref.kinds_hooks`)
# --------------------------------------------------------------------------------------------------


def load_work(rec: dict[str, Any], raw: str | None) -> EntryContent:
    """A ``crossref_work`` line of ``syncd cache export``: the work (envelope or bare message) or its miss.

    Raises:
        MalformedResponse: an ``ok`` line without a work message.
        InvalidInput: the key is not a DOI.
    """
    status, body = str(rec.get("status", "ok")), rec.get("body")
    if status == "ok":
        message = body.get("message") if isinstance(body, dict) and "message" in body else body
        if not isinstance(message, dict):
            raise MalformedResponse("crossref work without a message")
        return work_content(parse_doi(str(message.get("DOI", rec.get("key", "")))).key, message, raw)
    key = parse_doi(str(rec.get("key", ""))).key
    return WORK.content(key, status, None, None, doi=key)


OWN_KINDS: dict[str, Kind] = {k.name: k for k in (WORK, LIST, *ENTITY_KINDS.values())}
"""The kinds these lookups store, by name."""


def _content(
    kind: str, key: str, status: str, body: str | None, content_hash: str | None, **fields: Any
) -> EntryContent:
    return OWN_KINDS[kind].content(key, status, body, content_hash, **fields)


def message_of(entry: StoredEntry) -> dict[str, Any]:
    """The ``message`` object of a stored Crossref entry (``{}`` for a miss or an unreadable body)."""
    try:
        body = json.loads(entry.body or "{}")
    except ValueError:
        return {}
    message = body.get("message") if isinstance(body, dict) else None
    return message if isinstance(message, dict) else {}


def line_of(entry: StoredEntry) -> dict[str, Any]:
    """What a list line of the stored work ``entry`` reads: its stored list line, else its ``message``.

    The ``message`` (the body parsed) when the entry carries no line or an unreadable one.
    """
    line = line_item(entry.summary) if entry.summary is not None else None
    return line if line else message_of(entry)


def is_partial(entry: StoredEntry | None) -> bool:
    """Whether a stored ``crossref_work`` came from a search page (no reference list; refetch whole)."""
    return bool(
        entry is not None
        and entry.status == "ok"
        and entry.body
        and f'"message-type": "{PARTIAL_MESSAGE_TYPE}"' in entry.body[:200]
    )


def get_work(
    svc: Services, doi: ParsedDOI, deadline: Deadline | None = None, *, force: bool = False
) -> Lookup:
    """The Crossref work for ``doi``: from the store when fresh, else from ``/works/{doi}``.

    A Zenodo DOI (``10.5281/zenodo.N``) is refused without any request, pointing at ``zenodo_get_record``
    (BC-08). A stored partial work (from a search page) is fetched whole, or answered flagged stale when
    Crossref cannot be reached. On a miss, doi.org names the registration agency (cached per prefix).

    Raises:
        NotFound: Crossref holds no record (reason ``doi_not_found``; ``registrationAgency`` when known).
        UpstreamError, BudgetExhausted: nothing stored and upstream could not be used.
    """
    deadline = deadline or current_deadline(svc.settings.deadline_s)
    record_id = is_zenodo_doi(doi.key)
    if record_id is not None:
        raise NotFound(
            f"{doi.doi} is a Zenodo DOI registered with DataCite, not Crossref; call zenodo_get_record "
            f"with id {record_id!r} for its metadata",
            reason="doi_not_found",
            hint=f"Call zenodo_get_record with id {record_id!r}; Crossref holds no Zenodo records.",
            doi=doi.doi,
            registrationAgency="DataCite",
            zenodoRecordId=record_id,
        )
    held = svc.store.get(CROSSREF_WORK, doi.key)
    stored, prov = local_first(
        svc.runner,
        WORK,
        doi.key,
        lambda: fetch_work(svc.upstreams.crossref, svc.store, doi, held, deadline),
        deadline=deadline,
        held=held,
        force=force,
        refetch=is_partial(held),
    )
    if stored.status != "ok":
        raise _doi_not_found(svc, doi, deadline, prov)
    if is_partial(stored) and not prov.stale:
        prov = policy.flagged_stale(prov)
    return Lookup(stored, prov)


def _doi_not_found(svc: Services, doi: ParsedDOI, deadline: Deadline, prov: Provenance) -> NotFound:
    """``doi_not_found`` naming the agency doi.org says holds the DOI (or none, or unknown)."""
    prefix = doi.key.split("/", 1)[0]
    try:
        agency = registration_agency(svc, prefix, deadline)
    except (UpstreamError, BudgetExhausted) as exc:
        log.info("event=ra_unavailable prefix=%s reason=%s", prefix, exc.reason)
        agency, known = None, False
    else:
        known = True
    data: dict[str, Any] = {"doi": doi.doi, "cache": prov.as_dict()}
    hint = "Check the DOI; it may never have existed or be registered with another agency."
    if agency is None:
        tail = (
            " and doi.org says no registration agency holds its prefix"
            if known
            else " (the registration agency could not be checked now)"
        )
        message = f"no Crossref record for DOI {doi.doi}{tail}"
    elif agency.lower() == "crossref":
        data["registrationAgency"] = agency
        message = (
            f"no Crossref record for DOI {doi.doi}, although its prefix is registered with Crossref: the "
            "DOI may be mistyped, or registered but not yet indexed by the REST API (index lag)"
        )
        hint = "Check the DOI; if it resolves at doi.org, retry later (Crossref index lag)."
    else:
        data["registrationAgency"] = agency
        message = f"no Crossref record for DOI {doi.doi}: it is registered with {agency}, not Crossref"
        if prefix == "10.5281":
            message += "; it is a Zenodo DOI, call zenodo_get_record with it"
            hint = f"Call zenodo_get_record with id {doi.doi!r}."
        else:
            hint = f"Look it up through {agency} (https://doi.org/{doi.doi}); Crossref holds no record."
    return NotFound(message, reason="doi_not_found", hint=hint, **data)


def fetch_work(
    crossref: CrossrefClient, store: Store, doi: ParsedDOI, entry: StoredEntry | None, deadline: Deadline
) -> StoredEntry:
    """Ask Crossref for ``doi`` now (conditionally when ``entry`` holds validators) and store the answer.

    A 304 bumps ``validated_at`` only; a 404 stores a ``not_found`` miss (never over a stored work).
    A 404 on a DOI whose non-ASCII dash was folded (:attr:`ParsedDOI.retry_form`) is asked once more
    as written (a few DOIs were registered with U+2010 in them); what that answers is stored under
    the folded key.

    Raises:
        UpstreamError, BudgetExhausted: upstream could not be used; nothing was written.
    """
    answer = crossref.get_work(
        doi.doi,
        deadline,
        etag=entry.etag if entry else None,
        last_modified=entry.last_modified if entry else None,
    )
    if answer.status == "not_found" and doi.retry_form is not None:
        log.info("event=retry_as_written key=%s", doi.key)
        answer = crossref.get_work(doi.retry_form, deadline)
    if answer.status == "not_modified" and entry is not None:
        store.mark_validated(entry.id, etag=answer.etag, last_modified=answer.last_modified)
        return store.get_by_id(entry.id) or entry
    if answer.status != "ok" or answer.message is None:
        content = _content(CROSSREF_WORK, doi.key, "not_found", None, None, doi=doi.key)
    else:
        content = work_content(doi.key, answer.message, answer.text, answer.etag, answer.last_modified)
    stored, changed = store.put_content(content)
    log.debug("event=stored kind=crossref_work key=%s changed=%s", doi.key, changed)
    return stored


def work_content(
    key: str,
    message: dict[str, Any],
    raw: str | None,
    etag: str | None = None,
    last_modified: str | None = None,
) -> EntryContent:
    """Build the stored form of a Crossref work ``message`` (raw body kept as received).

    Raises:
        MalformedResponse: the work view cannot read ``message`` (nothing is stored).
    """
    crossref_norm.work_view(message, offset=0, limit=1)  # a body the tools cannot answer is refused here
    title, search_text = crossref_norm.work_search_fields(message)
    indexed = (message.get("indexed") or {}).get("date-time")
    return _content(
        kind=CROSSREF_WORK,
        key=key,
        status="ok",
        body=raw
        if raw is not None
        else json.dumps({"status": "ok", "message-type": "work", "message": message}),
        content_hash=content_hash(crossref_norm.content_hash_projection(message)),
        upstream_version=str(indexed) if indexed else None,
        doi=key,
        title=title,
        search_text=search_text,
        etag=etag,
        last_modified=last_modified,
        volatile=volatile_json({k: message[k] for k in crossref_norm.VOLATILE_FIELDS if k in message}),
        cites=cited_dois(message),
        summary=list_line(message),
    )


# --------------------------------------------------------------------------------------------------
# single entities: journals, funders, members, prefixes
# --------------------------------------------------------------------------------------------------


def _entity_content(kind: str, key: str, answer: EntityAnswer) -> EntryContent:
    if answer.status != "ok" or answer.message is None:
        return _content(kind, key, "not_found", None, None)
    message = answer.message
    title = message.get("title") or message.get("name") or message.get("primary-name")
    return _content(
        kind,
        key,
        "ok",
        answer.text,
        content_hash(_strip_volatile(message)),
        title=str(title) if isinstance(title, str) else None,
    )


def fetch_entity(
    crossref: CrossrefClient, store: Store, kind: str, key: str, deadline: Deadline
) -> StoredEntry:
    """Ask Crossref for one entity now (route from :data:`ENTITY_ROUTES`) and store the answer.

    Raises:
        UpstreamError, BudgetExhausted: upstream could not be used; nothing was written.
    """
    path_of, message_type = ENTITY_ROUTES[kind]
    answer = crossref.get_entity(path_of(key), message_type, deadline)
    stored, changed = store.put_content(_entity_content(kind, key, answer))
    log.debug("event=stored kind=%s key=%s changed=%s", kind, key, changed)
    return stored


def get_entity(
    svc: Services, kind: str, key: str, deadline: Deadline | None = None, *, force: bool = False
) -> tuple[StoredEntry, Provenance]:
    """A journal, funder, member or prefix record, local-first (kind from :data:`ENTITY_ROUTES`).

    Returns the stored entry (``status`` ``ok`` or ``not_found``) and its provenance.

    Raises:
        UpstreamError, BudgetExhausted: nothing stored and upstream could not be used.
    """
    deadline = deadline or current_deadline(svc.settings.deadline_s)
    return local_first(
        svc.runner,
        ENTITY_KINDS[kind],
        key,
        lambda: fetch_entity(svc.upstreams.crossref, svc.store, kind, key, deadline),
        deadline=deadline,
        force=force,
    )


# --------------------------------------------------------------------------------------------------
# list pages (works searches, journal/funder lists, works sub-resources)
# --------------------------------------------------------------------------------------------------

_LIST_TYPES = {"works": "work-list", "journals": "journal-list", "funders": "funder-list"}


def search_key(route: str, params: dict[str, str]) -> str:
    """Canonical JSON key of a list call: the route and its parameters, sorted, no whitespace."""
    return json.dumps(
        {"route": route, "params": dict(sorted(params.items()))}, sort_keys=True, separators=(",", ":")
    )


def _list_type(route: str) -> str:
    return _LIST_TYPES[route.rstrip("/").rsplit("/", 1)[-1]]


class Page:
    """One answered list call.

    One answered list call: ``message`` (``items``, ``total-results``, ``next-cursor``, ``facets``),
    ``found`` (False when the parent of a sub-resource does not exist), ``provenance``.
    """

    def __init__(self, message: dict[str, Any], found: bool, provenance: Provenance) -> None:
        self.message = message
        self.found = found
        self.provenance = provenance


def _upsert_works(store: Store, items: list[Any]) -> int:
    """Store the works of a full search page as partial ``crossref_work`` entries; never over a full one.

    Nothing is written while the lab database cannot be reached.
    """
    written = 0
    if store.unreachable() is not None:
        return written
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("DOI"), str):
            continue
        key = "".join(c.lower() if c.isascii() else c for c in item["DOI"])
        existing = store.get(CROSSREF_WORK, key)
        if existing is not None and existing.status == "ok" and not is_partial(existing):
            continue
        try:
            content = work_content(key, item, None)
        except Exception:  # an item our view cannot read is skipped, never fatal for the page
            log.debug("event=skip_item doi=%s", key)
            continue
        body = json.dumps({"status": "ok", "message-type": PARTIAL_MESSAGE_TYPE, "message": item})
        # a list item may hold all the whole work holds: its own hash, so the whole answer replaces it
        marked = content_hash([PARTIAL_MESSAGE_TYPE, content.content_hash])
        store.put_content(
            EntryContent(
                **{**content.__dict__, "body": body, "upstream_version": "search", "content_hash": marked}
            )
        )
        written += 1
    return written


def fetch_list(
    crossref: CrossrefClient, store: Store, route: str, params: dict[str, str], deadline: Deadline
) -> StoredEntry:
    """Ask Crossref for one list page now and store it (``crossref_search``); upsert its full works.

    Raises:
        UpstreamRejected: Crossref refused the parameters (mapped reason).
        UpstreamError, BudgetExhausted: upstream could not be used; nothing was written.
    """
    key = search_key(route, params)
    answer = crossref.get_list(route, params, _list_type(route), deadline)
    if answer.status != "ok" or answer.message is None:
        if route == "/works":
            raise UpstreamUnavailable("crossref: unexpected 404 on /works")
        stored, _ = store.put_content(_content(CROSSREF_SEARCH, key, "not_found", None, None))
        return stored
    message = answer.message
    projection = {
        "total": message.get("total-results"),
        "items": [_strip_volatile(i) for i in message.get("items") or []],
        "facets": message.get("facets"),
        "next": bool(message.get("next-cursor")),
    }
    stored, _ = store.put_content(_content(CROSSREF_SEARCH, key, "ok", answer.text, content_hash(projection)))
    if route.rstrip("/").endswith("/works") and "select" not in params:
        written = _upsert_works(store, message.get("items") or [])
        log.debug("event=upsert_works route=%s written=%d", route, written)
    return stored


def list_page(
    svc: Services,
    route: str,
    params: dict[str, str],
    deadline: Deadline | None = None,
    *,
    force: bool = False,
) -> Page:
    """One list page, local-first (``crossref_search`` entry keyed by :func:`search_key`).

    A stored ``cursor=*`` page older than :data:`syncd.road.policy.CURSOR_LIFETIME_S` is refetched (its next
    cursor may have expired).

    Raises:
        UpstreamRejected: Crossref refused the parameters (mapped reason; never served from the store).
        UpstreamError, BudgetExhausted: nothing stored and upstream could not be used.
    """
    deadline = deadline or current_deadline(svc.settings.deadline_s)
    key = search_key(route, params)
    held = svc.store.get(CROSSREF_SEARCH, key)
    expired = policy.cursor_expired(params.get("cursor"), held.validated_at if held else None, time.time())
    stored, prov = local_first(
        svc.runner,
        LIST,
        key,
        lambda: fetch_list(svc.upstreams.crossref, svc.store, route, params, deadline),
        deadline=deadline,
        held=held,
        force=force,
        refetch=expired,
    )
    if stored.status != "ok":
        return Page({"items": [], "total-results": 0}, False, prov)
    return Page(message_of(stored), True, prov)


# --------------------------------------------------------------------------------------------------
# revalidation (daemon, ``syncd cache refresh``)
# --------------------------------------------------------------------------------------------------


def refetch_list(
    crossref: CrossrefClient, store: Store, entry: StoredEntry, deadline: Deadline
) -> StoredEntry:
    """Ask Crossref again for the stored list page ``entry`` (its key holds route and params) and store it."""
    spec = json.loads(entry.key)
    return fetch_list(
        crossref, store, str(spec["route"]), {str(k): str(v) for k, v in spec["params"].items()}, deadline
    )
