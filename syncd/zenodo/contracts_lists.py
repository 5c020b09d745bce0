"""Pydantic models of Zenodo's list contracts (anchors.md §1b).

``zenodo_search_records``, ``zenodo_list_versions``, ``zenodo_list_files``, ``zenodo_read_file`` and
``zenodo_lookup_vocabulary``. Each result also carries the ``cache`` block, added by the tool layer.
Unlike the record contract (:mod:`syncd.zenodo.contracts`) these are plain JSON-schema objects;
unknown keys are refused as well.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from syncd.zenodo.contracts import InputKind, MissKind, Number, ResourceType, Tombstone

__all__ = [
    "ArchiveInfo",
    "ArchiveMember",
    "FacetBucket",
    "FileListEntry",
    "HitAccess",
    "HitCreator",
    "ListFilesView",
    "ListVersionsView",
    "LookupVocabularyView",
    "ReadFileView",
    "RightsBrief",
    "SearchFacets",
    "SearchHit",
    "SearchRecordsView",
    "VersionEntry",
    "VocabularyEntry",
    "YearBucket",
]


class _Open(BaseModel):
    """Base of the list contracts: JSON-schema objects, unknown keys refused (built on first use)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class HitCreator(_Open):
    """One creator of a search hit."""

    name: str = Field(description="Display name as deposited.")
    orcid: str | SkipJsonSchema[None] = Field(None, description="ORCID iD, when supplied.")


class HitAccess(_Open):
    """Access of a search hit."""

    status: str = Field(description="open, restricted, embargoed or metadata-only.")
    files: str | SkipJsonSchema[None] = Field(None, description="File access: public or restricted.")
    embargo_until: str | SkipJsonSchema[None] = Field(None, description="Embargo end date, when active.")


class SearchHit(_Open):
    """One record of a search page, file manifest stripped."""

    recid: str = Field(description="Record id of this version.")
    doi: str | SkipJsonSchema[None] = Field(None, description="DOI of this version.")
    doi_provider: str | SkipJsonSchema[None] = Field(None, description="datacite or external.")
    concept_recid: str | SkipJsonSchema[None] = Field(None, description="Concept record id of the series.")
    concept_doi: str | SkipJsonSchema[None] = Field(None, description="Concept DOI of the series.")
    title: str = Field(description="Title as deposited.")
    publication_date: str | SkipJsonSchema[None] = Field(
        None, description="Publication date (EDTF as given)."
    )
    resource_type: ResourceType | SkipJsonSchema[None] = Field(None, description="Resource type.")
    version: str | SkipJsonSchema[None] = Field(None, description="Version label.")
    is_latest: bool | SkipJsonSchema[None] = Field(None, description="True for the newest version.")
    version_index: Number | SkipJsonSchema[None] = Field(
        None, description="Position in its series (1 = first)."
    )
    creators: list[HitCreator] = Field(description="First 5 creators.")
    creator_count: Number = Field(description="Total creators.")
    license_ids: list[str] = Field(description="License ids.")
    access: HitAccess = Field(description="Access status.")
    communities: list[str] = Field(description="First 5 community slugs.")
    file_count: Number | SkipJsonSchema[None] = Field(None, description="Files; absent when restricted.")
    total_bytes: Number | SkipJsonSchema[None] = Field(
        None, description="Total file bytes; absent when restricted."
    )
    views: Number | SkipJsonSchema[None] = Field(None, description="Unique views, all versions.")
    downloads: Number | SkipJsonSchema[None] = Field(None, description="Unique downloads, all versions.")
    description_snippet: str | SkipJsonSchema[None] = Field(
        None, description="About 280 characters of the description, cut at a word boundary."
    )
    zenodo_url: str = Field(description="Record landing page.")


class FacetBucket(_Open):
    """One facet value and how many hits carry it."""

    id: str = Field(description="The value as a filter id (e.g. `dataset`, `open`, `csv`).")
    label: str | SkipJsonSchema[None] = Field(
        None, description="Human-readable label, when Zenodo gives one."
    )
    count: Number = Field(description="Hits with this value.")
    subtypes: list[FacetBucket] | SkipJsonSchema[None] = Field(
        None, description="Top 5 subtypes (resource types only)."
    )


