"""Pydantic models of the ``zenodo_get_record`` output contract (seeds/zenodo_get_record.txt).

Field names, required sets and descriptions follow the seed's output schema; the models' JSON
Schema becomes the tool's MCP output schema. Conventions:

* An optional field is typed ``X | SkipJsonSchema[None]`` with default ``None``: the advertised
  schema shows only ``X`` (as the seed does) and an absent value is ``None`` in Python. Serialise
  results with ``model_dump(exclude_none=True)`` so that absent fields stay absent.
* Counts are Python ``int`` advertised as JSON ``number``, the seed's type.
* Every object forbids extra keys (``additionalProperties: false``), as the seed's objects do.

Models: :class:`GetRecordView` (the whole result) holds a :class:`ZenodoRecord` (``record``), a
:class:`RecordWindow` (``window``, cursor calls), a :class:`Tombstone` and :class:`Continuation`
entries. The tool's ``error`` envelope is produced by the tool layer, not modelled here.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema
from pydantic.json_schema import SkipJsonSchema

__all__ = [
    "AccessInfo",
    "AdditionalDescription",
    "Affiliation",
    "Community",
    "Continuation",
    "ContinuationField",
    "FileEntry",
    "FilesInfo",
    "FundingEntry",
    "GetRecordView",
    "InputKind",
    "LastKnownRecord",
    "MissKind",
    "Number",
    "Person",
    "RecordStats",
    "RecordWindow",
    "RelatedIdentifier",
    "ResolvedFrom",
    "ResourceType",
    "RightsEntry",
    "Tombstone",
    "UsageCounts",
    "VersionsInfo",
    "ZenodoRecord",
]

Number = Annotated[int, WithJsonSchema({"type": "number"})]
"""An integer count, advertised as JSON ``number`` like the seed."""

InputKind = Literal["record_id", "zenodo_doi", "external_doi", "url"]
ResolvedFrom = Literal["version", "concept_to_latest", "external_doi"]
MissKind = Literal["not_found", "deleted", "restricted", "not_on_zenodo"]
ContinuationField = Literal[
    "description",
    "additional_descriptions",
    "creators",
    "contributors",
    "keywords",
    "funding",
    "related_identifiers",
    "communities",
]
Unit = Literal["characters", "entries"]


class _Contract(BaseModel):
    """Base of the contract models: unknown keys are refused, as ``additionalProperties: false``.

    Validators and schemas are built on first use (``defer_build``), not when a command imports the slice.
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)


class Affiliation(_Contract):
    """One affiliation of a creator or contributor (RDM ``affiliations[]``; legacy ``affiliation``)."""

    model_config = ConfigDict(json_schema_extra={"description": "One affiliation."})

    name: str | SkipJsonSchema[None] = Field(None, description="Affiliation name.")
    ror: str | SkipJsonSchema[None] = Field(None, description="Affiliation ROR id, when linked.")


class Person(_Contract):
    """A creator or contributor (RDM ``person_or_org`` + ``affiliations`` + ``role``; legacy flat)."""

    model_config = ConfigDict(json_schema_extra={"description": "A creator or contributor."})

    name: str = Field(description="Display name as deposited.")
    type: str | SkipJsonSchema[None] = Field(None, description="personal or organizational.")
    orcid: str | SkipJsonSchema[None] = Field(None, description="ORCID iD, when the depositor supplied one.")
    role: str | SkipJsonSchema[None] = Field(
        None, description="Contributor role, e.g. Editor (contributors only)."
    )
    affiliations: list[Affiliation] = Field(description="Affiliations as deposited.")


class ResourceType(_Contract):
    """Resource type (RDM ``metadata.resource_type``; legacy ``type``/``subtype``)."""

    model_config = ConfigDict(json_schema_extra={"description": "Resource type; absent when not recorded."})

    id: str = Field(description="Resource type id, e.g. dataset or publication-article.")
    title: str | SkipJsonSchema[None] = Field(
        None, description="Resource type label, when Zenodo supplies one."
    )


class AdditionalDescription(_Contract):
    """One additional description (RDM ``additional_descriptions[]``; legacy ``notes``/``method``)."""

    model_config = ConfigDict(json_schema_extra={"description": "One additional description."})

    type: str | SkipJsonSchema[None] = Field(None, description="Description type, e.g. Notes or Methods.")
    text: str = Field(description="Plain text, first 1,000 characters.")
    length: Number = Field(description="Full plain-text length in characters.")
    truncated: bool = Field(
        description="True when text was cut at 1,000 characters; continuations carries a cursor for the rest."
    )


