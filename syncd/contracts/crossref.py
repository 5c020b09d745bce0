"""Output contract of ``crossref_get_work`` (anchors §1a, ``crossref_get_work``), as pydantic v2 models.

Field names are the contract's camelCase names. Every field except ``WorkView.doi`` is optional and is
*absent* when Crossref has nothing deposited: build with ``None`` and serialise with
``model_dump(exclude_none=True)``; a default is never fabricated. The ``description=`` texts become the
MCP tool's output JSON schema (``WorkView.model_json_schema()``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Affiliation",
    "Contributor",
    "Funder",
    "License",
    "Link",
    "PublishedDate",
    "Relation",
    "Update",
    "WorkView",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


class Affiliation(_Model):
    """One ``affiliation[]`` entry of a Crossref contributor."""

    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"description": "Institutional affiliation of a contributor."}
    )

    name: str | None = Field(
        None, description="Affiliation name as deposited (text-normalized). Absent for ROR-only entries."
    )
    ror: str | None = Field(
        None,
        description="ROR identifier of the institution, as deposited (e.g. https://ror.org/007ecwd34), "
        "when the publisher asserted one.",
    )


class Contributor(_Model):
    """An author or editor (Crossref ``author[]`` / ``editor[]``); ``role`` and ``suffix`` are dropped."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"description": "Author or editor."})

    given: str | None = Field(None, description="Given (first) name(s).")
    family: str | None = Field(None, description="Family (last) name.")
    name: str | None = Field(
        None,
        description="Name when no given/family split is deposited (often an organisation or consortium).",
    )
    orcid: str | None = Field(
        None,
        description="ORCID iD as the bare 16-character identifier (e.g. 0000-0002-1825-0097), taken from "
        "the deposited https://orcid.org/ URI.",
    )
    affiliation: list[Affiliation] | None = Field(
        None, description="Institutional affiliations, in deposited order."
    )
    sequence: str | None = Field(None, description="Author order role: 'first' or 'additional'.")


class Update(_Model):
    """One ``updated-by[]`` / ``update-to[]`` entry (``label`` dropped; entries never merged)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"description": "A post-publication update (correction, retraction, ...)."},
    )

    doi: str = Field(
        description="DOI of the other side: in updatedBy the notice's DOI, in updateTo the updated work's "
        "DOI. May equal this work's own DOI when the update was recorded in place."
    )
    type: str = Field(
        description="Update type: correction, erratum, corrigendum, addendum, retraction, withdrawal, "
        "expression_of_concern, new_version, new_edition, and others."
    )
    source: str | None = Field(
        None,
        description="Who asserted the update: 'publisher' or 'retraction-watch'. Absent when Crossref "
        "records none (older deposits).",
    )
    recordId: str | None = Field(None, description="Retraction Watch record id (source retraction-watch).")
    updated: str | None = Field(
        None, description="Date of the update as ISO 8601 (YYYY-MM-DD, or YYYY-MM / YYYY when partial)."
    )


class Relation(_Model):
    """A group of ``relation`` entries sharing relation type, id type and asserting party."""

    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"description": "Related identifiers of one kind."}
    )

    type: str = Field(
        description="Relation type as Crossref names it (is-preprint-of, has-preprint, is-version-of, "
        "has-review, is-supplemented-by, references, ...)."
    )
    idType: str | None = Field(None, description="Identifier type of ids: doi, uri, issn, arxiv, ...")
    assertedBy: str | None = Field(
        None, description="Which side asserted the relation: 'subject' (this work) or 'object' (the other)."
    )
    ids: list[str] = Field(
        description="Related identifiers in Crossref order. Only Crossref-registered DOIs resolve through "
        "crossref_get_work; others (DataCite, URIs) must be looked up elsewhere."
    )


class PublishedDate(_Model):
    """Publication date: the first of published, published-print, published-online, issued naming one."""

    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"description": "Primary publication date (partial dates allowed)."}
    )

    year: int = Field(description="Year.")
    month: int | None = Field(None, description="Month (1-12); absent when Crossref records it as unknown.")
    day: int | None = Field(None, description="Day of month; absent when unknown or when the month is.")


class Funder(_Model):
    """One ``funder[]`` entry. A ROR-only funder carries ``ror`` and no ``name``, never a blank entry."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"description": "Funding acknowledgement."})

    name: str | None = Field(None, description="Funder name as deposited (text-normalized).")
    doi: str | None = Field(None, description="Open Funder Registry DOI (10.13039/...).")
    ror: str | None = Field(None, description="ROR identifier of the funder, as deposited.")
    award: list[str] | None = Field(None, description="Grant or award numbers, as deposited.")


