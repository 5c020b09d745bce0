"""Crossref lookups through the local-first path: works, search pages, entities, registration agencies.

Functions here take the :class:`~syncd.cache.Cache` and store what upstream answers as entries:

=================== ====================================================== ============ ==================
kind                key                                                    ttl setting  pool
=================== ====================================================== ============ ==================
``crossref_work``   ASCII-lowercased DOI (body: raw ``/works/{doi}`` JSON) crossref_work crossref_single
``crossref_search`` canonical JSON ``{"route", "params"}`` of a list call  search       crossref_list
``crossref_journal`` ISSN (``NNNN-NNNX``)                                  entity       crossref_single
``crossref_funder`` registry id (``100000001``)                            entity       crossref_single
``crossref_member`` member id                                              entity       crossref_single
``crossref_prefix`` prefix (``10.1038``)                                   entity       crossref_single
``doi_ra``          DOI prefix (body: raw doi.org ``/ra/{prefix}`` JSON)   entity       doi
=================== ====================================================== ============ ==================

The works of a full (no ``select``) ``/works`` search page are upserted as ``crossref_work`` entries marked
partial (``message-type: work-list-item``; list items carry no reference list): they feed the offline
full-text index, a partial entry never replaces a full record, and ``get_work`` fetches the full record
when it meets one (answering the partial copy, flagged stale, if Crossref cannot be reached).
"""

from __future__ import annotations

import json
import logging
import re
import time
import weakref
from collections.abc import Callable
from typing import Any

from syncd.cache import CROSSREF_WORK, Cache, Lookup, Provenance, content_hash, register_kind, volatile_json
from syncd.errors import (
    BudgetExhausted,
    InvalidInput,
    NotFound,
    UpstreamError,
    UpstreamRejected,
    UpstreamUnavailable,
)
from syncd.normalize import crossref as crossref_norm
from syncd.normalize.doi import ParsedDOI, is_zenodo_doi
from syncd.store.repo import EntryContent, StoredEntry
from syncd.upstream.crossref import EntityAnswer
from syncd.upstream.doi import DoiClient
from syncd.upstream.http import Deadline, current_deadline

__all__ = [
    "CROSSREF_FUNDER",
    "CROSSREF_JOURNAL",
    "CROSSREF_MEMBER",
    "CROSSREF_PREFIX",
    "CROSSREF_SEARCH",
    "DOI_RA",
    "ENTITY_ROUTES",
    "PARTIAL_MESSAGE_TYPE",
    "Page",
    "fetch_work",
    "get_entity",
    "get_work",
    "is_partial",
    "list_page",
    "merge_provenance",
    "message_of",
    "mirror_search",
    "registration_agency",
    "search_key",
    "work_content",
]

log = logging.getLogger("syncd.lookups.crossref")

CROSSREF_SEARCH = "crossref_search"
CROSSREF_JOURNAL = "crossref_journal"
CROSSREF_FUNDER = "crossref_funder"
CROSSREF_MEMBER = "crossref_member"
CROSSREF_PREFIX = "crossref_prefix"
DOI_RA = "doi_ra"
PARTIAL_MESSAGE_TYPE = "work-list-item"
"""``message-type`` of a stored work that came from a search page (no reference list; refetched whole)."""

CURSOR_LIFETIME_S = 240.0
"""A stored ``cursor=*`` page older than this is refetched: its ``next-cursor`` may have expired upstream
(Crossref keeps cursors about 5 minutes, BC-19)."""

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


def message_of(entry: StoredEntry) -> dict[str, Any]:
    """The ``message`` object of a stored Crossref entry (``{}`` for a miss or an unreadable body)."""
    try:
        body = json.loads(entry.body or "{}")
    except ValueError:
        return {}
    message = body.get("message") if isinstance(body, dict) else None
    return message if isinstance(message, dict) else {}


def is_partial(entry: StoredEntry | None) -> bool:
    """Whether a stored ``crossref_work`` came from a search page (no reference list; refetch whole)."""
    return bool(
        entry is not None
        and entry.status == "ok"
        and entry.body
        and f'"message-type": "{PARTIAL_MESSAGE_TYPE}"' in entry.body[:200]
    )


