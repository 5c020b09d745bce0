"""The pydantic contract models of the DataCite tools (``../shared/spec/datacite.md`` §2, §3).

Field names, arms and enrichment keys are the contract's; syncd adds ``cache`` (provenance) and
``error`` through :class:`~syncd.contracts.common.WithCache`, and ``state``/``partial``/``local``/
``zenodoRecordId`` where it says more than the anchor. Every model refuses unknown keys, so an
answer that drifts from the contract fails the tests (tests/schema_check.py).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

__all__ = [
    "CitationView",
    "MissReason",
    "ReferenceView",
    "RepositoriesView",
    "SearchWorksView",
    "TraceView",
    "WorkView",
]

MissReason = Literal["not_public", "other_agency", "does_not_exist", "unclassified"]


class _Contract(BaseModel):
    """Base of the contract models: unknown keys are refused, as ``additionalProperties: false``.

    Published one level deep (``wire_depth``, :func:`syncd.contracts.common.wire_depth`): the answer's
    own fields with their types, enums and descriptions; a nested value (a deposit's open objects, the
    ``cache`` block) by its type alone. The models stay the whole contract syncd's tests check.
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)
    wire_depth: ClassVar[int] = 1


class _Open(BaseModel):
    """A nested entry whose keys follow the deposit (refused only when not an object)."""

    model_config = ConfigDict(extra="allow", defer_build=True)


class Repository(_Contract):
    """The record's DataCite repository (client) and its provider."""

    repositoryId: str
    name: str | SkipJsonSchema[None] = None
    providerId: str | SkipJsonSchema[None] = None


class Truncated(_Contract):
    """One list a display cap bound: ``shown`` of ``total``."""

    field: str
    shown: int
    total: int


class _Miss(_Contract):
    """The typed miss (§3): why DataCite holds no public record, and who does."""

    found: bool | SkipJsonSchema[None] = Field(None, description="True when DataCite holds the record.")
    doi: str | SkipJsonSchema[None] = Field(None, description="The DOI asked for, lower-cased.")
    missReason: MissReason | SkipJsonSchema[None] = Field(
        None,
        description="Miss only: not_public (DataCite's DOI, Registered/Draft or just registered), "
        "other_agency, does_not_exist, unclassified (doi.org did not answer).",
    )
    registrationAgency: str | SkipJsonSchema[None] = Field(
        None, description="Miss only: the agency doi.org names (Crossref, mEDRA, DataCite, ...)."
    )
    guidance: str | SkipJsonSchema[None] = Field(None, description="Miss only: what to do next.")
    zenodoRecordId: str | SkipJsonSchema[None] = Field(
        None, description="A Zenodo DOI: the record id zenodo_get_record reads (Zenodo's own view)."
    )
    notice: str | SkipJsonSchema[None] = Field(None, description="Caps, stale copies, other notes.")


