"""Output contract of ``crossref_get_work`` (anchors §1a, ``crossref_get_work``), as pydantic v2 models.

Field names are the contract's camelCase names. Every field except ``WorkView.doi`` is optional and is
*absent* when Crossref has nothing deposited: build with ``None`` and serialise with
``model_dump(exclude_none=True)``; a default is never fabricated. The ``description=`` texts become the
MCP tool's output JSON schema (``WorkView.model_json_schema()``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from syncd.contracts.common import CacheInfo
from syncd.retractions.contracts import RetractionVerdict, RetractionWatchVersion

__all__ = [
    "Affiliation",
    "Contributor",
    "CountsInfo",
    "CoverageEntry",
    "FacetCounts",
    "FacetValue",
    "Funder",
    "FunderRecord",
    "GetWorksView",
    "JournalRecord",
    "JournalSubject",
    "License",
    "Link",
    "ListWork",
    "MemberView",
    "PrefixView",
    "PublishedDate",
    "Reference",
    "ReferencesView",
    "Relation",
    "SearchFundersView",
    "SearchJournalsView",
    "SearchWorksInput",
    "SearchWorksView",
    "SummaryAuthor",
    "TypeCount",
    "Update",
    "WorkSummary",
    "WorkView",
    "WorksCounts",
    "WorksItem",
    "YearCount",
]


class _Model(BaseModel):
    """Base of the Crossref contract models: unknown keys refused; built on first use (``defer_build``)."""

    model_config = ConfigDict(extra="forbid", frozen=False, defer_build=True)


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
        description="ORCID iD as Crossref relays it: the deposited URI, e.g. "
        "https://orcid.org/0000-0002-1825-0097 (http://orcid.org/... in older deposits).",
    )
    affiliation: list[Affiliation] | None = Field(
        None, description="Institutional affiliations, in deposited order."
    )
    sequence: str | None = Field(None, description="Author order role: 'first' or 'additional'.")


class PublishedDate(_Model):
    """Publication date: the first of published, published-print, published-online, issued naming one."""

    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"description": "Primary publication date (partial dates allowed)."}
    )

    year: int = Field(description="Year.")
    month: int | None = Field(None, description="Month (1-12); absent when Crossref records it as unknown.")
    day: int | None = Field(None, description="Day of month; absent when unknown or when the month is.")


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
    updated: PublishedDate | None = Field(
        None, description="Date of the update as Crossref's date parts {year, month?, day?}."
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


class ClinicalTrial(_Model):
    """A clinical trial registration the work names (``clinical-trial-number[]``)."""

    number: str = Field(description="Trial number as deposited (e.g. nct03797326).")
    registry: str | None = Field(None, description="Registry DOI (e.g. 10.18810/clinical-trials-gov).")
    type: str | None = Field(None, description="pre-results, results or post-results, when deposited.")


class Assertion(_Model):
    """One Crossmark assertion (``assertion[]``), whole and in deposited order."""

    name: str | None = Field(
        None, description="Assertion name (e.g. received, copyright, conflict_of_interest)."
    )
    label: str | None = Field(None, description="Human-readable label.")
    value: str | None = Field(None, description="Value as normalized text (never parsed into a date).")
    url: str | None = Field(None, description="Link, omitted where it repeats value.")
    groupName: str | None = Field(None, description="Group name (e.g. publication_history).")
    groupLabel: str | None = Field(None, description="Group label (tells ethics from competing interests).")


class Event(_Model):
    """The conference a proceedings paper was presented at (``event``)."""

    name: str | None = Field(None, description="Conference name.")
    acronym: str | None = Field(None, description="Conference acronym.")
    location: str | None = Field(None, description="Place, as deposited.")
    start: PublishedDate | None = Field(None, description="First day.")
    end: PublishedDate | None = Field(None, description="Last day.")


class Institution(_Model):
    """An institution of the work (``institution[]``): a thesis's awarding body, a preprint's server..."""

    name: str | None = Field(None, description="Name; absent when only a ROR id is deposited.")
    ror: str | None = Field(None, description="ROR id, when deposited.")
    place: list[str] | None = Field(None, description="Places, as deposited.")
    department: list[str] | None = Field(None, description="Departments, as deposited.")
    acronym: list[str] | None = Field(None, description="Acronyms, as deposited.")


class WorkView(_Model):
    """``structuredContent`` of ``crossref_get_work``: one Crossref work, authors paged.

    Built from a ``GET /works/{doi}`` ``message`` by :func:`syncd.crossref.views.work_view`.
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
# crossref_search_works
# --------------------------------------------------------------------------------------------------