def merge_provenance(*provs: Provenance | None) -> Provenance:
    """One provenance for an answer built from several entries.

    One provenance for an answer built from several entries: the least trustworthy one wins
    (``store-stale`` over ``upstream`` over ``store``), times the oldest.
    """
    given = [p for p in provs if p is not None]
    rank = {"store-stale": 0, "upstream": 1, "store": 2}
    worst = min(given, key=lambda p: rank.get(p.source, 0))
    return Provenance(
        worst.source,
        min(p.fetched_at for p in given),
        min(p.validated_at for p in given),
        stale=any(p.stale for p in given),
        upstream_error=next((p.upstream_error for p in given if p.upstream_error), None),
    )


def get_work(
    cache: Cache, doi: ParsedDOI, deadline: Deadline | None = None, *, force: bool = False
) -> Lookup:
    """The Crossref work for ``doi``: from the store when fresh, else from ``/works/{doi}``.

    A Zenodo DOI (``10.5281/zenodo.N``) is refused without any request, pointing at ``zenodo_get_record``
    (BC-08). A stored partial work (from a search page) is fetched whole, or answered flagged stale when
    Crossref cannot be reached. On a miss, doi.org names the registration agency (cached per prefix).

    Raises:
        NotFound: Crossref holds no record (reason ``doi_not_found``; ``registrationAgency`` when known).
        UpstreamError, BudgetExhausted: nothing stored and upstream could not be used.
    """
    deadline = deadline or current_deadline(cache.settings.deadline_s)
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
    stored, prov = cache.local_first(
        CROSSREF_WORK,
        doi.key,
        "crossref_single",
        deadline,
        force,
        lambda e: fetch_work(cache, doi, e, deadline),
        refetch_if=is_partial,
    )
    if stored.status != "ok":
        raise _doi_not_found(cache, doi, deadline, prov)
    if is_partial(stored) and not prov.stale:
        prov = Provenance(prov.source, prov.fetched_at, prov.validated_at, True, prov.upstream_error)
    return Lookup(stored, prov)


def _doi_not_found(cache: Cache, doi: ParsedDOI, deadline: Deadline, prov: Provenance) -> NotFound:
    """``doi_not_found`` naming the agency doi.org says holds the DOI (or none, or unknown)."""
    prefix = doi.key.split("/", 1)[0]
    try:
        agency = registration_agency(cache, prefix, deadline)
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


def fetch_work(cache: Cache, doi: ParsedDOI, entry: StoredEntry | None, deadline: Deadline) -> StoredEntry:
    """Ask Crossref for ``doi`` now (conditionally when ``entry`` holds validators) and store the answer.

    A 304 bumps ``validated_at`` only; a 404 stores a ``not_found`` miss (never over a stored work).

    Raises:
        UpstreamError, BudgetExhausted: upstream could not be used; nothing was written.
    """
    answer = cache.crossref.get_work(
        doi.doi,
        deadline,
        etag=entry.etag if entry else None,
        last_modified=entry.last_modified if entry else None,
    )
    if answer.status == "not_modified" and entry is not None:
        cache.store.mark_validated(entry.id, etag=answer.etag, last_modified=answer.last_modified)
        return cache.reload(entry)
    if answer.status != "ok" or answer.message is None:
        content = EntryContent(CROSSREF_WORK, doi.key, "not_found", None, None, doi=doi.key)
    else:
        content = work_content(doi.key, answer.message, answer.text, answer.etag, answer.last_modified)
    stored, changed = cache.store.put_content(content)
    log.debug("event=stored kind=crossref_work key=%s changed=%s", doi.key, changed)
    return stored


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
        volatile=volatile_json({k: message[k] for k in crossref_norm.VOLATILE_FIELDS if k in message}),
    )


# --------------------------------------------------------------------------------------------------
# doi.org registration agency, cached per prefix
# --------------------------------------------------------------------------------------------------

_DOI_CLIENTS: weakref.WeakKeyDictionary[Cache, DoiClient] = weakref.WeakKeyDictionary()


def _doi_client(cache: Cache) -> DoiClient:
    """The doi.org client of ``cache`` (created on first use, closed with the cache object)."""
    client = _DOI_CLIENTS.get(cache)
    if client is None:
        client = DoiClient(cache.settings, cache.budget, transport=getattr(cache, "transport", None))
        _DOI_CLIENTS[cache] = client
        weakref.finalize(cache, client.close)
    return client