class YearBucket(_Open):
    """Hits per publication year."""

    year: str = Field(description="Publication year.")
    count: Number = Field(description="Hits published that year.")


class SearchFacets(_Open):
    """Counts over every hit of the query (not just this page), from Zenodo's aggregations."""

    resource_type: list[FacetBucket] = Field(description="Top 10 resource types, each with top 5 subtypes.")
    access_status: list[FacetBucket] = Field(description="Access statuses (open, restricted, ...).")
    file_type: list[FacetBucket] = Field(description="Top 10 file types.")
    subject: list[FacetBucket] = Field(description="Top 10 subjects / keywords.")
    publication_year: list[YearBucket] = Field(description="The 10 most recent publication years.")


class SearchRecordsView(_Open):
    """The structured result of ``zenodo_search_records``."""

    total: Number = Field(description="Exact hits Zenodo reports (offline: hits in the local mirror).")
    reachable: Number = Field(description="min(total, 10,000): hits reachable by paging.")
    page: Number = Field(description="This page (1-based).")
    size: Number = Field(description="Page size asked for (1-25).")
    has_more: bool = Field(description="True when a next reachable page exists.")
    next_page: Number | SkipJsonSchema[None] = Field(None, description="The next page, when has_more.")
    hits: list[SearchHit] = Field(description="The records of this page.")
    truncated: bool = Field(description="True when more hits exist than this page shows.")
    shown: Number = Field(description="Hits on this page.")
    cap: Number = Field(description="Page size asked for.")
    totalCount: Number = Field(description="Same as total.")
    appliedSort: str = Field(description="Sort applied.")
    allVersions: bool = Field(description="Whether every version was searched.")
    effectiveQuery: str | SkipJsonSchema[None] = Field(
        None, description="The exact q sent to Zenodo (filters composed in)."
    )
    local: bool | SkipJsonSchema[None] = Field(
        None, description="True when answered from the local mirror's full-text index (Zenodo unreachable)."
    )
    facets: SearchFacets | SkipJsonSchema[None] = Field(
        None, description="Counts over all hits by resource type, access, file type, subject and year."
    )
    notice: str | SkipJsonSchema[None] = Field(None, description="Paging, no-match or local-mirror notes.")


class VersionEntry(_Open):
    """One version of a series."""

    recid: str = Field(description="Record id of the version.")
    doi: str | SkipJsonSchema[None] = Field(None, description="DOI of the version.")
    version: str | SkipJsonSchema[None] = Field(None, description="Version label.")
    title: str = Field(description="Title of the version.")
    publication_date: str | SkipJsonSchema[None] = Field(None, description="Publication date.")
    index: Number | SkipJsonSchema[None] = Field(None, description="Position in the series (1 = first).")
    is_latest: bool | SkipJsonSchema[None] = Field(None, description="True for the newest version.")
    file_count: Number | SkipJsonSchema[None] = Field(None, description="Files of the version.")
    total_bytes: Number | SkipJsonSchema[None] = Field(None, description="Total bytes of its files.")
    views: Number | SkipJsonSchema[None] = Field(None, description="Unique views of this version.")
    downloads: Number | SkipJsonSchema[None] = Field(None, description="Unique downloads of this version.")


