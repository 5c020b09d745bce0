"""Zenodo search answers, assembled: the ``zenodo_search_records`` and ``zenodo_lookup_vocabulary`` contracts.

A search Zenodo cannot answer is answered from the full-text index over stored records
(``local: true`` and a notice); vocabulary pages are cached entries. The search tools
(:mod:`syncd.zenodo.tools_search`) call :func:`search_answer` or :func:`vocabulary_answer` and render.
"""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import quote

from syncd.errors import (
    BudgetExhausted,
    InvalidInput,
    UpstreamError,
    UpstreamRejected,
)
from syncd.road import policy
from syncd.road.local_first import Lookup
from syncd.road.services import Services
from syncd.store.content import document
from syncd.store.repo import StoredEntry
from syncd.zenodo import lookups, lookups_pages, lookups_terms
from syncd.zenodo import params as zenodo_params
from syncd.zenodo import views_lists as lists
from syncd.zenodo import views_pages as pages
from syncd.zenodo.args import SearchRecordsArgs
from syncd.zenodo.client import LEGACY_JSON
from syncd.zenodo.names import ZENODO_AWARD, ZENODO_ENTITY, ZENODO_FUNDER, ZENODO_SEARCH, ZENODO_VOCAB
from syncd.zenodo.params import blank, window_check
from syncd.zenodo.views import record_parts

log = logging.getLogger("syncd.zenodo.queries_search")

# ------------------------------------------------------------------------------------ search_records

_COMMUNITY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")


def _community_uuid(services: Services, raw: str) -> str:
    slug = re.sub(r"^(?:https?://)?(?:www\.)?zenodo\.org/communities/", "", raw.strip()).strip("/")
    if not _COMMUNITY.match(slug):
        raise InvalidInput(
            f"community {raw!r} is not a slug, UUID or community URL", reason="invalid_parameter"
        )
    for candidate in dict.fromkeys((slug, slug.lower())):
        page = lookups_pages.get_page(
            services, ZENODO_ENTITY, f"/communities/{quote(candidate)}", {}, accept=LEGACY_JSON
        )
        if page.body and page.body.get("id"):
            return str(page.body["id"])
    raise InvalidInput(
        f"no Zenodo community {raw!r}",
        reason="unknown_community",
        hint="Find the slug with zenodo_lookup_vocabulary vocabulary=communities.",
    )


def _unknown_funder_name(services: Services, name: str) -> InvalidInput:
    """``unknown_funder`` for a funder given by name, with candidates (never picked automatically).

    Candidates (``{name, id}``, at most 3, ``matchedTotal``) come from Zenodo's funders vocabulary
    (``GET /funders?q=<name>&page=1&size=3``, a stored page); when Zenodo cannot be used, from the
    funders stored earlier (full-text index over their names).
    """
    candidates: list[dict[str, str]] = []
    total: int | None = None
    try:
        page = lookups_pages.get_page(
            services,
            ZENODO_VOCAB,
            "/funders",
            {"q": pages.escape_vocabulary_query(name), "page": "1", "size": "3"},
            accept=LEGACY_JSON,
        )
        body = page.body or {}
        total = pages.hits_total(body)
        for hit in (body.get("hits") or {}).get("hits") or []:
            entry = lists.vocabulary_entry("funders", hit) if isinstance(hit, dict) else {}
            if entry.get("ror_id"):
                candidates.append({"name": entry.get("label") or entry["ror_id"], "id": entry["ror_id"]})
    except (UpstreamError, BudgetExhausted):
        terms = " ".join(re.findall(r"\w+", name))
        stored = lookups_terms.stored_terms(services, ZENODO_FUNDER, terms, limit=3)
        candidates = [{"name": e.title or e.key, "id": e.key} for e in stored]
    listed = "; ".join(f"{c['name']} ({c['id']})" for c in candidates)
    more = f" of {total}" if total is not None and total > len(candidates) else ""
    known = f"for you. Candidates{more}: {listed}" if listed else "for you; no funder of that name is known"
    return InvalidInput(
        f"funder {name!r} is a name; Zenodo filters funders by ROR id and a name is never picked {known}",
        reason="unknown_funder",
        hint="Pass a candidate's ROR id (or its Funder DOI) as funder; zenodo_lookup_vocabulary "
        f"vocabulary=funders query={name!r} lists more.",
        candidates=candidates,
        matchedTotal=total,
    )


