"""Zenodo record answers, assembled: the ``zenodo_get_record`` and ``zenodo_list_versions`` contracts.

Both answer misses (unknown id, deleted record with its tombstone, restricted, DOI not on Zenodo)
with ``found: false`` and guidance. The record tools (:mod:`syncd.zenodo.tools_records`) parse their
arguments, call :func:`record_answer` or :func:`versions_answer` and render. Contracts:
``../shared/seeds/zenodo_get_record.txt`` and ``../shared/spec/anchors.md`` §1b.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from syncd.contracts.common import note_normalized
from syncd.doiorg.lookups import registration_agency
from syncd.errors import SyncdError
from syncd.road.services import Services
from syncd.store.content import document
from syncd.zenodo import lookups, lookups_fetch, lookups_pages
from syncd.zenodo import views_lists as lists
from syncd.zenodo import views_pages as pages
from syncd.zenodo.names import ZENODO_VERSIONS
from syncd.zenodo.params import blank, window_check
from syncd.zenodo.params_cursor import CursorState, continuations_for_record, decode_cursor, window_for
from syncd.zenodo.params_id import RecordRef, parse_record_ref
from syncd.zenodo.settings import SECTION
from syncd.zenodo.views import (
    miss_guidance,
    record_parts,
    record_view,
    tombstone_view,
)
from syncd.zenodo.views_citation import render_citation, resolve_style

log = logging.getLogger("syncd.zenodo.queries")

FILE_CAP = 25


def doi_elsewhere(services: Services, doi: str) -> str:
    """The sentence naming the call that reads a DOI no Zenodo record holds.

    Asks the registration agency of the DOI's prefix (doi.org ``/ra/{prefix}``, local-first, one
    request per prefix per ``ttl.entity``): a Crossref DOI gets the exact ``crossref_get_work`` call;
    another agency is named; when the agency cannot be known now, the Crossref call is given as the
    first thing to try.
    """
    call = f'crossref_get_work with {{"doi": "{doi}"}}'
    prefix = doi.split("/", 1)[0]
    try:
        agency = registration_agency(services, prefix)
    except SyncdError:  # doi.org unreachable, budget spent, store unavailable: the hint degrades
        agency = ""
    if agency is None:
        return f"doi.org knows no registration agency for the prefix {prefix}: check the DOI."
    if not agency:
        return f"If it is a Crossref DOI, call {call}."
    if agency.lower() == "crossref":
        return f"It is a Crossref DOI: call {call}."
    return f"It is registered with {agency}, not Zenodo or Crossref; read it at https://doi.org/{doi}."


def named_doi(ref: RecordRef, id: str) -> str:
    """The DOI a ``not_on_zenodo`` answer names (the input's trailing punctuation left out).

    The stripped form when the input carried trailing ``.``/``,``/``;`` (both forms missed), so a
    sentence's period is not glued to the identifier (``DOI 10.1038/nature12373 is not registered``,
    not ``10.1038/nature12373. is``); else the DOI as given, else ``id``.
    """
    return ref.stripped_doi or ref.doi or id


def _not_on_zenodo(services: Services, input_kind: str, doi: str) -> dict[str, Any]:
    """The ``not_on_zenodo`` miss, its guidance ending with the call that reads the DOI elsewhere."""
    data = _miss("not_on_zenodo", input_kind, doi)
    data["guidance"] = f"{data['guidance']} {doi_elsewhere(services, doi)}"
    return data


def _miss(
    kind: str, input_kind: str, ident: str, tombstone_body: str | None = None, *, token: bool = False
) -> dict[str, Any]:
    """A ``found: false`` answer: miss kind, guidance, tombstone (deleted) and the envelope.

    The envelope is what every answer of the tool carries (``truncated``/``shown``/``cap``;
    list_versions replaces them with its page fields). ``token``: a Zenodo token is configured (the
    restricted guidance depends on it).
    """
    data: dict[str, Any] = {"found": False, "input_kind": input_kind, "miss_kind": kind}
    data.update(truncated=False, shown=0, cap=FILE_CAP)
    tomb = None
    if kind == "deleted":
        try:
            parsed = json.loads(tombstone_body) if tombstone_body else None
        except ValueError:
            parsed = None
        tomb = tombstone_view(parsed if isinstance(parsed, dict) else None)
        data["tombstone"] = tomb.model_dump(mode="json", exclude_none=True)
    data["guidance"] = miss_guidance(kind, ident, tomb, token=token)
    return data


def _last_known(known: lookups_fetch.LastKnown) -> dict[str, Any]:
    """The ``last_known`` block of a deleted record's miss: its last stored metadata, marked as such."""
    stored_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(known.fetched_at))
    return {
        "note": "Zenodo has deleted this record (see tombstone); this is the last metadata syncd stored "
        f"of it, fetched {stored_at}, kept for reference only: it is not current.",
        "stored_at": stored_at,
        "record": record_view(known.body).model_dump(mode="json", exclude_none=True),
    }