SORT_FIELDS = (
    "relevance",
    "score",
    "is-referenced-by-count",
    "published",
    "published-print",
    "published-online",
    "deposited",
    "indexed",
    "created",
    "updated",
    "references-count",
)
"""Sort names ``crossref_search_works`` accepts (anchors §1a)."""

SELECT_FIELDS = (
    "DOI",
    "title",
    "type",
    "author",
    "published",
    "published-print",
    "published-online",
    "container-title",
    "publisher",
    "is-referenced-by-count",
    "score",
    "abstract",
    "volume",
    "issue",
    "page",
    "article-number",
    "ISSN",
    "updated-by",
    "update-to",
)
"""Crossref ``select`` names ``fields`` accepts: the anchor's 17 plus the update links."""


class SearchWorksInput(_Model):
    """Normalized input of ``crossref_search_works`` (blank terms already dropped, aliases resolved)."""

    query: str | None = Field(None, description="Free-text query (Crossref query=).")
    queryBibliographic: str | None = Field(None, description="Whole-citation match (query.bibliographic=).")
    queryTitle: str | None = Field(None, description="Title-only match (query.title=).")
    queryAuthor: str | None = Field(None, description="Author-name match (query.author=).")
    queryContainerTitle: str | None = Field(
        None, description="Container-title match (query.container-title=)."
    )
    filter: dict[str, str] | None = Field(
        None, description="Crossref filters, hyphenated keys, string values."
    )
    fields: list[str] | None = Field(None, description="Crossref select names; DOI always included.")
    rows: int = Field(20, ge=0, le=100, description="Works per page (0 = counts/facets only).")
    authorLimit: int = Field(25, ge=1, le=500, description="Authors kept per work.")
    offset: int = Field(0, ge=0, description="Offset paging start (0-based).")
    cursor: str | None = Field(None, description='Cursor token ("*" starts a walk).')
    sort: str | None = Field(None, description="Sort field.")
    order: Literal["asc", "desc"] | None = Field(None, description="Sort direction.")
    facets: dict[str, str] | None = Field(None, description='Facet name -> "*" or a count.')


class SummaryAuthor(_Model):
    """One author of a work summary (names only)."""

    given: str | None = Field(None, description="Given name(s).")
    family: str | None = Field(None, description="Family name.")
    name: str | None = Field(None, description="Name when no given/family split is deposited.")


class WorkSummary(_Model):
    """One work of a ``crossref_search_works`` page (``fields`` may narrow it)."""

    doi: str = Field(description="DOI as Crossref returns it; pass to crossref_get_work for the full record.")
    title: str | None = Field(None, description="Title (title[0]), markup stripped.")
    type: str | None = Field(None, description="Work type, e.g. journal-article.")
    authors: list[SummaryAuthor] | None = Field(None, description="Authors, cut at authorLimit.")
    authorCount: int | None = Field(None, description="Full number of deposited authors.")
    published: PublishedDate | None = Field(
        None, description="First of published, published-print, published-online naming a date (no issued)."
    )
    containerTitle: str | None = Field(None, description="Journal/book title (container-title[0]).")
    volume: str | None = Field(None, description="Volume, as deposited.")
    issue: str | None = Field(None, description="Issue, as deposited.")
    page: str | None = Field(None, description="Page range, as deposited.")
    articleNumber: str | None = Field(None, description="Article number, as deposited.")
    issn: list[str] | None = Field(None, description="ISSNs of the container, as deposited.")
    publisher: str | None = Field(None, description="Publisher name.")
    isReferencedByCount: int | None = Field(None, description="Incoming citation count known to Crossref.")
    score: float | None = Field(None, description="Crossref relevance score (query searches only).")
    abstract: str | None = Field(None, description="Abstract as plain text (JATS removed).")
    updatedBy: list[Update] | None = Field(
        None, description="Corrections/retractions recorded against this work (screen a page for them)."
    )
    updateTo: list[Update] | None = Field(None, description="Works this record is an update notice for.")