def _funder_lookup(services: Services, raw: str) -> Lookup:
    """The funder ``raw`` names: a ROR id (``GET /funders/{ror}``) or a Funder DOI (the vocabulary).

    Both are stored funder entities: a repeat, or a DOI of a funder stored any way, asks nothing.

    Raises:
        InvalidInput: ``unknown_funder`` (no such funder; a name, with candidates),
            ``invalid_parameter`` (a DOI or URL that is no funder id).
        UpstreamError, BudgetExhausted: nothing stored answers and Zenodo cannot be used.
    """
    ref = zenodo_params.funder_ref(raw)
    if ref.kind == "name":
        raise _unknown_funder_name(services, ref.value)
    if ref.kind == "id":
        found: Lookup | None = lookups_terms.get_term(services, ZENODO_FUNDER, ref.value)
    else:
        found = lookups.term_by_identifier(services, ZENODO_FUNDER, ref.value)
    if found is not None and found.entry.status == "ok":
        return found
    raise InvalidInput(
        f"no Zenodo funder {raw!r}",
        reason="unknown_funder",
        hint="Find the funder with zenodo_lookup_vocabulary vocabulary=funders "
        "(names are never auto-picked).",
    )


def _funder_ror(services: Services, raw: str) -> str:
    """The ROR id Zenodo indexes for the funder ``raw`` (see :func:`_funder_lookup`)."""
    return _funder_lookup(services, raw).entry.key


def _award_id(services: Services, raw: str) -> str:
    """The award as Zenodo indexes it: its award id ``<ror>::<number>``, or a bare grant number.

    A DOI (CORDIS ``10.3030/...``) or URL is resolved through the awards vocabulary
    (``identifiers.identifier``; stored award entities first). When Zenodo cannot be used and nothing
    is stored, a CORDIS DOI becomes ``00k4n6c32::<n>`` (the European Commission; the contract's rule).

    Raises:
        InvalidInput: ``invalid_parameter``, a DOI or URL no award of Zenodo's vocabulary carries.
        UpstreamError, BudgetExhausted: another identifier, nothing stored and Zenodo unusable.
    """
    ref = zenodo_params.award_ref(raw)
    if ref.kind != "identifier":
        return ref.value
    cordis = zenodo_params.cordis_award_id(ref.value)
    try:
        found = lookups.term_by_identifier(services, ZENODO_AWARD, ref.value)
    except (UpstreamError, BudgetExhausted):
        if cordis is None:
            raise
        return cordis
    if found is not None and found.entry.status == "ok":
        return found.entry.key
    if cordis is not None:
        return cordis
    raise InvalidInput(
        f"no award in Zenodo's vocabulary has the identifier {raw!r}",
        reason="invalid_parameter",
        hint="Find the award id with zenodo_lookup_vocabulary vocabulary=awards (number or acronym), "
        "or pass the bare grant number.",
    )


def _offline_funder_ror(services: Services, raw: str) -> str | None:
    """The ROR id of the funder ``raw`` with no request, or None (a name, a Funder DOI not stored).

    A ROR id (or URL) is its own; a Funder DOI maps to the ROR id of a stored funder entity carrying it.
    """
    try:
        ref = zenodo_params.funder_ref(raw)
    except InvalidInput:
        return None
    if ref.kind == "id":
        return ref.value
    if ref.kind != "identifier":
        return None
    return lookups_terms.stored_term_key(services, ZENODO_FUNDER, ref.value)