class RightsEntry(_Contract):
    """One license or rights statement (RDM ``metadata.rights[]``; legacy ``metadata.license``)."""

    model_config = ConfigDict(json_schema_extra={"description": "One license or rights statement."})

    id: str | SkipJsonSchema[None] = Field(None, description="License id (custom rights may lack one).")
    title: str = Field(description="License or rights title.")
    url: str | SkipJsonSchema[None] = Field(None, description="License URL.")


class AccessInfo(_Contract):
    """Access status and embargo (RDM ``access``; legacy ``access_right``/``embargo_date``)."""

    model_config = ConfigDict(json_schema_extra={"description": "Access status and embargo."})

    status: str = Field(
        description="open, restricted, embargoed, or metadata-only (unknown if Zenodo omits it)."
    )
    record: str | SkipJsonSchema[None] = Field(
        None, description="Record (metadata) access: public or restricted; absent when not reported."
    )
    files: str | SkipJsonSchema[None] = Field(
        None, description="File access: public or restricted; absent when not reported."
    )
    embargo_active: bool = Field(description="True while an embargo is in force.")
    embargo_until: str | SkipJsonSchema[None] = Field(None, description="Embargo end date, when active.")
    embargo_reason: str | SkipJsonSchema[None] = Field(None, description="Embargo reason, when active.")


class FundingEntry(_Contract):
    """One funding entry (RDM ``metadata.funding[]``; legacy ``metadata.grants[]``)."""

    model_config = ConfigDict(json_schema_extra={"description": "One funding entry."})

    funder_id: str | SkipJsonSchema[None] = Field(None, description="Funder ROR id.")
    funder_name: str | SkipJsonSchema[None] = Field(None, description="Funder name.")
    award_id: str | SkipJsonSchema[None] = Field(
        None, description="Award id (<funder-ror>::<number>) — feeds zenodo_search_records award."
    )
    award_number: str | SkipJsonSchema[None] = Field(None, description="Grant number.")
    award_acronym: str | SkipJsonSchema[None] = Field(None, description="Award acronym.")
    award_title: str | SkipJsonSchema[None] = Field(None, description="Award title.")
    award_program: str | SkipJsonSchema[None] = Field(None, description="Funding program.")
    award_doi: str | SkipJsonSchema[None] = Field(None, description="Award DOI, e.g. 10.3030/101135562.")
    award_url: str | SkipJsonSchema[None] = Field(None, description="Award landing page URL.")


class RelatedIdentifier(_Contract):
    """One related identifier (``metadata.related_identifiers[]``, both shapes)."""

    model_config = ConfigDict(json_schema_extra={"description": "One related identifier."})

    identifier: str = Field(description="The related identifier (DOI, arXiv id, URL, PMID, …).")
    scheme: str | SkipJsonSchema[None] = Field(None, description="Identifier scheme, e.g. doi, arxiv, url.")
    relation: str | SkipJsonSchema[None] = Field(
        None, description="Relation type id, e.g. issupplementto or cites."
    )
    resource_type: str | SkipJsonSchema[None] = Field(
        None, description="Resource type id of the related item."
    )


class Community(_Contract):
    """One community holding the record (RDM ``parent.communities.entries[]``; legacy ``communities``)."""

    model_config = ConfigDict(json_schema_extra={"description": "One community."})

    slug: str = Field(description="Community slug — feeds zenodo_search_records community.")
    title: str | SkipJsonSchema[None] = Field(None, description="Community title.")


class VersionsInfo(_Contract):
    """Version position (RDM ``versions``; legacy ``metadata.relations.version[0]``)."""

    model_config = ConfigDict(json_schema_extra={"description": "Version position."})

    index: Number | SkipJsonSchema[None] = Field(
        None,
        description="Position of this version in its series (1 = first); absent if Zenodo omits version "
        "data.",
    )
    is_latest: bool | SkipJsonSchema[None] = Field(
        None, description="True when this is the newest version; absent if Zenodo omits version data."
    )
    latest_recid: str | SkipJsonSchema[None] = Field(
        None, description="Record id of the newest version, when this one is not it."
    )


class UsageCounts(_Contract):
    """Unique usage counts (RDM ``stats.*.unique_*``; legacy ``stats.[version_]unique_*``)."""

    model_config = ConfigDict(json_schema_extra={"description": "Usage counts."})

    views: Number | SkipJsonSchema[None] = Field(
        None, description="Unique views, as zenodo.org displays them; absent when not reported."
    )
    downloads: Number | SkipJsonSchema[None] = Field(
        None, description="Unique downloads, as zenodo.org displays them; absent when not reported."
    )


