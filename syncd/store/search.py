"""The full-text index of the store: query terms, index rowids, counted and ranked matches.

SQLite (migration 0006): ``entries_fts`` is an FTS5 table over ``entries.title`` and
``entries.search_text`` whose rowid is ``band * 2**40 + entries.id``, with
``band = 2 * kind code + (0 if status == "ok" else 1)``. The kind codes are a fact of the schema
(migration 0006's ``CASE kind WHEN ... THEN ...``), read back from the view's SQL by :func:`kind_codes`:
the store names no kind; kinds without a code share code 0 (their rows are filtered by the caller).
One kind, or one kind's ``ok`` entries, is a rowid range that FTS5 applies inside the index, so
counting and ranking the matches of a kind never read the wide ``entries`` rows. The index is
written by the triggers of migration 0006 on every insert, delete and update of ``entries`` (no
Python write path has to do anything; :func:`rebuild` rebuilds it from ``entries``), except for the
rows a bulk write inserts, which it indexes itself with one statement per batch (:func:`paused_index`,
migration 0014).

Ranking is FTS5's ``bm25`` (lower is better), ties by rowid. When a query matches more than
:data:`RANK_BOUND` entries, only the :data:`RANK_BOUND` most recently stored ones (highest ids) are
ranked (:func:`ranked_ids_sqlite`), so one common word cannot make a search rank a whole million-work
mirror; a search for any of several terms then lists the matches of every term first
(:func:`all_terms_first`). Counts stop at :data:`SEARCH_COUNT_CAP`.

PostgreSQL (migration 0002): ``websearch_to_tsquery`` over the generated ``search_tsv`` column (GIN),
ranked by ``ts_rank``; the same count cap and rank bound.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, text

from syncd.store.dialect import PG_TS_CONFIG

__all__ = [
    "BAND_SPAN",
    "INDEX_TABLE",
    "PAUSE_TABLE",
    "RANK_BOUND",
    "SEARCH_COUNT_CAP",
    "all_terms_first",
    "can_pause",
    "count_postgresql",
    "count_sqlite",
    "entry_id",
    "index_rowid",
    "kind_codes",
    "paused_index",
    "ranked_ids_postgresql",
    "ranked_ids_sqlite",
    "rebuild",
    "rowid_range",
    "terms",
]

INDEX_TABLE = "entries_fts"
"""The SQLite FTS5 table (external content: the view ``entries_fts_source``)."""

BAND_SPAN = 1 << 40
"""Index rowids of one band span this many entry ids (``entries.id`` < 2**40)."""

SEARCH_COUNT_CAP = 10_001
"""Matches counted at most (a total of 10,001 means "more than 10,000")."""

RANK_BOUND = 2_000
"""Most matches ranked by one search: above it, the most recently stored ``RANK_BOUND`` are ranked.