class ListVersionsView(_Open):
    """The structured result of ``zenodo_list_versions``."""

    found: bool = Field(description="True when the record resolved.")
    input_kind: InputKind = Field(description="How id was parsed.")
    miss_kind: MissKind | SkipJsonSchema[None] = Field(None, description="Why nothing resolved.")
    guidance: str | SkipJsonSchema[None] = Field(None, description="What to do next, on a miss.")
    tombstone: Tombstone | SkipJsonSchema[None] = Field(None, description="Removal tombstone, when deleted.")
    concept_recid: str | SkipJsonSchema[None] = Field(None, description="Concept record id of the series.")
    concept_doi: str | SkipJsonSchema[None] = Field(None, description="Concept DOI of the series.")
    total_versions: Number | SkipJsonSchema[None] = Field(None, description="Versions in the series.")
    latest_recid: str | SkipJsonSchema[None] = Field(None, description="Record id of the newest version.")
    page: Number = Field(description="This page (1-based).")
    size: Number = Field(description="Page size (1-25).")
    has_more: bool = Field(description="True when a next page exists.")
    next_page: Number | SkipJsonSchema[None] = Field(None, description="The next page, when has_more.")
    versions: list[VersionEntry] = Field(description="Versions, newest first; empty on a miss.")
    truncated: bool = Field(description="True when more versions exist past this page.")
    shown: Number = Field(description="Versions on this page.")
    cap: Number = Field(description="Page size.")
    totalCount: Number = Field(description="Same as total_versions (0 on a miss).")
    notice: str | SkipJsonSchema[None] = Field(None, description="Paging notes.")


class FileListEntry(_Open):
    """One file of a record's manifest."""

    key: str = Field(description="File key (name).")
    size: Number | SkipJsonSchema[None] = Field(None, description="Size in bytes.")
    mimetype: str | SkipJsonSchema[None] = Field(None, description="MIME type as Zenodo reports it.")
    md5: str | SkipJsonSchema[None] = Field(None, description="MD5 checksum (hex).")
    download_url: str = Field(description="Public download URL.")
    previewable: bool = Field(description="True when zenodo_read_file can show it as text.")
    listable: bool = Field(description="True for a ZIP whose members zenodo_list_files can list.")


class ArchiveInfo(_Open):
    """The ZIP being listed (archive mode)."""

    key: str = Field(description="Key of the ZIP file.")
    size: Number | SkipJsonSchema[None] = Field(None, description="ZIP size in bytes.")
    download_url: str = Field(description="Download URL of the ZIP.")
    listed_members: Number = Field(description="Members Zenodo listed.")
    upstream_truncated: bool = Field(description="True when Zenodo cut the listing (1,000 nodes).")
    directory_count: Number = Field(description="Directories in the listing.")


class ArchiveMember(_Open):
    """One member of a ZIP."""

    path: str = Field(description="Member path inside the ZIP.")
    size: Number | SkipJsonSchema[None] = Field(None, description="Uncompressed size in bytes.")
    compressed_size: Number | SkipJsonSchema[None] = Field(None, description="Compressed size in bytes.")
    mimetype: str | SkipJsonSchema[None] = Field(None, description="MIME type.")
    previewable: bool = Field(description="True when zenodo_read_file can show it as text.")


class ListFilesView(_Open):
    """The structured result of ``zenodo_list_files``."""

    recid: str = Field(description="Record id whose files are listed.")
    kind: Literal["manifest", "archive"] = Field(description="manifest (the record's files) or archive.")
    access_status: str = Field(description="Record access status.")
    files_access: str | SkipJsonSchema[None] = Field(None, description="File access: public or restricted.")
    embargo_until: str | SkipJsonSchema[None] = Field(None, description="Embargo end, when active.")
    files_enabled: bool = Field(description="False for a metadata-only deposit.")
    key_contains: str | SkipJsonSchema[None] = Field(None, description="The substring filter applied.")
    offset: Number = Field(description="Entries skipped.")
    limit: Number = Field(description="Most entries returned.")
    matched: Number = Field(description="Entries matching key_contains (all when absent).")
    has_more: bool = Field(description="True when entries remain past this page.")
    next_offset: Number | SkipJsonSchema[None] = Field(None, description="Offset of the next page.")
    file_count: Number | SkipJsonSchema[None] = Field(None, description="Files in the record (manifest).")
    total_bytes: Number | SkipJsonSchema[None] = Field(None, description="Total bytes (manifest).")
    listed_from: Literal["record", "files_endpoint"] | SkipJsonSchema[None] = Field(
        None,
        description="Where the manifest comes from: the record body, or Zenodo's files endpoint when the "
        "body lists fewer files than file_count.",
    )
    unlisted: Number | SkipJsonSchema[None] = Field(
        None,
        description="Files counted in file_count that no Zenodo answer listed (not in entries); the "
        "notice says how to reach them.",
    )
    files_list_url: str | SkipJsonSchema[None] = Field(
        None, description="Zenodo API URL listing every file of the record, when some are unlisted."
    )
    entries: list[FileListEntry] | SkipJsonSchema[None] = Field(None, description="Files (manifest mode).")
    archive: ArchiveInfo | SkipJsonSchema[None] = Field(None, description="The ZIP (archive mode).")
    members: list[ArchiveMember] | SkipJsonSchema[None] = Field(None, description="Members (archive mode).")
    truncated: bool = Field(description="True when entries remain past this page.")
    shown: Number = Field(description="Entries on this page.")
    cap: Number = Field(description="limit.")
    totalCount: Number = Field(description="Same as matched.")
    notice: str | SkipJsonSchema[None] = Field(None, description="Access, paging and truncation notes.")


