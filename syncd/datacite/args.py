"""The input models of the DataCite tools (one :class:`~syncd.tools.params.ToolArgs` per tool).

Bounds, enums and forms are the contract's (``../shared/spec/datacite.md`` §1, §2): a value that
breaks them is refused before the body runs (JSON-RPC -32602, ``invalid_arguments``). Blank strings
mean unset; enum-ish values accept any case with ``-``, ``_`` and spaces interchangeable.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import AfterValidator, BeforeValidator, Field

from syncd.datacite.params import DOI_SHAPE
from syncd.datacite.views_reference import (
    CERTIFICATES,
    CLIENT_TYPES,
    FOS_IDS,
    RELATION_TYPES,
    REPOSITORY_TYPES,
    RESOURCE_TYPE_IDS,
    TOPICS,
    fos_id,
)
from syncd.normalize.doi import trim_pasted
from syncd.tools.params import ToolArgs

__all__ = [
    "CITATION_FORMATS",
    "SORTS",
    "GetCitationArgs",
    "GetWorkArgs",
    "ListReferenceArgs",
    "SearchWorksArgs",
]

DOI_DESCRIPTION = (
    "The DOI: bare (10.5061/dryad.234), with a doi: or info:doi/ prefix, or a https://doi.org/ URL; any case."
)

CITATION_FORMATS = {
    "text": "text/x-bibliography",
    "csl_json": "application/vnd.citationstyles.csl+json",
    "bibtex": "application/x-bibtex",
    "ris": "application/x-research-info-systems",
    "datacite_json": "application/vnd.datacite.datacite+json",
    "datacite_xml": "application/vnd.datacite.datacite+xml",
    "schema_org": "application/vnd.schemaorg.ld+json",
    "codemeta": "application/vnd.codemeta.ld+json",
    "jats": "application/vnd.jats+xml",
}
"""``datacite_get_citation`` formats and their MIME types (DataCite's content negotiation)."""

SORTS = {
    "relevance": "relevance",
    "newest": "-created",
    "oldest": "created",
    "recently_updated": "-updated",
    "most_cited": "-citation-count",
    "most_viewed": "-view-count",
    "most_downloaded": "-download-count",
}
"""``datacite_search_works`` sorts and the ``sort`` DataCite is sent."""

_FOLD = re.compile(r"[\s_\-]+")


def _blank(value: Any) -> Any:
    """A blank or whitespace-only string is absent; other strings are trimmed."""
    if isinstance(value, str):
        value = value.strip()
        return value or None
    return value


def _enum(names: tuple[str, ...] | dict[str, Any]) -> Any:
    """A BeforeValidator folding any case, ``-``, ``_`` and spaces onto the canonical names."""
    folded = {_FOLD.sub("", n.lower()): n for n in names}

    def fold(value: Any) -> Any:
        value = _blank(value)
        if isinstance(value, str):
            return folded.get(_FOLD.sub("", value.lower()), value)
        return value

    return BeforeValidator(fold)


def _alias(mapping: dict[str, str]) -> Any:
    """A BeforeValidator mapping any spelling of a label or id (folded) onto its canonical id."""
    folded = {_FOLD.sub("", k.lower()): v for k, v in mapping.items()}

    def fold(value: Any) -> Any:
        value = _blank(value)
        return folded.get(_FOLD.sub("", value.lower()), value) if isinstance(value, str) else value

    return BeforeValidator(fold)


def _drop_blank(value: Any) -> Any:
    """An optional list: blank entries dropped, an emptied list absent."""
    if isinstance(value, list):
        kept = [
            v.strip() if isinstance(v, str) else v
            for v in value
            if not (isinstance(v, str) and not v.strip())
        ]
        return kept or None
    return value


def _fold_list(names: tuple[str, ...]) -> Any:
    """A list BeforeValidator folding each entry onto ``names`` (PascalCase, any case, ``_``/spaces)."""
    folded = {_FOLD.sub("", n.lower()): n for n in names}

    def fold(value: Any) -> Any:
        value = _drop_blank(value)
        if isinstance(value, list):
            return [folded.get(_FOLD.sub("", v.lower()), v) if isinstance(v, str) else v for v in value]
        return value

    return fold


def _fos_list(value: Any) -> Any:
    """Fields of science by id or label, ``FOS:`` prefix accepted."""
    value = _drop_blank(value)
    if isinstance(value, list):
        return [fos_id(v) or v if isinstance(v, str) else v for v in value]
    return value


def _fos_one(value: Any) -> Any:
    value = _blank(value)
    return (fos_id(value) or value) if isinstance(value, str) else value


def _doi_shape(value: str) -> str:
    if not DOI_SHAPE.match(trim_pasted(value)):  # zero-width characters pasted before the DOI too
        raise ValueError(
            "doi must be a DOI: bare 10.5061/dryad.234, doi:10.5061/dryad.234 or https://doi.org/10.5061/dryad.234"
        )
    return value


DoiArg = Annotated[
    str,
    BeforeValidator(_blank),
    Field(min_length=1, max_length=500, description=DOI_DESCRIPTION),
    AfterValidator(_doi_shape),
]
Text = Annotated[str | None, BeforeValidator(_blank)]
if TYPE_CHECKING:  # the vocabularies' values are data: to the type checker each is a string
    Format: TypeAlias = str
    Sort: TypeAlias = str
    ResourceType: TypeAlias = str
    FieldOfScience: TypeAlias = str
    Topic: TypeAlias = str
    RepositoryType: TypeAlias = str
    RelationType: TypeAlias = str
    Certificate: TypeAlias = str
    ClientType: TypeAlias = str
else:  # to pydantic, enums of the vocabularies (the published input schemas list them)
    Format = Literal[tuple(CITATION_FORMATS)]
    Sort = Literal[tuple(SORTS)]
    ResourceType = Literal[RESOURCE_TYPE_IDS]
    FieldOfScience = Literal[FOS_IDS]
    Topic = Literal[tuple(TOPICS)]
    RepositoryType = Literal[REPOSITORY_TYPES]
    RelationType = Literal[tuple(RELATION_TYPES)]
    Certificate = Literal[CERTIFICATES]
    ClientType = Literal[tuple(CLIENT_TYPES)]
CLIENT_TYPE_NAMES = {**{k: k for k in CLIENT_TYPES}, **{v: k for k, v in CLIENT_TYPES.items()}}


class GetWorkArgs(ToolArgs):
    """``datacite_get_work`` input."""

    doi: DoiArg


ListArg = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=100)]] | None, BeforeValidator(_drop_blank)
]


