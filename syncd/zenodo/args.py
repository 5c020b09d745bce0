"""The Zenodo tools' input models: one :class:`~syncd.tools.params.ToolArgs` per tool.

Each model is the single declaration of its tool's parameters (the ``inputSchema`` clients see and
the validation of every call). Contract: ``../shared/spec/anchors.md`` §1b (names, bounds and
defaults of the Zenodo MCP server's tools).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from syncd.tools.params import ToolArgs

__all__ = [
    "CITATION_DESCRIPTION",
    "CURSOR_DESCRIPTION",
    "ID_DESCRIPTION",
    "GetRecordArgs",
    "ListFilesArgs",
    "ListVersionsArgs",
    "LookupVocabularyArgs",
    "ReadFileArgs",
    "SearchRecordsArgs",
]

ID_DESCRIPTION = (
    "The deposit to resolve: a record id (22705923), a Zenodo DOI (10.5281/zenodo.22705923, doi: prefix "
    "and any case accepted), a concept DOI or concept record id (resolves to the latest version), another "
    "DOI registered to a Zenodo record, or a zenodo.org/records or doi.org URL."
)
CURSOR_DESCRIPTION = (
    "A continuations[].cursor from an earlier zenodo_get_record response, passed unchanged with that "
    "continuation's id as id. Returns that field's next window (8,000 characters of text, or the next page "
    "of entries) as window, in place of record. Omit to get the record."
)
CITATION_DESCRIPTION = (
    "Include a formatted citation of the resolved version: bibtex, csl-json, or a text style (apa, "
    "chicago-author-date, harvard-cite-them-right, ieee, modern-language-association, nature). Case, spaces, "
    "hyphens, and underscores are ignored when matching (BibTeX, APA, CSL JSON). Omit for none. Rendered "
    "locally from the stored record, so it works offline."
)

RecordId = Annotated[str, Field(min_length=1, max_length=500, description=ID_DESCRIPTION)]


class GetRecordArgs(ToolArgs):
    """``zenodo_get_record`` input."""

    id: RecordId
    cursor: str | None = Field(None, max_length=500, description=CURSOR_DESCRIPTION)
    citation_style: str | None = Field(None, max_length=64, description=CITATION_DESCRIPTION)


class SearchRecordsArgs(ToolArgs):
    """``zenodo_search_records`` input."""

    query: str | None = Field(
        None,
        max_length=1000,
        description="Search terms (OR-ed unless joined by AND; quote phrases; field syntax such as "
        'metadata.title:"..." works). Omit to browse.',
    )
    resource_type: str | list[str] | None = Field(
        None, description="Resource type ids (dataset, software, publication-article, ...); up to 10."
    )
    community: str | None = Field(None, max_length=200, description="Community slug, UUID or URL.")
    funder: str | None = Field(
        None,
        max_length=200,
        description="Funder ROR id, ROR URL or Crossref Funder DOI (10.13039/..., doi:, doi.org URL); "
        "a name is refused with candidates.",
    )
    award: str | None = Field(
        None,
        max_length=200,
        description="Award id <ror>::<number>, an award DOI or URL (CORDIS 10.3030/<n>), or a grant number.",
    )
    creator_orcid: str | None = Field(None, max_length=100, description="A creator's ORCID iD.")
    file_type: str | list[str] | None = Field(None, description="File extensions (csv, pdf, ...); up to 10.")
    license: str | None = Field(None, max_length=64, description="License id (cc-by-4.0, mit).")
    access_status: str | None = Field(
        None, max_length=32, description="open, restricted, embargoed or metadata-only."
    )
    published_from: str | None = Field(None, max_length=10, description="YYYY, YYYY-MM or YYYY-MM-DD.")
    published_to: str | None = Field(None, max_length=10, description="YYYY, YYYY-MM or YYYY-MM-DD.")
    all_versions: bool = Field(False, description="Search every version, not only the latest.")
    sort: str | None = Field(
        None,
        max_length=32,
        description="bestmatch (default with a query), newest (default without), oldest, mostviewed, "
        "mostdownloaded, updated-desc, updated-asc.",
    )
    page: int = Field(1, ge=1, description="Page (1-based); page x size <= 10,000.")
    size: int = Field(10, ge=1, le=25, description="Hits per page (1-25).")


class ListVersionsArgs(ToolArgs):
    """``zenodo_list_versions`` input."""

    id: RecordId
    page: int = Field(1, ge=1, description="Page (1-based); page x size <= 10,000.")
    size: int = Field(25, ge=1, le=25, description="Versions per page (1-25).")


class ListFilesArgs(ToolArgs):
    """``zenodo_list_files`` input."""

    id: RecordId
    archive_key: str | None = Field(
        None, max_length=1000, description="Exact key of a .zip file: list its members."
    )
    key_contains: str | None = Field(
        None, max_length=200, description="Case-insensitive substring filter on keys."
    )
    offset: int = Field(0, ge=0, description="Entries to skip.")
    limit: int = Field(50, ge=1, le=200, description="Most entries returned (1-200).")


class ReadFileArgs(ToolArgs):
    """``zenodo_read_file`` input."""

    id: RecordId
    key: str = Field(min_length=1, max_length=1000, description="Exact file key.")
    archive_member: str | None = Field(
        None, max_length=1000, description="Path of a member inside the ZIP named by key."
    )
    offset_bytes: int = Field(0, ge=0, description="Byte offset to start at (0 with archive_member).")
    max_bytes: int = Field(16_384, ge=256, le=65_536, description="Most bytes read (256-65,536).")


class LookupVocabularyArgs(ToolArgs):
    """``zenodo_lookup_vocabulary`` input."""

    vocabulary: str = Field(
        min_length=1,
        max_length=32,
        description="communities, funders, awards, licenses or resource_types (singular and "
        "grant/grants accepted).",
    )
    query: str | None = Field(
        None,
        max_length=200,
        description="Search terms; omit to browse. A ROR id or Funder DOI (funders), or an award id, "
        "DOI or URL (awards), answers that one entry.",
    )
    funder: str | None = Field(
        None, max_length=200, description="Awards only: funder ROR id, ROR URL or Funder DOI."
    )
    page: int = Field(1, ge=1, description="Page (1-based); page x size <= 10,000.")
    size: int = Field(10, ge=1, le=25, description="Entries per page (1-25).")
