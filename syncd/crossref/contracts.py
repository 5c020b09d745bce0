"""Output contract of ``crossref_get_work`` (anchors §1a, ``crossref_get_work``), as pydantic v2 models.

Field names are the contract's camelCase names. Every field except ``WorkView.doi`` is optional and is
*absent* when Crossref has nothing deposited: build with ``None`` and serialise with
``model_dump(exclude_none=True)``; a default is never fabricated. The ``description=`` texts become the
MCP tool's output JSON schema (``WorkView.model_json_schema()``).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Affiliation",
    "Assertion",
    "ClinicalTrial",
    "ContractModel",
    "Contributor",
    "Event",
    "Funder",
    "Institution",
    "License",
    "Link",
    "PublishedDate",
    "Reference",
    "ReferencesView",
    "Relation",
    "Update",
    "WorkView",
]


class ContractModel(BaseModel):
    """Base of the Crossref contract models: unknown keys refused; built on first use (``defer_build``)."""

    model_config = ConfigDict(extra="forbid", frozen=False, defer_build=True)


class Affiliation(ContractModel):
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


class Contributor(ContractModel):
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
        description="ORCID iD as Crossref relays it: the deposited URI, e.g. "
        "https://orcid.org/0000-0002-1825-0097 (http://orcid.org/... in older deposits).",
    )
    affiliation: list[Affiliation] | None = Field(
        None, description="Institutional affiliations, in deposited order."
    )
    sequence: str | None = Field(None, description="Author order role: 'first' or 'additional'.")


class PublishedDate(ContractModel):
    """Publication date: the first of published, published-print, published-online, issued naming one."""

    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"description": "Primary publication date (partial dates allowed)."}
    )

    year: int = Field(description="Year.")
    month: int | None = Field(None, description="Month (1-12); absent when Crossref records it as unknown.")
    day: int | None = Field(None, description="Day of month; absent when unknown or when the month is.")


class Update(ContractModel):
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
    updated: PublishedDate | None = Field(
        None, description="Date of the update as Crossref's date parts {year, month?, day?}."
    )


class Relation(ContractModel):
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


class Funder(ContractModel):
    """One ``funder[]`` entry. A ROR-only funder carries ``ror`` and no ``name``, never a blank entry."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"description": "Funding acknowledgement."})

    name: str | None = Field(None, description="Funder name as deposited (text-normalized).")
    doi: str | None = Field(None, description="Open Funder Registry DOI (10.13039/...).")
    ror: str | None = Field(None, description="ROR identifier of the funder, as deposited.")
    award: list[str] | None = Field(None, description="Grant or award numbers, as deposited.")


class License(ContractModel):
    """One ``license[]`` entry."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"description": "License entry."})

    url: str = Field(description="License URL.")
    contentVersion: str | None = Field(
        None, description="Version the license applies to: vor, am, tdm, unspecified."
    )
    delayInDays: int | None = Field(None, description="Embargo delay in days from the publication date.")


class Link(ContractModel):
    """One ``link[]`` entry (registered full-text link)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"description": "Registered full-text link."})

    url: str = Field(description="Full-text URL.")
    contentType: str | None = Field(None, description="MIME type of the linked content.")
    intendedApplication: str | None = Field(
        None, description="Intended use: text-mining, similarity-checking, syndication, unspecified."
    )


class ClinicalTrial(ContractModel):
    """A clinical trial registration the work names (``clinical-trial-number[]``)."""

    number: str = Field(description="Trial number as deposited (e.g. nct03797326).")
    registry: str | None = Field(None, description="Registry DOI (e.g. 10.18810/clinical-trials-gov).")
    type: str | None = Field(None, description="pre-results, results or post-results, when deposited.")


class Assertion(ContractModel):
    """One Crossmark assertion (``assertion[]``), whole and in deposited order."""

    name: str | None = Field(
        None, description="Assertion name (e.g. received, copyright, conflict_of_interest)."
    )
    label: str | None = Field(None, description="Human-readable label.")
    value: str | None = Field(None, description="Value as normalized text (never parsed into a date).")
    url: str | None = Field(None, description="Link, omitted where it repeats value.")
    groupName: str | None = Field(None, description="Group name (e.g. publication_history).")
    groupLabel: str | None = Field(None, description="Group label (tells ethics from competing interests).")


class Event(ContractModel):
    """The conference a proceedings paper was presented at (``event``)."""

    name: str | None = Field(None, description="Conference name.")
    acronym: str | None = Field(None, description="Conference acronym.")
    location: str | None = Field(None, description="Place, as deposited.")
    start: PublishedDate | None = Field(None, description="First day.")
    end: PublishedDate | None = Field(None, description="Last day.")


