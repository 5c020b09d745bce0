"""Pure views of Crossref list and entity answers (anchors §1a).

Pure views of Crossref list and entity answers: search pages, references, journals, funders, members,
prefixes (anchors §1a). No I/O; every function takes a parsed upstream ``message``.

Text rules (anchors §3.6): titles through :func:`~syncd.normalize.text.jats_to_text` (one line), names and
free text through :func:`~syncd.normalize.text.normalize_text`, citation strings through
:func:`citation_text` (formatting markup stripped, unknown bracketed spans kept); identifiers, URLs and
dates are relayed byte-exact.
"""

from __future__ import annotations

import re
from typing import Any

from syncd.crossref.contracts import PublishedDate, Reference, ReferencesView
from syncd.crossref.contracts_lists import (
    CountsInfo,
    CoverageEntry,
    FacetCounts,
    FacetValue,
    FunderRecord,
    JournalRecord,
    JournalSubject,
    ListWork,
    MemberView,
    PrefixView,
    SearchWorksInput,
    SearchWorksView,
    SummaryAuthor,
    TypeCount,
    WorkSummary,
    YearCount,
)
from syncd.crossref.views_entries import (
    _dict,
    _first_markup,
    _int,
    _list,
    _locator,
    _str,
    _strings,
    _text,
    _updates,
    parse_date_parts,
)
from syncd.crossref.views_lines import AUTHOR_TOTAL
from syncd.normalize.text import decode_entities, jats_to_text

__all__ = [
    "citation_text",
    "coverage_entries",
    "facet_counts",
    "funder_record",
    "journal_record",
    "list_work",
    "member_view",
    "prefix_view",
    "references_view",
    "search_view",
    "work_summary",
]

_SUMMARY_DATES = ("published", "published-print", "published-online")

# formatting elements stripped from citation strings; any other bracketed span is kept as deposited.
# A bracket is markup only in a tag's shape (anchors 3.6 test 1): ``<name attr="v" ...>`` with the name
# right after ``<`` and every attribute double-quoted (``_TAG_ATTRS``); ``href='x'`` is not that shape.
_TAG_ATTRS = r"""(?:\s+[a-z_][\w:.-]*="[^"<>]*")*\s*"""
_CITATION_TAG = re.compile(
    r"</?(?:[a-z]+:)?(?:i|b|u|em|strong|italic|bold|sc|sup|sub|inf|span|underline|small|big|tt|"
    r"monospace|roman|sans-serif|overline|strike|font|mixed-citation|element-citation|citation|"
    r"article-title|source|year|volume|issue|fpage|lpage|string-name|surname|given-names|name|"
    r"person-group|etal|pub-id|publisher-name|publisher-loc|chapter-title|collab|comment)"
    + _TAG_ATTRS
    + r"/?>",
    re.IGNORECASE,
)
_WS = re.compile(r"\s+")
# a link element around text without markup: <uri>T</uri>, <ext-link xlink:href="H">T</ext-link>, <a href=..>
_CITATION_LINK = re.compile(
    r"<(?P<p>(?:[a-z]+:)?)(?P<n>a|ext-link|uri)(?P<attrs>\s[^<>]*)?>(?P<text>[^<]*)</(?P=p)(?P=n)\s*>",
    re.IGNORECASE,
)
_SHAPED = re.compile(_TAG_ATTRS + r"/?", re.IGNORECASE)
_HREF = re.compile(r'(?:^|\s)(?:[a-z]+:)?href="([^"]*)"', re.IGNORECASE)
_FORMULA_TAG = re.compile(
    r"<(?P<close>/)?(?P<name>(?:[a-z]+:)?(?:inline-formula|alternatives|math|tex-math))\b[^<>]*>",
    re.IGNORECASE,
)
"""An opener or closer of a formula in a citation string (read like a formula of a JATS field)."""


def _formulas(s: str) -> str:
    """``s`` with each outermost formula region read as text, set apart from a word it abuts.

    One scan over the formula tags (linear: an opener never rescans the tail); a formula tag
    without its pair is dropped (its text stays).
    """
    out: list[str] = []
    done = 0
    open_at, name, depth = -1, "", 0
    for tag in _FORMULA_TAG.finditer(s):
        tag_name = tag.group("name").lower()
        if open_at < 0:
            if not tag.group("close"):
                open_at, name, depth = tag.start(), tag_name, 1
            continue
        if tag_name == name:
            depth += -1 if tag.group("close") else 1
            if depth == 0:
                text = jats_to_text(s[open_at : tag.end()], paragraphs=False)
                lead = " " if open_at and s[open_at - 1].isalnum() else ""
                tail = " " if tag.end() < len(s) and s[tag.end()].isalnum() else ""
                out += [_FORMULA_TAG.sub("", s[done:open_at]), lead, text, tail]
                done, open_at = tag.end(), -1
    return "".join(out) + _FORMULA_TAG.sub("", s[done:])


