"""The DataCite answers, assembled from what the lookups learnt (contract ``../shared/spec/datacite.md``).

:func:`work_answer` builds ``datacite_get_work``'s structured content (found arm with its caps, or
the typed miss with guidance), :func:`miss_answer` the miss shared with ``datacite_get_citation``.
Both carry ``cache`` (where the answer came from); nothing here sends a request or reads the store.
"""

from __future__ import annotations

from typing import Any

from syncd.datacite.lookups import Miss, miss_of
from syncd.datacite.rules import WORK_RULES
from syncd.datacite.views import work_view
from syncd.normalize.doi import is_zenodo_doi
from syncd.road.local_first import Lookup
from syncd.store.content import document

__all__ = ["miss_answer", "miss_guidance", "work_answer"]

_SEARCH = "search for it by title with datacite_search_works"


def miss_guidance(miss: Miss, doi: str, *, citation_format: str | None = None) -> str:
    """What to do after a miss (§3): per reason; for a citation of another agency's DOI, where it renders.

    ``citation_format``: the format a ``datacite_get_citation`` call asked for (None for a record).
    """
    if miss.reason == "other_agency":
        agency = miss.agency or "another agency"
        if citation_format is None:
            tail = (
                f' Call crossref_get_work with {{"doi": "{doi}"}} for its Crossref record.'
                if agency.lower() == "crossref"
                else ""
            )
            return (
                f"{doi} is registered with {agency}, not DataCite.{tail} datacite_trace_relations shows "
                "the DataCite records that relate to it."
            )
        accept = _AGENCY_ACCEPT.get(citation_format)
        if accept is not None:
            where = f"ask {agency}'s own content negotiation at https://doi.org/{doi} with Accept: {accept}"
        else:
            where = (
                "only DataCite serves that format; CSL JSON (application/vnd.citationstyles.csl+json) "
                f"from https://doi.org/{doi} is the nearest {agency} serves"
            )
        return (
            f"DataCite cannot format {doi}: it is registered with {agency}. Instead, {where}. "
            "datacite_trace_relations shows the DataCite records that relate to it."
        )
    if miss.reason == "does_not_exist":
        return f"doi.org says {doi} does not exist: check it for typos, or {_SEARCH}."
    if miss.reason == "not_public":
        return (
            f"{doi} is a DataCite DOI without a public record (Registered or Draft state, or registered "
            f"only minutes ago): retry later, or {_SEARCH}."
        )
    return f"doi.org could not say who registered {doi} now: check the DOI, or {_SEARCH}."


_AGENCY_ACCEPT = {
    "text": "text/x-bibliography",
    "csl_json": "application/vnd.citationstyles.csl+json",
    "bibtex": "application/x-bibtex",
    "ris": "application/x-research-info-systems",
}
"""Formats the other agencies' content negotiation serves too, with their Accept type."""


def miss_answer(lookup: Lookup, *, citation_format: str | None = None) -> dict[str, Any]:
    """The typed miss of a stored ``not_found`` work: ``found: false``, reason, agency, guidance, cache."""
    miss = miss_of(lookup.entry)
    data: dict[str, Any] = {"found": False, "doi": lookup.entry.key, "missReason": miss.reason}
    if miss.agency is not None:
        data["registrationAgency"] = miss.agency
    data["guidance"] = miss_guidance(miss, lookup.entry.key, citation_format=citation_format)
    data["cache"] = lookup.provenance.as_dict()
    return data


def work_answer(lookup: Lookup) -> dict[str, Any]:
    """``datacite_get_work``'s structured content for one answered lookup (found arm or typed miss)."""
    if lookup.entry.status != "ok":
        return miss_answer(lookup)
    record, truncated = work_view(document(lookup.entry, WORK_RULES), lookup.entry.key)
    notices: list[str] = []
    if truncated:
        record["truncatedLists"] = truncated
    record_id = is_zenodo_doi(lookup.entry.key)
    if record_id is not None:
        record["zenodoRecordId"] = record_id
        notices.append(
            f"A Zenodo DOI: zenodo_get_record with id {record_id!r} reads Zenodo's own record "
            "(files, versions, access); this is DataCite's metadata of it."
        )
    if lookup.provenance.stale:
        notices.append(
            "This is the last copy syncd stored (DataCite could not be asked now, or only a search "
            "page's fields are held); see cache."
        )
    if notices:
        record["notice"] = " ".join(notices)
    record["cache"] = lookup.provenance.as_dict()
    return record
