"""The pure decisions of a Crossref cursor walk (:mod:`syncd.walks.cursor`): watermark, resume, resend."""

from __future__ import annotations

from syncd.walks.cursor import CURSOR_TTL_S, CursorWalk, WalkGuard, indexed_ms, iso_ms
from tests.conftest import corpus_json

FUNDER_STAR = "crossref/work-list/funders-100000001-works_rows-30_cursor-star.json"


def test_indexed_time_of_a_recorded_work_and_its_date_time_fallback() -> None:
    """A recorded work's `indexed.timestamp` is the watermark; without it `indexed.date-time` is read."""
    item = corpus_json(FUNDER_STAR)["message"]["items"][0]
    ms = indexed_ms(item)
    assert ms == item["indexed"]["timestamp"] and iso_ms(ms).startswith("2019-02-12T21:03:00")
    assert indexed_ms({"indexed": {"date-time": "2019-02-12T21:03:00Z"}}) == 1550005380000
    assert indexed_ms({"indexed": {"date-time": "not a date"}}) is None and indexed_ms({}) is None


def test_resume_reads_the_watermarks_day_again_and_counts_it_once() -> None:
    """After 5 works over two days (3 on 11-02), the resumed segment starts at 11-02: `before` keeps the
    2 works of 11-01, and re-reading 11-02 counts its 3 works in the new segment only.
    """
    walk = CursorWalk(started_at=0.0)
    days = ["2026-11-01T10:00:00Z", "2026-11-01T11:00:00Z", "2026-11-02T01:00:00Z"]
    days += ["2026-11-02T02:00:00Z", "2026-11-02T03:00:00Z"]
    page = [{"DOI": f"10.5555/{i}", "indexed": {"date-time": t}} for i, t in enumerate(days)]
    walk.take(page, 9)
    assert (walk.seen, walk.total, walk.day_seen, walk.watermark) == (5, 9, 3, "2026-11-02T03:00:00.000Z")
    assert walk.resume() is True
    assert (walk.since, walk.before, walk.seen, walk.token) == ("2026-11-02", 2, 2, "*")
    walk.take(page[2:], 7)
    assert (walk.seen, walk.total) == (5, 9)


def test_a_page_out_of_indexed_order_drops_the_watermark() -> None:
    """Upstream not honouring the sort: an older work after a newer one leaves no watermark, and a
    resume restarts the walk from its first page (counts from zero).
    """
    walk = CursorWalk(base="2026-10-01", since="2026-10-01")
    newer, older = (
        {"DOI": f"10.5555/{d}", "indexed": {"date-time": d}} for d in ("2026-11-02", "2026-11-01")
    )
    walk.take([newer, older], 10)
    assert walk.ordered is False and walk.watermark is None
    assert walk.resume() is False and (walk.since, walk.seen) == ("2026-10-01", 0)


def test_a_saved_cursor_is_sent_again_only_when_it_rotates_and_lives() -> None:
    """A rotating cursor younger than its life is sent again; a scroll id, an unknown kind with a
    watermark, or any cursor older than CURSOR_TTL_S is not; one saved before watermarks is tried.
    """
    walk = CursorWalk(token="AoJ1", issued_at=1000.0, style="rotating", watermark_ms=1)
    assert walk.resendable(1000.0 + CURSOR_TTL_S - 1) and not walk.resendable(1000.0 + CURSOR_TTL_S + 1)
    walk.style = "scroll"
    assert not walk.resendable(1001.0)
    walk.style = None
    assert not walk.resendable(1001.0)
    legacy = CursorWalk.from_position({"cursor": "old", "since": None, "started_at": 5.0, "pages": 3})
    assert legacy.resendable(10**10) and legacy.ordered is False and legacy.pages == 3


def test_the_guard_never_looks_at_the_cursor() -> None:
    """The same items page after page stop the walk after STUCK_PAGES idle pages, whatever the cursor."""
    guard = WalkGuard(rows=2)
    items = [{"DOI": "10.5555/A"}, {"DOI": "10.5555/b"}]
    assert len(guard.fresh(items)) == 2 and guard.stop_reason(2, 2, 10) is None
    reasons = [guard.stop_reason(2, len(guard.fresh(items)), 10) for _ in range(3)]
    assert reasons == [None, None, "no_new_items"]