def _unwrap_link(match: re.Match[str]) -> str:
    """A link element (anchors 3.6, link class): its text, or the element as deposited.

    Its text where that text already holds its ``href`` or the ``href`` minus its scheme (``<uri>`` is
    its own href); else the element as deposited.

    An opener not in a tag's shape (``_TAG_ATTRS``: a single-quoted or bare attribute value) is no
    markup: the element is kept as deposited too.
    """
    attrs = match.group("attrs") or ""
    if not _SHAPED.fullmatch(attrs):
        return match.group(0)
    text = match.group("text")
    found = _HREF.search(attrs)
    href = (found.group(1) if found else text).strip()
    bare = href.split("://", 1)[-1]
    if not href or href in text or (bare and bare in text):
        return text
    return match.group(0)


def citation_text(value: Any, *, keep_spacing: bool = False) -> str | None:
    """Normalize a citation string (``normalizeReferenceText``).

    A citation string with formatting markup stripped, character references decoded (once) and
    whitespace collapsed (anchors 3.6). A bracket is markup only in a tag's shape (``<name attr="v">``,
    attributes double-quoted: ``_TAG_ATTRS``). Link elements (``a``, ``ext-link``, ``uri``) are
    unwrapped where their text already holds the ``href`` or the ``href`` minus its scheme, so
    ``<uri>https://x.org</uri>`` reads ``https://x.org``; any other link element (its text not its
    href, its opener not in a tag's shape such as ``<a target="_blank" href='x'>``, or a lone link
    tag) is relayed as deposited. A formula (MathML, ``tex-math``, ``inline-formula``) reads as in a
    JATS field; any other bracketed span that is not a known formatting tag (a Miller index ``<100>``,
    a DOI fragment, an unknown element) is kept exactly as deposited. None when nothing is left.

    ``keep_spacing``: the inner whitespace is relayed as deposited and only the ends are trimmed (a
    reference's ``unstructured`` string, as the anchor's ``crossref_get_references`` relays it,
    issue 43); otherwise every whitespace run reads as one space.
    """
    s = _str(value)
    if s is None:
        return None
    s = _formulas(s) if "<" in s else s
    s = _CITATION_LINK.sub(_unwrap_link, _CITATION_TAG.sub("", s))
    s = decode_entities(s)
    out = (s if keep_spacing else _WS.sub(" ", s)).strip()
    return out or None


def _summary_date(message: dict[str, Any]) -> PublishedDate | None:
    for key in _SUMMARY_DATES:
        date = parse_date_parts(message.get(key))
        if date is not None:
            return date
    return None


def _float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    return float(value) if isinstance(value, int | float) else None


def work_summary(item: dict[str, Any], author_limit: int) -> tuple[WorkSummary | None, bool]:
    """One ``works[]`` entry of ``crossref_search_works`` from a list item; ``(summary, authors_cut)``.

    The date chain is published -> published-print -> published-online (no ``issued``); authors are cut
    at ``author_limit`` with ``authorCount`` the full total. Returns ``(None, False)`` for an item with no
    DOI (never fabricated). ``item`` may be a stored list line (:mod:`syncd.crossref.views_lines`),
    whose cut author list carries the full count.
    """
    item = _dict(item)
    doi = _str(item.get("DOI"))
    if doi is None:
        return None, False
    authors_raw = [_dict(a) for a in _list(item.get("author"))]
    total = item.get(AUTHOR_TOTAL)
    count = total if isinstance(total, int) and total > len(authors_raw) else len(authors_raw)
    authors = [
        SummaryAuthor(given=_text(a.get("given")), family=_text(a.get("family")), name=_text(a.get("name")))
        for a in authors_raw[:author_limit]
    ]
    abstract = _str(item.get("abstract"))
    summary = WorkSummary(
        doi=doi,
        title=_first_markup(item.get("title")),
        type=_str(item.get("type")),
        authors=authors or None,
        authorCount=count if authors_raw else None,
        published=_summary_date(item),
        containerTitle=_first_markup(item.get("container-title")),
        volume=_locator(item.get("volume")),
        issue=_locator(item.get("issue")),
        page=_locator(item.get("page")),
        articleNumber=_locator(item.get("article-number")),
        issn=_strings(item.get("ISSN")),
        publisher=_text(item.get("publisher")),
        isReferencedByCount=_int(item.get("is-referenced-by-count")),
        score=_float(item.get("score")),
        abstract=(jats_to_text(abstract, paragraphs=False) or None) if abstract else None,
        updatedBy=_updates(item.get("updated-by")),
        updateTo=_updates(item.get("update-to")),
    )
    return summary, count > author_limit