class WorkView(_Miss):
    """``datacite_get_work``: the found arm (``found: true``, every list key) or the miss arm."""

    doiUrl: str | SkipJsonSchema[None] = Field(None, description="Resolver URL, percent-encoded.")
    landingUrl: str | SkipJsonSchema[None] = Field(None, description="The landing page (url).")
    contentUrls: list[str] | SkipJsonSchema[None] = Field(None, description="Direct content URLs.")
    titles: list[_Open] | SkipJsonSchema[None] = Field(None, description="{title, titleType?, lang?}.")
    creators: list[_Open] | SkipJsonSchema[None] = Field(
        None,
        description="{name, nameType?, givenName?, familyName?, orcid?, otherIdentifiers, affiliations}.",
    )
    contributors: list[_Open] | SkipJsonSchema[None] = Field(
        None, description="As creators, with contributorType."
    )
    publisher: _Open | SkipJsonSchema[None] = Field(None, description="{name, rorId?}.")
    publicationYear: int | SkipJsonSchema[None] = Field(None, description="Publication year.")
    resourceTypeGeneral: str | SkipJsonSchema[None] = Field(None, description="types.resourceTypeGeneral.")
    resourceType: str | SkipJsonSchema[None] = Field(None, description="types.resourceType.")
    version: str | SkipJsonSchema[None] = Field(None, description="Version as deposited.")
    language: str | SkipJsonSchema[None] = Field(None, description="Language as deposited.")
    dates: list[_Open] | SkipJsonSchema[None] = Field(None, description="{date, dateType, dateInformation?}.")
    subjects: list[_Open] | SkipJsonSchema[None] = Field(
        None, description="{subject, scheme?, classificationCode?}."
    )
    descriptions: list[_Open] | SkipJsonSchema[None] = Field(
        None, description="{description, descriptionType?}."
    )
    fundingReferences: list[_Open] | SkipJsonSchema[None] = Field(None, description="{funderName, ...}.")
    geoLocations: list[_Open] | SkipJsonSchema[None] = Field(None, description="{place?, point?, box?}.")
    rights: list[_Open] | SkipJsonSchema[None] = Field(None, description="The work's own licences.")
    metadataLicense: str | SkipJsonSchema[None] = Field(None, description="CC0-1.0 (DataCite's metadata).")
    sizes: list[str] | SkipJsonSchema[None] = Field(None, description="Sizes as deposited.")
    formats: list[str] | SkipJsonSchema[None] = Field(None, description="Formats as deposited.")
    alternateIdentifiers: list[_Open] | SkipJsonSchema[None] = Field(
        None, description="{identifier, identifierType}."
    )
    relatedIdentifiers: list[_Open] | SkipJsonSchema[None] = Field(
        None, description="{relationType, relatedIdentifier, relatedIdentifierType?, resourceTypeGeneral?}."
    )
    relatedIdentifierCounts: dict[str, int] | SkipJsonSchema[None] = Field(
        None, description="relationType -> count of entries, before the cap."
    )
    relatedItems: list[_Open] | SkipJsonSchema[None] = Field(
        None, description="{relationType, identifier?, ...}."
    )
    counts: dict[str, int] | SkipJsonSchema[None] = Field(
        None, description="Citation, view, version... counts."
    )
    repository: Repository | SkipJsonSchema[None] = Field(None, description="The DataCite repository.")
    registered: str | SkipJsonSchema[None] = Field(None, description="Registered at DataCite.")
    created: str | SkipJsonSchema[None] = Field(None, description="Created at DataCite.")
    updated: str | SkipJsonSchema[None] = Field(None, description="Last updated at DataCite.")
    schemaVersion: str | SkipJsonSchema[None] = Field(None, description="DataCite schema version.")
    state: str | SkipJsonSchema[None] = Field(None, description="DataCite state (findable, registered...).")
    crossrefRelations: list[_Open] | SkipJsonSchema[None] = Field(
        None, description="relatedIdentifiers pointing at Crossref works (DOIs another agency registered)."
    )
    truncatedLists: list[Truncated] | SkipJsonSchema[None] = Field(
        None, description="Lists a display cap bound, with their totals."
    )


class WorkRow(_Contract):
    """One row of ``datacite_search_works``."""

    doi: str
    title: str | SkipJsonSchema[None] = None
    creators: list[str] = Field(default_factory=list)
    creatorCount: int = 0
    publicationYear: int | SkipJsonSchema[None] = None
    resourceTypeGeneral: str | SkipJsonSchema[None] = None
    resourceType: str | SkipJsonSchema[None] = None
    publisher: str | SkipJsonSchema[None] = None
    repositoryId: str | SkipJsonSchema[None] = None
    repositoryName: str | SkipJsonSchema[None] = None
    providerId: str | SkipJsonSchema[None] = None
    version: str | SkipJsonSchema[None] = None
    licenses: list[str] = Field(default_factory=list)
    citationCount: int | SkipJsonSchema[None] = None
    viewCount: int | SkipJsonSchema[None] = None
    downloadCount: int | SkipJsonSchema[None] = None
    versionCount: int | SkipJsonSchema[None] = None
    created: str | SkipJsonSchema[None] = None
    landingUrl: str | SkipJsonSchema[None] = None
    descriptionSnippet: str | SkipJsonSchema[None] = None


