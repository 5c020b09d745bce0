"""The size-budget cuts of the seven Crossref tools (each :class:`~syncd.tools.fit.Fit` their specs carry).

The Crossref continuations (author pages, works pages, ``works_offset``/``works_cursor`` lists,
reference pages) are :data:`~syncd.tools.fit.Resume` functions here; generic ones (offset pages,
dropped lists) come from :mod:`syncd.tools.fit`. Each cut sets the continuation fields the contract
declares (``nextOffset``, ``truncated``/``shown``/``cap``, ``nextWorksOffset``) and returns the
sentence that names the next call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from syncd.crossref.tools_render import (
    render_funders,
    render_journals,
    render_member,
    render_prefix,
    render_references,
    render_search_works,
    render_work,
)
from syncd.tools.fit import Cut, Fit, Resume, dropped, offset_pages, plain

__all__ = [
    "GET_MEMBER",
    "GET_PREFIX",
    "GET_REFERENCES",
    "GET_WORK",
    "SEARCH_FUNDERS",
    "SEARCH_JOURNALS",
    "SEARCH_WORKS",
]


def _authors(data: dict[str, Any], args: Mapping[str, Any], kept: int, total: int) -> str:
    start = int(args.get("offset") or 0)
    data.update(nextOffset=start + kept, truncated=True, shown=kept)
    data["cap"] = int(args.get("limit") or kept)
    count = data.get("authorCount", total)
    return (
        f"Showing authors {start + 1:,}-{start + kept:,} of {count:,}; call again with offset={start + kept} "
        f"(limit={max(kept, 1)} fits) for the next authors"
    )


def _work_authors(data: dict[str, Any], args: Mapping[str, Any], kept: int, total: int) -> str:
    data.update(truncated=True, cap=kept)
    return (
        f"Author lists cut to {kept} per work (authorCount gives each total); "
        f"crossref_get_work with offset={kept} returns a work's remaining authors"
    )


def _works(data: dict[str, Any], args: Mapping[str, Any], kept: int, total: int) -> str:
    data["returned"] = kept
    if args.get("cursor"):
        return (
            f"Showing {kept} of this cursor page's {total} works; nextCursor continues after all {total}, "
            f'so walk with rows={max(kept, 1)} (restart with cursor="*") to see every work'
        )
    start = int(args.get("offset") or 0)
    data["nextOffset"] = start + kept
    return (
        f"Showing works {start + 1}-{start + kept} of this page's {total}; "
        f"call again with offset={start + kept} for the rest"
    )


def _list_works(next_key: str, cursor_key: str, count_key: str | None) -> Resume:
    """The works page of journals/funders (works_offset, or a works_cursor walk)."""

    def resume(data: dict[str, Any], args: Mapping[str, Any], kept: int, total: int) -> str:
        if args.get("works_cursor"):
            return (
                f"Showing {kept} of this works page's {total}; {cursor_key} continues after all {total}, "
                f"so walk with rows={max(kept, 1)} to see every work"
            )
        start = int(args.get("works_offset") or 0)
        data[next_key] = start + kept
        return (
            f"Showing works {start + 1}-{start + kept} of this page's {total}; "
            f"call again with works_offset={start + kept} for the rest"
        )

    return resume


def _references(data: dict[str, Any], args: Mapping[str, Any], kept: int, total: int) -> str:
    start = int(args.get("offset") or 0)
    data.update(nextOffset=start + kept, truncated=True, shown=kept, cap=int(args.get("limit") or kept))
    return (
        f"Showing references {start + 1:,}-{start + kept:,} of {data.get('referenceCount', total):,}; "
        f"call again with offset={start + kept} (limit={max(kept, 1)} fits)"
    )


GET_WORK = Fit((Cut("authors", _authors),), plain(render_work))
"""``crossref_get_work``: the author page."""
SEARCH_WORKS = Fit(
    (Cut("works[].authors", _work_authors, floor=10), Cut("works", _works)), plain(render_search_works)
)
"""``crossref_search_works``: each work's authors (down to 10), then the works."""
GET_REFERENCES = Fit((Cut("references", _references),), plain(render_references))
"""``crossref_get_references``: the reference page."""
SEARCH_JOURNALS = Fit(
    (
        Cut("recentWorks", _list_works("nextWorksOffset", "nextWorksCursor", None)),
        Cut("journals", offset_pages("nextOffset", "offset", "journalCount", "journals")),
    ),
    plain(render_journals),
)
"""``crossref_search_journals``: the journal's works, then the journals."""
SEARCH_FUNDERS = Fit(
    (
        Cut("funders[].descendants", dropped("Descendant id lists")),
        Cut("fundedWorks", _list_works("nextWorksOffset", "nextWorksCursor", None)),
        Cut("funders", offset_pages("nextOffset", "offset", "funderCount", "funders")),
    ),
    plain(render_funders),
)
"""``crossref_search_funders``: descendant ids, the funded works, then the funders."""
GET_MEMBER = Fit((Cut("prefixes", dropped("Prefixes")),), plain(render_member))
"""``crossref_get_member``: the prefix list (no continuation)."""
GET_PREFIX = Fit((), plain(render_prefix))
"""``crossref_get_prefix``: nothing to cut (the renderer only)."""