def facet_counts(facets: Any) -> list[FacetCounts] | None:
    """Crossref ``facets`` -> a list of facets with values ordered by count, highest first."""
    out: list[FacetCounts] = []
    for name, facet in _dict(facets).items():
        facet = _dict(facet)
        values = [
            FacetValue(value=str(v), count=c)
            for v, c in _dict(facet.get("values")).items()
            if isinstance(c, int) and not isinstance(c, bool)
        ]
        values.sort(key=lambda fv: (-fv.count, fv.value))
        out.append(FacetCounts(name=str(name), values=values))
    return out or None


_TERMS = (
    ("query", "query"),
    ("queryBibliographic", "queryBibliographic"),
    ("queryTitle", "queryTitle"),
    ("queryAuthor", "queryAuthor"),
    ("queryContainerTitle", "queryContainerTitle"),
)


def _zero_hits(params: SearchWorksInput) -> str:
    """The zero-hit notice: the terms and filters that narrowed the search, and which to drop first.

    Filters are named as ``filter.<key>``; the one suggested first is the last filter given (the
    filters AND together), else the narrowest field query.
    """
    terms = [f"{name}={getattr(params, field)!r}" for field, name in _TERMS if getattr(params, field)]
    filters = [f"filter.{k}={v}" for k, v in (params.filter or {}).items()]
    used = terms + filters
    if not used:
        return "Nothing matched in Crossref (totalResults 0)."
    sentence = f"Nothing matched {', '.join(used)} in Crossref (totalResults 0)"
    if filters:
        drop = filters[-1].split("=", 1)[0]
        return f"{sentence}; the filters AND together: call again without {drop} first."
    if len(terms) > 1:
        drop = terms[-1].split("=", 1)[0]
        return f"{sentence}; the field queries AND together: call again without {drop} first."
    return f"{sentence}; check the spelling or try queryBibliographic with the whole citation."


