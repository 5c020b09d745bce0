"""Crossref tool-level lookups: each returns ``(contract view as a dict, provenance)``.

They take the :class:`~syncd.road.services.Services` bundle, validate with :mod:`syncd.crossref.params`,
read entries through :mod:`syncd.crossref.lookups` (local-first) and build the contract views with
:mod:`syncd.crossref.views_lists`. Journals and funders share one entity-search skeleton
(:class:`EntitySearch`): an id lookup or a list search, optionally with a works page of the match.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from syncd.crossref.lookups import (
    get_entity,
    get_work,
    line_of,
    list_page,
    message_of,
)
from syncd.crossref.lookups_stored import mirror_search, stored_journal_key
from syncd.crossref.names import CROSSREF_FUNDER, CROSSREF_JOURNAL, CROSSREF_MEMBER, CROSSREF_PREFIX
from syncd.crossref.params import (
    ISSN_RE,
    funder_id,
    journal_issn,
    journal_works_params,
    search_works_request,
)
from syncd.crossref.views_lists import (
    funder_record,
    journal_record,
    list_work,
    member_view,
    prefix_view,
    references_view,
    search_view,
    work_summary,
)
from syncd.doiorg.lookups import registration_agency
from syncd.errors import BudgetExhausted, InvalidInput, NotFound, UpstreamError, UpstreamRejected
from syncd.normalize.doi import ParsedDOI
from syncd.road import policy
from syncd.road.policy import Provenance
from syncd.road.services import Services
from syncd.store.repo import StoredEntry
from syncd.store.search import RANK_BOUND, SEARCH_COUNT_CAP
from syncd.upstream.http import Deadline, current_deadline

__all__ = [
    "FUNDERS",
    "JOURNALS",
    "WORKS_CEILING",
    "EntitySearch",
    "get_member",
    "get_prefix",
    "get_references",
    "search_entities",
    "search_funders",
    "search_journals",
    "search_works",
]


def search_works(svc: Services, raw: dict[str, Any]) -> tuple[dict[str, Any], Provenance]:
    """``crossref_search_works``: the page local-first; offline, a local-mirror answer from the FTS index.

    The same normalized query already stored answers from the store (0 requests). When Crossref cannot
    be used and nothing is stored, an offset (or ``cursor="*"``) search with query terms is answered from
    the stored works (FTS5), with a notice saying so.

    Raises:
        InvalidInput: refused before any request (see :func:`search_works_request`).
        UpstreamRejected: Crossref's 400 rejections, mapped (unknown_filter, invalid_cursor...).
        UpstreamError, BudgetExhausted: upstream unusable, nothing stored, nothing to search locally.
    """
    req = search_works_request(raw)
    deadline = current_deadline(svc.settings.deadline_s)
    try:
        page = list_page(svc, "/works", req.params, deadline)
    except UpstreamRejected:
        raise
    except (UpstreamError, BudgetExhausted) as exc:
        inp = req.input
        if not req.text or (inp.cursor not in (None, "*")):
            raise
        entries, total, prov = mirror_search(svc, req.text, offset=inp.offset, rows=inp.rows)
        works, cut = [], 0
        for entry in entries:
            summary, was_cut = work_summary(line_of(entry), inp.authorLimit)
            if summary is not None:
                works.append(summary.model_dump(mode="json", exclude_none=True))
                cut += int(was_cut)
        matches = f"more than {SEARCH_COUNT_CAP - 1:,}" if total >= SEARCH_COUNT_CAP else str(total)
        if total > RANK_BOUND:  # syncd.store.search bounds the ranking
            matches += (
                f" local matches; ranked among the {RANK_BOUND:,} most recently stored, works with every "
                "term first"
            )
        else:
            matches += " local matches, best first"
        notice = (
            f"Local-mirror answer: Crossref could not be used ({exc.reason}), so these are the works syncd "
            f"already holds that match the query terms ({matches}); they are not Crossref's ranking or total"
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
        return data, policy.flagged_stale(prov or policy.now_from("store-stale"), exc.reason)
    view = search_view(page.message, req.input, blank_listing=req.blank_listing)
    data = view.model_dump(mode="json", exclude_none=True)
    extra = list(req.notices)
    if extra:
        data["notice"] = " ".join([data["notice"], *extra] if data.get("notice") else extra)
    return data, page.provenance


def get_references(
    svc: Services, doi: ParsedDOI, offset: int, limit: int
) -> tuple[dict[str, Any], Provenance]:
    """``crossref_get_references``: the reference list sliced from the stored work (shared with get_work).

    Raises:
        NotFound, UpstreamError, BudgetExhausted: as :func:`get_work`.
    """
    lookup = get_work(svc, doi)
    view = references_view(message_of(lookup.entry), offset=offset, limit=limit)
    return view.model_dump(mode="json", exclude_none=True), lookup.provenance


def _ceiling(offset: int, rows: int, ceiling: int, reason: str, what: str, hint: str) -> None:
    if offset + rows > ceiling:
        raise InvalidInput(
            f"{what} + rows = {offset + rows} passes the {ceiling:,} ceiling", reason=reason, hint=hint
        )


def _works_page(
    svc: Services, route: str, rows: int, works_offset: int, works_cursor: str | None, deadline: Deadline
) -> tuple[dict[str, Any], Provenance, list[str]]:
    page = list_page(svc, route, journal_works_params(rows, works_offset, works_cursor), deadline)
    msg = page.message
    counted = msg.get("total-results")
    total = counted if isinstance(counted, int) else 0
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
            last = max(0, (min(total, WORKS_CEILING) - 1) // rows * rows)
            notices.append(
                f"works_offset={works_offset} is past the end of the {total:,} works; call again with "
                f"works_offset={last} for the last page of {rows}."
            )
        elif end < total:
            if end + rows > WORKS_CEILING:
                notices.append(
                    f"The works list reached the {WORKS_CEILING:,} offset ceiling with {total:,} works in "
                    'all; continue with works_cursor="*".'
                )
            else:
                out["nextOffset"] = end
    return out, page.provenance, notices


WORKS_CEILING = 10_000


def _issn_ok(value: str) -> bool:
    return bool(ISSN_RE.match(value.strip()))


def _dump(record: BaseModel) -> dict[str, Any]:
    return record.model_dump(mode="json", exclude_none=True)


@dataclass(frozen=True)
class Target:
    """The matched entity whose works are listed: its raw ``message``, contract ``record`` and ``key``."""

    message: dict[str, Any]
    record: dict[str, Any]
    key: str | None = None


@dataclass(frozen=True)
class EntitySearch:
    """What differs between the journal and funder searches; :func:`search_entities` is the rest.

    ``noun``/``plural``: words of the messages; ``kind``: stored kind of the id lookup; ``id_arg``:
    the tool argument naming one entity; ``key_of``: its validation (raises InvalidInput);
    ``missing``: the id lookup's miss (message with ``{key}``, reason, hint, the field naming the
    key); ``record``: the contract record of a message, whole (the id lookup) or as a list item
    (:meth:`one`, :meth:`many`); ``keys``: the answer's
    (list, count, total, works, works total) keys; ``works_route``: route of the target's works
    (None: no works list, with ``no_works_notice``); ``candidate``: one ambiguous match as shown;
    ``notices``: extra notices over the records; ``next_ceiling``: whether ``nextOffset`` stops at
    the 100,000 offset ceiling.
    """

    noun: str
    plural: str
    query_word: str
    kind: str
    route: str
    id_arg: str
    id_hint: str
    key_of: Callable[[str], str]
    missing: tuple[str, str, str, str]
    record: Callable[[dict[str, Any], bool], BaseModel]
    keys: tuple[str, str, str, str, str]
    works_route: Callable[[Target], str | None]
    candidate: Callable[[dict[str, Any]], dict[str, Any]]
    describe: Callable[[dict[str, Any]], str]
    no_works_notice: str = ""
    notices: Callable[[list[dict[str, Any]]], list[str]] = lambda _records: []
    next_ceiling: bool = False

    def not_found(self, key: str, prov: Provenance) -> NotFound:
        """The id lookup's miss for ``key``, carrying the provenance of the stored miss."""
        message, reason, hint, field = self.missing
        return NotFound(
            message.format(key=key), reason=reason, hint=hint, **{field: key}, cache=prov.as_dict()
        )

    def one(self, message: dict[str, Any]) -> dict[str, Any]:
        """The whole contract record of the entity the id lookup found."""
        return _dump(self.record(message, True))

    def many(self, message: dict[str, Any]) -> dict[str, Any]:
        """The contract record of one list item."""
        return _dump(self.record(message, False))


