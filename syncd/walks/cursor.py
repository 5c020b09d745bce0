"""Where a Crossref cursor walk is, and the pure decisions about it (no I/O).

A walk of a Crossref list route pages with ``cursor`` in ``indexed`` order (``sort=indexed&order=asc``,
:data:`SORT`). Its position (:class:`CursorWalk`, stored as ``sync_state.cursor`` JSON plus the
:class:`~syncd.store.watches.Progress` columns) is rewritten after every stored page. It is made of
*segments*: the first starts at ``cursor=*`` with the walk's own filter (``base``: none for a full
walk, ``from-index-date:<checkpoint day>`` for an incremental one); when a cursor is refused as expired,
the next segment starts at ``cursor=*`` again from the **watermark**, the ``indexed`` time of the last
work stored, as ``from-index-date:<the watermark's day>``: the overlap is the works of that day
already stored (read again, counted once), instead of every page from the first.

What counts (never the cursor token: Crossref's ``next-cursor`` is a scroll id that stays the same on
every page, see ``crossref/work-list/works_query-widget_cursor-page2.json``):

* ``seen``: works (distinct DOIs) the walk has seen: ``before`` (read by earlier segments and not read
  again by this one) plus ``seg_seen`` (this segment);
* ``total``: ``before`` plus ``seg_total``, the ``total-results`` of this segment's first page. A
  segment accounts for its total when ``seg_seen >= seg_total``: the walk is complete.

A watermark only holds when upstream really pages in ``indexed`` order: a work older than the one
before it (or than the segment's ``from-index-date``) marks the walk ``ordered = False``, and an
expired cursor then restarts it from its first page, as before watermarks.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CURSOR_TTL_S",
    "SORT",
    "STUCK_PAGES",
    "WALK_MARGIN_FRACTION",
    "CursorWalk",
    "WalkGuard",
    "indexed_ms",
    "iso_ms",
]

SORT = {"sort": "indexed", "order": "asc"}
"""Query parameters of every page of a Crossref walk: oldest ``indexed`` first, so a watermark holds."""
CURSOR_TTL_S = 300.0
"""Seconds a Crossref ``next-cursor`` lives after it was issued (5 minutes); an older one is not sent."""
STUCK_PAGES = 3
"""Pages in a row with no DOI new to the segment, after which a walk is stopped (``no_new_items``)."""
WALK_MARGIN_FRACTION = 0.1
"""A segment may read ``total-results`` plus this fraction (at least one page) before it is called runaway."""


def indexed_ms(item: dict[str, Any]) -> int | None:
    """The ``indexed`` time of a Crossref work in epoch milliseconds, or None when it has none.

    Crossref: ``indexed.timestamp`` (epoch ms), else ``indexed.date-time`` (ISO 8601).
    """
    stamp = item.get("indexed")
    if not isinstance(stamp, dict):
        return None
    ms = stamp.get("timestamp")
    if isinstance(ms, int) and not isinstance(ms, bool) and ms >= 0:
        return ms
    text = stamp.get("date-time")
    if isinstance(text, str):
        try:
            parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=dt.UTC)
        return int(parsed.timestamp() * 1000)
    return None


def iso_ms(ms: int) -> str:
    """Epoch milliseconds as ISO 8601 UTC with milliseconds (``2026-11-29T10:00:00.123Z``)."""
    moment = dt.datetime.fromtimestamp(ms / 1000, dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _day(ms: int) -> str:
    return iso_ms(ms)[:10]


def _day_start_ms(day: str) -> int:
    return int(dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC).timestamp() * 1000)


@dataclass
class CursorWalk:
    """The position of one Crossref walk (see the module docstring); JSON via :meth:`position`.

    ``token``: the cursor to send next (``*`` at a segment's start); ``issued_at``: when upstream
    issued it (epoch seconds, None for ``*``); ``style``: ``scroll`` (upstream answers the cursor it was
    sent), ``rotating`` (a new one every page) or None (not known yet); ``pages``: pages stored by the
    walk; ``started_at``: when the walk started (its checkpoint day when it completes).
    """

    base: str | None = None
    since: str | None = None
    started_at: float = 0.0
    token: str = "*"
    issued_at: float | None = None
    style: str | None = None
    pages: int = 0
    ordered: bool = True
    watermark_ms: int | None = None
    day_seen: int = 0
    before: int = 0
    seg_seen: int = 0
    seg_total: int | None = None
    last_ms: int | None = None
    """``indexed`` time of the last work of this segment (order check; None at a segment's start)."""

    @property
    def seen(self) -> int:
        """Works the walk has seen (earlier segments' not read again, plus this segment's)."""
        return self.before + self.seg_seen

    @property
    def total(self) -> int | None:
        """What upstream says the walk holds: ``before`` plus this segment's ``total-results``."""
        return None if self.seg_total is None else self.before + self.seg_total

    @property
    def watermark(self) -> str | None:
        """The watermark as ISO 8601 UTC (None before the first dated work, or when not ordered)."""
        return iso_ms(self.watermark_ms) if self.watermark_ms is not None and self.ordered else None

    @property
    def accounted(self) -> bool:
        """True when this segment has seen every work its ``total-results`` announced."""
        return self.seg_total is not None and self.seg_seen >= self.seg_total

    def position(self) -> dict[str, Any]:
        """The JSON written to ``sync_state.cursor``."""
        return {
            "cursor": self.token, "since": self.since, "base": self.base, "started_at": self.started_at,
            "pages": self.pages, "issued_at": self.issued_at, "style": self.style, "ordered": self.ordered,
            "watermark_ms": self.watermark_ms, "day_seen": self.day_seen, "before": self.before,
            "seg_seen": self.seg_seen, "seg_total": self.seg_total, "last_ms": self.last_ms,
        }  # fmt: skip

    @classmethod
    def from_position(cls, cur: dict[str, Any]) -> CursorWalk:
        """A walk from its saved position (``sync_state.cursor``).

        One saved before watermarks (cursor, since, started_at, pages only) resumes with no watermark
        (``ordered`` False: an expired cursor restarts it).
        """
        legacy = "base" not in cur
        return cls(
            base=cur.get("since") if legacy else cur.get("base"),
            since=cur.get("since"),
            started_at=float(cur.get("started_at") or 0.0),
            token=str(cur.get("cursor") or "*"),
            issued_at=cur.get("issued_at"),
            style=cur.get("style"),
            pages=int(cur.get("pages") or 0),
            ordered=False if legacy else bool(cur.get("ordered", True)),
            watermark_ms=cur.get("watermark_ms"),
            day_seen=int(cur.get("day_seen") or 0),
            before=int(cur.get("before") or 0),
            seg_seen=int(cur.get("seg_seen") or 0),
            seg_total=cur.get("seg_total"),
            last_ms=cur.get("last_ms"),
        )

    # -- decisions

    def resendable(self, now: float) -> bool:
        """Whether the saved ``token`` may be sent again after a restart (``now``: epoch seconds).

        Not when it is older than :data:`CURSOR_TTL_S` (it is dead), nor when it is a scroll id and the
        walk can resume from its watermark instead: a scroll id's position lives upstream, which may
        already have moved past a page this process never stored (killed while the page was on its way).
        A cursor of unknown age (saved before watermarks) is tried.
        """
        if self.token == "*":
            return True
        if self.issued_at is not None and now - self.issued_at > CURSOR_TTL_S:
            return False
        return self.style == "rotating" or self.resume_since() is None

    def resume_since(self) -> str | None:
        """The ``from-index-date`` day a resumed segment starts from, or None without a watermark.

        The watermark's day, never before ``base``; None when there is no usable watermark (then the
        walk restarts from ``base``).
        """
        if not self.ordered or self.watermark_ms is None:
            return None
        day = _day(self.watermark_ms)
        return max(day, self.base) if self.base else day

    def resume(self) -> bool:
        """Start the next segment at ``cursor=*``; True when it starts from the watermark's day.

        Without a usable watermark it starts from the walk's first page (False: counts start again).
        """
        since = self.resume_since()
        if since is None:
            self.before, self.since, self.ordered, self.watermark_ms = 0, self.base, True, None
        else:
            # the new segment reads the watermark's day again from its start: those works are its own
            self.before = self.seen - self.day_seen
            self.since = since
        self.token, self.issued_at, self.seg_seen, self.seg_total, self.last_ms = "*", None, 0, None, None
        self.day_seen = 0
        return since is not None

    def take(self, fresh: list[dict[str, Any]], total: object) -> None:
        """Count a stored page; moves the watermark and checks the ``indexed`` order.

        ``fresh``: its works with a DOI this segment had not seen, in page order; ``total``: its
        ``total-results``.
        """
        if self.seg_total is None and isinstance(total, int) and not isinstance(total, bool) and total >= 0:
            self.seg_total = total  # what the segment's first page said there is
        floor = _day_start_ms(self.since) if self.since else None
        for item in fresh:
            self.seg_seen += 1
            ms = indexed_ms(item)
            if ms is None:
                continue
            if (self.last_ms is not None and ms < self.last_ms) or (floor is not None and ms < floor):
                self.ordered = False  # upstream does not page in indexed order: no watermark holds
            self.last_ms = ms
            if self.watermark_ms is None or ms > self.watermark_ms:
                if self.watermark_ms is None or _day(ms) != _day(self.watermark_ms):
                    self.day_seen = 0
                self.watermark_ms = ms
            if _day(ms) == _day(self.watermark_ms):
                self.day_seen += 1

    def advance(self, sent: str, nxt: str, now: float) -> None:
        """The next cursor ``nxt`` (answered to ``sent`` at ``now``) becomes the token to send."""
        if sent != "*":
            self.style = "scroll" if nxt == sent else "rotating"
        self.token, self.issued_at = nxt, now


@dataclass
class WalkGuard:
    """What one segment of a cursor walk has seen, to stop a walk upstream keeps going forever.

    Never judged by the cursor token (a scroll id repeats on every page by design). A walk stops
    (:meth:`stop_reason`) when :data:`STUCK_PAGES` pages in a row bring no DOI this segment has not
    seen (``no_new_items``), or when it has read more than ``total-results`` plus a margin
    (``past_total``; the largest total any page answered, so a result set growing meanwhile is no reason).
    ``rows``: the page size.
    """

    rows: int
    dois: set[str] = field(default_factory=set)
    read: int = 0
    total: int = 0
    idle_pages: int = 0

    def fresh(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The items of a page whose DOI this segment has not seen yet (in page order), remembered."""
        out = []
        for item in items:
            doi = item.get("DOI")
            key = doi.lower() if isinstance(doi, str) else ""
            if key and key not in self.dois:
                self.dois.add(key)
                out.append(item)
        return out

    def stop_reason(self, items: int, fresh: int, total: object) -> str | None:
        """The reason to stop after a page of ``items`` works (``fresh`` of them new), or None."""
        self.read += items
        if isinstance(total, int) and total > self.total:
            self.total = total
        self.idle_pages = 0 if fresh else self.idle_pages + 1
        if self.idle_pages >= STUCK_PAGES:
            return "no_new_items"
        margin = max(self.rows, int(self.total * WALK_MARGIN_FRACTION))
        if self.read > self.total + margin:
            return "past_total"
        return None