def search_view(message: dict[str, Any], params: SearchWorksInput, *, blank_listing: bool) -> SearchWorksView:
    """The ``crossref_search_works`` page from a ``work-list`` message.

    Notices (joined with a space): on an empty page which of the three causes applies (nothing matched;
    offset past the end, also when Crossref counts more records than it serves the offset page, as for
    a blank ``cursor``, which is an offset page; cursor walk complete), an author-cap disclosure when
    ``authorLimit`` cut a list, and the unfiltered-listing warning when every term was blank
    (``blank_listing``). ``nextCursor`` is present only on a cursor page that returned records (a walk
    ends on the first empty page).
    """
    total = _int(message.get("total-results")) or 0
    works: list[WorkSummary] = []
    cut = 0
    for item in _list(message.get("items")):
        summary, was_cut = work_summary(item, params.authorLimit)
        if summary is not None:
            works.append(summary)
            cut += int(was_cut)
    notices: list[str] = []
    if not works:
        if total == 0:
            notices.append(_zero_hits(params))
        elif params.rows == 0:
            pass
        elif params.cursor is not None:
            notices.append(
                f"The cursor walk is complete: this empty page ends the list of {total:,} matching records, "
                "so no nextCursor is given."
            )
        elif params.offset >= total:
            last = max(0, (min(total, 10_000) - 1) // max(params.rows, 1) * max(params.rows, 1))
            notices.append(
                f"offset={params.offset} is past the end of the {total:,} matching records; call again with "
                f"offset={last} for the last page of {params.rows}"
                + (', or cursor="*" to walk past 10,000.' if total > 10_000 else ".")
            )
        else:
            notices.append(
                f"offset={params.offset} is past the end of the records Crossref served: this offset page is "
                f"empty although Crossref counts {total:,} matching records (its count runs ahead of its "
                "index); retry later, or narrow the query."
            )
    if cut:
        noun = "work" if cut == 1 else "works"
        notices.append(
            f"authorLimit={params.authorLimit} cut the author list of {cut} {noun} on this page; authorCount "
            "gives each full total; call crossref_get_work with that doi to page the rest."
        )
    if blank_listing:
        notices.append(
            "Every query term and filter value was blank, so this page lists the whole Crossref index "
            "unfiltered."
        )
    next_cursor = _str(message.get("next-cursor")) if params.cursor is not None and works else None
    return SearchWorksView(
        works=works,
        totalResults=total,
        returned=len(works),
        nextCursor=next_cursor,
        facets=facet_counts(message.get("facets")),
        truncated=True if cut else None,
        cap=params.authorLimit if cut else None,
        notice=" ".join(notices) or None,
    )


# --------------------------------------------------------------------------------------------------
# references
# --------------------------------------------------------------------------------------------------


def _reference(entry: Any) -> Reference:
    entry = _dict(entry)
    return Reference(
        key=_str(entry.get("key")),
        doi=_str(entry.get("DOI")),
        doiAssertedBy=_str(entry.get("doi-asserted-by")),
        unstructured=citation_text(entry.get("unstructured"), keep_spacing=True),
        author=citation_text(entry.get("author")),
        year=_str(entry.get("year")),
        journalTitle=citation_text(entry.get("journal-title")),
        articleTitle=citation_text(entry.get("article-title")),
        volumeTitle=citation_text(entry.get("volume-title")),
        seriesTitle=citation_text(entry.get("series-title")),
        volume=_locator(entry.get("volume")),
        issue=_locator(entry.get("issue")),
        firstPage=_locator(entry.get("first-page")),
        edition=_locator(entry.get("edition")),
        issn=_str(entry.get("ISSN")),
    )


def references_view(message: dict[str, Any], *, offset: int, limit: int) -> ReferencesView:
    """``crossref_get_references`` from a stored work ``message``: ``reference[offset:offset+limit]``.

    ``referenceCount`` is what Crossref counts (``references-count``, as ``crossref_get_work`` gives it;
    the listed entries when the work carries no count); ``listedCount`` the entries of ``reference[]``
    that are paged, given when the two differ (a closed or partial reference list). Two notices, neither
    an error: no reference list indexed (coverage caveat), and offset past the end.
    """
    refs = _list(message.get("reference"))
    count = len(refs)
    declared = _int(message.get("references-count", message.get("reference-count")))
    total = declared if declared is not None else count
    page = [_reference(r) for r in refs[offset : offset + limit]]
    remain = offset + len(page) < count
    notice: str | None = None
    if count == 0:
        notice = (
            "No reference list indexed for this work: the publisher did not deposit one or does not make it "
            "open"
            + (f" (Crossref counts {declared} references but exposes none)" if declared else "")
            + ". Coverage varies by publisher; pre-2000 works often have none. OpenAlex may hold the list."
        )
    elif offset >= count:
        notice = (
            f"Offset {offset} is past the end of this reference list ({count:,} references listed); call "
            f"again with offset={max(0, (count - 1) // limit * limit)} for the last page of {limit}."
        )
    elif remain:
        notice = (
            f"Showing references {offset + 1:,}–{offset + len(page):,} of {count:,}; call again with "
            f"offset={offset + len(page)} for more."
        )
    return ReferencesView(
        doi=_str(message.get("DOI")) or "",
        referenceCount=total,
        listedCount=count if count != total else None,
        offset=offset,
        references=page,
        nextOffset=offset + len(page) if remain else None,
        truncated=True if remain else None,
        shown=len(page) if remain else None,
        cap=limit if remain else None,
        notice=notice,
    )


# --------------------------------------------------------------------------------------------------
# entities
# --------------------------------------------------------------------------------------------------


def _counts(value: Any) -> CountsInfo | None:
    c = _dict(value)
    if not c:
        return None
    return CountsInfo(
        totalDois=_int(c.get("total-dois")),
        currentDois=_int(c.get("current-dois")),
        backfileDois=_int(c.get("backfile-dois")),
    )


def coverage_entries(value: Any) -> list[CoverageEntry] | None:
    """Fold the flat ``<category>-current`` / ``<category>-backfile`` fractions, sorted by category."""
    folded: dict[str, dict[str, float]] = {}
    for key, fraction in _dict(value).items():
        period = "current" if key.endswith("-current") else "backfile" if key.endswith("-backfile") else None
        number = _float(fraction)
        if period is None or number is None:
            continue
        folded.setdefault(key[: -len(period) - 1], {})[period] = number
    entries = [
        CoverageEntry(category=cat, current=v.get("current"), backfile=v.get("backfile"))
        for cat, v in sorted(folded.items())
    ]
    return entries or None


def journal_record(message: dict[str, Any], *, with_years: bool) -> JournalRecord:
    """One journal from a ``journal`` message (or a ``journal-list`` item).

    ``doisByYear`` (ascending) only when ``with_years`` (ISSN lookups); ``issnL`` only when a string.
    """
    counts = _counts(message.get("counts"))
    years: list[YearCount] = []
    if with_years:
        for pair in _list(_dict(message.get("breakdowns")).get("dois-by-issued-year")):
            pair = _list(pair)
            if len(pair) == 2 and _int(pair[0]) is not None and _int(pair[1]) is not None:
                years.append(YearCount(year=_int(pair[0]) or 0, count=_int(pair[1]) or 0))
        years.sort(key=lambda y: y.year)
    issn_type = [
        {"type": str(t.get("type")), "value": str(t.get("value"))}
        for t in (_dict(x) for x in _list(message.get("issn-type")))
        if _str(t.get("value"))
    ]
    subjects = [
        JournalSubject(name=n)
        for n in (_text(_dict(s).get("name")) for s in _list(message.get("subjects")))
        if n
    ]
    return JournalRecord(
        title=_text(message.get("title")),
        issnL=_str(message.get("ISSN-L")),
        issn=_strings(message.get("ISSN")),
        issnType=issn_type or None,
        publisher=_text(message.get("publisher")),
        subjects=subjects or None,
        totalDois=counts.totalDois if counts else None,
        counts=counts,
        coverage=coverage_entries(message.get("coverage")),
        doisByYear=years or None,
    )


def list_work(item: Any) -> ListWork | None:
    """A work of a journal or funder works list: doi, title, type, published (year, month), citations."""
    item = _dict(item)
    doi = _str(item.get("DOI"))
    if doi is None:
        return None
    date = _summary_date(item) or parse_date_parts(item.get("issued"))
    return ListWork(
        doi=doi,
        title=_first_markup(item.get("title")),
        type=_str(item.get("type")),
        published=PublishedDate(year=date.year, month=date.month) if date else None,
        isReferencedByCount=_int(item.get("is-referenced-by-count")),
    )


def funder_record(message: dict[str, Any], *, with_descendants: bool) -> FunderRecord:
    """One funder from a ``funder`` message or a ``funder-list`` item (``descendants`` on id lookups)."""
    alt = [t for t in (_text(a) for a in _list(message.get("alt-names"))) if t]
    return FunderRecord(
        id=_str(message.get("id")),
        name=_text(message.get("name")),
        altNames=alt or None,
        country=_text(message.get("location")),
        uri=_str(message.get("uri")),
        worksCount=_int(message.get("work-count")),
        descendantWorksCount=_int(message.get("descendant-work-count")),
        replacedBy=_strings(message.get("replaced-by")),
        replaces=_strings(message.get("replaces")),
        descendants=_strings(message.get("descendants")) if with_descendants else None,
    )


def member_view(message: dict[str, Any]) -> MemberView:
    """``crossref_get_member`` from a ``member`` message.

    ``crossref_get_member`` from a ``member`` message: names without the primary one, works by type
    (``counts-type.all``, zeros dropped, largest first), coverage folded and sorted by category.
    """
    primary = _text(message.get("primary-name"))
    names = [n for n in (_text(x) for x in _list(message.get("names"))) if n and n != primary]
    by_type = [
        TypeCount(type=str(t), count=c)
        for t, c in _dict(_dict(message.get("counts-type")).get("all")).items()
        if isinstance(c, int) and not isinstance(c, bool) and c > 0
    ]
    by_type.sort(key=lambda tc: (-tc.count, tc.type))
    flags = _dict(message.get("flags"))
    deposits = flags.get("deposits")
    articles = flags.get("deposits-articles")
    return MemberView(
        id=_int(message.get("id")) or 0,
        primaryName=primary,
        names=list(dict.fromkeys(names)) or None,
        location=_text(message.get("location")),
        prefixes=_strings(message.get("prefixes")),
        counts=_counts(message.get("counts")),
        worksByType=by_type or None,
        coverage=coverage_entries(message.get("coverage")),
        deposits=deposits if isinstance(deposits, bool) else None,
        depositsArticles=articles if isinstance(articles, bool) else None,
    )


def prefix_view(message: dict[str, Any], asked: str) -> PrefixView:
    """``crossref_get_prefix`` from a ``prefix`` message.

    ``crossref_get_prefix``: prefix from the trailing segment of the ``prefix`` URI (else ``asked``),
    ``memberId`` from the trailing digits of the ``member`` URI.
    """
    uri = _str(message.get("prefix")) or ""
    member = re.search(r"(\d+)/?$", _str(message.get("member")) or "")
    return PrefixView(
        prefix=uri.rstrip("/").rsplit("/", 1)[-1] if uri else asked,
        ownerName=_text(message.get("name")),
        memberId=int(member.group(1)) if member else None,
    )