def _check_works_args(
    offset: int, rows: int, works_offset: int, works_cursor: str | None, include: bool, word: str
) -> None:
    _ceiling(offset, rows, 100_000, "offset_too_large", "offset", f"Narrow the {word} query instead.")
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


LINKED_ISSNS_MAX = 2
"""Most linked ISSNs (from a work's ``issn-type``) looked up after an ISSN's ``/journals/{issn}`` 404."""


def linked_issns(svc: Services, issn: str, deadline: Deadline) -> list[str]:
    """The other ISSNs a work of ``issn`` lists with it, print first; [] when none can be had.

    One probe, ``GET /works?filter=issn:{issn}&rows=1`` (local-first, inside the budget): the first
    work whose ``ISSN``/``issn-type`` holds ``issn`` names its linked ISSN(s) (an e-ISSN's print ISSN).
    A probe that fails (upstream unusable, budget spent, a refusal) gives [] (the miss stays plain).
    """
    try:
        page = list_page(svc, "/works", {"filter": f"issn:{issn}", "rows": "1"}, deadline)
    except (NotFound, UpstreamError, BudgetExhausted):
        return []
    for item in page.message.get("items") or []:
        if not isinstance(item, dict):
            continue
        typed = [t for t in item.get("issn-type") or [] if isinstance(t, dict) and t.get("value")]
        typed.sort(key=lambda t: t.get("type") != "print")
        listed = [str(t["value"]) for t in typed] + [str(i) for i in item.get("ISSN") or [] if i]
        issns = list(dict.fromkeys(i.strip().upper() for i in listed if _issn_ok(i)))
        if issn in issns:
            return [i for i in issns if i != issn]
    return []