``bm25`` costs a few microseconds per match (its document-size lookup): 2,000 keep the ranking of a
query that matches most of a 1,000,000-work mirror near 10 ms (10,000: ~30 ms; all: 100-300 ms)."""

_WORD = re.compile(r"\w+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
"""Control characters (NUL breaks FTS5 quoting and cannot be stored in PostgreSQL text)."""


def terms(query: str) -> list[str]:
    """Whitespace-separated terms of ``query``, each double-quoted (inner quotes dropped), blanks skipped.

    A term whose tokens repeat an earlier term's (``Alpha``, ``alpha,``) is left out: FTS5's cost grows
    with the square of repeated phrases matching the same rows (2,000 copies of one word: 10 s).

    A quoted term is a phrase of its tokens for FTS5 and for ``websearch_to_tsquery`` alike, so
    ``OR``, ``-``, ``NEAR``, ``title:`` and the like in user text are searched as words.
    """
    out = []
    seen: set[tuple[str, ...]] = set()
    for term in _CONTROL.sub(" ", query).split():
        bare = term.replace('"', " ").strip()
        same = tuple(_WORD.findall(bare.casefold()))  # FTS5 and tsquery see these tokens: one phrase each
        if bare and same not in seen:
            seen.add(same)
            out.append(f'"{bare}"')
    return out


_CASE_ARM = re.compile(r"WHEN\s+'([^']+)'\s+THEN\s+(\d+)", re.IGNORECASE)


def kind_codes(conn: Connection) -> dict[str, int]:
    """SQLite: each banded kind's code, as the index's source view computes it (``{}`` without the view).

    Read from the ``entries_fts_source`` view's SQL (its ``CASE kind WHEN '<kind>' THEN <2 x code>``),
    so the bands stay whatever the migrations made them.
    """
    sql = conn.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'view' AND name = 'entries_fts_source'"
    ).scalar()
    return {kind: int(value) // 2 for kind, value in _CASE_ARM.findall(sql or "")}


def index_rowid(code: int, status: str, entry_id: int) -> int:
    """The ``entries_fts`` rowid of entry ``entry_id`` of a kind of code ``code`` (as migration 0006 does)."""
    band = 2 * code + (status != "ok")
    return band * BAND_SPAN + entry_id


def entry_id(rowid: int) -> int:
    """The ``entries.id`` an ``entries_fts`` rowid stands for."""
    return rowid % BAND_SPAN


MAX_CODE = 63
"""Highest kind code a rowid range for every kind spans (rowids stay below 2**63)."""


def rowid_range(code: int | None, ok_only: bool = False) -> tuple[int, int]:
    """Inclusive ``entries_fts`` rowid range of the kinds of code ``code`` (every kind when None).

    Only their ``ok`` entries when ``ok_only``. Code 0 is shared by every kind without its own code
    (their rows are filtered by the caller).
    """
    if code is None:
        return (0, (2 * (MAX_CODE + 1)) * BAND_SPAN - 1)
    first = 2 * code * BAND_SPAN
    return (first, first + (1 if ok_only else 2) * BAND_SPAN - 1)


_IN_RANGE = f"{INDEX_TABLE} MATCH ? AND rowid BETWEEN ? AND ?"
_COUNT = f"SELECT count(*) FROM (SELECT 1 FROM {INDEX_TABLE} WHERE {_IN_RANGE} LIMIT ?)"
_NEWEST = (
    f"SELECT rowid, bm25({INDEX_TABLE}) AS score FROM {INDEX_TABLE} WHERE {_IN_RANGE} "
    "ORDER BY rowid DESC LIMIT ?"
)
_RANKED_BOUNDED = f"SELECT rowid FROM ({_NEWEST}) ORDER BY score, rowid LIMIT ? OFFSET ?"
_RANKED = (
    f"SELECT rowid FROM {INDEX_TABLE} WHERE {_IN_RANGE} ORDER BY bm25({INDEX_TABLE}), rowid LIMIT ? OFFSET ?"
)
"""SQLite statements, run on the driver (``?`` parameters: no SQLAlchemy compile on the search path)."""


def count_sqlite(conn: Connection, match: str, code: int | None, ok_only: bool, cap: int) -> int:
    """SQLite: matches of ``match`` (FTS5 syntax) in band ``code`` (None: all), counted up to ``cap``."""
    lo, hi = rowid_range(code, ok_only)
    return int(conn.exec_driver_sql(_COUNT, (match, lo, hi, cap)).scalar_one())


def ranked_ids_sqlite(
    conn: Connection,
    match: str,
    code: int | None,
    ok_only: bool,
    offset: int,
    limit: int,
    *,
    bounded: bool,
) -> list[int]:
    """SQLite: entry ids of the matches of ``match`` in band ``code``, best ``bm25`` first, index only.

    ``bounded``: rank only the :data:`RANK_BOUND` (or ``offset + limit`` when more) most recently stored
    matches (the same as the full ranking when fewer match).
    """
    lo, hi = rowid_range(code, ok_only)
    if bounded:
        bound = max(RANK_BOUND, offset + limit)
        rows = conn.exec_driver_sql(_RANKED_BOUNDED, (match, lo, hi, bound, limit, offset))
    else:
        rows = conn.exec_driver_sql(_RANKED, (match, lo, hi, limit, offset))
    return [entry_id(r[0]) for r in rows]


def all_terms_first(
    rank: Callable[[str, int, int], list[int]], any_match: str, every_match: str, offset: int, limit: int
) -> list[int]:
    """A page of a bounded ranking of ANY term, the matches of EVERY term first.

    ``rank(match, offset, limit)`` is a bounded ranking (:func:`ranked_ids_sqlite` or
    :func:`ranked_ids_postgresql`). Among the most recently stored matches of any term, a work with one
    common word would fill the page; the matches of every term (their ``bm25`` order is the full
    ranking's, restricted to them) come first, then the others, each list bounded to
    :data:`RANK_BOUND`.
    """
    want = offset + limit
    first = rank(every_match, 0, want)
    if len(first) < want:
        seen = set(first)
        first += [i for i in rank(any_match, 0, want + len(first)) if i not in seen]
    return first[offset:want]


PAUSE_TABLE = "entries_fts_paused"
"""SQLite (migration 0014): while this table holds a row, the insert trigger leaves ``entries_fts`` alone.

Only a bulk write sets it, inside its own write transaction, and empties it before committing
(:func:`paused_index`), so no other connection ever sees it set."""


def can_pause(conn: Connection) -> bool:
    """SQLite: whether the index's insert trigger obeys :data:`PAUSE_TABLE` (a store at 0014 or later)."""
    sql = conn.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'entries_fts_ai'"
    ).scalar()
    return bool(sql) and PAUSE_TABLE in str(sql)