class FacetValue(_Model):
    """One value of a facet and how many matching works carry it."""

    value: str = Field(description="Facet value as Crossref names it.")
    count: int = Field(description="Matching works with this value (over the whole result set).")


class FacetCounts(_Model):
    """Counts of one facet, highest first."""

    name: str = Field(description="Facet name (e.g. publisher-name, type-name, published).")
    values: list[FacetValue] = Field(
        description="Values ordered by count, highest first. Crossref's value-count only counts the values "
        "returned, so no distinct total is reported."
    )


class SearchWorksView(_Model):
    """``structuredContent`` of ``crossref_search_works``."""

    works: list[WorkSummary] = Field(
        description="Matching works. Empty when nothing matched, when an offset runs past the end, or on the "
        "page that ends a cursor walk: the notice says which."
    )
    totalResults: int = Field(description="Total matching records in Crossref (local matches when mirrored).")
    returned: int = Field(description="Number of records returned in this response.")
    nextOffset: int | None = Field(
        None,
        description="Offset that continues this page when syncd cut it to fit the answer budget "
        "(answer_max_chars); the notice says so.",
    )
    nextCursor: str | None = Field(
        None, description="Cursor for the next page; present only on a cursor page that returned records."
    )
    facets: list[FacetCounts] | None = Field(None, description="Facet counts, when facets were requested.")
    truncated: bool | None = Field(None, description="True when authorLimit cut at least one author list.")
    cap: int | None = Field(
        None, description="The per-work author cap applied; present only when a list was cut."
    )
    notice: str | None = Field(
        None,
        description="Why a page is empty (nothing matched / offset past end / cursor walk complete), the "
        "author-cap disclosure, the unfiltered-listing warning, and the local-mirror disclosure.",
    )


# --------------------------------------------------------------------------------------------------
# crossref_get_references
# --------------------------------------------------------------------------------------------------


class Reference(_Model):
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


class ReferencesView(_Model):
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


# --------------------------------------------------------------------------------------------------
# journals, funders, members, prefixes
# --------------------------------------------------------------------------------------------------


class CountsInfo(_Model):
    """DOI counts of a member or journal."""

    totalDois: int | None = Field(None, description="All registered DOIs.")
    currentDois: int | None = Field(None, description="DOIs of the current (last ~2 years) period.")
    backfileDois: int | None = Field(None, description="DOIs older than the current period.")


class CoverageEntry(_Model):
    """Metadata deposit coverage of one category, as fractions 0-1."""

    category: str = Field(description="Category: abstracts, references, orcids, funders, licenses, ...")
    current: float | None = Field(None, description="Fraction of current DOIs carrying it (0-1).")
    backfile: float | None = Field(None, description="Fraction of backfile DOIs carrying it (0-1).")


class JournalSubject(_Model):
    """A subject area of a journal."""

    name: str = Field(description="Subject name (ASJC).")


class YearCount(_Model):
    """DOIs issued in one year."""

    year: int = Field(description="Issued year.")
    count: int = Field(description="DOIs issued that year.")


class JournalRecord(_Model):
    """One Crossref journal record (``/journals``)."""

    title: str | None = Field(None, description="Journal title.")
    issnL: str | None = Field(None, description="Linking ISSN, when Crossref sends one.")
    issn: list[str] | None = Field(None, description="ISSNs, as deposited.")
    issnType: list[dict[str, str]] | None = Field(
        None, description="ISSNs with their form (print/electronic)."
    )
    publisher: str | None = Field(None, description="Publisher name.")
    subjects: list[JournalSubject] | None = Field(None, description="Subject areas.")
    totalDois: int | None = Field(None, description="Total registered DOIs.")
    counts: CountsInfo | None = Field(None, description="DOI counts (total/current/backfile).")
    coverage: list[CoverageEntry] | None = Field(None, description="Deposit coverage per category.")
    doisByYear: list[YearCount] | None = Field(
        None, description="DOIs by issued year, ascending (issn lookups only)."
    )


class ListWork(_Model):
    """A work of a journal's or funder's works list."""

    doi: str = Field(description="DOI; pass to crossref_get_work for the full record.")
    title: str | None = Field(None, description="Title, markup stripped.")
    type: str | None = Field(None, description="Work type.")
    published: PublishedDate | None = Field(None, description="Publication year and month (day omitted).")
    isReferencedByCount: int | None = Field(None, description="Incoming citation count.")