def fetch_ra(cache: Cache, prefix: str, deadline: Deadline) -> StoredEntry:
    """Ask doi.org ``/ra/{prefix}`` now and store the answer (``ok`` with the agency, else ``not_found``)."""
    answer = _doi_client(cache).ra(prefix, deadline)
    if answer.status == "ok":
        content = EntryContent(
            DOI_RA, prefix, "ok", answer.text, content_hash({"ra": answer.agency}), title=answer.agency
        )
    else:
        content = EntryContent(DOI_RA, prefix, "not_found", None, None)
    stored, _ = cache.store.put_content(content)
    return stored


def registration_agency(cache: Cache, prefix: str, deadline: Deadline | None = None) -> str | None:
    """The registration agency of a DOI prefix, local-first (doi.org ``/ra/{prefix}``).

    The registration agency doi.org names for DOI ``prefix`` (``Crossref``, ``DataCite``, ``mEDRA``...),
    or None when no agency registered it. Local-first: one doi.org request per prefix per ``ttl.entity``.

    Raises:
        UpstreamError, BudgetExhausted: nothing stored and doi.org could not be used.
    """
    deadline = deadline or current_deadline(cache.settings.deadline_s)
    stored, _prov = cache.local_first(
        DOI_RA, prefix, "doi", deadline, False, lambda _e: fetch_ra(cache, prefix, deadline)
    )
    return stored.title if stored.status == "ok" else None


# --------------------------------------------------------------------------------------------------
# single entities: journals, funders, members, prefixes
# --------------------------------------------------------------------------------------------------


def _entity_content(kind: str, key: str, answer: EntityAnswer) -> EntryContent:
    if answer.status != "ok" or answer.message is None:
        return EntryContent(kind, key, "not_found", None, None)
    message = answer.message
    title = message.get("title") or message.get("name") or message.get("primary-name")
    return EntryContent(
        kind,
        key,
        "ok",
        answer.text,
        content_hash(_strip_volatile(message)),
        title=str(title) if isinstance(title, str) else None,
    )


def fetch_entity(cache: Cache, kind: str, key: str, deadline: Deadline) -> StoredEntry:
    """Ask Crossref for one entity now (route from :data:`ENTITY_ROUTES`) and store the answer.

    Raises:
        UpstreamError, BudgetExhausted: upstream could not be used; nothing was written.
    """
    path_of, message_type = ENTITY_ROUTES[kind]
    answer = cache.crossref.get_entity(path_of(key), message_type, deadline)
    stored, changed = cache.store.put_content(_entity_content(kind, key, answer))
    log.debug("event=stored kind=%s key=%s changed=%s", kind, key, changed)
    return stored


def get_entity(
    cache: Cache, kind: str, key: str, deadline: Deadline | None = None, *, force: bool = False
) -> tuple[StoredEntry, Provenance]:
    """A journal, funder, member or prefix record, local-first (kind from :data:`ENTITY_ROUTES`).

    Returns the stored entry (``status`` ``ok`` or ``not_found``) and its provenance.

    Raises:
        UpstreamError, BudgetExhausted: nothing stored and upstream could not be used.
    """
    deadline = deadline or current_deadline(cache.settings.deadline_s)
    return cache.local_first(
        kind, key, "crossref_single", deadline, force, lambda _e: fetch_entity(cache, kind, key, deadline)
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


def _upsert_works(cache: Cache, items: list[Any]) -> int:
    """Store the works of a full search page as partial ``crossref_work`` entries; never over a full one."""
    written = 0
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("DOI"), str):
            continue
        key = "".join(c.lower() if c.isascii() else c for c in item["DOI"])
        existing = cache.store.get(CROSSREF_WORK, key)
        if existing is not None and existing.status == "ok" and not is_partial(existing):
            continue
        try:
            content = work_content(key, item, None)
        except Exception:  # an item our view cannot read is skipped, never fatal for the page
            log.debug("event=skip_item doi=%s", key)
            continue
        body = json.dumps({"status": "ok", "message-type": PARTIAL_MESSAGE_TYPE, "message": item})
        cache.store.put_content(
            EntryContent(**{**content.__dict__, "body": body, "upstream_version": "search"})
        )
        written += 1
    return written