class SearchWorksArgs(ToolArgs):
    """``datacite_search_works`` input (every parameter of the contract's table)."""

    text: Text = Field(None, max_length=2000, description="Free text; reserved characters are escaped.")
    query: Text = Field(None, max_length=2000, description="OpenSearch query-string syntax, sent verbatim.")
    resource_types: Annotated[list[ResourceType] | None, BeforeValidator(_fold_list(RESOURCE_TYPE_IDS))] = (
        Field(None, max_length=10, description="resourceTypeGeneral ids (dataset, software, preprint, ...).")
    )
    creator: Text = Field(None, max_length=500, description="A creator name or ORCID iD.")
    affiliation: Text = Field(None, max_length=500, description="An affiliation name or ROR id.")
    affiliation_country: Annotated[str | None, BeforeValidator(_blank)] = Field(
        None, pattern=r"^[A-Za-z]{2}$", description="ISO 3166-1 alpha-2 country of an affiliation."
    )
    funder: Text = Field(None, max_length=500, description="A funder name, Crossref Funder ID or ROR id.")
    include_child_funders: bool = Field(False, description="With a ROR funder: its child organizations too.")
    subject: Text = Field(None, max_length=500, description="A subject phrase (exact).")
    fields_of_science: Annotated[list[FieldOfScience] | None, BeforeValidator(_fos_list)] = Field(
        None, max_length=10, description="OECD fields of science (ids or labels; FOS: prefix accepted)."
    )
    repository_ids: ListArg = Field(None, max_length=10, description="Repository ids (provider.repository).")
    provider_ids: ListArg = Field(None, max_length=10, description="Provider ids.")
    licenses: ListArg = Field(None, max_length=10, description="Licence ids (lower-case SPDX: cc-by-4.0).")
    language: Annotated[str | None, BeforeValidator(_blank)] = Field(
        None, pattern=r"^[A-Za-z]{2}$", description="ISO 639-1 language code."
    )
    place: Text = Field(None, max_length=500, description="A geolocation place name.")
    published_from: int | None = Field(None, ge=1000, le=2100, description="Earliest publication year.")
    published_to: int | None = Field(None, ge=1000, le=2100, description="Latest publication year.")
    min_citations: int | None = Field(None, ge=1, description="At least this many citations.")
    sort: Annotated[Sort | None, _enum(SORTS)] = Field(
        None, description="relevance (default with text/query), newest (default otherwise), oldest, ..."
    )
    limit: int = Field(20, ge=1, le=100, description="Works per page (1-100).")
    page: int | None = Field(None, ge=1, description="Page number (from 1).")
    cursor: Annotated[str | None, BeforeValidator(_blank)] = Field(
        None,
        max_length=2048,
        pattern=r"^(\*|[A-Za-z0-9_-]+)$",
        description='"*" starts a walk; pass nextCursor back.',
    )
    include_facets: bool = Field(False, description="Add facet counts (slower upstream).")