class License(_Model):
    """One ``license[]`` entry."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"description": "License entry."})

    url: str = Field(description="License URL.")
    contentVersion: str | None = Field(
        None, description="Version the license applies to: vor, am, tdm, unspecified."
    )
    delayInDays: int | None = Field(None, description="Embargo delay in days from the publication date.")


class Link(_Model):
    """One ``link[]`` entry (registered full-text link)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"description": "Registered full-text link."})

    url: str = Field(description="Full-text URL.")
    contentType: str | None = Field(None, description="MIME type of the linked content.")
    intendedApplication: str | None = Field(
        None, description="Intended use: text-mining, similarity-checking, syndication, unspecified."
    )


class WorkView(_Model):
    """``structuredContent`` of ``crossref_get_work``: one Crossref work, authors paged.

    Built from a ``GET /works/{doi}`` ``message`` by :func:`syncd.normalize.crossref.work_view`.
    """

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "description": "Crossref metadata record of one DOI. Every field except doi is absent when "
            "not deposited. The author list is paged by offset/limit; every other field is complete."
        },
    )

    doi: str = Field(description="DOI as Crossref returns it (canonical lowercase).")
    title: str | None = Field(None, description="Title (title[0]), markup stripped.")
    subtitle: str | None = Field(
        None, description="Subtitle (subtitle[0], else short-title[0]), markup stripped."
    )
    type: str | None = Field(
        None,
        description="Work type, e.g. journal-article, book-chapter, posted-content, proceedings-article.",
    )
    authors: list[Contributor] | None = Field(
        None, description="This page of the author list (offset/limit); role is dropped."
    )
    authorCount: int | None = Field(None, description="Total number of deposited authors (all pages).")
    offset: int | None = Field(None, description="Index of the first author on this page (0-based).")
    editors: list[Contributor] | None = Field(
        None, description="Editors, in the author entry shape; returned whole, never paged or counted."
    )
    updatedBy: list[Update] | None = Field(
        None,
        description="Corrections, retractions, expressions of concern, new versions recorded against this "
        "work (publisher or Retraction Watch). An absent list does not prove the work was never updated.",
    )
    updateTo: list[Update] | None = Field(None, description="Works this record is an update notice for.")
    relations: list[Relation] | None = Field(
        None,
        description="Related identifiers grouped by relation type, id type and asserting party, in Crossref "
        "order (preprint/published version, versions, reviews, supplements, ...).",
    )
    abstract: str | None = Field(
        None,
        description="Abstract as plain text (JATS markup removed, paragraphs separated by a blank line). "
        "Many records have none.",
    )
    isReferencedByCount: int | None = Field(
        None, description="Incoming citation count known to Crossref (citing works are not listed)."
    )
    referencesCount: int | None = Field(
        None, description="Number of outgoing references deposited (entries via crossref_get_references)."
    )
    containerTitle: str | None = Field(
        None, description="Journal, book, series or proceedings title (container-title[0])."
    )
    volume: str | None = Field(None, description="Volume, as deposited.")
    issue: str | None = Field(None, description="Issue, as deposited.")
    page: str | None = Field(None, description="Page or page range, as deposited.")
    articleNumber: str | None = Field(None, description="Article number (article-number), as deposited.")
    issn: list[str] | None = Field(None, description="ISSNs of the container, as deposited.")
    isbn: list[str] | None = Field(None, description="ISBNs, as deposited.")
    publisher: str | None = Field(None, description="Publisher name.")
    published: PublishedDate | None = Field(
        None,
        description="First of published, published-print, published-online, issued that names a date; a "
        "component Crossref records as unknown is omitted with everything below it.",
    )
    funders: list[Funder] | None = Field(None, description="Funding acknowledgements, in deposited order.")
    licenses: list[License] | None = Field(None, description="License terms.")
    links: list[Link] | None = Field(None, description="Registered full-text links.")
    url: str | None = Field(None, description="DOI resolution URL (URL).")
    subject: list[str] | None = Field(None, description="Subject classification terms.")
    language: str | None = Field(None, description="Language code as deposited (e.g. en).")
    nextOffset: int | None = Field(
        None, description="Offset of the next author page; present only when authors remain."
    )
    truncated: bool | None = Field(
        None, description="True when the author list continues past this page; absent otherwise."
    )
    shown: int | None = Field(
        None, description="Number of authors on this page; present only when authors remain."
    )
    cap: int | None = Field(
        None, description="Authors-per-page limit applied; present only when authors remain."
    )
    notice: str | None = Field(
        None,
        description="Guidance for the caller: the update notice (when updatedBy exists) first, then author "
        "paging guidance or an offset-past-end explanation.",
    )