class SearchJournalsView(_Model):
    """``structuredContent`` of ``crossref_search_journals``."""

    journals: list[JournalRecord] = Field(description="Matching journals.")
    journalCount: int = Field(description="Journals on this page.")
    journalsTotal: int = Field(description="Total journals matching (1 for an ISSN lookup).")
    nextOffset: int | None = Field(None, description="Offset of the next journals page.")
    recentWorks: list[ListWork] | None = Field(None, description="Works page (include_works).")
    worksTotal: int | None = Field(None, description="Total works of the journal.")
    nextWorksOffset: int | None = Field(None, description="works_offset of the next works page.")
    nextWorksCursor: str | None = Field(None, description="works_cursor of the next works page.")
    notice: str | None = Field(None, description="No match, offset past end, ceiling reached, works skipped.")


class FunderRecord(_Model):
    """One Open Funder Registry record (``/funders``)."""

    id: str | None = Field(None, description="Registry id (e.g. 100000001); the DOI is 10.13039/<id>.")
    name: str | None = Field(None, description="Funder name.")
    altNames: list[str] | None = Field(None, description="Alternate names.")
    country: str | None = Field(None, description="Location, free text.")
    uri: str | None = Field(None, description="Funder DOI URI as Crossref sends it.")
    worksCount: int | None = Field(None, description="Works crediting this funder id (Registry count).")
    descendantWorksCount: int | None = Field(None, description="Works including registry descendants.")
    replacedBy: list[str] | None = Field(
        None, description="Successor ids (deprecated entry); never followed."
    )
    replaces: list[str] | None = Field(None, description="Ids this entry replaces.")
    descendants: list[str] | None = Field(
        None, description="Registry descendant ids, every depth (id lookups)."
    )


class SearchFundersView(_Model):
    """``structuredContent`` of ``crossref_search_funders``."""

    funders: list[FunderRecord] = Field(description="Matching funders.")
    funderCount: int = Field(description="Funders on this page.")
    fundersTotal: int = Field(description="Total funders matching (1 for an id lookup).")
    nextOffset: int | None = Field(None, description="Offset of the next funders page.")
    fundedWorks: list[ListWork] | None = Field(None, description="Funded works page (include_works).")
    fundedWorksTotal: int | None = Field(
        None, description="Total funded works, registry descendants included."
    )
    nextWorksOffset: int | None = Field(None, description="works_offset of the next works page.")
    nextWorksCursor: str | None = Field(None, description="works_cursor of the next works page.")
    notice: str | None = Field(
        None, description="Deprecation (replacedBy), no match, offset past end, ceiling."
    )


class TypeCount(_Model):
    """Works of one type."""

    type: str = Field(description="Work type.")
    count: int = Field(description="Number of works.")


class MemberView(_Model):
    """``structuredContent`` of ``crossref_get_member``."""

    id: int = Field(description="Member id.")
    primaryName: str | None = Field(None, description="Primary name.")
    names: list[str] | None = Field(None, description="Alternate and imprint names (primary removed).")
    location: str | None = Field(None, description="Location as deposited.")
    prefixes: list[str] | None = Field(None, description="Owned DOI prefixes.")
    counts: CountsInfo | None = Field(None, description="DOI counts.")
    worksByType: list[TypeCount] | None = Field(
        None, description="Works per type, zeros dropped, largest first."
    )
    coverage: list[CoverageEntry] | None = Field(None, description="Deposit coverage per category, by name.")
    deposits: bool | None = Field(None, description="Whether the member deposits at all.")
    depositsArticles: bool | None = Field(None, description="Whether the member deposits articles.")


class PrefixView(_Model):
    """``structuredContent`` of ``crossref_get_prefix``."""

    prefix: str = Field(description="The prefix (trailing segment of the prefix URI).")
    ownerName: str | None = Field(None, description="Name of the registrant the prefix record names.")
    memberId: int | None = Field(
        None, description="Member id named by the prefix record (crossref_get_member)."
    )


# --------------------------------------------------------------------------------------------------
# crossref_get_works
# --------------------------------------------------------------------------------------------------


