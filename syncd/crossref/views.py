"""Build the ``crossref_get_work`` contract (:class:`~syncd.crossref.contracts.WorkView`) from a message.

Input is the ``message`` object of a Crossref ``GET /works/{doi}`` body
(``{"status": "ok", "message-type": "work", "message-version": ..., "message": {...}}``). Pure: no I/O.

Decisions (beyond anchors §1a):

* ``orcid`` is relayed as Crossref gives it, the deposited URI (``https://orcid.org/0000-...``, or
  ``http://orcid.org/0000-...`` in older deposits), as the anchor does; only surrounding space is cut.
* ``updatedBy[].updated`` / ``updateTo[].updated`` are Crossref's date parts ``{year, month?, day?}``.
* ``ror`` (affiliations, funders) is relayed as deposited: affiliations carry ``https://ror.org/<id>``,
  funders sometimes the bare ``<id>``.
* A funder with neither name, DOI nor ROR but with award numbers is kept as ``{award: [...]}``; a funder
  with nothing at all is dropped.
* An update entry without ``source`` (older deposits, e.g. ``10.1103/physrevd.97.012001``) keeps
  ``source`` absent; one without ``DOI`` or ``type`` is dropped.
* ``authors``/``authorCount``/``offset`` are present only when ``author`` holds at least one entry.
"""

from __future__ import annotations

from typing import Any

from syncd.crossref.contracts import (
    Affiliation,
    Assertion,
    ClinicalTrial,
    Contributor,
    Event,
    Funder,
    Institution,
    License,
    Link,
    PublishedDate,
    Relation,
    Update,
    WorkView,
)
from syncd.crossref.views_lines import author_names
from syncd.errors import InvalidInput, MalformedResponse
from syncd.normalize.text import jats_to_text, normalize_text

__all__ = [
    "AUTHOR_LIMIT_DEFAULT",
    "AUTHOR_LIMIT_MAX",
    "VOLATILE_FIELDS",
    "content_hash_projection",
    "parse_date_parts",
    "work_search_fields",
    "work_view",
]

AUTHOR_LIMIT_DEFAULT = 25
"""Authors per page when the caller gives no ``limit``."""

AUTHOR_LIMIT_MAX = 500
"""Largest accepted ``limit`` (anchors §1a input table: 1-500)."""

VOLATILE_FIELDS: frozenset[str] = frozenset(
    {"indexed", "score", "deposited", "is-referenced-by-count", "cited-count", "citing-count"}
)
"""Message keys left out of :func:`content_hash_projection`.

* ``indexed``: Crossref re-index timestamp; changes on every re-index with no metadata change
  (SOURCES.md header facts).
* ``score``: search relevance, meaningless on a single record.
* ``deposited``: bumps on every publisher redeposit, including byte-identical ones; a redeposit that
  does change metadata also changes the projected fields.
* ``is-referenced-by-count`` (and the legacy ``cited-count``/``citing-count``): incoming citations,
  which grow as *other* works are deposited. They are shown in the view, so the store must still refresh
  its stored copy on every fetch; they just do not make the work count as "changed".
"""

_ROR_TYPE = "ror"


# --------------------------------------------------------------------------------------------------
# Small readers: tolerate anything upstream sends, return None instead of raising
# --------------------------------------------------------------------------------------------------