def fetch_list(cache: Cache, route: str, params: dict[str, str], deadline: Deadline) -> StoredEntry:
    """Ask Crossref for one list page now and store it (``crossref_search``); upsert its full works.

    Raises:
        UpstreamRejected: Crossref refused the parameters (mapped reason).
        UpstreamError, BudgetExhausted: upstream could not be used; nothing was written.
    """
    key = search_key(route, params)
    answer = cache.crossref.get_list(route, params, _list_type(route), deadline)
    if answer.status != "ok" or answer.message is None:
        if route == "/works":
            raise UpstreamUnavailable("crossref: unexpected 404 on /works")
        stored, _ = cache.store.put_content(EntryContent(CROSSREF_SEARCH, key, "not_found", None, None))
        return stored
    message = answer.message
    projection = {
        "total": message.get("total-results"),
        "items": [_strip_volatile(i) for i in message.get("items") or []],
        "facets": message.get("facets"),
        "next": bool(message.get("next-cursor")),
    }
    stored, _ = cache.store.put_content(
        EntryContent(CROSSREF_SEARCH, key, "ok", answer.text, content_hash(projection))
    )
    if route.rstrip("/").endswith("/works") and "select" not in params:
        written = _upsert_works(cache, message.get("items") or [])
        log.debug("event=upsert_works route=%s written=%d", route, written)
    return stored


def list_page(
    cache: Cache, route: str, params: dict[str, str], deadline: Deadline | None = None, *, force: bool = False
) -> Page:
    """One list page, local-first (``crossref_search`` entry keyed by :func:`search_key`).

    A stored ``cursor=*`` page older than :data:`CURSOR_LIFETIME_S` is refetched (its next cursor may
    have expired).

    Raises:
        UpstreamRejected: Crossref refused the parameters (mapped reason; never served from the store).
        UpstreamError, BudgetExhausted: nothing stored and upstream could not be used.
    """
    deadline = deadline or current_deadline(cache.settings.deadline_s)
    key = search_key(route, params)
    if params.get("cursor") == "*" and not force:
        existing = cache.store.get(CROSSREF_SEARCH, key)
        if existing is not None and time.time() - existing.validated_at > CURSOR_LIFETIME_S:
            force = True
    stored, prov = cache.local_first(
        CROSSREF_SEARCH,
        key,
        "crossref_list",
        deadline,
        force,
        lambda _e: fetch_list(cache, route, params, deadline),
    )
    if stored.status != "ok":
        return Page({"items": [], "total-results": 0}, False, prov)
    return Page(message_of(stored), True, prov)


# --------------------------------------------------------------------------------------------------
# offline: full-text search over the stored works
# --------------------------------------------------------------------------------------------------

_TERM = re.compile(r"\w", re.UNICODE)


def mirror_search(
    cache: Cache, text: str, *, offset: int, rows: int
) -> tuple[list[StoredEntry], int, Provenance | None]:
    """Stored works matching any term of ``text`` (FTS5 over title and search text, best first).

    Returns ``(entries, total_local_matches, provenance)``; the provenance is ``store-stale`` with the
    oldest ``validated_at`` of the page (None when nothing matched).
    """
    terms = [t for t in text.split() if _TERM.search(t)]
    if not terms:
        return [], 0, None
    entries, total = cache.store.search_page(terms, kind=CROSSREF_WORK, offset=offset, limit=rows)
    entries = [e for e in entries if e.status == "ok"]
    if not entries:
        return [], total, None
    prov = Provenance(
        "store-stale",
        min(e.fetched_at for e in entries),
        min(e.validated_at for e in entries),
        stale=True,
    )
    return entries, total, prov


# --------------------------------------------------------------------------------------------------
# revalidation (daemon, ``syncd cache refresh``)
# --------------------------------------------------------------------------------------------------