class WorksItem(_Model):
    """One DOI of a ``crossref_get_works`` answer: the work's summary and updates, or why there is none."""

    input: str = Field(description="The DOI as given (any form: URL, doi: prefix, pasted).")
    doi: str | None = Field(
        None, description="The DOI: as Crossref returns it when found, else as parsed; absent when invalid."
    )
    found: bool = Field(description="True when Crossref's record is answered (from the store or upstream).")
    title: str | None = Field(None, description="Title (title[0]), markup stripped.")
    type: str | None = Field(None, description="Work type, e.g. journal-article.")
    authors: list[SummaryAuthor] | None = Field(
        None, description="First three authors (names only); crossref_get_work pages them all."
    )
    authorCount: int | None = Field(None, description="Number of deposited authors.")
    published: PublishedDate | None = Field(None, description="Primary publication date.")
    containerTitle: str | None = Field(None, description="Journal, book or proceedings title.")
    publisher: str | None = Field(None, description="Publisher name.")
    flags: list[Literal["retracted", "corrected", "expression_of_concern"]] | None = Field(
        None,
        description="What updatedBy says of this work: retracted (retraction, withdrawal, removal), "
        "corrected (correction, erratum, corrigendum, addendum), expression_of_concern. Absent when none; "
        "an absent list does not prove the work was never updated.",
    )
    updatedBy: list[Update] | None = Field(
        None, description="Updates recorded against this work (notices' DOIs, types, sources)."
    )
    updateTo: list[Update] | None = Field(None, description="Works this record is an update notice for.")
    notice: str | None = Field(None, description="The update notice, as crossref_get_work gives it.")
    reason: str | None = Field(
        None,
        description="Why nothing is answered: doi_not_found (Crossref said so for this DOI alone), "
        "doi_unconfirmed (left out of a list answer, not yet confirmed missing: ask again), "
        "invalid_parameter (not a DOI), upstream_unavailable, rate_limited, request_timeout, "
        "malformed_response, store_unavailable.",
    )
    message: str | None = Field(None, description="What went wrong, in words (with reason).")
    hint: str | None = Field(None, description="What to do about it (with reason).")
    registrationAgency: str | None = Field(
        None,
        description="The registration agency doi.org names for a DOI Crossref does not hold (DataCite...).",
    )
    zenodoRecordId: str | None = Field(None, description="A Zenodo DOI's record id (for zenodo_get_record).")
    agencyRecord: dict[str, Any] | None = Field(
        None,
        description="Another agency's DOI (DataCite): its record there {agency, found, title, "
        "resourceTypeGeneral, publicationYear, state, ..., cache} or its miss {found: false, missReason}.",
    )
    retryAfterS: float | None = Field(None, description="Seconds to wait before asking again (rate_limited).")
    cache: CacheInfo | None = Field(
        None, description="Where this item came from and how fresh it is (absent when nothing is stored)."
    )
    retraction: RetractionVerdict | None = Field(
        None,
        description="The retraction verdict from every signal (Crossref updatedBy, stored notices, the "
        "imported Retraction Watch data, the title); absent for an input that is not a DOI.",
    )


class WorksCounts(_Model):
    """Tallies over every DOI of the call (not only the ones shown)."""

    found: int = Field(description="DOIs answered with Crossref's record.")
    notFound: int = Field(description="DOIs Crossref does not hold (doi_not_found).")
    invalid: int = Field(description="Inputs that are not DOIs.")
    failed: int = Field(description="DOIs not answered because upstream could not be used.")
    retracted: int = Field(description="Works flagged retracted.")
    corrected: int = Field(description="Works flagged corrected.")
    expressionOfConcern: int = Field(description="Works flagged with an expression of concern.")


class GetWorksView(_Model):
    """``structuredContent`` of ``crossref_get_works``: one item per DOI given, in order."""

    requested: int = Field(description="Number of DOIs given.")
    offset: int = Field(description="Index of the first item shown (0-based).")
    returned: int = Field(description="Number of items shown.")
    counts: WorksCounts = Field(description="Tallies over every DOI given.")
    listRequests: int = Field(description="Crossref list requests this call sent (50 DOIs each at most).")
    items: list[WorksItem] = Field(description="One item per DOI, in the order given, from offset.")
    nextOffset: int | None = Field(
        None, description="Offset of the next item; present only when the answer was cut to fit."
    )
    notice: str | None = Field(None, description="Guidance: what was cut and the call that continues.")
    retractionWatch: RetractionWatchVersion | None = Field(
        None, description="The Retraction Watch version the verdicts rest on; absent when none was imported."
    )