def _found(
    services: Services,
    ref: RecordRef,
    lookup: lookups.RecordLookup,
    state: CursorState | None,
    style: str | None,
) -> dict[str, Any]:
    """The answer for a readable record: the record (or the cursor's window), notices, citation."""
    entry = lookup.entry
    body = document(entry)
    binding = (entry.content_hash or "")[:16]
    parts, description = record_parts(body)
    data: dict[str, Any] = {
        "found": True,
        "input_kind": ref.input_kind,
        "resolved_from": lookup.resolved_from or "version",
    }
    if state is not None:
        window, conts, cap = window_for(state, parts, description, binding)
        data["window"] = window.model_dump(mode="json", exclude_none=True)
        data["shown"], data["cap"], data["truncated"] = window.shown, cap, bool(conts)
        if conts:
            data["continuations"] = [c.model_dump(mode="json", exclude_none=True) for c in conts]
    else:
        _record_answer(data, body, parts, description, binding)
        _name_latest(services, data["record"])
    if lookup.notes:  # the concept route missed: the latest live version, said so
        data["notice"] = " ".join(filter(None, [data.get("notice"), *lookup.notes]))
    if style is not None:
        data["citation"] = render_citation(body, style)
        data["citation_style"] = style
    return data


def _not_readable(services: Services, ref: RecordRef, lookup: lookups.RecordLookup) -> dict[str, Any]:
    """The miss answer for a stored deleted, unknown or restricted record (with its last good copy)."""
    entry = lookup.entry
    kind = {"gone": "deleted", "not_found": "not_found", "restricted": "restricted"}[entry.status]
    data = _miss(
        kind,
        ref.input_kind,
        entry.key,
        entry.body,
        token=SECTION.of(services.settings).token is not None,
    )
    if lookup.last_known is not None:
        data["last_known"] = _last_known(lookup.last_known)
    return data


def _name_latest(services: Services, record: dict[str, Any]) -> None:
    """Name the newest version in ``record.versions.latest_recid`` of a version that is not the latest.

    Only when the body does not (RDM bodies never do): :func:`~syncd.zenodo.lookups.latest_of_series`.
    Left out when it cannot be known now; the answer never fails for it.
    """
    versions = record.get("versions")
    if (
        not isinstance(versions, dict)
        or versions.get("is_latest") is not False
        or versions.get("latest_recid")
    ):
        return
    latest = lookups.latest_of_series(services, str(record["recid"]), record.get("concept_recid"))
    if latest:
        versions["latest_recid"] = latest


def _record_answer(
    data: dict[str, Any], body: dict[str, Any], parts: Any, description: str, binding: str
) -> None:
    view = record_view(body)
    record = view.model_dump(mode="json", exclude_none=True)
    data["record"] = record
    files = record.get("files") or {}
    total = files.get("count")
    shown = files.get("shown", len(files.get("entries") or []))
    conts = continuations_for_record(parts, description, binding)
    data["shown"], data["cap"] = shown, FILE_CAP
    data["truncated"] = bool((total is not None and total > shown) or conts)
    if conts:
        data["continuations"] = [c.model_dump(mode="json", exclude_none=True) for c in conts]
    access = record.get("access") or {}
    if access.get("files") in ("restricted",) or access.get("embargo_active"):
        until = access.get("embargo_until")
        data["notice"] = (
            f"Files are embargoed until {until}; metadata only."
            if access.get("embargo_active") and until
            else "Files are restricted; metadata only."
        )
    elif total is not None and total > shown:
        data["notice"] = f"Showing {shown} of {total:,} files; page the rest with zenodo_list_files."


def _versions_listing(
    services: Services, ref: RecordRef, id: str, window: tuple[int, int]
) -> lookups_pages.PageLookup | tuple[dict[str, Any], str]:
    """The version listing of ``ref``'s series, or the miss answer and its title.

    The listing of the stored concept's latest version (or of ``ref``) is read first; when it is
    missing or empty the record is looked up, and a record that cannot be read gives the miss answer.
    """
    page, size = window
    params = {"page": str(page), "size": str(size), "sort": "version"}
    target = (lookups.held_latest(services, ref.recid) if ref.recid else None) or ref.recid
    listing = None
    if target is not None:
        listing = lookups_pages.get_page(services, ZENODO_VERSIONS, f"/records/{target}/versions", params)
    if listing is not None and listing.body is not None and pages.hits_total(listing.body) != 0:
        return listing
    try:
        lookup = lookups.get_record(services, ref)
    except lookups.NotOnZenodo as exc:
        data = _not_on_zenodo(services, ref.input_kind, named_doi(ref, id))
        data.update(pages.no_versions_fields(page, size))
        data["cache"] = exc.provenance.as_dict()
        return data, f"Versions of {id}: not on Zenodo"
    entry = lookup.entry
    if entry.status != "ok":
        kind = {"gone": "deleted", "not_found": "not_found", "restricted": "restricted"}[entry.status]
        data = _miss(
            kind,
            ref.input_kind,
            entry.key,
            entry.body,
            token=SECTION.of(services.settings).token is not None,
        )
        data.update(pages.no_versions_fields(page, size))
        data["cache"] = lookup.provenance.as_dict()
        return data, f"Versions of {id}: {kind}"
    if entry.key != target or listing is None or listing.body is None:
        listing = lookups_pages.get_page(services, ZENODO_VERSIONS, f"/records/{entry.key}/versions", params)
    return listing


