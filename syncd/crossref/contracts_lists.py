"""Output contracts of Crossref's list answers (anchors §1a), as pydantic v2 models.

``crossref_search_works`` (its input too), ``crossref_get_works`` (work summaries by DOI),
``crossref_search_journals``, ``crossref_search_funders``, ``crossref_get_member`` and
``crossref_get_prefix``. Conventions as in :mod:`syncd.crossref.contracts` (camelCase contract names,
absent fields built as ``None`` and dumped with ``exclude_none=True``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from syncd.contracts.common import CacheInfo
from syncd.contracts.retraction import RetractionVerdict, RetractionWatchVersion
from syncd.crossref.contracts import ContractModel, PublishedDate, Update

__all__ = [
    "SELECT_FIELDS",
    "SORT_FIELDS",
    "CountsInfo",
    "CoverageEntry",
    "FacetCounts",
    "FacetValue",
    "FunderRecord",
    "GetWorksView",
    "JournalRecord",
    "JournalSubject",
    "ListWork",
    "MemberView",
    "PrefixView",
    "SearchFundersView",
    "SearchJournalsView",
    "SearchWorksInput",
    "SearchWorksView",
    "SummaryAuthor",
    "TypeCount",
    "WorkSummary",
    "WorksCounts",
    "WorksItem",
    "YearCount",
]


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


class SearchWorksInput(ContractModel):
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


class SummaryAuthor(ContractModel):
    """One author of a work summary (names only)."""

    given: str | None = Field(None, description="Given name(s).")
    family: str | None = Field(None, description="Family name.")
    name: str | None = Field(None, description="Name when no given/family split is deposited.")


class WorkSummary(ContractModel):
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


class FacetValue(ContractModel):
    """One value of a facet and how many matching works carry it."""

    value: str = Field(description="Facet value as Crossref names it.")
    count: int = Field(description="Matching works with this value (over the whole result set).")


class FacetCounts(ContractModel):
    """Counts of one facet, highest first."""

    name: str = Field(description="Facet name (e.g. publisher-name, type-name, published).")
    values: list[FacetValue] = Field(
        description="Values ordered by count, highest first. Crossref's value-count only counts the values "
        "returned, so no distinct total is reported."
    )


class SearchWorksView(ContractModel):
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
# journals, funders, members, prefixes
# --------------------------------------------------------------------------------------------------


class CountsInfo(ContractModel):
    """DOI counts of a member or journal."""

    totalDois: int | None = Field(None, description="All registered DOIs.")
    currentDois: int | None = Field(None, description="DOIs of the current (last ~2 years) period.")
    backfileDois: int | None = Field(None, description="DOIs older than the current period.")


class CoverageEntry(ContractModel):
    """Metadata deposit coverage of one category, as fractions 0-1."""

    category: str = Field(description="Category: abstracts, references, orcids, funders, licenses, ...")
    current: float | None = Field(None, description="Fraction of current DOIs carrying it (0-1).")
    backfile: float | None = Field(None, description="Fraction of backfile DOIs carrying it (0-1).")


class JournalSubject(ContractModel):
    """A subject area of a journal."""

    name: str = Field(description="Subject name (ASJC).")


class YearCount(ContractModel):
    """DOIs issued in one year."""

    year: int = Field(description="Issued year.")
    count: int = Field(description="DOIs issued that year.")


class JournalRecord(ContractModel):
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


class ListWork(ContractModel):
    """A work of a journal's or funder's works list."""

    doi: str = Field(description="DOI; pass to crossref_get_work for the full record.")
    title: str | None = Field(None, description="Title, markup stripped.")
    type: str | None = Field(None, description="Work type.")
    published: PublishedDate | None = Field(None, description="Publication year and month (day omitted).")
    isReferencedByCount: int | None = Field(None, description="Incoming citation count.")


class SearchJournalsView(ContractModel):
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


class FunderRecord(ContractModel):
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


class SearchFundersView(ContractModel):
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


class TypeCount(ContractModel):
    """Works of one type."""

    type: str = Field(description="Work type.")
    count: int = Field(description="Number of works.")


class MemberView(ContractModel):
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


class PrefixView(ContractModel):
    """``structuredContent`` of ``crossref_get_prefix``."""

    prefix: str = Field(description="The prefix (trailing segment of the prefix URI).")
    ownerName: str | None = Field(None, description="Name of the registrant the prefix record names.")
    memberId: int | None = Field(
        None, description="Member id named by the prefix record (crossref_get_member)."
    )


# --------------------------------------------------------------------------------------------------
# crossref_get_works
# --------------------------------------------------------------------------------------------------


class WorksItem(ContractModel):
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


class WorksCounts(ContractModel):
    """Tallies over every DOI of the call (not only the ones shown)."""

    found: int = Field(description="DOIs answered with Crossref's record.")
    notFound: int = Field(description="DOIs Crossref does not hold (doi_not_found).")
    invalid: int = Field(description="Inputs that are not DOIs.")
    failed: int = Field(description="DOIs not answered because upstream could not be used.")
    retracted: int = Field(description="Works flagged retracted.")
    corrected: int = Field(description="Works flagged corrected.")
    expressionOfConcern: int = Field(description="Works flagged with an expression of concern.")


class GetWorksView(ContractModel):
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