def _search_params(
    services: Services,
    req: zenodo_params.SearchRequest,
    filters: tuple[str | None, str | None],
    all_versions: bool,
    window: tuple[int, int],
    types_table: lists.ResourceTypeTable | None,
) -> tuple[str | None, dict[str, str]]:
    """Zenodo's ``q`` and the request parameters.

    ``filters`` are the funder's ROR id (already resolved) and the community as given (looked up here);
    ``types_table`` the resource-type vocabulary ``req.types`` were checked against (None: built-in).
    """
    funder_id, community = filters
    award = _award_id(services, req.award) if req.award else None
    q = lists.compose_query(
        req.query,
        resource_types=req.types,
        funder=funder_id,
        award=award,
        creator_orcid=req.orcid,
        types_table=types_table,
        file_types=req.file_types,
        license=req.license,
        access_status=req.access,
        published_from=req.published_from,
        published_to=req.published_to,
    )
    params = {"sort": req.sort, "page": str(window[0]), "size": str(window[1])}
    if q:
        params["q"] = q
    if all_versions:
        params["all_versions"] = "true"
    if blank(community):
        params["communities"] = _community_uuid(services, community or "")
    return q, params


_NEEDS_ZENODO = ("award", "creator_orcid", "community", "file_type")
"""Search filters the offline answer cannot apply (the stored hits do not carry what they match)."""


def _unapplied_offline(filters: list[str], funder_applied: bool) -> list[str]:
    """The given ``filters`` (``name=value``) the offline answer cannot apply, in their order.

    A funder is among them only when its ROR id is not known without Zenodo (said so).
    """
    out = []
    for given in filters:
        name = given.split("=", 1)[0]
        if name in _NEEDS_ZENODO:
            out.append(given)
        elif name == "funder" and not funder_applied:
            out.append(f"{given} (no stored funder gives its ROR id)")
    return out


def _local_search(
    services: Services,
    exc: UpstreamError | BudgetExhausted,
    req: zenodo_params.SearchRequest,
    all_versions: bool,
    window: tuple[int, int],
    funder: tuple[str | None, list[str]],
) -> dict[str, Any]:
    """The offline answer: stored records from the full-text index, filtered locally, paged.

    ``funder`` is the funder's ROR id when known (then only records whose funding names it are kept:
    ``metadata.funding[].funder.id``, or a legacy grant's id) and the filters given that cannot be
    applied offline (``name=value``, named in the notice).
    """
    page, size = window
    funder_id, unapplied = funder
    entries: list[StoredEntry] = []
    hits: list[Any] = []
    funded: list[frozenset[str]] = []
    for entry in lookups_pages.local_search(services, req.query or ""):
        try:
            body = document(entry)
            hit = lists.search_hit(body)
            funders = (
                frozenset(f.funder_id for f in record_parts(body)[0].funding or [] if f.funder_id)
                if funder_id
                else frozenset()
            )
        except Exception:  # a stored body that does not normalize is skipped
            continue
        entries.append(entry)
        hits.append(hit)
        funded.append(funders)
    kept = pages.local_matches(hits, req, all_versions)
    if funder_id:
        kept = [i for i in kept if funder_id in funded[i]]
    matched = [(entries[i], hits[i].model_dump(mode="json", exclude_none=True)) for i in kept]
    if req.sort in ("newest", "oldest"):
        matched.sort(key=lambda m: m[1].get("publication_date") or "", reverse=req.sort == "newest")
    shown = matched[(page - 1) * size : page * size]
    data = pages.page_fields(len(matched), page, size, [h for _, h in shown], "hits")
    data.update(appliedSort=req.sort, allVersions=bool(all_versions), local=True)
    data["notice"] = pages.local_notice(exc.reason, len(matched), funder_id, unapplied)
    prov = policy.from_many((e.fetched_at for e, _ in shown), (e.validated_at for e, _ in shown), exc.reason)
    data["cache"] = prov.as_dict()
    return data


# ----------------------------------------------------------------------------------- lookup_vocabulary


RESOURCE_TYPES_PATH = "/vocabularies/resourcetypes"
_RESOURCE_TYPE_PAGES = 4
"""Pages of 25 asked for the resource-type vocabulary (Zenodo lists 43 entries)."""