def _series(services: Services, ref: RecordRef, raw: list[dict[str, Any]], total: int) -> dict[str, Any]:
    """The series fields: from the first listed version, or (a page past the end) from the record.

    On a page past the end the listing has already answered (its total and notice): the record only
    adds the series fields, so a record that cannot be read now (a body that is not a record, Zenodo
    or the budget unusable, a miss) leaves them out instead of failing the page, as the anchor answers
    that page from ``/versions`` and ``/versions/latest`` alone.
    """
    if raw:
        parts, _ = record_parts(raw[0])
        return pages.series_fields(parts, with_latest=False)
    if not total:
        return {}
    stored = lookups.held_record(services, ref)  # local first
    if stored is None:
        try:
            stored = lookups.get_record(services, ref).entry
        except SyncdError as exc:
            log.info("event=versions_series_unread id=%s reason=%s", ref.recid or ref.doi, exc.reason)
            return {}
    if stored.status != "ok":
        return {}
    parts, _ = record_parts(document(stored))
    return pages.series_fields(parts, with_latest=True)


# ---------------------------------------------------------------------------------------- get_record


def record_answer(
    services: Services,
    id: str,
    cursor: str | None = None,
    citation_style: str | None = None,
) -> dict[str, Any]:
    """The ``zenodo_get_record`` answer for ``id``: the record, the cursor's window, or a miss.

    A miss (unknown id, deleted, restricted, DOI not on Zenodo) is ``found: false`` with guidance.

    Raises:
        SyncdError: a declared failure (invalid_identifier, invalid_cursor, record_unavailable, ...).
    """
    style = resolve_style(citation_style) if citation_style is not None and blank(citation_style) else None
    state = decode_cursor(cursor) if cursor is not None and blank(cursor) else None
    ref = parse_record_ref(id)
    try:
        lookup = lookups.get_record(services, ref)
    except lookups.NotOnZenodo as exc:
        data = _not_on_zenodo(services, ref.input_kind, named_doi(ref, id))
        data["cache"] = exc.provenance.as_dict()
    else:
        if lookup.entry.status == "ok":
            data = _found(services, ref, lookup, state, style)
        else:
            data = _not_readable(services, ref, lookup)
        data["cache"] = lookup.provenance.as_dict()
    return note_normalized(data, ref.normalized_from)


def versions_answer(services: Services, id: str, page: int = 1, size: int = 25) -> tuple[dict[str, Any], str]:
    """The ``zenodo_list_versions`` answer for ``id`` and its heading (a miss: ``found: false``).

    Raises:
        SyncdError: a declared failure (invalid_identifier, result_window_exceeded, ...).
    """
    ref = parse_record_ref(id)
    window_check(page, size)
    listing = _versions_listing(services, ref, id, (page, size))
    if isinstance(listing, tuple):  # the record cannot be read: found false
        return listing
    body = listing.body or {}
    raw = [h for h in (body.get("hits") or {}).get("hits") or [] if isinstance(h, dict)]
    versions = [lists.version_entry(h) for h in raw]
    total = pages.hits_total(body)
    series = _series(services, ref, raw, total)
    data: dict[str, Any] = {"found": True, "input_kind": ref.input_kind}
    data.update({k: v for k, v in series.items() if k != "latest_recid"})
    data["total_versions"] = total
    latest = series.get("latest_recid") or next((v.recid for v in versions if v.is_latest), None)
    if latest is None and page == 1 and versions:
        latest = versions[0].recid
    if latest is None and total:  # a later page, or past the end: Zenodo's versions/latest says
        stored = None if versions else lookups.held_record(services, ref)
        asked = versions[0].recid if versions else (stored.key if stored is not None else ref.recid)
        concept = data.get("concept_recid")
        if asked:
            latest = lookups.latest_of_series(
                services, asked, str(concept) if concept else None, name_itself=True
            )
    if latest:
        data["latest_recid"] = latest
    data.update(pages.versions_fields(total, page, size, versions))
    data["cache"] = listing.provenance.as_dict()
    return data, f"Versions of {id}"