class RecordStats(_Contract):
    """Usage for this version and for the whole version series (``stats``)."""

    model_config = ConfigDict(
        json_schema_extra={
            "description": "Unique views and downloads for this version and for the whole series; "
            "absent when Zenodo reports no usage counts."
        }
    )

    this_version: UsageCounts = Field(description="Usage of this version.")
    all_versions: UsageCounts = Field(description="Usage of all versions together.")


class FileEntry(_Contract):
    """One file of the deposit (RDM ``files.entries``; legacy ``files[]``)."""

    model_config = ConfigDict(json_schema_extra={"description": "One file."})

    key: str = Field(description="File key (path within the deposit).")
    size: Number | SkipJsonSchema[None] = Field(None, description="Size in bytes.")
    mimetype: str | SkipJsonSchema[None] = Field(None, description="MIME type.")
    md5: str | SkipJsonSchema[None] = Field(None, description="MD5 checksum (hex).")
    download_url: str = Field(description="Direct download URL.")


class FilesInfo(_Contract):
    """File manifest summary (RDM ``files``; legacy ``files[]`` and ``access_right``)."""

    model_config = ConfigDict(json_schema_extra={"description": "File manifest summary."})

    enabled: bool = Field(description="False for a metadata-only deposit.")
    count: Number | SkipJsonSchema[None] = Field(
        None, description="Total files; absent when files are restricted or embargoed."
    )
    total_bytes: Number | SkipJsonSchema[None] = Field(
        None, description="Total file size in bytes; absent when files are restricted or embargoed."
    )
    shown: Number = Field(description="File entries included below.")
    entries: list[FileEntry] = Field(description="First 25 files in upstream order.")


class ZenodoRecord(_Contract):
    """The deposit's metadata as ``zenodo_get_record`` shows it, display caps applied.

    Built by :func:`syncd.zenodo.views.record_view` from either upstream JSON shape.
    """

    model_config = ConfigDict(json_schema_extra={"description": "The deposit’s metadata."})

    recid: str = Field(description="Record id of this version.")
    concept_recid: str | SkipJsonSchema[None] = Field(
        None, description="Concept record id naming the whole version series; absent if Zenodo omits it."
    )
    doi: str | SkipJsonSchema[None] = Field(
        None, description="DOI of this version; absent on some old records."
    )
    doi_provider: str | SkipJsonSchema[None] = Field(
        None, description="datacite (minted by Zenodo) or external (publisher-minted)."
    )
    concept_doi: str | SkipJsonSchema[None] = Field(
        None, description="Concept DOI of the version series; absent for external DOIs."
    )
    oai_id: str | SkipJsonSchema[None] = Field(
        None, description="OAI-PMH identifier; absent when not assigned."
    )
    title: str = Field(description="Title as deposited.")
    publication_date: str | SkipJsonSchema[None] = Field(
        None,
        description="Publication date (EDTF as given: 2026-09-11, 2020, 2020-05); absent when not recorded.",
    )
    version: str | SkipJsonSchema[None] = Field(
        None, description="Version label as deposited; absent when the depositor set none."
    )
    publisher: str | SkipJsonSchema[None] = Field(
        None, description="Publisher as deposited (usually Zenodo); absent when not set."
    )
    resource_type: ResourceType | SkipJsonSchema[None] = Field(
        None, description="Resource type; absent when not recorded."
    )
    description: str | SkipJsonSchema[None] = Field(
        None,
        description="Description converted from HTML to plain text, first 4,000 characters; "
        "absent when the record has none.",
    )
    description_truncated: bool | SkipJsonSchema[None] = Field(
        None,
        description="True when the description was cut at 4,000 characters; continuations carries a "
        "cursor for the rest. Present with description.",
    )
    description_length: Number | SkipJsonSchema[None] = Field(
        None,
        description="Full plain-text length of the description in characters. Present with description.",
    )
    additional_descriptions: list[AdditionalDescription] = Field(
        description="First 5 additional descriptions, in record order (index 0 first)."
    )
    additional_description_count: Number = Field(description="Total additional descriptions.")
    creators: list[Person] = Field(description="First 25 creators.")
    creator_count: Number = Field(description="Total creators.")
    contributors: list[Person] = Field(description="First 25 contributors.")
    contributor_count: Number = Field(description="Total contributors.")
    keywords: list[str] = Field(description="First 50 subject keywords.")
    keyword_count: Number = Field(description="Total subject keywords.")
    rights: list[RightsEntry] = Field(description="Licenses and rights. Files carry the deposit’s license.")
    access: AccessInfo = Field(description="Access status and embargo.")
    funding: list[FundingEntry] = Field(description="First 50 funding entries (funders and grants).")
    funding_count: Number = Field(description="Total funding entries.")
    related_identifiers: list[RelatedIdentifier] = Field(description="First 50 related identifiers.")
    related_identifier_count: Number = Field(description="Total related identifiers.")
    code_repository: str | SkipJsonSchema[None] = Field(
        None, description="Source code repository URL; absent when none is linked."
    )
    communities: list[Community] = Field(description="First 25 communities holding this record.")
    community_count: Number = Field(description="Total communities holding this record.")
    versions: VersionsInfo = Field(description="Version position.")
    stats: RecordStats | SkipJsonSchema[None] = Field(
        None,
        description="Unique views and downloads for this version and for the whole series; absent when "
        "Zenodo reports no usage counts.",
    )
    files: FilesInfo = Field(description="File manifest summary.")
    revision: Number | SkipJsonSchema[None] = Field(
        None, description="Record revision id; absent when not reported."
    )
    zenodo_url: str = Field(description="Record landing page on zenodo.org.")