def _by_linked_issn(
    svc: Services, spec: EntitySearch, key: str, prov: Provenance, deadline: Deadline, notices: list[str]
) -> tuple[StoredEntry, str, Provenance]:
    """The journal under an ISSN linked to ``key`` (whose ``/journals/{key}`` is a miss).

    Raises:
        NotFound: ``issn_not_found`` (``linkedIssns`` and the hint naming them when a work lists any).
    """
    linked = linked_issns(svc, key, deadline)[:LINKED_ISSNS_MAX]
    for other in linked:
        try:
            stored, other_prov = get_entity(svc, CROSSREF_JOURNAL, other, deadline)
        except (UpstreamError, BudgetExhausted):
            continue
        if stored.status == "ok":
            notices.append(
                f"Crossref has no journal under ISSN {key}; its works list it with ISSN {other}, "
                f"so this is the journal Crossref holds under {other}."
            )
            return stored, other, other_prov
    if not linked:
        raise spec.not_found(key, prov)
    message, reason, _, field = spec.missing
    raise NotFound(
        f"{message.format(key=key)}; its works also list ISSN {', '.join(linked)}, under which no "
        "Crossref journal could be answered",
        reason=reason,
        hint=f"Ask for the linked ISSN with issn={linked[0]}, or search by title with query.",
        **{field: key},
        linkedIssns=linked,
        cache=prov.as_dict(),
    )


def _by_id(
    svc: Services, spec: EntitySearch, raw_id: str, deadline: Deadline, notices: list[str]
) -> tuple[dict[str, Any], Target, Provenance]:
    key = spec.key_of(raw_id)
    if spec.kind == CROSSREF_JOURNAL:
        key = stored_journal_key(svc, key)  # a stored journal asked by its other ISSN
    stored, prov = get_entity(svc, spec.kind, key, deadline)
    if stored.status != "ok":
        if spec.kind != CROSSREF_JOURNAL:
            raise spec.not_found(key, prov)
        stored, key, prov = _by_linked_issn(svc, spec, key, prov, deadline, notices)
    message = message_of(stored)
    record = spec.one(message)
    list_key, count_key, total_key, _, _ = spec.keys
    return {list_key: [record], count_key: 1, total_key: 1}, Target(message, record, key), prov