def _str(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value
    return None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    s = _str(value)
    return (normalize_text(s) or None) if s is not None else None


def _markup(value: Any) -> str | None:
    s = _str(value)
    return (jats_to_text(s, paragraphs=False) or None) if s is not None else None


def _first_markup(*lists: Any) -> str | None:
    """First non-empty markup-normalized string among the first elements of the given lists."""
    for values in lists:
        for value in _list(values)[:1]:
            text = _markup(value)
            if text:
                return text
    return None


def _strings(value: Any) -> list[str] | None:
    out = [v for v in _list(value) if _str(v) is not None]
    return out or None


def _ids_of_type(entry: dict[str, Any], id_type: str) -> list[str]:
    return [
        i["id"]
        for i in _list(entry.get("id"))
        if isinstance(i, dict) and str(i.get("id-type", "")).lower() == id_type and _str(i.get("id"))
    ]


# --------------------------------------------------------------------------------------------------
# Dates
# --------------------------------------------------------------------------------------------------


def parse_date_parts(value: Any) -> PublishedDate | None:
    """Read a Crossref date object (``{"date-parts": [[Y, M, D]], ...}``) into a :class:`PublishedDate`.

    Reading stops at the first null (or non-integer, or out-of-range) component, so
    ``[[2020, null, 5]]`` gives ``{year: 2020}`` and ``[[null]]`` gives ``None`` (names no date).

    Args:
        value: a date object such as ``message["published-print"]``.

    Returns:
        The date, or ``None`` when the object names no year.
    """
    parts = _list(_dict(value).get("date-parts"))
    first = _list(parts[0]) if parts else []
    read: list[int] = []
    for component, (low, high) in zip(first, ((1, 9999), (1, 12), (1, 31)), strict=False):
        number = _int(component)
        if number is None or not low <= number <= high:
            break
        read.append(number)
    if not read:
        return None
    return PublishedDate(
        year=read[0], month=read[1] if len(read) > 1 else None, day=read[2] if len(read) > 2 else None
    )


_DATE_CHAIN = ("published", "published-print", "published-online", "issued")


def _published(message: dict[str, Any]) -> PublishedDate | None:
    for key in _DATE_CHAIN:
        date = parse_date_parts(message.get(key))
        if date is not None:
            return date
    return None


# --------------------------------------------------------------------------------------------------
# Entries
# --------------------------------------------------------------------------------------------------


def _orcid(value: Any) -> str | None:
    raw = _str(value)
    return raw.strip() if raw is not None else None


def _affiliation(entry: Any) -> Affiliation | None:
    entry = _dict(entry)
    name = _text(entry.get("name"))
    rors = _ids_of_type(entry, _ROR_TYPE)
    if name is None and not rors:
        return None
    return Affiliation(name=name, ror=rors[0] if rors else None)


def _contributor(entry: Any) -> Contributor:
    entry = _dict(entry)
    affiliations = [a for a in (_affiliation(x) for x in _list(entry.get("affiliation"))) if a is not None]
    return Contributor(
        given=_text(entry.get("given")),
        family=_text(entry.get("family")),
        name=_text(entry.get("name")),
        orcid=_orcid(entry.get("ORCID")),
        affiliation=affiliations or None,
        sequence=_str(entry.get("sequence")),
    )


def _updates(value: Any) -> list[Update] | None:
    out: list[Update] = []
    for entry in _list(value):
        entry = _dict(entry)
        doi, kind = _str(entry.get("DOI")), _str(entry.get("type"))
        if doi is None or kind is None:
            continue
        record = entry.get("record-id")
        out.append(
            Update(
                doi=doi,
                type=kind,
                source=_str(entry.get("source")),
                recordId=str(record) if _str(record) or _int(record) is not None else None,
                updated=parse_date_parts(entry.get("updated")),
            )
        )
    return out or None


def _relations(value: Any) -> list[Relation] | None:
    groups: dict[tuple[str, str | None, str | None], Relation] = {}
    for rel_type, entries in _dict(value).items():
        for entry in _list(entries):
            entry = _dict(entry)
            rel_id = _str(entry.get("id"))
            if rel_id is None:
                continue
            key = (rel_type, _str(entry.get("id-type")), _str(entry.get("asserted-by")))
            group = groups.get(key)
            if group is None:
                group = groups[key] = Relation(type=key[0], idType=key[1], assertedBy=key[2], ids=[])
            group.ids.append(rel_id)
    return list(groups.values()) or None


def _funder(entry: Any) -> Funder | None:
    entry = _dict(entry)
    dois = _ids_of_type(entry, "doi")
    rors = _ids_of_type(entry, _ROR_TYPE)
    funder = Funder(
        name=_text(entry.get("name")),
        doi=_str(entry.get("DOI")) or (dois[0] if dois else None),
        ror=rors[0] if rors else None,
        award=[a.strip() for a in _strings(entry.get("award")) or []] or None,
    )
    if funder.name is None and funder.doi is None and funder.ror is None and funder.award is None:
        return None
    return funder


def _license(entry: Any) -> License | None:
    entry = _dict(entry)
    url = _str(entry.get("URL"))
    if url is None:
        return None
    return License(
        url=url,
        contentVersion=_str(entry.get("content-version")),
        delayInDays=_int(entry.get("delay-in-days")),
    )


def _link(entry: Any) -> Link | None:
    entry = _dict(entry)
    url = _str(entry.get("URL"))
    if url is None:
        return None
    return Link(
        url=url,
        contentType=_str(entry.get("content-type")),
        intendedApplication=_str(entry.get("intended-application")),
    )


def _locator(value: Any) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return _str(value)


# --------------------------------------------------------------------------------------------------
# Notices
# --------------------------------------------------------------------------------------------------


def _update_notice(doi: str, updated_by: list[Update]) -> str:
    kinds: dict[str, list[str]] = {}
    for update in updated_by:
        sources = kinds.setdefault(update.type, [])
        source = update.source or "source not stated"
        if source not in sources:
            sources.append(source)
    listed = "; ".join(f"{kind} ({', '.join(sources)})" for kind, sources in kinds.items())
    own = doi.lower()
    in_place = [u for u in updated_by if u.doi.lower() == own]
    text = f"Updates are recorded against this work: {listed}."
    if len(in_place) == len(updated_by):
        text += (
            " Each names this work's own DOI (an update made in place): this record is the notice; "
            "there is no separate notice DOI to read."
        )
    elif in_place:
        text += (
            " Read each notice with crossref_get_work on its updatedBy doi; entries naming this work's own "
            "DOI were made in place, and this record is their notice."
        )
    else:
        text += " Read each notice with crossref_get_work on its updatedBy doi."
    return text


def _paging_notice(count: int, offset: int, shown: int, limit: int) -> str | None:
    if offset >= count:
        noun = "author" if count == 1 else "authors"
        last = (count - 1) // limit * limit
        return (
            f"offset={offset} is past the end of the author list ({count:,} {noun}); no authors on this "
            f"page. Call again with offset={last} for the last page (authors {last + 1:,}–{count:,}); every "
            "other field is complete on every page."
        )
    first, last = offset + 1, offset + shown
    if last < count:
        remaining = count - last
        return (
            f"Showing authors {first:,}–{last:,} of {count:,}; call again with offset={last} for the next "
            f"{min(limit, remaining)} (every other field is already complete)."
        )
    if offset > 0:
        return f"Showing authors {first:,}–{last:,} of {count:,}; this is the last page of authors."
    return None


# --------------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------------


def _titles(value: Any) -> list[str] | None:
    """``container-title[]`` markup-normalized, deposited order, blanks dropped."""
    out = [t for t in (jats_to_text(x, paragraphs=False) for x in _list(value) if isinstance(x, str)) if t]
    return out or None


def _trials(value: Any) -> list[ClinicalTrial] | None:
    """``clinical-trial-number[]`` -> ``{number, registry?, type?}``."""
    out = [
        ClinicalTrial(
            number=str(t["clinical-trial-number"]), registry=_str(t.get("registry")), type=_str(t.get("type"))
        )
        for t in _list(value)
        if isinstance(t, dict) and _str(t.get("clinical-trial-number"))
    ]
    return out or None


def _assertions(value: Any) -> list[Assertion] | None:
    """``assertion[]`` whole, in order; ``value`` text-normalized; ``url`` dropped when it repeats value."""
    out: list[Assertion] = []
    for a in _list(value):
        if not isinstance(a, dict):
            continue
        group = a.get("group") if isinstance(a.get("group"), dict) else {}
        text_value = _text(a.get("value")) if a.get("value") is not None else None
        url = _str(a.get("URL"))
        out.append(
            Assertion(
                name=_str(a.get("name")),
                label=_text(a.get("label")),
                value=text_value,
                url=url if url and url != text_value else None,
                groupName=_str(group.get("name")),
                groupLabel=_text(group.get("label")),
            )
        )
    return out or None


def _event(value: Any) -> Event | None:
    """``event`` -> ``{name, acronym, location, start, end}``; None when nothing is deposited."""
    if not isinstance(value, dict):
        return None
    event = Event(
        name=_text(value.get("name")),
        acronym=_text(value.get("acronym")),
        location=_text(value.get("location")),
        start=parse_date_parts(value.get("start")),
        end=parse_date_parts(value.get("end")),
    )
    return event if event.model_dump(exclude_none=True) else None


def _institutions(value: Any) -> list[Institution] | None:
    """``institution[]`` -> ``{name?, ror?, place?, department?, acronym?}`` (ROR-only keeps ``ror``)."""
    out: list[Institution] = []
    for i in _list(value):
        if not isinstance(i, dict):
            continue
        ror = next(
            (
                _str(x.get("id"))
                for x in _list(i.get("id"))
                if isinstance(x, dict) and x.get("id-type") == "ROR"
            ),
            None,
        )
        inst = Institution(
            name=_text(i.get("name")),
            ror=ror,
            place=_strings(i.get("place")),
            department=_strings(i.get("department")),
            acronym=_strings(i.get("acronym")),
        )
        if inst.model_dump(exclude_none=True):
            out.append(inst)
    return out or None


def work_view(message: dict[str, Any], *, offset: int = 0, limit: int = AUTHOR_LIMIT_DEFAULT) -> WorkView:
    """Build the ``crossref_get_work`` output from a Crossref work ``message``.

    Field sources (anchors §1a): ``DOI`` -> ``doi``; ``title[0]`` and ``subtitle[0]`` (else
    ``short-title[0]``) and ``container-title[0]`` markup-normalized on one line; ``abstract`` JATS ->
    paragraphs; ``author[offset:offset+limit]`` -> ``authors`` with ``authorCount``/``offset``;
    ``editor[]`` whole; ``updated-by``/``update-to`` entry for entry; ``relation`` grouped by (type,
    id-type, asserted-by) in Crossref order; ``published`` -> ``published-print`` -> ``published-online``
    -> ``issued``; ``funder[]`` (ROR-only kept), ``license[]``, ``link[]``; ``volume``, ``issue``,
    ``page``, ``article-number``, ``ISSN``, ``ISBN``, ``URL``, ``subject``, ``language`` as deposited;
    ``is-referenced-by-count``, ``references-count``. Enrichment: when authors remain past the page,
    ``nextOffset``, ``truncated``, ``shown``, ``cap``; ``notice`` = update notice, then paging guidance.

    Args:
        message: the ``message`` object of a ``/works/{doi}`` response.
        offset: index of the first author to return (>= 0); pages the author list only.
        limit: authors per page, 1 to :data:`AUTHOR_LIMIT_MAX`.

    Returns:
        The :class:`WorkView`; serialise with ``model_dump(exclude_none=True)``.

    Raises:
        InvalidInput: ``offset`` < 0 or ``limit`` outside 1..500 (``reason="invalid_parameter"``).
        MalformedResponse: ``message`` is not an object or has no non-empty ``DOI``.
    """
    doi = _work_doi(message, offset, limit)
    authors_raw = _list(message.get("author"))
    count = len(authors_raw)
    page = [_contributor(a) for a in authors_raw[offset : offset + limit]] if count else []
    updated_by = _updates(message.get("updated-by"))
    notices = [_update_notice(doi, updated_by)] if updated_by else []
    paging = _paging_notice(count, offset, len(page), limit) if count else None
    return WorkView(
        doi=doi,
        updatedBy=updated_by,
        **_author_page_fields(count, page, offset, limit),
        **_work_fields(message),
        notice="\n".join([*notices, *([paging] if paging else [])]) or None,
    )


def _work_doi(message: Any, offset: Any, limit: Any) -> str:
    """The ``DOI`` of a work ``message``, the author page checked first (raises as :func:`work_view`)."""
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise InvalidInput(f"offset must be an integer >= 0, got {offset!r}", reason="invalid_parameter")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= AUTHOR_LIMIT_MAX:
        raise InvalidInput(
            f"limit must be an integer from 1 to {AUTHOR_LIMIT_MAX}, got {limit!r}",
            reason="invalid_parameter",
        )
    if not isinstance(message, dict):
        raise MalformedResponse("Crossref work message is not a JSON object")
    doi = _str(message.get("DOI"))
    if doi is None:
        raise MalformedResponse("Crossref work message has no DOI")
    return doi


def _author_page_fields(count: int, page: list[Contributor], offset: int, limit: int) -> dict[str, Any]:
    """The author page's fields (``authors``..., then ``nextOffset``... when authors remain past it)."""
    remain = count > 0 and offset + len(page) < count
    return {
        "authors": page if count else None,
        "authorCount": count if count else None,
        "offset": offset if count else None,
        "nextOffset": offset + len(page) if remain else None,
        "truncated": True if remain else None,
        "shown": len(page) if remain else None,
        "cap": limit if remain else None,
    }


def _work_fields(message: dict[str, Any]) -> dict[str, Any]:
    """The :class:`WorkView` fields of a work ``message`` besides its DOI, authors, updates and notice."""
    abstract = _str(message.get("abstract"))
    funders = [f for f in (_funder(x) for x in _list(message.get("funder"))) if f is not None]
    licenses = [x for x in (_license(e) for e in _list(message.get("license"))) if x is not None]
    links = [x for x in (_link(e) for e in _list(message.get("link"))) if x is not None]
    subjects = [t for t in (_text(s) for s in _list(message.get("subject"))) if t]
    references = message.get("references-count", message.get("reference-count"))
    return {
        "title": _first_markup(message.get("title")),
        "subtitle": _first_markup(message.get("subtitle"), message.get("short-title")),
        "type": _str(message.get("type")),
        "editors": [_contributor(e) for e in _list(message.get("editor"))] or None,
        "updateTo": _updates(message.get("update-to")),
        "relations": _relations(message.get("relation")),
        "abstract": (jats_to_text(abstract, paragraphs=False) or None) if abstract else None,
        "isReferencedByCount": _int(message.get("is-referenced-by-count")),
        "referencesCount": _int(references),
        "containerTitle": _first_markup(message.get("container-title")),
        "volume": _locator(message.get("volume")),
        "issue": _locator(message.get("issue")),
        "page": _locator(message.get("page")),
        "articleNumber": _locator(message.get("article-number")),
        "issn": _strings(message.get("ISSN")),
        "isbn": _strings(message.get("ISBN")),
        "publisher": _text(message.get("publisher")),
        "published": _published(message),
        "funders": funders or None,
        "licenses": licenses or None,
        "links": links or None,
        "url": _str(message.get("URL")),
        "subject": subjects or None,
        "language": _str(message.get("language")),
        "containerTitles": _titles(message.get("container-title")),
        "memberId": _str(message.get("member")),
        "clinicalTrialNumbers": _trials(message.get("clinical-trial-number")),
        "assertions": _assertions(message.get("assertion")),
        "event": _event(message.get("event")),
        "institutions": _institutions(message.get("institution")),
        "degree": _strings(message.get("degree")),
        "approved": parse_date_parts(message.get("approved")),
        "subtype": _str(message.get("subtype")),
        "groupTitle": _text(message.get("group-title")),
    }


def content_hash_projection(message: dict[str, Any]) -> dict[str, Any]:
    """Return the part of a work ``message`` whose change means the work's metadata changed.

    The store hashes this (canonical JSON) to decide "changed" between two fetches. The keys in
    :data:`VOLATILE_FIELDS` (``indexed``, ``score``, ``deposited``, ``is-referenced-by-count``,
    ``cited-count``, ``citing-count``) are removed; everything else, including ``updated-by`` and
    ``relation`` (which change when *other* deposits point at this work, and matter to the reader), is
    kept. The copy is shallow: do not mutate the nested values.

    Args:
        message: the ``message`` object of a ``/works/{doi}`` response.

    Returns:
        A new dict without the volatile top-level keys.
    """
    return {k: v for k, v in message.items() if k not in VOLATILE_FIELDS}


def _first_line(values: Any) -> str | None:
    """The first element of the list ``values`` as one line of text, or None (the view's titles)."""
    for value in (values if isinstance(values, list) else [])[:1]:
        if isinstance(value, str) and value.strip():
            return jats_to_text(value, paragraphs=False) or None
    return None


def work_search_fields(message: dict[str, Any]) -> tuple[str | None, str | None]:
    """``(title, search_text)`` of a Crossref work ``message``, as every path stores them.

    A fetch, a search page and a data-file import store these (``syncd.crossref.lookups.work_content``,
    ``syncd.transfer``), built from the few fields they come from without the full work view: title
    and container title (first element, markup to one line), author names, abstract (JATS to text),
    publisher.

    Raises:
        TypeError: ``author`` is not iterable.
    """
    names = author_names(message.get("author") or [])
    abstract = message.get("abstract")
    abstract_text = jats_to_text(abstract) if isinstance(abstract, str) and abstract.strip() else None
    publisher = message.get("publisher")
    publisher_text = normalize_text(publisher) if isinstance(publisher, str) and publisher.strip() else None
    parts = (_first_line(message.get("container-title")), names, abstract_text, publisher_text)
    search_text = " ".join(filter(None, parts))
    return _first_line(message.get("title")), search_text or None