class Tombstone(_Contract):
    """Removal tombstone of a deleted record (the ``tombstone`` of a 410 body)."""

    model_config = ConfigDict(json_schema_extra={"description": "Removal tombstone of a deleted record."})

    removal_date: str | SkipJsonSchema[None] = Field(
        None, description="When the record was removed (ISO 8601)."
    )
    removal_reason: str | SkipJsonSchema[None] = Field(
        None, description="Removal reason id, e.g. spam or retracted."
    )
    note: str | SkipJsonSchema[None] = Field(None, description="Removal note, when non-empty.")
    citation_text: str | SkipJsonSchema[None] = Field(
        None,
        description="The citation the tombstone still serves — the only bibliographic data a deleted "
        "record keeps.",
    )


class Continuation(_Contract):
    """One field this response cut short, with the cursor for the rest (``continuations[]``)."""

    model_config = ConfigDict(json_schema_extra={"description": "One field cut short in this response."})

    field: ContinuationField = Field(description="The field that was cut.")
    unit: Unit = Field(
        description="characters for description text, entries for a list (additional_descriptions "
        "without index is the list)."
    )
    index: Number | SkipJsonSchema[None] = Field(
        None,
        description="Position of the additional description whose text was cut (0 = first). Present "
        "only for an additional description’s text.",
    )
    shown: Number = Field(
        description="Characters or entries of the field returned so far, counted from its start; the "
        "cursor resumes here."
    )
    total: Number = Field(description="Full length of the field in characters, or its total entries.")
    id: str = Field(
        description="Record id the cursor is bound to; pass it as id beside the cursor, whatever id form "
        "this call took."
    )
    cursor: str = Field(
        description="Pass as cursor, with this entry’s id, to get the next window of this field."
    )


class RecordWindow(_Contract):
    """The next window of a field a cursor continues (``window``, in place of ``record``)."""

    model_config = ConfigDict(
        json_schema_extra={
            "description": "The next window of the field the cursor continues. Present when found and a "
            "cursor was passed, in place of record."
        }
    )

    field: ContinuationField = Field(description="The field this window continues.")
    unit: Unit = Field(description="characters for a text window, entries for a list window.")
    index: Number | SkipJsonSchema[None] = Field(
        None,
        description="Position of the additional description whose text this window continues (0 = "
        "first). Present only for an additional description’s text.",
    )
    offset: Number = Field(description="Characters or entries of the field before this window.")
    shown: Number = Field(description="Characters or entries in this window.")
    total: Number = Field(description="Full length of the field in characters, or its total entries.")
    text: str | SkipJsonSchema[None] = Field(
        None,
        description="Up to 8,000 characters of the field’s plain text, starting at offset. Present when "
        "unit is characters.",
    )
    additional_descriptions: list[AdditionalDescription] | SkipJsonSchema[None] = Field(
        None,
        description="Up to 5 additional descriptions starting at offset, each text cut at 1,000 "
        "characters. Present when field is additional_descriptions and unit is entries.",
    )
    creators: list[Person] | SkipJsonSchema[None] = Field(
        None, description="Up to 25 creators starting at offset. Present when field is creators."
    )
    contributors: list[Person] | SkipJsonSchema[None] = Field(
        None, description="Up to 25 contributors starting at offset. Present when field is contributors."
    )
    keywords: list[str] | SkipJsonSchema[None] = Field(
        None, description="Up to 50 subject keywords starting at offset. Present when field is keywords."
    )
    funding: list[FundingEntry] | SkipJsonSchema[None] = Field(
        None, description="Up to 50 funding entries starting at offset. Present when field is funding."
    )
    related_identifiers: list[RelatedIdentifier] | SkipJsonSchema[None] = Field(
        None,
        description="Up to 50 related identifiers starting at offset. Present when field is "
        "related_identifiers.",
    )
    communities: list[Community] | SkipJsonSchema[None] = Field(
        None, description="Up to 25 communities starting at offset. Present when field is communities."
    )


