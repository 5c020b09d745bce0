"""Many Crossref works at once, local-first: stored ones answered, the rest fetched 50 per list request.

Used by the ``crossref_get_works`` tool and by ``syncd check`` (the same function, so a bibliography
and an agent's list resolve alike). For each input, in order:

1. The input is parsed as a DOI (:func:`syncd.normalize.doi.parse_doi`: URLs, ``doi:`` prefixes,
   pasted forms, any case); one that is not a DOI is an item with reason ``invalid_parameter``.
   Inputs naming the same DOI share one lookup.
2. The runner's policy decides per DOI, as for :func:`syncd.crossref.lookups.get_work`: a fresh
   stored work (or stored miss) is answered from the store; with upstream unusable a stored copy is
   answered stale and a DOI with nothing stored gets the declared error as its item reason.
3. DOIs to fetch that fit in a ``doi:`` filter (:func:`syncd.crossref.params_filter.filter_safe`) go
   :data:`~syncd.crossref.params_filter.GROUP` (50; fewer when long, :data:`MAX_FILTER_CHARS`) at a time
   into one ``/works?filter=doi:A,doi:B,...&rows=N`` list request of the list pool (no ``select``: each item
   is the whole work, reference list included, so it is stored exactly as a single fetch stores it,
   :func:`~syncd.crossref.lookups.work_content`). A group of one, a DOI no filter can carry, and a
   Zenodo DOI take the single path (:func:`~syncd.crossref.lookups.get_work`). A partial copy from
   a search page is refetched like a stale one; as on the single path, ``Store.put_content`` keeps
   its body (only revalidated) when the whole work has the same content hash.
4. A DOI the list leaves out is a miss: Crossref's filter answer omits only DOIs its index does not
   hold, exactly what a ``/works/{doi}`` 404 says, so no second request per DOI is sent. The miss is
   stored (``ttl.miss``; never over a stored body, which is answered flagged stale instead, BC-09)
   and reported as ``doi_not_found`` through the single path, which names the registration agency
   from doi.org's ``/ra/{prefix}``, cached per prefix (``ttl.entity``): at most one doi.org request
   per new prefix among the misses (``registrationAgency: DataCite`` for a DataCite DOI).
5. A failed list request (HTTP 400/5xx, unreadable body, 429, spent budget, breaker open) fails its
   group only: held works are answered stale with the reason, the others carry it as their reason.

Requests for ``n`` DOIs to fetch: ``ceil(n / 50)`` list requests (two at a time), one
``/works/{doi}`` per DOI that cannot go in a filter, one doi.org request per new prefix among the
misses.

Update flags (:func:`update_flags`) read the normalized ``updatedBy`` list: ``retracted``
(retraction, withdrawal, removal, partial retraction), ``corrected`` (correction, erratum,
corrigendum, addendum, clarification), ``expression_of_concern``. A publisher's ``updatedBy`` entry
naming another DOI this record also lists in ``updateTo`` is a link both ways between a notice and
its work, not an update of this record: the Lancet retraction notice 10.1016/s0140-6736(20)31324-6
lists the retracted paper in both (and the paper, 10.1016/s0140-6736(20)31180-6, lists its notices
in both), so only Retraction Watch entries and in-place updates decide there. An erratum entry
naming the retraction notice itself (10.1016/j.apsusc.2007.01.131: retraction and erratum, one
notice DOI) does not flag ``corrected``.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from syncd import policy
from syncd.cache import Lookup, Plan
from syncd.crossref import lookups as lookups_crossref
from syncd.crossref.contracts import Update
from syncd.crossref.names import CROSSREF_WORK
from syncd.crossref.params_filter import GROUP, filter_safe
from syncd.errors import BudgetExhausted, InvalidInput, NotFound, StoreError, SyncdError, UpstreamError
from syncd.normalize.doi import ParsedDOI, is_zenodo_doi, parse_doi
from syncd.policy import Action, Provenance
from syncd.services import Services
from syncd.store.repo import EntryContent
from syncd.upstream.http import Deadline, current_deadline

__all__ = [
    "CORRECTION_TYPES",
    "EOC_TYPES",
    "LIST_PARALLEL",
    "MAX_DOIS",
    "MAX_FILTER_CHARS",
    "RETRACTION_TYPES",
    "RETRACTION_WATCH",
    "WorkItem",
    "WorksAnswer",
    "get_works",
    "list_params",
    "update_flags",
]

log = logging.getLogger("syncd.crossref.lookups_batch")

MAX_DOIS = 100
"""Most DOIs one ``crossref_get_works`` call takes (``syncd check`` passes any number)."""
MAX_FILTER_CHARS = 4000
"""Longest ``filter`` value of one list request (characters before percent-encoding): 50 long DOIs
(SICI, Wiley) would pass common 8 KiB URL limits once encoded, so a group also ends here."""
LIST_PARALLEL = 2
"""List requests sent at once (their answers are stored one after the other): a call's 100 DOIs
cost one round trip. The budget's ``crossref_list`` pool still decides how many are in flight
(3 in the polite pool, else 1: the second then waits for the first, within the deadline)."""

RETRACTION_TYPES = frozenset({"retraction", "withdrawal", "removal", "partial_retraction"})
"""``updatedBy`` types that flag a work ``retracted``."""
CORRECTION_TYPES = frozenset({"correction", "erratum", "corrigendum", "addendum", "clarification"})
"""``updatedBy`` types that flag a work ``corrected``."""
EOC_TYPES = frozenset({"expression_of_concern"})
"""``updatedBy`` types that flag a work ``expression_of_concern``."""
RETRACTION_WATCH = "retraction-watch"
"""``source`` of the updates Crossref adds from the Retraction Watch database."""


@dataclass(frozen=True)
class WorkItem:
    """One input of a batch and how it was answered.

    ``input`` is the string given; ``parsed`` the DOI it names (None: not a DOI). Exactly one of
    ``lookup`` (the stored work and its provenance) and ``error`` (why there is none: invalid input,
    ``doi_not_found`` with the registration agency, or the upstream failure) is set.
    ``miss_provenance``: where a ``doi_not_found`` came from (the stored miss; None otherwise).
    """

    input: str
    parsed: ParsedDOI | None
    lookup: Lookup | None = None
    error: SyncdError | None = None
    miss_provenance: Provenance | None = None


@dataclass
class WorksAnswer:
    """The items of a batch in input order; ``list_requests`` sent, DOIs fetched alone (``/works/{doi}``)."""

    items: list[WorkItem] = field(default_factory=list)
    list_requests: int = 0
    single_fetches: int = 0


def list_params(keys: Sequence[str]) -> dict[str, str]:
    """Query parameters of one whole-work list request for ``keys`` (each filter-safe; no ``select``)."""
    return {"filter": ",".join(f"doi:{k}" for k in keys), "rows": str(len(keys))}


def _norm_type(kind: str) -> str:
    return kind.strip().lower().replace("-", "_").replace(" ", "_")


def update_flags(
    doi: str, updated_by: Sequence[Update] | None, update_to: Sequence[Update] | None
) -> list[str]:
    """``retracted``, ``corrected``, ``expression_of_concern`` (in that order) from a work's updates.

    Publisher back-links are skipped: an ``updatedBy`` entry not from Retraction Watch that names
    another DOI ``updateTo`` also names (publishers deposit a notice and the work it updates as links
    both ways). Retraction Watch entries (``source: retraction-watch``, curated against the retracted
    work) and in-place updates (the work's own DOI) always count. A correction-type entry whose DOI
    is also a retraction notice of the work is part of that retraction (publishers deposit the
    notice as an erratum too), not a separate correction.
    """
    own = doi.lower()
    targets = {u.doi.lower() for u in update_to or []} - {own}
    updates = [
        (_norm_type(u.type), u.doi.lower())
        for u in updated_by or []
        if u.source == RETRACTION_WATCH or u.doi.lower() not in targets
    ]
    retractions = {d for t, d in updates if t in RETRACTION_TYPES}
    flags = []
    if retractions:
        flags.append("retracted")
    if any(t in CORRECTION_TYPES and d not in retractions for t, d in updates):
        flags.append("corrected")
    if any(t in EOC_TYPES for t, _ in updates):
        flags.append("expression_of_concern")
    return flags


# --------------------------------------------------------------------------------------------------
# the batch
# --------------------------------------------------------------------------------------------------


@dataclass
class _Pending:
    """One distinct DOI of the batch while it is being resolved."""

    parsed: ParsedDOI
    plan: Plan | None = None
    result: WorkItem | None = None


def get_works(svc: Services, inputs: Sequence[str]) -> WorksAnswer:
    """Resolve every input to its Crossref work, local-first, fetching the rest in list requests.

    See the module docstring for the order of steps and the requests sent. Never raises for one
    input: each item carries its lookup or its error. Each stage takes its time from the running
    call's deadline (:func:`~syncd.upstream.http.current_deadline`; a fresh ``deadline_s`` per
    stage outside a tool call, e.g. ``syncd check``). List requests go :data:`LIST_PARALLEL` at a
    time; every store write happens on the calling thread.
    """
    answer = WorksAnswer()
    parsed: list[ParsedDOI | InvalidInput] = []
    pending: dict[str, _Pending] = {}
    for raw in inputs:
        try:
            doi = parse_doi(raw)
        except InvalidInput as exc:
            parsed.append(exc)
            continue
        parsed.append(doi)
        pending.setdefault(doi.key, _Pending(doi))
    batch: list[_Pending] = []
    for p in pending.values():
        if _planned(svc, p):
            batch.append(p)
    singles = [p for p in batch if not filter_safe(p.parsed.key)]
    listed = [p for p in batch if filter_safe(p.parsed.key)]
    groups = _groups(listed)
    singles += [g[0] for g in groups if len(g) == 1]
    groups = [g for g in groups if len(g) > 1]
    for i in range(0, len(groups), LIST_PARALLEL):
        wave = groups[i : i + LIST_PARALLEL]
        answer.list_requests += len(wave)
        deadline = current_deadline(svc.settings.deadline_s)
        if len(wave) == 1:
            answers = [_ask(svc, wave[0], deadline)]
        else:  # the request threads get the deadline passed in (a ContextVar does not cross threads)
            with ThreadPoolExecutor(max_workers=len(wave), thread_name_prefix="syncd-works") as pool:
                answers = list(pool.map(partial(_ask, svc, deadline=deadline), wave))
        for group, listed_answer in zip(wave, answers, strict=True):
            _settle(svc, group, listed_answer)
    for p in singles:
        answer.single_fetches += 1
        p.result = _single(svc, p.parsed)
    for raw, doi in zip(inputs, parsed, strict=True):
        if isinstance(doi, InvalidInput):
            answer.items.append(WorkItem(raw, None, error=doi))
            continue
        done = pending[doi.key].result
        assert done is not None
        answer.items.append(WorkItem(raw, doi, done.lookup, done.error, done.miss_provenance))
    return answer


def _groups(listed: list[_Pending]) -> list[list[_Pending]]:
    """``listed`` in order, cut into groups of at most ``GROUP`` DOIs and :data:`MAX_FILTER_CHARS`."""
    groups: list[list[_Pending]] = []
    size = 0
    for p in listed:
        length = len("doi:,") + len(p.parsed.key)
        if not groups or len(groups[-1]) >= GROUP or size + length > MAX_FILTER_CHARS:
            groups.append([])
            size = 0
        groups[-1].append(p)
        size += length
    return groups


def _planned(svc: Services, p: _Pending) -> bool:
    """Decide ``p``: answered now (store, stale, declared error; False) or to fetch (True)."""
    if is_zenodo_doi(p.parsed.key) is not None:
        p.result = _single(svc, p.parsed)  # refused without a request, pointing at zenodo_get_record
        return False
    held = svc.store.get(CROSSREF_WORK, p.parsed.key)
    deadline = current_deadline(svc.settings.deadline_s)
    try:
        plan = svc.runner.plan(
            lookups_crossref.WORK, p.parsed.key, held, deadline, refetch=lookups_crossref.is_partial(held)
        )
    except SyncdError as exc:  # a read-only store with nothing stored
        p.result = WorkItem(p.parsed.doi, p.parsed, error=exc)
        return False
    if plan.decision.action in (Action.FETCH, Action.REVALIDATE):
        p.plan = plan
        return True
    p.result = _single(svc, p.parsed)  # answered from the store (or the declared error): no request
    return False


def _single(svc: Services, doi: ParsedDOI) -> WorkItem:
    """``doi`` through the single-work path (store first, ``/works/{doi}``, agency on a miss)."""
    try:
        return WorkItem(doi.doi, doi, lookups_crossref.get_work(svc, doi))
    except SyncdError as exc:
        entry = svc.store.get(CROSSREF_WORK, doi.key) if isinstance(exc, NotFound) else None
        prov = policy.from_store(entry) if entry is not None and entry.status != "ok" else None
        return WorkItem(doi.doi, doi, error=exc, miss_provenance=prov)


def _ask(svc: Services, group: list[_Pending], deadline: Deadline) -> dict[str, Any] | SyncdError:
    """The ``message`` of one list request for ``group`` (no store access), or why it failed."""
    try:
        return svc.upstreams.crossref.list_works(list_params([p.parsed.key for p in group]), deadline)
    except (UpstreamError, BudgetExhausted) as exc:
        return exc


def _settle(svc: Services, group: list[_Pending], message: dict[str, Any] | SyncdError) -> None:
    """Store what one list request answered for ``group``: each work, a miss for each DOI left out."""
    if isinstance(message, SyncdError):
        log.info("event=works_list_failed size=%d reason=%s", len(group), message.reason)
        for p in group:
            p.result = _failed(svc, p, message)
        return
    items: dict[str, dict[str, Any]] = {}
    for item in message["items"]:
        if isinstance(item, dict) and isinstance(item.get("DOI"), str):
            with contextlib.suppress(InvalidInput):
                items.setdefault(parse_doi(item["DOI"]).key, item)
    log.info("event=works_list size=%d found=%d", len(group), sum(p.parsed.key in items for p in group))
    for p in group:
        try:
            p.result = _stored(svc, p, items.get(p.parsed.key))
        except SyncdError as exc:  # hollow body refused, store failure: this DOI only
            p.result = _failed(svc, p, exc)


def _stored(svc: Services, p: _Pending, item: dict[str, Any] | None) -> WorkItem:
    """Store what the list said of ``p`` (the work, or a miss) and answer it."""
    assert p.plan is not None
    key, held = p.parsed.key, p.plan.entry
    if item is None:
        fresh, _ = svc.store.put_content(lookups_crossref.WORK.content(key, "not_found", None, None, doi=key))
        if fresh.status != "ok":  # nothing was held: the miss names its agency (single path, stored)
            missed = _single(svc, p.parsed)
            prov = policy.after_fetch(held, fresh)
            return WorkItem(p.parsed.doi, p.parsed, missed.lookup, missed.error, prov)
    else:
        content = lookups_crossref.work_content(key, item, None)
        body = json.dumps({"status": "ok", "message-type": "work", "message": item})
        fresh, changed = svc.store.put_content(EntryContent(**{**content.__dict__, "body": body}))
        log.debug("event=stored kind=crossref_work key=%s changed=%s via=list", key, changed)
    prov = policy.after_fetch(held, fresh)
    if lookups_crossref.is_partial(fresh) and not prov.stale:
        prov = policy.flagged_stale(prov)
    return WorkItem(p.parsed.doi, p.parsed, Lookup(fresh, prov))


def _failed(svc: Services, p: _Pending, exc: SyncdError) -> WorkItem:
    """Stale-if-error for ``p`` (as :meth:`syncd.cache.Claim.failed`), else ``exc`` as its reason."""
    assert p.plan is not None
    held = p.plan.entry
    if held is None or held.status != "ok":  # a held miss is not re-answered: the failure is the reason
        return WorkItem(p.parsed.doi, p.parsed, error=exc)
    if svc.store.write_problem() is None:
        with contextlib.suppress(StoreError):
            svc.store.mark_error(held.id, exc.reason)
    return WorkItem(
        p.parsed.doi, p.parsed, Lookup(held, policy.after_failure(held, p.plan.decision, exc.reason))
    )