def _by_query(
    svc: Services,
    spec: EntitySearch,
    args: dict[str, Any],
    include: bool,
    deadline: Deadline,
    notices: list[str],
) -> tuple[dict[str, Any], Target | None, Provenance]:
    rows, offset = args["rows"], args["offset"]
    query = (args.get("query") or "").strip() or None
    params = {"rows": str(rows)}
    if query:
        params = {"query": query, **params}
    if offset > 0:
        params["offset"] = str(offset)
    page = list_page(svc, spec.route, params, deadline)
    items = [i for i in page.message.get("items") or [] if isinstance(i, dict)]
    total = int(page.message.get("total-results") or 0)
    records = [spec.many(i) for i in items]
    list_key, count_key, total_key, _, _ = spec.keys
    data: dict[str, Any] = {list_key: records, count_key: len(records), total_key: total}
    if not records:
        last = max(0, (min(total, 100_000) - 1) // rows * rows)
        notices.append(
            f"offset={offset} is past the end of the {total:,} matching {spec.plural}; call again with "
            f"offset={last} for the last page of {rows}."
            if total
            else f"No {spec.noun} matched the {spec.query_word} query {query!r}; try fewer or other words, "
            f"or look it up by {spec.id_hint} with {spec.id_arg}."
        )
    elif offset + len(records) < total:
        if spec.next_ceiling and offset + len(records) + rows > 100_000:
            notices.append(f"The {spec.noun} list reached the 100,000 offset ceiling; narrow the query.")
        else:
            data["nextOffset"] = offset + len(records)
    if include and total > 1:
        candidates = [spec.candidate(r) for r in records]
        listed = "; ".join(spec.describe(c) for c in candidates)
        raise InvalidInput(
            f"include_works needs one {spec.noun}, but {total:,} match {query!r}: {listed}",
            reason=f"ambiguous_{spec.noun}",
            hint=f"Call again with {spec.id_arg} set to one candidate's {spec.id_hint}.",
            candidates=candidates,
            matchedTotal=total,
        )
    target = Target(items[0], records[0]) if items else None
    return data, target, page.provenance


def search_entities(
    svc: Services, spec: EntitySearch, args: dict[str, Any]
) -> tuple[dict[str, Any], Provenance]:
    """One journal or funder search (``spec``), local-first: an id lookup or a list search.

    Optionally (``include_works``) with a works page of the one matched entity.

    Raises:
        InvalidInput: bad id, offset ceilings, cursor with works_offset, ``ambiguous_<noun>``.
        NotFound: from ``spec.not_found``. UpstreamError, BudgetExhausted: upstream unusable, nothing stored.
    """
    deadline = current_deadline(svc.settings.deadline_s)
    rows, works_offset = args["rows"], args["works_offset"]
    works_cursor = (args.get("works_cursor") or "").strip() or None
    include = bool(args.get("include_works"))
    _check_works_args(args["offset"], rows, works_offset, works_cursor, include, spec.query_word)
    notices: list[str] = []
    raw_id = args.get(spec.id_arg)
    target: Target | None
    if raw_id and str(raw_id).strip():
        data, target, prov = _by_id(svc, spec, str(raw_id), deadline, notices)
    else:
        data, target, prov = _by_query(svc, spec, args, include, deadline, notices)
    provs = [prov]
    notices.extend(spec.notices(data[spec.keys[0]]))
    if include and target is not None:
        route = spec.works_route(target)
        if route is None:
            if spec.no_works_notice:
                notices.append(spec.no_works_notice)
        else:
            works, wprov, more = _works_page(svc, route, rows, works_offset, works_cursor, deadline)
            provs.append(wprov)
            notices.extend(more)
            data[spec.keys[3]] = works["works"]
            data[spec.keys[4]] = works["total"]
            if "nextOffset" in works:
                data["nextWorksOffset"] = works["nextOffset"]
            if "nextCursor" in works:
                data["nextWorksCursor"] = works["nextCursor"]
    if notices:
        data["notice"] = " ".join(notices)
    return data, policy.merged(*provs)


def _journal_works_route(target: Target) -> str | None:
    message = target.message
    issns = [i for i in [message.get("ISSN-L"), *(message.get("ISSN") or [])] if isinstance(i, str)]
    issns = [i for i in issns if i.strip() and _issn_ok(i)]
    return f"/journals/{issns[0]}/works" if issns else None


def _funder_works_route(target: Target) -> str | None:
    key = target.key or target.record.get("id")
    return f"/funders/10.13039/{key}/works" if key else None


def _replaced_notices(records: list[dict[str, Any]]) -> list[str]:
    return [
        f"Funder {r.get('id')} ({r.get('name')}) is a deprecated registry entry replaced by "
        f"{', '.join(r['replacedBy'])}: it answers to its successor's name while counting only its own "
        "works; look up the successor with funder_doi (it is not followed automatically)."
        for r in records
        if r.get("replacedBy")
    ]


JOURNALS = EntitySearch(
    noun="journal",
    plural="journals",
    query_word="title",
    kind=CROSSREF_JOURNAL,
    route="/journals",
    id_arg="issn",
    id_hint="ISSN",
    key_of=journal_issn,
    missing=(
        "no Crossref journal with ISSN {key}",
        "issn_not_found",
        "Check the ISSN, or search by title with query.",
        "issn",
    ),
    record=lambda m, whole: journal_record(m, with_years=whole),
    keys=("journals", "journalCount", "journalsTotal", "recentWorks", "worksTotal"),
    works_route=_journal_works_route,
    candidate=lambda r: {"title": r.get("title"), "issn": r.get("issn") or []},
    describe=lambda c: f"{c['title']} ({', '.join(c['issn']) or 'no ISSN'})",
    no_works_notice="include_works skipped: the journal has no well-formed ISSN, so no works list.",
    next_ceiling=True,
)
"""``crossref_search_journals``: ISSN lookup (``crossref_journal``) or title search, works of the journal."""

FUNDERS = EntitySearch(
    noun="funder",
    plural="funders",
    query_word="name",
    kind=CROSSREF_FUNDER,
    route="/funders",
    id_arg="funder_doi",
    id_hint="id",
    key_of=funder_id,
    missing=(
        "no Open Funder Registry entry with id {key}",
        "funder_not_found",
        "Check the id (9 digits, e.g. 100000001), or search by name with query.",
        "funderId",
    ),
    record=lambda m, whole: funder_record(m, with_descendants=whole),
    keys=("funders", "funderCount", "fundersTotal", "fundedWorks", "fundedWorksTotal"),
    works_route=_funder_works_route,
    candidate=lambda r: {"name": r.get("name"), "id": r.get("id")},
    describe=lambda c: f"{c['name']} ({c['id']})",
    notices=_replaced_notices,
)
"""``crossref_search_funders``: id lookup (``crossref_funder``) or name search, funded works."""


def search_journals(svc: Services, args: dict[str, Any]) -> tuple[dict[str, Any], Provenance]:
    """``crossref_search_journals``: an ISSN lookup or a title search, optionally with a works page.

    Raises:
        InvalidInput: bad ISSN, offset ceilings, cursor with works_offset, ``ambiguous_journal``.
        NotFound: ``issn_not_found``. UpstreamError, BudgetExhausted: upstream unusable and nothing stored.
    """
    return search_entities(svc, JOURNALS, args)


def search_funders(svc: Services, args: dict[str, Any]) -> tuple[dict[str, Any], Provenance]:
    """``crossref_search_funders``: an id lookup or a name search, optionally with a funded-works page.

    Funded works (``/funders/{id}/works``) include the registry descendants.

    Raises:
        InvalidInput: bad id, offset ceilings, cursor with works_offset, ``ambiguous_funder``.
        NotFound: ``funder_not_found``. UpstreamError, BudgetExhausted: upstream unusable and nothing stored.
    """
    return search_entities(svc, FUNDERS, args)


def get_member(svc: Services, member_id: int) -> tuple[dict[str, Any], Provenance]:
    """``crossref_get_member`` from the stored ``crossref_member`` entry.

    Raises:
        NotFound: ``member_not_found``. UpstreamError, BudgetExhausted: upstream unusable, nothing stored.
    """
    stored, prov = get_entity(svc, CROSSREF_MEMBER, str(member_id))
    if stored.status != "ok":
        raise NotFound(
            f"no Crossref member with id {member_id}",
            reason="member_not_found",
            hint="Resolve a DOI prefix to its member id with crossref_get_prefix.",
            memberId=member_id,
            cache=prov.as_dict(),
        )
    return member_view(message_of(stored)).model_dump(mode="json", exclude_none=True), prov


def get_prefix(svc: Services, prefix: str) -> tuple[dict[str, Any], Provenance]:
    """``crossref_get_prefix`` from the stored ``crossref_prefix`` entry; a miss names the prefix's RA.

    Raises:
        NotFound: ``prefix_not_found`` (``registrationAgency`` when doi.org names one).
        UpstreamError, BudgetExhausted: upstream unusable, nothing stored.
    """
    deadline = current_deadline(svc.settings.deadline_s)
    stored, prov = get_entity(svc, CROSSREF_PREFIX, prefix, deadline)
    if stored.status != "ok":
        data: dict[str, Any] = {"prefix": prefix, "cache": prov.as_dict()}
        try:
            agency = registration_agency(svc, prefix, deadline)
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
