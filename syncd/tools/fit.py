"""One size budget for every tool answer: lists cut with a continuation and a notice, never silently.

An MCP client keeps only so much of a tool result (Claude Code cuts at about 25,000 tokens). Every
successful answer goes through :func:`fit_answer` (called once, by the server, for every tool): when
the answer's size — the text block plus the structured JSON, in characters — passes
``answer_max_chars``, the tool's declared lists (:data:`FITS`) are cut, in the declared order, to
the longest prefix that fits; the continuation fields (``nextOffset``, ``next_offset``,
``truncated``/``shown``/``cap``) are set so the next call returns the next part, a sentence naming
that call is added to ``notice``, and the text block is rendered again from what remains. A budget
of 0 turns this off, so large ``rows``/``limit``/``authorLimit`` answers stay possible when the
setting allows them. ``zenodo_read_file``'s ``max_bytes`` is lowered before the call instead (a
byte range continues by ``next_offset``; see :data:`CLAMPS`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp.types import CallToolResult, TextContent

from syncd.crossref import tools as crossref
from syncd.crossref import tools_batch as crossref_batch
from syncd.tools import changes
from syncd.zenodo import tools_render as zenodo_render

__all__ = ["CLAMPS", "FITS", "Cut", "Fit", "answer_size", "clamp_arguments", "fit_answer"]

Resume = Callable[[dict[str, Any], Mapping[str, Any], int, int], str]
"""``resume(data, args, kept, total)``: set the continuation fields on ``data`` and return the
sentence that names the next call (``kept`` items of ``total`` stay)."""


@dataclass(frozen=True)
class Cut:
    """One list of an answer that may be cut.

    ``path`` is ``"key"`` (a top-level list), ``"a.b.key"`` (a list inside nested objects) or
    ``"key[].sub"`` (the list ``sub`` of every item of the top-level list ``key``, cut to the same
    length in each).
    """

    path: str
    resume: Resume
    floor: int = 0
    """Never cut below this length: a nested list keeps a few items and the outer cut does the rest."""


@dataclass(frozen=True)
class Fit:
    """How one tool's answers are fitted: its cuts (tried in order) and its text renderer."""

    cuts: tuple[Cut, ...]
    render: Callable[[dict[str, Any], str], str]
    """``render(data, heading)``: the text block of ``data`` (``heading`` is the first line the
    tool's own text had)."""
    supersedes: tuple[str, ...] = field(default=("Showing ",))
    """Notice sentences starting with these are dropped when a cut replaces their paging advice."""


def answer_size(text: str, structured: Any) -> int:
    """Characters of one answer: the text block plus the structured content as JSON.

    ``json.dumps`` defaults with UTF-8 kept, as a client shows it.
    """
    return len(text) + len(json.dumps(structured, ensure_ascii=False))


# -------------------------------------------------------------------------------------- list access


def _lists(data: dict[str, Any], path: str) -> list[tuple[dict[str, Any], str]]:
    """The (holder, key) pairs of the lists ``path`` names in ``data``."""
    if "[]." in path:
        outer, inner = path.split("[].", 1)
        items = data.get(outer)
        return [(it, inner) for it in items or [] if isinstance(it, dict) and isinstance(it.get(inner), list)]
    *parents, key = path.split(".")
    holder: Any = data
    for p in parents:
        holder = holder.get(p) if isinstance(holder, dict) else None
    if isinstance(holder, dict) and isinstance(holder.get(key), list):
        return [(holder, key)]
    return []


def _longest(lists: list[tuple[dict[str, Any], str]]) -> int:
    return max((len(h[k]) for h, k in lists), default=0)


def _cut_to(lists: list[tuple[dict[str, Any], str]], originals: list[list[Any]], n: int) -> None:
    for (holder, key), original in zip(lists, originals, strict=True):
        holder[key] = original[:n]


def _notice(data: dict[str, Any], sentence: str, supersedes: tuple[str, ...]) -> None:
    kept = [
        s
        for s in re.split(r"(?<=[.!?])\s+", data.get("notice") or "")
        if s and not any(s.startswith(p) for p in supersedes)
    ]
    data["notice"] = " ".join([*kept, sentence])


# -------------------------------------------------------------------------------------- the budget


