"""DataCite's answer for DOIs other slices learn are DataCite's (``AgencyRecords`` of the services).

``crossref_get_works`` items and ``syncd check`` entries of a DOI doi.org says DataCite registered
carry this summary instead of "another agency" (the composition root hands :func:`agency_records`
to the :class:`~syncd.road.services.Services` bundle as ``agencies["datacite"]``; the Crossref slice never
imports this one). Local-first: the DOIs with no whole stored record are fetched first, 50 per
``query=doi:(a OR b ...)`` request (stored as works), then each DOI not just fetched is read
through :func:`syncd.datacite.lookups.get_work` (the store, its TTL, doi.org's classified miss for one
DataCite does not hold, asked right after the batch left it out). Within the running call's
deadline: once it is spent, the rest are ``upstream_unavailable`` items, answered from the store
when stored.

A found summary: ``{agency: "DataCite", found: true, doi, title?, resourceTypeGeneral?,
resourceType?, publicationYear?, state?, publisher?, repositoryId?, relatedDois[{relationType,
doi}] (at most 20, of relatedDoiCount), zenodoRecordId?, notice?, cache}``; a miss: ``{agency,
found: false, doi, missReason, cache}``; a failure: ``{agency, found: false, doi, reason}``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from syncd.datacite import lookups
from syncd.datacite.client import BATCH_MAX
from syncd.datacite.lookups import miss_of
from syncd.datacite.params import parse_datacite_doi
from syncd.datacite.queries_trace_graph import target
from syncd.datacite.rules import WORK_RULES
from syncd.datacite.views import client_of, first_title, publication_year
from syncd.errors import BudgetExhausted, NotFound, SyncdError, UpstreamError
from syncd.normalize.doi import is_zenodo_doi
from syncd.road.local_first import Lookup
from syncd.road.services import Services
from syncd.store.content import document
from syncd.store.repo import StoredEntry
from syncd.upstream.http import current_deadline

__all__ = ["AGENCY", "RELATED_SHOWN", "agency_records", "summary"]

log = logging.getLogger("syncd.datacite.agency")

AGENCY = "DataCite"
"""The agency name the summaries carry (doi.org's spelling)."""
RELATED_SHOWN = 20
"""DOI-typed related identifiers listed per summary (``relatedDoiCount`` gives them all)."""


def _related(doc: dict[str, Any]) -> list[dict[str, str]]:
    """The record's related identifiers that are DOIs (bare, lower-cased), in deposit order, once each."""
    out: list[dict[str, str]] = []
    for r in doc.get("relatedIdentifiers") or []:
        relation, value = (r or {}).get("relationType"), (r or {}).get("relatedIdentifier")
        if not (isinstance(relation, str) and isinstance(value, str) and value.strip()):
            continue
        ident, kind = target(value, r.get("relatedIdentifierType"))
        entry = {"relationType": relation, "doi": ident}
        if kind == "DOI" and entry not in out:
            out.append(entry)
    return out


def summary(lookup: Lookup) -> dict[str, Any]:
    """The summary of one answered DataCite lookup (found or the classified miss), with its ``cache``."""
    key = lookup.entry.key
    if lookup.entry.status != "ok":
        return {
            "agency": AGENCY,
            "found": False,
            "doi": key,
            "missReason": miss_of(lookup.entry).reason,
            "cache": lookup.provenance.as_dict(),
        }
    doc = document(lookup.entry, WORK_RULES) or {}
    types = doc.get("types") or {}
    client = client_of(doc)
    publisher = doc.get("publisher")
    related = _related(doc)
    data: dict[str, Any] = {
        "agency": AGENCY,
        "found": True,
        "doi": key,
        "title": first_title(doc),
        "resourceTypeGeneral": types.get("resourceTypeGeneral"),
        "resourceType": types.get("resourceType"),
        "publicationYear": publication_year(doc.get("publicationYear")),
        "state": doc.get("state"),
        "publisher": publisher.get("name") if isinstance(publisher, dict) else publisher,
        "repositoryId": client.get("repositoryId") if client else None,
        "relatedDois": related[:RELATED_SHOWN] or None,
        "relatedDoiCount": len(related) if len(related) > RELATED_SHOWN else None,
    }
    record_id = is_zenodo_doi(key)
    if record_id is not None:
        data["zenodoRecordId"] = record_id
        data["notice"] = f"A Zenodo DOI: zenodo_get_record with id {record_id!r} reads Zenodo's own record."
    data["cache"] = lookup.provenance.as_dict()
    return {k: v for k, v in data.items() if v is not None and v != ""}


def agency_records(svc: Services, dois: Sequence[str]) -> dict[str, dict[str, Any]]:
    """DataCite's summary of each of ``dois`` by lower-cased DOI (see the module docstring). Never raises."""
    deadline = current_deadline(svc.settings.deadline_s)
    keys = list(dict.fromkeys(d.strip().lower() for d in dois if d.strip()))
    unheld = [k for k in keys if (e := lookups.stored_work(svc, k)) is None or lookups.is_partial(e)]
    fetched: dict[str, StoredEntry] = {}
    for i in range(0, len(unheld), BATCH_MAX):
        if deadline.expired():
            break
        chunk = unheld[i : i + BATCH_MAX]
        try:
            fetched.update(lookups.fetch_works(svc, chunk, deadline))
        except (NotFound, UpstreamError, BudgetExhausted) as exc:
            log.info("event=agency_batch_failed size=%d reason=%s", len(chunk), exc.reason)
            break
        for key in (k for k in chunk if k not in fetched):
            try:  # doi.org says why (unclassified: asked again later)
                fetched[key] = lookups.store_miss(svc, key, deadline)
            except SyncdError as exc:
                log.info("event=agency_miss_unstored doi=%s reason=%s", key, exc.reason)
    out: dict[str, dict[str, Any]] = {}
    for key in keys:
        try:
            lookup = (
                lookups.fetched_now(fetched[key])
                if key in fetched
                else lookups.get_work(svc, parse_datacite_doi(key), deadline)
            )
        except SyncdError as exc:
            out[key] = {"agency": AGENCY, "found": False, "doi": key, "reason": exc.reason}
            continue
        out[key] = summary(lookup)
    return out
