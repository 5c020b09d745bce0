"""One size budget for every tool answer: lists cut with a continuation and a notice, never silently.

An MCP client keeps only so much of a tool result (Claude Code cuts at about 25,000 tokens). Every
successful answer goes through :func:`fit_answer` (called once, by the server, for every tool): when
the answer's size — the text block plus the structured JSON, in characters — passes
``answer_max_chars``, the tool's declared lists (its :class:`Fit`, on its
:class:`~syncd.tools.params.ToolSpec`) are cut, in the declared order, to
the longest prefix that fits; the continuation fields (``nextOffset``, ``next_offset``,
``truncated``/``shown``/``cap``) are set so the next call returns the next part, a sentence naming
that call is added to ``notice``, and the text block is rendered again from what remains. A budget
of 0 turns this off, so large ``rows``/``limit``/``authorLimit`` answers stay possible when the
setting allows them. An argument a tool declares in its ``clamps`` (``zenodo_read_file``'s
``max_bytes``: a byte range continues by ``next_offset``) is lowered before the call instead
(:func:`clamp_arguments`).

This module is the machinery only: each slice declares its tools' cuts beside their specs, with the
generic continuations here (:func:`offset_pages`, :func:`page_items`, :func:`dropped`) or its own
:data:`Resume` functions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp.types import CallToolResult, TextContent

__all__ = [
    "Clamps",
    "Cut",
    "Fit",
    "Resume",
    "answer_size",
    "clamp_arguments",
    "dropped",
    "fit_answer",
    "offset_pages",
    "page_items",
    "plain",
]

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


def with_notice(fit: Fit, result: CallToolResult, sentence: str) -> CallToolResult:
    """``result`` with ``sentence`` appended to its ``notice`` and its text rendered again by ``fit``.

    An error, or an answer without structured content, is returned unchanged.
    """
    structured = result.structured_content
    if result.is_error or not isinstance(structured, dict):
        return result
    data = {**structured, "notice": " ".join(filter(None, (structured.get("notice"), sentence)))}
    text = "".join(c.text for c in result.content if isinstance(c, TextContent))
    heading = text.splitlines()[0] if text else ""
    return CallToolResult(
        content=[TextContent(type="text", text=fit.render(data, heading))], structured_content=data
    )


# -------------------------------------------------------------------------------------- the budget


def fit_answer(
    fit: Fit, result: CallToolResult, args: Mapping[str, Any], budget: int, note: str | None = None
) -> CallToolResult:
    """``result`` cut to ``budget`` characters (text + structured JSON) with continuations, by ``fit``.

    Errors and answers within the budget are returned unchanged (``note``, a sentence from
    :func:`clamp_arguments`, is added to the notice first); a budget of 0 means none. After a cut
    the text block is rendered again from what remains. An answer whose uncut parts alone pass
    the budget keeps what the cuts left, with their notices.
    """
    structured = result.structured_content
    if budget <= 0 or result.is_error or not isinstance(structured, dict):
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


# ------------------------------------------------------------------------------- generic continuations


def offset_pages(next_key: str, offset_arg: str, count_key: str | None, noun: str) -> Resume:
    """A list continued by an offset argument: ``next_key`` = offset + kept (``count_key``: kept)."""

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


def page_items(noun: str) -> Resume:
    """A list of a ``page``/``size`` page: sets ``truncated``/``shown``, names the page that continues."""

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


def dropped(noun: str) -> Resume:
    """A list cut with no continuation (the sentence says how many of how many stay)."""

    def resume(data: dict[str, Any], args: Mapping[str, Any], kept: int, total: int) -> str:
        return f"{noun} cut to {kept} of {total}"

    return resume


def plain(render: Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any], str], str]:
    """A :attr:`Fit.render` from a renderer that ignores the heading: ``render(data)``."""
    return lambda data, _heading: render(data)


# ------------------------------------------------------------------------------------ argument clamps

Clamps = Mapping[str, Callable[[int], int]]
"""Arguments a tool lowers before the call to fit the budget: ``name -> limit(budget)``."""


def clamp_arguments(
    clamps: Clamps, args: dict[str, Any], budget: int, sent: Collection[str] | None = None
) -> tuple[dict[str, Any], str | None]:
    """``args`` with the tool's ``clamps`` lowered to fit ``budget``, and the sentence saying so.

    ``sent``: the argument names the client gave (None: all). A default above the limit (e.g.
    ``zenodo_read_file``'s ``max_bytes`` 16,384 under the default budget) is lowered without a
    sentence, since the client asked for nothing; a value the client sent is lowered with one.
    """
    if budget <= 0:
        return args, None
    notes = []
    out = dict(args)
    for name, limit in clamps.items():
        value = out.get(name)
        if isinstance(value, int) and value > limit(budget):
            out[name] = limit(budget)
            if sent is None or name in sent:
                lowered = f"{name} {value:,} was lowered to {out[name]:,}"
                notes.append(f"{lowered} to fit answer_max_chars={budget:,}.")
    return out, " ".join(notes) or None