class Institution(ContractModel):
    """An institution of the work (``institution[]``): a thesis's awarding body, a preprint's server..."""

    name: str | None = Field(None, description="Name; absent when only a ROR id is deposited.")
    ror: str | None = Field(None, description="ROR id, when deposited.")
    place: list[str] | None = Field(None, description="Places, as deposited.")
    department: list[str] | None = Field(None, description="Departments, as deposited.")
    acronym: list[str] | None = Field(None, description="Acronyms, as deposited.")


class WorkView(ContractModel):
    """``structuredContent`` of ``crossref_get_work``: one Crossref work, authors paged.

    Built from a ``GET /works/{doi}`` ``message`` by :func:`syncd.crossref.views.work_view`.

    Its lists (authors, editors, updates, relations, funders, licenses, links, ...) are published by
    their items' type alone (``wire_item_fields``, :func:`syncd.contracts.common.wire_item_fields`):
    a client's check of a warm answer walks each author once, not each author's fields. The model
    stays the whole contract the server checks every answer against.
    """

    wire_item_fields: ClassVar[bool] = False

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
        description="Abstract as plain text on one line (JATS markup removed, section titles kept, sections "
        "joined by single spaces). "
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
    containerTitles: list[str] | None = Field(
        None, description="Every container title in deposited order (series, then book or volume)."
    )
    memberId: str | None = Field(
        None, description="Crossref member holding the DOI now (member); pass to crossref_get_member."
    )
    clinicalTrialNumbers: list[ClinicalTrial] | None = Field(
        None, description="Trial registrations the work names; absence does not mean no trial."
    )
    assertions: list[Assertion] | None = Field(None, description="Crossmark assertions, in deposited order.")
    event: Event | None = Field(None, description="Conference of a proceedings paper.")
    institutions: list[Institution] | None = Field(
        None, description="Institutions: a thesis's awarding body, a preprint's server, a report's labs."
    )
    degree: list[str] | None = Field(None, description="Degree of a thesis, as deposited.")
    approved: PublishedDate | None = Field(None, description="Approval date of a dissertation or standard.")
    subtype: str | None = Field(None, description="Subtype (e.g. preprint for posted-content).")
    groupTitle: str | None = Field(None, description="Group title of a preprint (e.g. a bioRxiv subject).")
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


# --------------------------------------------------------------------------------------------------
# crossref_get_references
# --------------------------------------------------------------------------------------------------


class Reference(ContractModel):
    """One deposited reference (``reference[]``); identifiers byte-exact, text normalized."""

    key: str | None = Field(None, description="Publisher's key for the reference.")
    doi: str | None = Field(None, description="DOI of the cited work when deposited or matched by Crossref.")
    doiAssertedBy: str | None = Field(None, description="'publisher' (deposited) or 'crossref' (matched).")
    unstructured: str | None = Field(None, description="Citation string, markup stripped, entities decoded.")
    author: str | None = Field(None, description="First author as deposited.")
    year: str | None = Field(None, description="Year as deposited.")
    journalTitle: str | None = Field(None, description="Journal title as deposited.")
    articleTitle: str | None = Field(None, description="Article title as deposited.")
    volumeTitle: str | None = Field(None, description="Title of a cited book or volume.")
    seriesTitle: str | None = Field(None, description="Series title.")
    volume: str | None = Field(None, description="Volume.")
    issue: str | None = Field(None, description="Issue.")
    firstPage: str | None = Field(None, description="First page.")
    edition: str | None = Field(None, description="Edition.")
    issn: str | None = Field(None, description="ISSN as deposited.")


class ReferencesView(ContractModel):
    """``structuredContent`` of ``crossref_get_references``."""

    doi: str = Field(description="The citing work's DOI.")
    referenceCount: int = Field(
        description="References Crossref counts for the work (its references-count, the same number "
        "crossref_get_work gives as referencesCount), listed or not."
    )
    listedCount: int | None = Field(
        None,
        description="Entries of the reference list Crossref exposes, the ones this tool pages through "
        "(offset/nextOffset); present when it differs from referenceCount.",
    )
    offset: int = Field(description="Index of the first reference on this page.")
    references: list[Reference] = Field(description="This page of the reference list.")
    nextOffset: int | None = Field(None, description="Offset of the next page; present when more remain.")
    truncated: bool | None = Field(None, description="True when references remain past this page.")
    shown: int | None = Field(None, description="References on this page; present when more remain.")
    cap: int | None = Field(None, description="Page size applied; present when more remain.")
    notice: str | None = Field(
        None, description="No reference list indexed (coverage caveat), or offset past the end of the list."
    )