def fit_answer(
    tool: str, result: CallToolResult, args: Mapping[str, Any], budget: int, note: str | None = None
) -> CallToolResult:
    """``result`` cut to ``budget`` characters (text + structured JSON) with continuations.

    Errors and answers within the budget are returned unchanged (``note``, a sentence from
    :func:`clamp_arguments`, is added to the notice first); a budget of 0 means none. After a cut
    the text block is rendered again from what remains. An answer whose uncut parts alone pass
    the budget keeps what the cuts left, with their notices.
    """
    fit = FITS.get(tool)
    structured = result.structured_content
    if budget <= 0 or result.is_error or fit is None or not isinstance(structured, dict):
        return result
    text = "".join(c.text for c in result.content if isinstance(c, TextContent))
    if note is None and answer_size(text, structured) <= budget:
        return result
    heading = text.splitlines()[0] if text else ""
    data = json.loads(json.dumps(structured))
    if note:
        _notice(data, note, ())

    def size(d: dict[str, Any]) -> int:
        return answer_size(fit.render(d, heading), d)

    for cut in fit.cuts:
        if size(data) <= budget:
            break
        lists = _lists(data, cut.path)
        total = _longest(lists)
        if not total:
            continue
        originals = [list(h[k]) for h, k in lists]
        notice = data.get("notice")
        data["notice"] = (notice or "") + " " + "x" * 300  # room for the sentence the cut adds
        lo, hi = min(cut.floor, total), total
        while lo < hi:  # the largest length whose cut answer fits
            mid = (lo + hi + 1) // 2
            _cut_to(lists, originals, mid)
            if size(data) <= budget:
                lo = mid
            else:
                hi = mid - 1
        _cut_to(lists, originals, lo)
        if notice is None:
            data.pop("notice")
        else:
            data["notice"] = notice
        if lo < total:
            sentence = cut.resume(data, args, lo, total)
            _notice(data, f"{sentence} (cut to fit answer_max_chars={budget:,}).", fit.supersedes)
    return CallToolResult(
        content=[TextContent(type="text", text=fit.render(data, heading))],
        structured_content=data,
        is_error=result.is_error,
    )


# ------------------------------------------------------------------------------------- per tool


def _offset_pages(next_key: str, offset_arg: str, count_key: str | None, noun: str) -> Resume:
    """A list continued by an offset argument: ``next_key`` = offset + kept."""

    def resume(data: dict[str, Any], args: Mapping[str, Any], kept: int, total: int) -> str:
        start = int(args.get(offset_arg) or 0)
        data[next_key] = start + kept
        if count_key:
            data[count_key] = kept
        return (
            f"Showing {noun} {start + 1}-{start + kept} of this page's {total}; "
            f"call again with {offset_arg}={start + kept} for the rest"
        )

    return resume


def _authors(data: dict[str, Any], args: Mapping[str, Any], kept: int, total: int) -> str:
    start = int(args.get("offset") or 0)
    data.update(nextOffset=start + kept, truncated=True, shown=kept)
    data["cap"] = int(args.get("limit") or kept)
    count = data.get("authorCount", total)
    return (
        f"Showing authors {start + 1}-{start + kept} of {count}; call again with offset={start + kept} "
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
        f"Showing references {start + 1}-{start + kept} of {data.get('referenceCount', total)}; "
        f"call again with offset={start + kept} (limit={max(kept, 1)} fits)"
    )


def _files(data: dict[str, Any], args: Mapping[str, Any], kept: int, total: int) -> str:
    start = int(args.get("offset") or 0)
    data.update(next_offset=start + kept, has_more=True, truncated=True, shown=kept)
    return f"Showing {kept} of {data.get('matched', total)}; call again with offset {start + kept}"


def _record_files(data: dict[str, Any], args: Mapping[str, Any], kept: int, total: int) -> str:
    files = (data.get("record") or {}).get("files") or {}
    files["shown"] = kept
    data.update(truncated=True, shown=kept)
    return f"Showing {kept} of {files.get('count', total)} files; page the rest with zenodo_list_files"


def _page_items(noun: str) -> Resume:
    def resume(data: dict[str, Any], args: Mapping[str, Any], kept: int, total: int) -> str:
        data.update(truncated=True, shown=kept)
        start = (int(args.get("page") or 1) - 1) * int(args.get("size") or total)
        if kept and start % kept == 0:  # the rest starts a page of size=kept
            return (
                f"Showing {kept} of this page's {total} {noun}; call again with size={kept} and "
                f"page={start // kept + 2} for the next ones"
            )
        return (
            f"Showing {kept} of this page's {total} {noun}; call again with size={max(kept, 1)} "
            "to page in parts that fit"
        )

    return resume