_INDEX_RANGE = (
    f"INSERT INTO {INDEX_TABLE}(rowid, title, search_text) "
    "SELECT ? + id, title, search_text FROM entries WHERE id BETWEEN ? AND ?"
)


@contextmanager
def paused_index(cursor: Any, code: int, first: int, last: int) -> Iterator[None]:
    """SQLite, on the driver ``cursor`` of a write transaction: rows inserted meanwhile skip the trigger.

    On leaving, the ``ok`` entries of band ``code`` with ids ``first`` .. ``last`` (the rows just
    inserted, every one ``ok`` and of kinds of that code) are indexed by one ``INSERT ... SELECT`` and
    the trigger is back. One statement per batch instead of one trigger run per row: about 5x less
    writer time (FTS5 writes its pending terms out at every statement of a trigger).
    """
    cursor.execute(f"INSERT INTO {PAUSE_TABLE} DEFAULT VALUES")
    try:
        yield
    finally:
        cursor.execute(f"DELETE FROM {PAUSE_TABLE}")
    cursor.execute(_INDEX_RANGE, (index_rowid(code, "ok", 0), first, last))


def rebuild(conn: Connection) -> None:
    """SQLite: rebuild ``entries_fts`` from every entry's title and search text (one full read)."""
    conn.execute(text(f"INSERT INTO {INDEX_TABLE}({INDEX_TABLE}) VALUES ('rebuild')"))


_PG_MATCH = "e.search_tsv @@ q AND (CAST(:k AS text) IS NULL OR e.kind = :k) AND (NOT :ok OR e.status = 'ok')"


def count_postgresql(conn: Connection, websearch: str, kind: str | None, ok_only: bool, cap: int) -> int:
    """PostgreSQL: entries of ``kind`` matching ``websearch`` (websearch syntax), counted up to ``cap``."""
    sql = text(
        f"SELECT count(*) FROM (SELECT 1 FROM entries e, websearch_to_tsquery('{PG_TS_CONFIG}', :q) q "
        f"WHERE {_PG_MATCH} LIMIT :cap) AS m"
    )
    return int(conn.execute(sql, {"q": websearch, "k": kind, "ok": ok_only, "cap": cap}).scalar_one())


def ranked_ids_postgresql(
    conn: Connection,
    websearch: str,
    kind: str | None,
    ok_only: bool,
    offset: int,
    limit: int,
    *,
    bounded: bool,
) -> list[int]:
    """PostgreSQL: ids matching ``websearch``, highest ``ts_rank`` first, then id.

    ``bounded``: rank only the :data:`RANK_BOUND` (or ``offset + limit`` when more) most recently
    stored matches (highest ids).
    """
    bound = max(RANK_BOUND, offset + limit)
    params = {"q": websearch, "k": kind, "ok": ok_only, "n": limit, "o": offset, "bound": bound}
    if bounded:
        sql = text(
            "SELECT id FROM (SELECT e.id, ts_rank(e.search_tsv, q) AS score FROM entries e, "
            f"websearch_to_tsquery('{PG_TS_CONFIG}', :q) q WHERE {_PG_MATCH} "
            "ORDER BY e.id DESC LIMIT :bound) AS m ORDER BY score DESC, id LIMIT :n OFFSET :o"
        )
    else:
        sql = text(
            f"SELECT e.id FROM entries e, websearch_to_tsquery('{PG_TS_CONFIG}', :q) q WHERE {_PG_MATCH} "
            "ORDER BY ts_rank(e.search_tsv, q) DESC, e.id LIMIT :n OFFSET :o"
        )
    return [r[0] for r in conn.execute(sql, params)]