class GetCitationArgs(ToolArgs):
    """``datacite_get_citation`` input."""

    doi: DoiArg
    format: Annotated[Format, _enum(CITATION_FORMATS)] = Field(
        "text",
        description="text, csl_json, bibtex, ris, datacite_json, datacite_xml, schema_org, codemeta, jats.",
    )
    style: Annotated[str | None, BeforeValidator(_blank)] = Field(
        None, max_length=200, pattern=r"^[A-Za-z0-9-]+$", description="CSL style id (text only; default apa)."
    )
    locale: Annotated[str | None, BeforeValidator(_blank)] = Field(
        None,
        max_length=20,
        pattern=r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,2}$",
        description="CSL locale (text only), e.g. de-DE.",
    )


class TraceRelationsArgs(ToolArgs):
    """``datacite_trace_relations`` input."""

    doi: DoiArg
    depth: Literal[1, 2] = Field(
        1, description="1: the DOI's neighbours; 2: also those of its first 10 DataCite neighbours."
    )
    relation_types: Annotated[
        list[RelationType] | None, BeforeValidator(_fold_list(tuple(RELATION_TYPES)))
    ] = Field(
        None, max_length=39, description="Relation types, read from the traced DOI's side (omitted: all)."
    )
    include_event_data: bool = Field(True, description="Also read DataCite Event Data citations.")
    max_nodes: int = Field(50, ge=1, le=100, description="Most nodes returned, the root included.")


class SearchRepositoriesArgs(ToolArgs):
    """``datacite_search_repositories`` input."""

    query: Text = Field(
        None, max_length=2000, description="Names, alternate names, descriptions (query syntax)."
    )
    field_of_science: Annotated[FieldOfScience | None, BeforeValidator(_fos_one)] = Field(
        None, description="One OECD field of science (id or label)."
    )
    repository_types: Annotated[
        list[RepositoryType] | None, BeforeValidator(_fold_list(REPOSITORY_TYPES))
    ] = Field(
        None, max_length=6, description="institutional, disciplinary, multidisciplinary, project-related, ..."
    )
    certificates: Annotated[list[Certificate] | None, BeforeValidator(_fold_list(CERTIFICATES))] = Field(
        None, max_length=7, description="CoreTrustSeal, WDS, DSA, DINI, RatSWD, CLARIN, DIN 31644."
    )
    software: Text = Field(
        None, max_length=500, description="Repository software slug (dataverse, dspace, ...)."
    )
    client_type: Annotated[ClientType | None, _alias(CLIENT_TYPE_NAMES)] = Field(
        None, description="repository, periodical, igsnCatalog, raidRegistry."
    )
    provider_id: Annotated[str | None, BeforeValidator(_blank)] = Field(
        None, max_length=100, pattern=r"^[A-Za-z0-9-]+$", description="DataCite provider id."
    )
    repository_ids: Annotated[
        list[Annotated[str, Field(max_length=100, pattern=r"^[A-Za-z0-9-]+\.[A-Za-z0-9-]+$")]] | None,
        BeforeValidator(_drop_blank),
    ] = Field(
        None, max_length=25, description="Repository ids (provider.repository); alone, not with filters."
    )
    limit: int = Field(20, ge=1, le=100, description="Repositories per page (1-100).")
    page: int = Field(1, ge=1, description="Page number (from 1).")


class ListReferenceArgs(ToolArgs):
    """``datacite_list_reference`` input."""

    topic: Topic = Field(description="The topic to list (exact name).")
