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
4. A DOI the list leaves out is not yet a miss: a list answer can leave a DOI out for other reasons
   than absence (aliases, characters the filter syntax mangles, index lag between routes), and a
   false "not found" in a retraction check is the worst answer. It is looked up on its own through
   the single path (``/works/{doi}``, within the call's budget and deadline): a 404 there stores the
   miss (``ttl.miss``; never over a stored body, which is answered flagged stale instead, BC-09) and
   reports ``doi_not_found`` naming the registration agency from doi.org's ``/ra/{prefix}``, cached
   per prefix (``ttl.entity``; ``registrationAgency: DataCite`` for a DataCite DOI); a 200 stores
   and answers the work. When that request cannot be made or fails (deadline spent, budget, 5xx),
   the DOI is reported ``doi_unconfirmed`` (the failure in ``data["cause"]``; a held copy is
   answered stale instead) and nothing is stored for it, so ``crossref_get_work`` and the next call
   ask Crossref again: no ``doi_not_found`` without a single-DOI request having said so.
5. A failed list request (HTTP 400/5xx, unreadable body, 429, spent budget, breaker open) fails its
   group only: held works are answered stale with the reason, the others carry it as their reason.
6. The store must be writable for a fetch (the request budget lives in it): before the first request
   the write lock is probed once, for at most :data:`~syncd.road.local_first.PROBE_SHARE` of the call's
   deadline
   (:meth:`~syncd.store.repo.Store.can_write`; a full disk or read-only file is known at once). When
   it cannot be had (another process holds SQLite's write lock, the disk is full), no request is
   sent: held works are answered stale (``store_unavailable``) and the others carry
   ``store_unavailable`` as their reason. Every later write of the call waits at most what is left
   of its deadline (:meth:`~syncd.store.repo.Store.waits_within`), the works of one list answer are
   stored in one transaction (one lock wait per group, not per DOI), and once a write of the call
   failed no other is tried: works already read from upstream are answered unstored (their ``cache``
   block says ``stored: false``), the rest carry ``store_unavailable``.

7. A ``doi_not_found`` whose registration agency another slice answers for (``services.agencies``,
   handed down by the composition root: DataCite) carries that agency's summary of the DOI
   (``agency_record``: found with title, type, year and state, or the agency's own miss, each with
   its ``cache`` block), asked once for all such DOIs of the call, local-first, inside its budget.

Requests for ``n`` DOIs to fetch: ``ceil(n / 50)`` list requests (two at a time), one
``/works/{doi}`` per DOI that cannot go in a filter and per DOI a list answer left out (while the
deadline lasts), one doi.org request per new prefix among the confirmed misses.

Update flags (:func:`syncd.crossref.views_flags.update_flags`) read the normalized ``updatedBy``
list: ``retracted`` (retraction, withdrawal, removal, partial retraction), ``corrected`` (correction, erratum,
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
import dataclasses
import json
import logging
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from syncd.crossref import lookups as lookups_crossref
from syncd.crossref.names import CROSSREF_WORK
from syncd.crossref.params_filter import GROUP, filter_safe
from syncd.errors import (
    BudgetExhausted,
    InvalidInput,
    NotFound,
    StoreError,
    SyncdError,
    UpstreamError,
    UpstreamUnavailable,
)
from syncd.normalize.doi import ParsedDOI, is_zenodo_doi, parse_doi
from syncd.road import policy
from syncd.road.local_first import PROBE_SHARE, UNSTORED_ID, Lookup, Plan, facts_of, unstored_entry
from syncd.road.policy import Action, Provenance
from syncd.road.services import Services
from syncd.store.repo import EntryContent, StoredEntry, write_cause
from syncd.upstream.http import Deadline, current_deadline

__all__ = [
    "AGENCY",
    "CONFIRM_PARALLEL",
    "LIST_PARALLEL",
    "MAX_DOIS",
    "MAX_FILTER_CHARS",
    "WorkItem",
    "WorksAnswer",
    "get_works",
    "list_params",
]

log = logging.getLogger("syncd.crossref.lookups_batch")

AGENCY = "Crossref"
"""The registration agency whose DOIs these lookups answer (doi.org's ``RA`` of a Crossref prefix): a
``doi_not_found`` naming another agency is that agency's DOI (``syncd check``: ``other_agency``)."""
MAX_DOIS = 100
"""Most DOIs one ``crossref_get_works`` call takes (``syncd check`` passes any number)."""
MAX_FILTER_CHARS = 4000
"""Longest ``filter`` value of one list request (characters before percent-encoding): 50 long DOIs
(SICI, Wiley) would pass common 8 KiB URL limits once encoded, so a group also ends here."""
LIST_PARALLEL = 2
"""List requests sent at once (their answers are stored one after the other): a call's 100 DOIs
cost one round trip. The budget's ``crossref_list`` pool still decides how many are in flight
(3 in the polite pool, else 1: the second then waits for the first, within the deadline)."""

CONFIRM_PARALLEL = 4
"""Single-DOI requests sent at once to confirm the DOIs a list answer left out (step 4 of the module
docstring): within Crossref's 5 concurrent requests, the budget still deciding how many are in flight."""


@dataclass(frozen=True)
class WorkItem:
    """One input of a batch and how it was answered.

    ``input`` is the string given; ``parsed`` the DOI it names (None: not a DOI). Exactly one of
    ``lookup`` (the stored work and its provenance) and ``error`` (why there is none: invalid input,
    ``doi_not_found`` with the registration agency, or the upstream failure) is set.
    ``miss_provenance``: where a ``doi_not_found`` came from (the stored miss; None otherwise).
    ``agency_record``: the registration agency's summary of a ``doi_not_found`` another slice
    answers for (:data:`syncd.road.services.AgencyRecords`; None otherwise).
    """

    input: str
    parsed: ParsedDOI | None
    lookup: Lookup | None = None
    error: SyncdError | None = None
    miss_provenance: Provenance | None = None
    agency_record: dict[str, Any] | None = None


@dataclass
class WorksAnswer:
    """The items of a batch in input order; ``list_requests`` sent, DOIs fetched alone (``/works/{doi}``).

    ``unreachable``: the lab database could not be reached (the items fetched are answered unstored;
    nothing else the store holds could be read).
    """

    items: list[WorkItem] = field(default_factory=list)
    list_requests: int = 0
    single_fetches: int = 0
    unreachable: bool = False


def list_params(keys: Sequence[str]) -> dict[str, str]:
    """Query parameters of one whole-work list request for ``keys`` (each filter-safe; no ``select``)."""
    return {"filter": ",".join(f"doi:{k}" for k in keys), "rows": str(len(keys))}


# --------------------------------------------------------------------------------------------------
# the batch
# --------------------------------------------------------------------------------------------------


@dataclass
class _Pending:
    """One distinct DOI of the batch while it is being resolved."""

    parsed: ParsedDOI
    plan: Plan | None = None
    result: WorkItem | None = None
    left_out: bool = False
    """A list answer left this DOI out: it is confirmed on its own (``/works/{doi}``) before it is a miss."""


UNREACHABLE = "unreachable"
"""The write cause of a lab database that cannot be reached (:meth:`syncd.store.repo.Store.can_write`)."""


class _Writes:
    """The store writes of one batch call: probed once, and none tried after one failed.

    ``failed``: the cause (``locked``, ``disk_full``, ``read_only``, ``error``) of the first write of
    the call that could not be done, or None.
    """

    def __init__(self, svc: Services) -> None:
        self._store = svc.store
        self.failed: str | None = None

    @property
    def blocked(self) -> bool:
        """No request is worth sending: a write failed, for a cause other than an unreachable lab database.

        With the lab database unreachable upstream is still asked and its answers given unstored (as
        the single path does).
        """
        return self.failed is not None and self.failed != UNREACHABLE

    def probe(self, deadline: Deadline) -> None:
        """Take (and release) the write lock once, waiting at most a share of ``deadline``'s time left."""
        self.failed = self._store.can_write(deadline.remaining() * PROBE_SHARE)
        if self.failed is not None:
            log.info("event=works_store_unwritable cause=%s", self.failed)

    def note(self, error: SyncdError | None) -> None:
        """Remember a write that failed in a lookup (``store_unavailable``): no later write is tried."""
        if self.failed is None and error is not None and error.reason == "store_unavailable":
            self.failed = str(error.data.get("cause") or write_cause(error))


def get_works(svc: Services, inputs: Sequence[str]) -> WorksAnswer:
    """Resolve every input to its Crossref work, local-first, fetching the rest in list requests.

    See the module docstring for the order of steps and the requests sent. Never raises for one
    input: each item carries its lookup or its error. Each stage takes its time from the running
    call's deadline (:func:`~syncd.upstream.http.current_deadline`; a fresh ``deadline_s`` per
    stage outside a tool call, e.g. ``syncd check``). List requests go :data:`LIST_PARALLEL` at a
    time and their answers are stored on the calling thread; the DOIs they left out are confirmed
    :data:`CONFIRM_PARALLEL` at a time, each through the single path on its request thread.
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
    batch = [p for p in pending.values() if _planned(svc, p)]
    writes = _Writes(svc)
    if batch:
        writes.probe(current_deadline(svc.settings.deadline_s))
    if writes.failed is not None and writes.blocked:
        for p in batch:
            p.result = _unwritten(svc, p, writes.failed)
        batch = []
    singles = [p for p in batch if not filter_safe(p.parsed.key)]
    listed = [p for p in batch if filter_safe(p.parsed.key)]
    groups = _groups(listed)
    singles += [g[0] for g in groups if len(g) == 1]
    groups = [g for g in groups if len(g) > 1]
    for i in range(0, len(groups), LIST_PARALLEL):
        wave = groups[i : i + LIST_PARALLEL]
        answer.list_requests += len(wave)
        deadline = current_deadline(svc.settings.deadline_s)
        with svc.store.waits_within(deadline.remaining):
            if len(wave) == 1:
                answers = [_ask(svc, wave[0], deadline)]
            else:  # the request threads get the deadline passed in (a ContextVar does not cross threads)
                with ThreadPoolExecutor(max_workers=len(wave), thread_name_prefix="syncd-works") as pool:
                    answers = list(pool.map(partial(_ask, svc, deadline=deadline), wave))
            for group, listed_answer in zip(wave, answers, strict=True):
                _settle(svc, group, listed_answer, writes)
    for p in singles:
        if writes.failed is not None and writes.blocked:
            p.result = _unwritten(svc, p, writes.failed)
            continue
        answer.single_fetches += 1
        deadline = current_deadline(svc.settings.deadline_s)
        with svc.store.waits_within(deadline.remaining):
            p.result = _single(svc, p.parsed)
        writes.note(p.result.error)
    _confirm(svc, [p for g in groups for p in g if p.left_out], writes, answer)
    for raw, given in zip(inputs, parsed, strict=True):
        if isinstance(given, InvalidInput):
            answer.items.append(WorkItem(raw, None, error=given))
            continue
        done = pending[given.key].result
        assert done is not None
        answer.items.append(WorkItem(raw, given, done.lookup, done.error, done.miss_provenance))
    answer.items = _with_agency_records(svc, answer.items)
    # learnt on the way (a write that failed), or since (the store's own reach state)
    answer.unreachable = writes.failed == UNREACHABLE or svc.store.unreachable() is not None
    if not answer.unreachable:
        answer.items = _with_lines(svc, answer.items)
    return answer


def _with_lines(svc: Services, items: list[WorkItem]) -> list[WorkItem]:
    """``items`` with the stored list line on each stored work (read in one statement per 500 works).

    An item's list-line fields are then rendered from it, not from its parsed body
    (:func:`syncd.crossref.lookups.line_of`); when the lines cannot be read the items go as they are.
    """
    held = [i.lookup.entry for i in items if i.lookup is not None and i.lookup.entry.id != UNSTORED_ID]
    try:
        lined = {e.id: e for e in svc.store.with_lines(held)}
    except StoreError:
        log.info("event=works_lines_unread")
        return items
    return [
        dataclasses.replace(i, lookup=dataclasses.replace(i.lookup, entry=lined[i.lookup.entry.id]))
        if i.lookup is not None and i.lookup.entry.id in lined
        else i
        for i in items
    ]


def _agency_of(item: WorkItem) -> str | None:
    """The lower-cased agency of a ``doi_not_found`` item doi.org names another agency for (else None)."""
    if not isinstance(item.error, NotFound) or item.parsed is None:
        return None
    agency = item.error.data.get("registrationAgency")
    return agency.lower() if isinstance(agency, str) and agency.lower() != AGENCY.lower() else None


def _with_agency_records(svc: Services, items: list[WorkItem]) -> list[WorkItem]:
    """``items`` with the agency's summary on each miss an agency of ``svc.agencies`` answers for."""
    asked: dict[str, list[str]] = {}
    for item in items:
        agency = _agency_of(item)
        if agency is not None and agency in svc.agencies and item.parsed is not None:
            asked.setdefault(agency, []).append(item.parsed.key)
    if not asked:
        return items
    records = {a: svc.agencies[a](svc, list(dict.fromkeys(keys))) for a, keys in asked.items()}
    out = []
    for item in items:
        agency = _agency_of(item)
        record = records.get(agency, {}).get(item.parsed.key) if agency and item.parsed else None
        out.append(dataclasses.replace(item, agency_record=record) if record is not None else item)
    return out


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


def _single(svc: Services, doi: ParsedDOI, deadline: Deadline | None = None) -> WorkItem:
    """``doi`` through the single-work path (store first, ``/works/{doi}``, agency on a miss)."""
    try:
        return WorkItem(doi.doi, doi, lookups_crossref.get_work(svc, doi, deadline))
    except SyncdError as exc:
        entry = svc.store.get(CROSSREF_WORK, doi.key) if isinstance(exc, NotFound) else None
        prov = policy.from_store(facts_of(entry)) if entry is not None and entry.status != "ok" else None
        return WorkItem(doi.doi, doi, error=exc, miss_provenance=prov)


def _ask(svc: Services, group: list[_Pending], deadline: Deadline) -> dict[str, Any] | SyncdError:
    """The ``message`` of one list request for ``group`` (no store access), or why it failed."""
    try:
        message: dict[str, Any] = svc.upstreams.crossref.list_works(
            list_params([p.parsed.key for p in group]), deadline
        )
    except (UpstreamError, BudgetExhausted) as exc:
        return exc
    return message


def _settle(
    svc: Services, group: list[_Pending], message: dict[str, Any] | SyncdError, writes: _Writes
) -> None:
    """Store what one list request answered for ``group`` in one transaction, then answer each DOI.

    The works it holds are written together (:meth:`~syncd.store.repo.Store.batch`: one lock wait
    for the group); a DOI it leaves out is marked ``left_out`` (confirmed later on its own, nothing
    stored now). When the transaction cannot be had, the works are answered from the list answer
    unstored.
    """
    if isinstance(message, SyncdError):
        log.info("event=works_list_failed size=%d reason=%s", len(group), message.reason)
        writes.note(message)
        held = [p.plan.entry for p in group if p.plan is not None and p.plan.entry is not None]
        if writes.failed is None and held and svc.store.write_problem() is None:
            with contextlib.suppress(StoreError), svc.store.batch():  # bookkeeping only, one transaction
                for entry in held:
                    if entry.status == "ok":
                        svc.store.mark_error(entry.id, message.reason)
        for p in group:
            p.result = _failed(p, message)
        return
    items: dict[str, dict[str, Any]] = {}
    for item in message["items"]:
        if isinstance(item, dict) and isinstance(item.get("DOI"), str):
            with contextlib.suppress(InvalidInput):
                items.setdefault(parse_doi(item["DOI"]).key, item)
    log.info("event=works_list size=%d found=%d", len(group), sum(p.parsed.key in items for p in group))
    contents: dict[str, EntryContent | SyncdError] = {}
    for p in group:
        item = items.get(p.parsed.key)
        if item is None:  # looked up on its own later (step 4), nothing stored from the list's silence
            p.left_out = True
            continue
        try:
            contents[p.parsed.key] = _content_of(item, p.parsed.key)
        except SyncdError as exc:  # an item the work view cannot read: this DOI only
            contents[p.parsed.key] = exc
    stored: dict[str, StoredEntry | SyncdError] = {}
    if writes.failed is None:
        try:
            with svc.store.batch():
                for key, content in contents.items():
                    if isinstance(content, EntryContent):
                        stored[key] = _put(svc, content)
        except StoreError as exc:  # the lock was not had in time, the disk filled: nothing of it stored
            writes.note(exc)
            stored = {}
    for p in group:
        if p.left_out:
            continue
        done = stored.get(p.parsed.key) or contents[p.parsed.key]
        if isinstance(done, SyncdError):
            p.result = _failed(p, done)
        elif isinstance(done, EntryContent):
            p.result = _unstored(p, done, writes.failed or "error")
        else:
            p.result = _answered(p, done)


def _content_of(item: dict[str, Any], key: str) -> EntryContent:
    """The stored form of the whole work a list answered for ``key``.

    Raises:
        MalformedResponse: the work view cannot read the item.
    """
    content = lookups_crossref.work_content(key, item, None)
    body = json.dumps({"status": "ok", "message-type": "work", "message": item})
    return EntryContent(**{**content.__dict__, "body": body})


def _put(svc: Services, content: EntryContent) -> StoredEntry | SyncdError:
    """``content`` stored (inside the group's transaction), or why it was refused (hollow, shrunk)."""
    try:
        fresh, changed = svc.store.put_content(content)
    except StoreError:
        raise
    except SyncdError as exc:  # refused before writing, or the suspect set aside (kept): this DOI only
        return exc
    log.debug("event=stored kind=crossref_work key=%s changed=%s via=list", content.key, changed)
    return fresh


def _answered(p: _Pending, fresh: StoredEntry) -> WorkItem:
    """The answer for ``p`` once the work the list answered is stored (``fresh``)."""
    assert p.plan is not None
    prov = policy.after_fetch(facts_of(p.plan.entry), facts_of(fresh))
    if lookups_crossref.is_partial(fresh) and not prov.stale:
        prov = policy.flagged_stale(prov)
    return WorkItem(p.parsed.doi, p.parsed, Lookup(fresh, prov))


def _confirm(svc: Services, left_out: list[_Pending], writes: _Writes, answer: WorksAnswer) -> None:
    """Ask Crossref for each DOI the list answers left out on its own, :data:`CONFIRM_PARALLEL` at a time.

    Within the call's deadline (passed to each request thread; the budget's ``crossref_single`` pool
    and the Crossref concurrency limit decide how many are in flight); once it is spent, or once a
    store write of the call failed, the rest are answered without a request.
    """
    if not left_out:
        return
    deadline = current_deadline(svc.settings.deadline_s)

    def confirm(p: _Pending) -> WorkItem:
        if writes.failed is not None and writes.blocked:
            return _unwritten(svc, p, writes.failed)
        if deadline.expired():
            return _unconfirmed(p, "request_timeout")
        with svc.store.waits_within(deadline.remaining):
            done = _confirmed(svc, p, deadline)
        writes.note(done.error)
        return done

    answer.single_fetches += len(left_out)
    workers = min(CONFIRM_PARALLEL, len(left_out))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="syncd-confirm") as pool:
        for p, done in zip(left_out, pool.map(confirm, left_out), strict=True):
            p.result = done


def _confirmed(svc: Services, p: _Pending, deadline: Deadline) -> WorkItem:
    """A DOI a list answer left out, asked on its own (``/works/{doi}``): the work, the miss, or unconfirmed.

    Only a single-DOI answer makes it ``doi_not_found``; a held copy the single path answers stale
    is kept; any other failure leaves it ``doi_unconfirmed`` with nothing stored.
    """
    done = _single(svc, p.parsed, deadline)
    if isinstance(done.error, NotFound):  # said by /works/{doi} in this call: its cache block says so
        return WorkItem(done.input, done.parsed, error=done.error)
    if done.error is None or done.error.reason == "store_unavailable":
        return done
    return _unconfirmed(p, done.error.reason)


def _unconfirmed(p: _Pending, cause: str) -> WorkItem:
    """``doi_unconfirmed`` for ``p`` (left out of a list answer, not confirmed because of ``cause``)."""
    assert p.plan is not None
    held = p.plan.entry
    if held is not None and held.status == "ok":
        prov = policy.after_failure(facts_of(held), p.plan.decision, cause)
        return WorkItem(p.parsed.doi, p.parsed, Lookup(held, prov))
    return WorkItem(
        p.parsed.doi,
        p.parsed,
        error=UpstreamUnavailable(
            f"Crossref's list answer left out {p.parsed.doi} and the single-DOI lookup that would confirm "
            f"a miss could not be made now ({cause}); it is not known to be missing",
            reason="doi_unconfirmed",
            hint="Call crossref_get_work with this DOI (or this call again later): it asks Crossref for it.",
            doi=p.parsed.doi,
            cause=cause,
        ),
    )


def _unstored(p: _Pending, content: EntryContent, cause: str) -> WorkItem:
    """What the list said of ``p``, answered although it could not be stored (``cause``)."""
    if content.status != "ok":
        return WorkItem(p.parsed.doi, p.parsed, error=_store_error(p, cause))
    entry = unstored_entry(content, time.time())
    reason = policy.UNREACHABLE_REASON if cause == UNREACHABLE else "store_unavailable"
    return WorkItem(p.parsed.doi, p.parsed, Lookup(entry, policy.unstored(facts_of(entry), reason)))


def _store_error(p: _Pending, cause: str) -> StoreError:
    """``store_unavailable`` for a DOI this call could not look up because the store cannot be written."""
    return StoreError(
        f"{p.parsed.doi} could not be looked up now: the local store cannot be written ({cause}), and "
        "the request budget and the answer are kept there",
        hint="Retry in a moment (another process may hold the store's write lock); the stored DOIs "
        "were answered from the store.",
        cause=cause,
    )


def _unwritten(svc: Services, p: _Pending, cause: str) -> WorkItem:
    """``p`` answered without any request because the store cannot be written (``cause``)."""
    assert p.plan is not None
    held = p.plan.entry
    if held is None or held.status != "ok":
        return WorkItem(p.parsed.doi, p.parsed, error=_store_error(p, cause))
    prov = policy.after_failure(facts_of(held), p.plan.decision, "store_unavailable")
    return WorkItem(p.parsed.doi, p.parsed, Lookup(held, prov))


def _failed(p: _Pending, exc: SyncdError) -> WorkItem:
    """Stale-if-error for ``p`` (as :meth:`~syncd.road.local_first.Claim.failed`), else ``exc``."""
    assert p.plan is not None
    held = p.plan.entry
    if held is None or held.status != "ok":  # a held miss is not re-answered: the failure is the reason
        return WorkItem(p.parsed.doi, p.parsed, error=exc)
    return WorkItem(
        p.parsed.doi,
        p.parsed,
        Lookup(held, policy.after_failure(facts_of(held), p.plan.decision, exc.reason)),
    )