def _dropped(noun: str) -> Resume:
    def resume(data: dict[str, Any], args: Mapping[str, Any], kept: int, total: int) -> str:
        return f"{noun} cut to {kept} of {total}"

    return resume


def _plain(render: Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any], str], str]:
    return lambda data, _heading: render(data)


def _record(data: dict[str, Any], _heading: str) -> str:
    return zenodo_render.render_record(data)


FITS: dict[str, Fit] = {
    "crossref_get_work": Fit((Cut("authors", _authors),), _plain(crossref.render_work)),
    "crossref_search_works": Fit(
        (Cut("works[].authors", _work_authors, floor=10), Cut("works", _works)),
        _plain(crossref.render_search_works),
    ),
    "crossref_get_references": Fit((Cut("references", _references),), _plain(crossref.render_references)),
    "crossref_search_journals": Fit(
        (
            Cut("recentWorks", _list_works("nextWorksOffset", "nextWorksCursor", None)),
            Cut("journals", _offset_pages("nextOffset", "offset", "journalCount", "journals")),
        ),
        _plain(crossref.render_journals),
    ),
    "crossref_search_funders": Fit(
        (
            Cut("funders[].descendants", _dropped("Descendant id lists")),
            Cut("fundedWorks", _list_works("nextWorksOffset", "nextWorksCursor", None)),
            Cut("funders", _offset_pages("nextOffset", "offset", "funderCount", "funders")),
        ),
        _plain(crossref.render_funders),
    ),
    "crossref_get_member": Fit((Cut("prefixes", _dropped("Prefixes")),), _plain(crossref.render_member)),
    "crossref_get_prefix": Fit((), _plain(crossref.render_prefix)),
    "crossref_get_works": Fit(
        (Cut("items", crossref_batch.resume_items),),
        _plain(crossref_batch.render_works),
    ),
    "zenodo_get_record": Fit((Cut("record.files.entries", _record_files),), _record),
    "zenodo_search_records": Fit((Cut("hits", _page_items("hits")),), zenodo_render.render_page),
    "zenodo_list_versions": Fit((Cut("versions", _page_items("versions")),), zenodo_render.render_page),
    "zenodo_list_files": Fit((Cut("entries", _files), Cut("members", _files)), zenodo_render.render_page),
    "zenodo_read_file": Fit((), zenodo_render.render_page),
    "zenodo_lookup_vocabulary": Fit((Cut("entries", _page_items("entries")),), zenodo_render.render_page),
    "syncd_list_changes": Fit((Cut("changes", changes.resume_changes),), _plain(changes.render_changes)),
}
"""Every tool's cuts, in the order tried, and its text renderer."""

CLAMPS: dict[str, dict[str, Callable[[int], int]]] = {
    "zenodo_read_file": {"max_bytes": lambda budget: max(256, budget // 4)},
}
"""Arguments lowered before the call to fit the budget: ``zenodo_read_file`` shows its excerpt in
the text block and in ``text`` (JSON escaping can double it), so at most a quarter of the budget."""


def clamp_arguments(
    tool: str, args: dict[str, Any], budget: int, sent: Collection[str] | None = None
) -> tuple[dict[str, Any], str | None]:
    """``args`` with the tool's clamped arguments lowered to fit ``budget``, and the sentence saying so.

    ``sent``: the argument names the client gave (None: all). A default above the limit (e.g.
    ``zenodo_read_file``'s ``max_bytes`` 16,384 under the default budget) is lowered without a
    sentence, since the client asked for nothing; a value the client sent is lowered with one.
    """
    if budget <= 0:
        return args, None
    notes = []
    out = dict(args)
    for name, limit in CLAMPS.get(tool, {}).items():
        value = out.get(name)
        if isinstance(value, int) and value > limit(budget):
            out[name] = limit(budget)
            if sent is None or name in sent:
                lowered = f"{name} {value:,} was lowered to {out[name]:,}"
                notes.append(f"{lowered} to fit answer_max_chars={budget:,}.")
    return out, " ".join(notes) or None