class SearchWorksView(_Contract):
    """``datacite_search_works``: one page of works plus the enrichment of every path."""

    works: list[WorkRow] | SkipJsonSchema[None] = Field(None, description="The works of this page.")
    facets: dict[str, Any] | SkipJsonSchema[None] = Field(
        None, description="With include_facets: {resourceTypes, publicationYears, ...: [{id, title, count}]}."
    )
    nextPage: int | SkipJsonSchema[None] = Field(None, description="The next page number, when there is one.")
    nextCursor: str | SkipJsonSchema[None] = Field(None, description="The next cursor of a walk.")
    totalCount: int | SkipJsonSchema[None] = Field(None, description="meta.total (0 when missing).")
    effectiveQuery: str | SkipJsonSchema[None] = Field(None, description="The query sent to DataCite.")
    sortApplied: str | SkipJsonSchema[None] = Field(None, description="The sort applied.")
    appliedFilters: dict[str, str] | SkipJsonSchema[None] = Field(None, description="Each filter as sent.")
    local: bool | SkipJsonSchema[None] = Field(
        None, description="True when answered from syncd's own index of stored works (DataCite unreachable)."
    )
    notice: str | SkipJsonSchema[None] = Field(None, description="No matches, page ceiling, offline notes.")


class CitationView(_Miss):
    """``datacite_get_citation``: the rendering (found) or the typed miss."""

    format: str | SkipJsonSchema[None] = Field(None, description="The format asked for.")
    mediaType: str | SkipJsonSchema[None] = Field(None, description="Its MIME type.")
    style: str | SkipJsonSchema[None] = Field(None, description="Text: the CSL style applied.")
    locale: str | SkipJsonSchema[None] = Field(None, description="Text: the locale, when given.")
    citation: str | SkipJsonSchema[None] = Field(None, description="The citation (text or payload).")
    citationHtml: str | SkipJsonSchema[None] = Field(None, description="Text: DataCite's HTML.")
    renderedLocally: bool | SkipJsonSchema[None] = Field(
        None, description="True when syncd rendered it from the stored record (CSL, no request)."
    )
    truncated: bool | SkipJsonSchema[None] = Field(None, description="The payload was cut.")
    shown: int | SkipJsonSchema[None] = Field(None, description="Characters shown.")
    cap: int | SkipJsonSchema[None] = Field(None, description="The payload cap.")


class ReferenceView(_Contract):
    """``datacite_list_reference``: one topic's entries and notes."""

    topic: str | SkipJsonSchema[None] = Field(None, description="The topic.")
    title: str | SkipJsonSchema[None] = Field(None, description="Its title.")
    entries: list[_Open] | SkipJsonSchema[None] = Field(
        None, description="{value, label?, description?, group?, inverse?}."
    )
    notes: list[str] | SkipJsonSchema[None] = Field(None, description="Notes on the topic.")


class TraceView(_Contract):
    """``datacite_trace_relations``: nodes, edges and coverage of a DOI's relation graph."""

    root: _Open | SkipJsonSchema[None] = Field(None, description="{doi, isDataCiteDoi, title?, ...}.")
    rootCounts: dict[str, int] | SkipJsonSchema[None] = Field(None, description="DataCite roots only.")
    nodes: list[_Open] | SkipJsonSchema[None] = Field(None, description="{id, idType, depth, hydrated, ...}.")
    edges: list[_Open] | SkipJsonSchema[None] = Field(None, description="{from, to, relationType, sources}.")
    coverage: dict[str, Any] | SkipJsonSchema[None] = Field(None, description="What each source read.")
    truncated: bool | SkipJsonSchema[None] = Field(None, description="A node or edge cap bound.")
    shown: int | SkipJsonSchema[None] = Field(None, description="Nodes returned.")
    cap: int | SkipJsonSchema[None] = Field(None, description="max_nodes.")
    edgesFound: int | SkipJsonSchema[None] = Field(None, description="Edges found when the edge cap bound.")
    notice: str | SkipJsonSchema[None] = Field(None, description="What could not be read or shown.")


class RepositoriesView(_Contract):
    """``datacite_search_repositories``: one page of repositories plus enrichment."""

    repositories: list[_Open] | SkipJsonSchema[None] = Field(
        None, description="{repositoryId, name, providerId?, repositoryTypes, certificates, ...}."
    )
    nextPage: int | SkipJsonSchema[None] = Field(None, description="The next page number.")
    totalCount: int | SkipJsonSchema[None] = Field(None, description="meta.total.")
    orderApplied: str | SkipJsonSchema[None] = Field(None, description="Always name.")
    appliedFilters: dict[str, str] | SkipJsonSchema[None] = Field(None, description="Each filter as sent.")
    notice: str | SkipJsonSchema[None] = Field(None, description="No matches, past the end, missing ids.")