class LastKnownRecord(_Contract):
    """The last metadata syncd stored of a record Zenodo has since deleted: NOT the current state."""

    model_config = ConfigDict(
        json_schema_extra={"description": "Last metadata stored before the record was deleted (not current)."}
    )

    note: str = Field(description="Says this copy is the last one stored before the removal, not current.")
    stored_at: str = Field(description="When syncd fetched this copy (ISO 8601, UTC).")
    record: ZenodoRecord = Field(description="The record as it was last seen, in the usual record shape.")


class GetRecordView(_Contract):
    """The structured result of ``zenodo_get_record`` (every key optional, as in the seed).

    A hit sets ``found=True``, ``input_kind``, ``resolved_from`` and ``record`` (or ``window`` with a
    cursor); a miss sets ``found=False``, ``input_kind``, ``miss_kind``, ``guidance`` and, for
    ``deleted``, ``tombstone``. ``truncated``/``shown``/``cap``/``notice`` are the enrichment fields.
    """

    found: bool | SkipJsonSchema[None] = Field(None, description="True when the record resolved.")
    input_kind: InputKind | SkipJsonSchema[None] = Field(
        None,
        description="How id was parsed: record_id (digits), zenodo_doi (10.5281/zenodo.N or zenodo.N), "
        "external_doi (another DOI), or url (a zenodo.org or doi.org link).",
    )
    resolved_from: ResolvedFrom | SkipJsonSchema[None] = Field(
        None,
        description="How the record was reached: a version id, a concept id resolved to the latest "
        "version, or a non-Zenodo DOI. Present when found.",
    )
    miss_kind: MissKind | SkipJsonSchema[None] = Field(
        None, description="Why nothing resolved. Present when not found."
    )
    guidance: str | SkipJsonSchema[None] = Field(None, description="What to do next. Present when not found.")
    tombstone: Tombstone | SkipJsonSchema[None] = Field(
        None, description="Removal tombstone. Present when miss_kind is deleted."
    )
    last_known: LastKnownRecord | SkipJsonSchema[None] = Field(
        None,
        description="Only with miss_kind deleted, when syncd had stored the record before: its last "
        "metadata, marked as such (the record itself is gone; see tombstone for the reason).",
    )
    record: ZenodoRecord | SkipJsonSchema[None] = Field(
        None, description="The record. Present when found and no cursor was passed."
    )
    window: RecordWindow | SkipJsonSchema[None] = Field(
        None,
        description="The next window of the field the cursor continues. Present when found and a cursor "
        "was passed, in place of record.",
    )
    notice: str | SkipJsonSchema[None] = Field(
        None, description="File access notes or a pointer to zenodo_list_files."
    )
    truncated: bool | SkipJsonSchema[None] = Field(
        None,
        description="Without cursor: true when anything was cut, files past the 25 shown or any field in "
        "continuations. With cursor: true when continuations lists a next step, because the field "
        "continues past this window or an additional description on this page was cut.",
    )
    shown: Number | SkipJsonSchema[None] = Field(
        None,
        description="Without cursor: file entries shown. With cursor: characters or entries in the window.",
    )
    cap: Number | SkipJsonSchema[None] = Field(
        None,
        description="Without cursor: maximum file entries shown (25). With cursor: the window size "
        "(8,000 characters, or the field’s page of entries).",
    )
    continuations: list[Continuation] | SkipJsonSchema[None] = Field(
        None,
        description="Every field this response cut short, each with a cursor for the rest. Absent when "
        "nothing was cut; files are paged with zenodo_list_files instead.",
    )
    citation: str | SkipJsonSchema[None] = Field(
        None, description="The formatted citation. Present when requested and found."
    )
    citation_style: str | SkipJsonSchema[None] = Field(
        None, description="The citation style used. Present with citation."
    )