def _resource_types(services: Services) -> tuple[lists.ResourceTypeTable, dict[str, Any]]:
    """Zenodo's resource-type vocabulary and its provenance, local-first.

    ``GET /vocabularies/resourcetypes?page=N&size=25`` pages are stored ``zenodo_vocab`` entries
    (``ttl.entity``), so the table is refreshed from Zenodo about weekly and asked nothing in between.
    When no complete listing can be had (Zenodo unreachable, nothing stored, an unreadable page), the
    static table of :data:`~syncd.zenodo.views_lists.RESOURCE_TYPES` answers (``source`` store).
    """
    entries: list[tuple[str, str, str | None]] = []
    provenance: dict[str, Any] | None = None
    complete = False
    try:
        for number in range(1, _RESOURCE_TYPE_PAGES + 1):
            found = lookups_pages.get_page(
                services, ZENODO_VOCAB, RESOURCE_TYPES_PATH, {"page": str(number), "size": "25"},
                accept=LEGACY_JSON,
            )  # fmt: skip
            if found.body is None:
                break
            listed = lists.resource_types_from(found.body)
            entries += listed
            provenance = provenance or found.provenance.as_dict()
            complete = len(entries) >= pages.hits_total(found.body)
            if complete or not listed:
                break
    except (UpstreamError, BudgetExhausted) as exc:
        log.info("event=resource_types_static reason=%s", exc.reason)
    if complete and entries and provenance is not None:
        return lists.resource_type_table(sorted(set(entries))), provenance
    return lists.RESOURCE_TYPE_IDS, policy.now_from("store").as_dict()


def _stored_resource_types(services: Services) -> lists.ResourceTypeTable | None:
    """Zenodo's resource-type vocabulary as stored (fresh or stale), asking nothing; None if none is.

    The pages :func:`_resource_types` stores; only a complete listing counts.
    """
    entries: list[tuple[str, str, str | None]] = []
    for number in range(1, _RESOURCE_TYPE_PAGES + 1):
        body = lookups_pages.stored_page(
            services, ZENODO_VOCAB, RESOURCE_TYPES_PATH, {"page": str(number), "size": "25"},
            accept=LEGACY_JSON,
        )  # fmt: skip
        if body is None:
            return None
        listed = lists.resource_types_from(body)
        entries += listed
        if entries and len(entries) >= pages.hits_total(body):
            return lists.resource_type_table(sorted(set(entries)))
        if not listed:
            return None
    return None


def _term_page(services: Services, vocab: str, query: str) -> tuple[int, list[Any], dict[str, Any]] | None:
    """A funders/awards query that is an id answers that one entry (stored entities first), else None.

    Funders: a ROR id or URL, or a Funder DOI in any form. Awards: an award id ``<ror>::<number>``, an
    award DOI (CORDIS ``10.3030/...``) or URL. Plain text (a name, a number) is None: a text search.
    """
    kind = ZENODO_FUNDER if vocab == "funders" else ZENODO_AWARD
    try:
        ref = zenodo_params.funder_ref(query) if vocab == "funders" else zenodo_params.award_ref(query)
    except InvalidInput:
        return None
    if ref.kind in ("name", "number"):
        return None
    if ref.kind == "id":
        found: Lookup | None = lookups_terms.get_term(services, kind, ref.value)
    else:
        found = lookups.term_by_identifier(services, kind, ref.value)
    if found is None or found.entry.status != "ok":
        prov = (found.provenance if found else policy.now_from("upstream")).as_dict()
        return 0, [], prov
    return 1, [lists.vocabulary_entry(vocab, document(found.entry))], found.provenance.as_dict()


