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

from syncd.crossref.contracts import Contributor, Update, WorkView
from syncd.crossref.views_entries import (
    _assertions,
    _contributor,
    _event,
    _first_markup,
    _funder,
    _institutions,
    _int,
    _license,
    _link,
    _list,
    _locator,
    _published,
    _relations,
    _str,
    _strings,
    _text,
    _titles,
    _trials,
    _updates,
    parse_date_parts,
)
from syncd.crossref.views_lines import author_names
from syncd.errors import InvalidInput, MalformedResponse
from syncd.normalize.text import jats_to_text, normalize_text

__all__ = [
    "AUTHOR_LIMIT_DEFAULT",
    "AUTHOR_LIMIT_MAX",
    "VOLATILE_FIELDS",
    "content_hash_projection",
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