def _refetch_entity(cache: Cache, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    return fetch_entity(cache, entry.kind, entry.key, deadline)


def _refetch_list(cache: Cache, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    spec = json.loads(entry.key)
    return fetch_list(
        cache, str(spec["route"]), {str(k): str(v) for k, v in spec["params"].items()}, deadline
    )


def _refetch_ra(cache: Cache, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    return fetch_ra(cache, entry.key, deadline)


def _refetch(cache: Cache, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    doi = ParsedDOI(doi=entry.doi or entry.key, key=entry.key, input_form="bare")
    return fetch_work(cache, doi, entry, deadline)


register_kind(CROSSREF_WORK, "crossref_work", _refetch)
register_kind(CROSSREF_SEARCH, "search", _refetch_list)
for _kind in ENTITY_ROUTES:
    register_kind(_kind, "entity", _refetch_entity)
register_kind(DOI_RA, "entity", _refetch_ra)


# --------------------------------------------------------------------------------------------------
# tool-level lookups: each returns (contract view as a dict, provenance)
# --------------------------------------------------------------------------------------------------


def search_works(cache: Cache, raw: dict[str, Any]) -> tuple[dict[str, Any], Provenance]:
    """``crossref_search_works``: the page local-first; offline, a local-mirror answer from the FTS index.

    The same normalized query already stored answers from the store (0 requests). When Crossref cannot
    be used and nothing is stored, an offset (or ``cursor="*"``) search with query terms is answered from
    the stored works (FTS5), with a notice saying so.

    Raises:
        InvalidInput: refused before any request (see :func:`search_works_request`).
        UpstreamRejected: Crossref's 400 rejections, mapped (unknown_filter, invalid_cursor...).
        UpstreamError, BudgetExhausted: upstream unusable, nothing stored, nothing to search locally.
    """
    from syncd.normalize.crossref_lists import search_view, work_summary
    from syncd.normalize.crossref_params import search_works_request

    req = search_works_request(raw)
    deadline = current_deadline(cache.settings.deadline_s)
    try:
        page = list_page(cache, "/works", req.params, deadline)
    except UpstreamRejected:
        raise
    except (UpstreamError, BudgetExhausted) as exc:
        inp = req.input
        if not req.text or (inp.cursor not in (None, "*")):
            raise
        entries, total, prov = mirror_search(cache, req.text, offset=inp.offset, rows=inp.rows)
        works, cut = [], 0
        for entry in entries:
            summary, was_cut = work_summary(crossref_norm_document(entry), inp.authorLimit)
            if summary is not None:
                works.append(summary.model_dump(mode="json", exclude_none=True))
                cut += int(was_cut)
        notice = (
            f"Local-mirror answer: Crossref could not be used ({exc.reason}), so these are the works syncd "
            f"already holds that match the query terms ({total} local matches, best first); they are not "
            "Crossref's ranking or total"
        )
        if inp.filter or inp.sort or inp.facets:
            notice += ", and filters, sort and facets were not applied"
        notice += ". Retry later for Crossref's own answer."
        if not works:
            notice += " Nothing stored matches these terms."
        data: dict[str, Any] = {"works": works, "totalResults": total, "returned": len(works)}
        if cut:
            data.update(truncated=True, cap=inp.authorLimit)
        data["notice"] = notice
        now = time.time()
        prov = prov or Provenance("store-stale", now, now, stale=True)
        return data, Provenance(prov.source, prov.fetched_at, prov.validated_at, True, exc.reason)
    view = search_view(page.message, req.input, blank_listing=req.blank_listing)
    data = view.model_dump(mode="json", exclude_none=True)
    extra = list(req.notices)
    if extra:
        data["notice"] = " ".join([data["notice"], *extra] if data.get("notice") else extra)
    return data, page.provenance


def crossref_norm_document(entry: StoredEntry) -> dict[str, Any]:
    """The stored work ``message`` of a ``crossref_work`` entry (partial or full)."""
    return message_of(entry)


def get_references(
    cache: Cache, doi: ParsedDOI, offset: int, limit: int
) -> tuple[dict[str, Any], Provenance]:
    """``crossref_get_references``: the reference list sliced from the stored work (shared with get_work).

    Raises:
        NotFound, UpstreamError, BudgetExhausted: as :func:`get_work`.
    """
    from syncd.normalize.crossref_lists import references_view

    lookup = get_work(cache, doi)
    view = references_view(message_of(lookup.entry), offset=offset, limit=limit)
    return view.model_dump(mode="json", exclude_none=True), lookup.provenance


def _ceiling(offset: int, rows: int, ceiling: int, reason: str, what: str, hint: str) -> None:
    if offset + rows > ceiling:
        raise InvalidInput(
            f"{what} + rows = {offset + rows} passes the {ceiling:,} ceiling", reason=reason, hint=hint
        )


def _works_page(
    cache: Cache, route: str, rows: int, works_offset: int, works_cursor: str | None, deadline: Deadline
) -> tuple[dict[str, Any], Provenance, list[str]]:
    from syncd.normalize.crossref_lists import list_work
    from syncd.normalize.crossref_params import journal_works_params

    page = list_page(cache, route, journal_works_params(rows, works_offset, works_cursor), deadline)
    msg = page.message
    total = msg.get("total-results") if isinstance(msg.get("total-results"), int) else 0
    works = [
        w.model_dump(mode="json", exclude_none=True) for w in map(list_work, msg.get("items") or []) if w
    ]
    out: dict[str, Any] = {"works": works, "total": total}
    notices: list[str] = []
    if works_cursor is not None:
        if works and msg.get("next-cursor"):
            out["nextCursor"] = msg["next-cursor"]
        elif not works:
            notices.append("The works cursor walk is complete: this empty page ends the list.")
    else:
        end = works_offset + len(works)
        if not works and total and works_offset >= total:
            notices.append(f"works_offset={works_offset} is past the end of the {total} works.")
        elif end < total:
            if end + rows > WORKS_CEILING:
                notices.append(
                    f"The works list reached the {WORKS_CEILING:,} offset ceiling with {total} works in all; "
                    'continue with works_cursor="*".'
                )
            else:
                out["nextOffset"] = end
    return out, page.provenance, notices


WORKS_CEILING = 10_000


def search_journals(cache: Cache, args: dict[str, Any]) -> tuple[dict[str, Any], Provenance]:
    """``crossref_search_journals``, local-first.

    ``crossref_search_journals``: an ISSN lookup (``crossref_journal``) or a title search (stored page),
    optionally with a works page of the matched journal.

    Raises:
        InvalidInput: bad ISSN, offset ceilings, cursor with works_offset.
        NotFound: ``issn_not_found``. ``ambiguous_journal`` (InvalidInput) for include_works on many matches.
        UpstreamError, BudgetExhausted: upstream unusable and nothing stored.
    """
    from syncd.normalize.crossref_lists import journal_record
    from syncd.normalize.crossref_params import issn_key

    deadline = current_deadline(cache.settings.deadline_s)
    rows, offset, works_offset = args["rows"], args["offset"], args["works_offset"]
    works_cursor = (args.get("works_cursor") or "").strip() or None
    include = bool(args.get("include_works"))
    query = (args.get("query") or "").strip() or None
    _ceiling(offset, rows, 100_000, "offset_too_large", "offset", "Narrow the title query instead.")
    if include:
        if works_cursor is not None and works_offset > 0:
            raise InvalidInput(
                "works_cursor and works_offset cannot be combined",
                reason="works_cursor_offset_conflict",
                hint="Use works_cursor alone (pass nextWorksCursor back), or works_offset alone.",
            )
        _ceiling(
            works_offset,
            rows,
            WORKS_CEILING,
            "works_offset_too_large",
            "works_offset",
            'Use works_cursor="*" to walk past 10,000 works.',
        )
    notices: list[str] = []
    provs: list[Provenance] = []
    data: dict[str, Any]
    target: dict[str, Any] | None = None
    if args.get("issn") and str(args["issn"]).strip():
        key = issn_key(str(args["issn"]))
        stored, prov = get_entity(cache, CROSSREF_JOURNAL, key, deadline)
        provs.append(prov)
        if stored.status != "ok":
            raise NotFound(
                f"no Crossref journal with ISSN {key}",
                reason="issn_not_found",
                hint="Check the ISSN, or search by title with query.",
                issn=key,
                cache=prov.as_dict(),
            )
        target = message_of(stored)
        record = journal_record(target, with_years=True).model_dump(mode="json", exclude_none=True)
        data = {"journals": [record], "journalCount": 1, "journalsTotal": 1}
    else:
        params = {"rows": str(rows)}
        if query:
            params = {"query": query, **params}
        if offset > 0:
            params["offset"] = str(offset)
        page = list_page(cache, "/journals", params, deadline)
        provs.append(page.provenance)
        items = [i for i in page.message.get("items") or [] if isinstance(i, dict)]
        total = int(page.message.get("total-results") or 0)
        records = [
            journal_record(i, with_years=False).model_dump(mode="json", exclude_none=True) for i in items
        ]
        data = {"journals": records, "journalCount": len(records), "journalsTotal": total}
        if not records:
            notices.append(
                f"offset={offset} is past the end of the {total} matching journals."
                if total
                else "No journal matched this title query."
            )
        elif offset + len(records) < total:
            if offset + len(records) + rows > 100_000:
                notices.append("The journal list reached the 100,000 offset ceiling; narrow the query.")
            else:
                data["nextOffset"] = offset + len(records)
        if include:
            if total > 1:
                candidates = [{"title": r.get("title"), "issn": r.get("issn") or []} for r in records]
                listed = "; ".join(f"{c['title']} ({', '.join(c['issn']) or 'no ISSN'})" for c in candidates)
                raise InvalidInput(
                    f"include_works needs one journal, but {total} match {query!r}: {listed}",
                    reason="ambiguous_journal",
                    hint="Call again with issn set to one candidate's ISSN.",
                    candidates=candidates,
                    matchedTotal=total,
                )
            target = items[0] if items else None
    if include and target is not None:
        issns = [i for i in [target.get("ISSN-L"), *(target.get("ISSN") or [])] if isinstance(i, str)]
        issns = [i for i in issns if i.strip() and _issn_ok(i)]
        if not issns:
            notices.append("include_works skipped: the journal has no well-formed ISSN, so no works list.")
        else:
            works, prov, more = _works_page(
                cache, f"/journals/{issns[0]}/works", rows, works_offset, works_cursor, deadline
            )
            provs.append(prov)
            notices.extend(more)
            data["recentWorks"] = works["works"]
            data["worksTotal"] = works["total"]
            if "nextOffset" in works:
                data["nextWorksOffset"] = works["nextOffset"]
            if "nextCursor" in works:
                data["nextWorksCursor"] = works["nextCursor"]
    if notices:
        data["notice"] = " ".join(notices)
    return data, merge_provenance(*provs)


def _issn_ok(value: str) -> bool:
    from syncd.normalize.crossref_params import ISSN_RE

    return bool(ISSN_RE.match(value.strip()))


def search_funders(cache: Cache, args: dict[str, Any]) -> tuple[dict[str, Any], Provenance]:
    """``crossref_search_funders``, local-first.

    ``crossref_search_funders``: an id lookup (``crossref_funder``, with descendants) or a name search,
    optionally with a funded-works page (``/funders/{id}/works``: registry descendants included).

    Raises:
        InvalidInput: bad id, offset ceilings, cursor with works_offset, ``ambiguous_funder``.
        NotFound: ``funder_not_found``.
        UpstreamError, BudgetExhausted: upstream unusable and nothing stored.
    """
    from syncd.normalize.crossref_lists import funder_record
    from syncd.normalize.crossref_params import funder_id

    deadline = current_deadline(cache.settings.deadline_s)
    rows, offset, works_offset = args["rows"], args["offset"], args["works_offset"]
    works_cursor = (args.get("works_cursor") or "").strip() or None
    include = bool(args.get("include_works"))
    query = (args.get("query") or "").strip() or None
    _ceiling(offset, rows, 100_000, "offset_too_large", "offset", "Narrow the name query instead.")
    if include:
        if works_cursor is not None and works_offset > 0:
            raise InvalidInput(
                "works_cursor and works_offset cannot be combined",
                reason="works_cursor_offset_conflict",
                hint="Use works_cursor alone (pass nextWorksCursor back), or works_offset alone.",
            )
        _ceiling(
            works_offset,
            rows,
            WORKS_CEILING,
            "works_offset_too_large",
            "works_offset",
            'Use works_cursor="*" to walk past 10,000 works.',
        )
    notices: list[str] = []
    provs: list[Provenance] = []
    target_id: str | None = None
    data: dict[str, Any]
    if args.get("funder_doi") and str(args["funder_doi"]).strip():
        fid = funder_id(str(args["funder_doi"]))
        stored, prov = get_entity(cache, CROSSREF_FUNDER, fid, deadline)
        provs.append(prov)
        if stored.status != "ok":
            raise NotFound(
                f"no Open Funder Registry entry with id {fid}",
                reason="funder_not_found",
                hint="Check the id (9 digits, e.g. 100000001), or search by name with query.",
                funderId=fid,
                cache=prov.as_dict(),
            )
        record = funder_record(message_of(stored), with_descendants=True)
        data = {
            "funders": [record.model_dump(mode="json", exclude_none=True)],
            "funderCount": 1,
            "fundersTotal": 1,
        }
        target_id = fid
        records = [record]
    else:
        params = {"rows": str(rows)}
        if query:
            params = {"query": query, **params}
        if offset > 0:
            params["offset"] = str(offset)
        page = list_page(cache, "/funders", params, deadline)
        provs.append(page.provenance)
        items = [i for i in page.message.get("items") or [] if isinstance(i, dict)]
        total = int(page.message.get("total-results") or 0)
        records = [funder_record(i, with_descendants=False) for i in items]
        data = {
            "funders": [r.model_dump(mode="json", exclude_none=True) for r in records],
            "funderCount": len(records),
            "fundersTotal": total,
        }
        if not records:
            notices.append(
                f"offset={offset} is past the end of the {total} matching funders."
                if total
                else "No funder matched this name query."
            )
        elif offset + len(records) < total:
            data["nextOffset"] = offset + len(records)
        if include:
            if total > 1:
                candidates = [{"name": r.name, "id": r.id} for r in records]
                listed = "; ".join(f"{c['name']} ({c['id']})" for c in candidates)
                raise InvalidInput(
                    f"include_works needs one funder, but {total} match {query!r}: {listed}",
                    reason="ambiguous_funder",
                    hint="Call again with funder_doi set to one candidate's id.",
                    candidates=candidates,
                    matchedTotal=total,
                )
            target_id = records[0].id if records else None
    for r in records:
        if r.replacedBy:
            notices.append(
                f"Funder {r.id} ({r.name}) is a deprecated registry entry replaced by "
                f"{', '.join(r.replacedBy)}: it answers to its successor's name while counting only its own "
                "works; look up the successor with funder_doi (it is not followed automatically)."
            )
    if include and target_id is not None:
        works, prov, more = _works_page(
            cache, f"/funders/10.13039/{target_id}/works", rows, works_offset, works_cursor, deadline
        )
        provs.append(prov)
        notices.extend(more)
        data["fundedWorks"] = works["works"]
        data["fundedWorksTotal"] = works["total"]
        if "nextOffset" in works:
            data["nextWorksOffset"] = works["nextOffset"]
        if "nextCursor" in works:
            data["nextWorksCursor"] = works["nextCursor"]
    if notices:
        data["notice"] = " ".join(notices)
    return data, merge_provenance(*provs)


def get_member(cache: Cache, member_id: int) -> tuple[dict[str, Any], Provenance]:
    """``crossref_get_member`` from the stored ``crossref_member`` entry.

    Raises:
        NotFound: ``member_not_found``. UpstreamError, BudgetExhausted: upstream unusable, nothing stored.
    """
    from syncd.normalize.crossref_lists import member_view

    stored, prov = get_entity(cache, CROSSREF_MEMBER, str(member_id))
    if stored.status != "ok":
        raise NotFound(
            f"no Crossref member with id {member_id}",
            reason="member_not_found",
            hint="Resolve a DOI prefix to its member id with crossref_get_prefix.",
            memberId=member_id,
            cache=prov.as_dict(),
        )
    return member_view(message_of(stored)).model_dump(mode="json", exclude_none=True), prov


def get_prefix(cache: Cache, prefix: str) -> tuple[dict[str, Any], Provenance]:
    """``crossref_get_prefix`` from the stored ``crossref_prefix`` entry; a miss names the prefix's RA.

    Raises:
        NotFound: ``prefix_not_found`` (``registrationAgency`` when doi.org names one).
        UpstreamError, BudgetExhausted: upstream unusable, nothing stored.
    """
    from syncd.normalize.crossref_lists import prefix_view

    deadline = current_deadline(cache.settings.deadline_s)
    stored, prov = get_entity(cache, CROSSREF_PREFIX, prefix, deadline)
    if stored.status != "ok":
        data: dict[str, Any] = {"prefix": prefix, "cache": prov.as_dict()}
        try:
            agency = registration_agency(cache, prefix, deadline)
        except (UpstreamError, BudgetExhausted):
            agency = None
            message = (
                f"no Crossref member owns prefix {prefix} (its registration agency could not be checked)"
            )
        else:
            if agency and agency.lower() == "crossref":
                message = (
                    f"Crossref has no prefix record for {prefix}, although doi.org names Crossref as its "
                    "registration agency (index lag, or a prefix without a current member)"
                )
            elif agency:
                message = f"no Crossref member owns prefix {prefix}: it is registered with {agency}"
            else:
                message = f"no Crossref member owns prefix {prefix}, and no registration agency registered it"
        if agency:
            data["registrationAgency"] = agency
        hint = (
            "Zenodo DOIs (10.5281) resolve through zenodo_get_record."
            if prefix == "10.5281"
            else "Check the prefix (10.NNNN, no suffix)."
        )
        raise NotFound(message, reason="prefix_not_found", hint=hint, **data)
    return prefix_view(message_of(stored), prefix).model_dump(mode="json", exclude_none=True), prov