def _vocabulary_page(
    services: Services, vocab: str, query: str | None, funder: str | None, window: tuple[int, int]
) -> tuple[int, list[Any], dict[str, Any]]:
    """``(total, entries, cache)`` of one page of a vocabulary: the local table or a cached Zenodo page."""
    page, size = window
    if vocab == "resource_types":
        table, provenance = _resource_types(services)
        rows = pages.resource_type_rows(query, table)
        return len(rows), rows[(page - 1) * size : page * size], provenance
    single = _term_page(services, vocab, query) if query and vocab in ("funders", "awards") else None
    if single is not None:
        total, entries, provenance = single
        return total, entries if page == 1 else [], provenance
    params = {"page": str(page), "size": str(size)}
    if query:
        params["q"] = pages.escape_vocabulary_query(query)
    if blank(funder):
        params["funders"] = _funder_ror(services, funder or "")
    found = lookups_pages.get_page(
        services, ZENODO_VOCAB, pages.VOCAB_PATHS[vocab], params, accept=LEGACY_JSON
    )
    body = found.body or {}
    hits = [h for h in (body.get("hits") or {}).get("hits") or [] if isinstance(h, dict)]
    entries = [lists.vocabulary_entry(vocab, h) for h in hits]
    return pages.hits_total(body), entries, found.provenance.as_dict()


def search_answer(services: Services, args: SearchRecordsArgs) -> tuple[dict[str, Any], str]:
    """The ``zenodo_search_records`` answer (Zenodo's page, or the local mirror's) and its heading.

    Raises:
        SyncdError: a declared failure (query_syntax, unknown_funder, result_window_exceeded, ...).
    """
    funder, award, community, creator_orcid = args.funder, args.award, args.community, args.creator_orcid
    all_versions, page, size = args.all_versions, args.page, args.size
    types_table = _stored_resource_types(services)
    req = zenodo_params.search_request(
        args.query, args.resource_type, args.file_type, args.license, args.access_status,
        args.published_from, args.published_to, creator_orcid, award, args.sort, page, size,
        types_table=types_table,
    )  # fmt: skip
    filters = pages.narrowing_filters(req, award, creator_orcid, community, funder)
    funder_id: str | None = None
    try:
        funder_id = _funder_ror(services, funder) if funder is not None and blank(funder) else None
        q, params = _search_params(
            services, req, (funder_id, community), all_versions, (page, size), types_table
        )
        found = lookups_pages.get_page(services, ZENODO_SEARCH, "/records", params)
    except (UpstreamError, BudgetExhausted) as exc:
        if isinstance(exc, UpstreamRejected):
            raise
        if blank(funder) and funder_id is None:
            funder_id = _offline_funder_ror(services, funder or "")
        unapplied = _unapplied_offline(filters, funder_id is not None)
        data = _local_search(services, exc, req, all_versions, (page, size), (funder_id, unapplied))
        return data, f"Zenodo search (local mirror): {req.query or 'all stored records'}"
    data = pages.search_page(found.body or {}, req, (page, size), all_versions, q, filters)
    data["cache"] = found.provenance.as_dict()
    return data, f"Zenodo search: {q or 'all records'}"


def vocabulary_answer(
    services: Services,
    vocabulary: str,
    query: str | None = None,
    funder: str | None = None,
    page: int = 1,
    size: int = 10,
) -> tuple[dict[str, Any], str]:
    """The ``zenodo_lookup_vocabulary`` answer (one page of a vocabulary) and its heading.

    Raises:
        SyncdError: a declared failure (invalid_parameter, funder_only_for_awards, ...).
    """
    vocab = pages.VOCABS.get(lists.fold(vocabulary))
    if vocab is None:
        raise InvalidInput(
            "vocabulary must be communities, funders, awards, licenses or resource_types",
            reason="invalid_parameter",
        )
    query = blank(query)
    if blank(funder) and vocab != "awards":
        raise InvalidInput("funder narrows awards only", reason="funder_only_for_awards")
    window_check(page, size)
    data: dict[str, Any] = {"vocabulary": vocab}
    if query:
        data["query"] = query
    total, entries, provenance = _vocabulary_page(services, vocab, query, funder, (page, size))
    paged = pages.page_fields(total, page, size, entries, "entries")
    paged.pop("reachable")
    data.update(paged)
    notice = pages.vocabulary_notice(vocab, total, query, (page, size), len(entries), data["has_more"])
    if notice:
        data["notice"] = notice
    data["cache"] = provenance
    return data, f"Zenodo {data.get('vocabulary', vocabulary)}: {query or 'browse'}"