class RightsBrief(_Open):
    """A license of the record."""

    id: str | SkipJsonSchema[None] = Field(None, description="License id.")
    title: str = Field(description="License title.")


class ReadFileView(_Open):
    """The structured result of ``zenodo_read_file``."""

    recid: str = Field(description="Record id.")
    key: str = Field(description="File key.")
    archive_member: str | SkipJsonSchema[None] = Field(None, description="ZIP member read, when given.")
    status: Literal["text", "not_text", "restricted", "empty"] = Field(description="What came back.")
    mimetype: str | SkipJsonSchema[None] = Field(None, description="MIME type.")
    file_size: Number | SkipJsonSchema[None] = Field(None, description="File (or member) size in bytes.")
    md5: str | SkipJsonSchema[None] = Field(None, description="MD5 of the file (top-level files only).")
    text: str | SkipJsonSchema[None] = Field(None, description="The text excerpt, when status is text.")
    offset_bytes: Number = Field(description="Byte offset the excerpt starts at.")
    bytes_returned: Number = Field(description="Bytes of the file the excerpt covers.")
    next_offset: Number | SkipJsonSchema[None] = Field(None, description="offset_bytes of the next excerpt.")
    has_more: bool = Field(description="True when bytes remain past the excerpt.")
    replacement_chars: Number = Field(description="U+FFFD characters from undecodable bytes.")
    rights: list[RightsBrief] = Field(description="Licenses of the record (they cover its files).")
    record_url: str = Field(description="Record landing page.")
    download_url: str = Field(description="Download URL of the file.")
    files_access: str | SkipJsonSchema[None] = Field(None, description="File access: public or restricted.")
    notice: str | SkipJsonSchema[None] = Field(
        None, description="Why no text came back, or how to read more."
    )


class VocabularyEntry(BaseModel):
    """One vocabulary entry; extra fields depend on the vocabulary (slug, ror_id, number, url, ...)."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    filter_param: str = Field(description="The zenodo_search_records parameter this entry feeds.")
    filter_value: str = Field(description="The value to pass there.")
    label: str = Field(description="Human-readable name.")


class LookupVocabularyView(_Open):
    """The structured result of ``zenodo_lookup_vocabulary``."""

    vocabulary: str = Field(description="communities, funders, awards, licenses or resource_types.")
    query: str | SkipJsonSchema[None] = Field(None, description="The query, when given.")
    total: Number = Field(description="Matching entries.")
    page: Number = Field(description="This page (1-based).")
    size: Number = Field(description="Page size (1-25).")
    has_more: bool = Field(description="True when a next page exists.")
    next_page: Number | SkipJsonSchema[None] = Field(None, description="The next page, when has_more.")
    entries: list[VocabularyEntry] = Field(description="Entries of this page.")
    truncated: bool = Field(description="True when more entries exist past this page.")
    shown: Number = Field(description="Entries on this page.")
    cap: Number = Field(description="Page size.")
    totalCount: Number = Field(description="Same as total.")
    notice: str | SkipJsonSchema[None] = Field(None, description="Zero-hit or paging advice.")
