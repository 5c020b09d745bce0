"""The store's local full-text search over stored entries (both backends, one results shape).

SQLite: FTS5 ``MATCH`` ranked by ``bm25``; PostgreSQL: ``tsvector @@ websearch_to_tsquery`` ranked by
``ts_rank``; the SQL of each is in :mod:`syncd.store.search`. Searches are bounded in query size and
interrupted at the call's deadline (:meth:`SearchStore._search_read`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection

from syncd.errors import InvalidInput, StoreError
from syncd.store import search
from syncd.store.dialect import is_postgresql
from syncd.store.rows import (
    BY_IDS,
    BY_IDS_OF_KIND,
    LINES_BY_IDS,
    LINES_BY_IDS_OF_KIND,
    StoredEntry,
    row_to_entry,
)
from syncd.store.search import SEARCH_COUNT_CAP
from syncd.store.session import StoreSession, wait_left

__all__ = ["SearchStore"]


class SearchStore(StoreSession):
    """Full-text search of the stored entries (titles and search text), bounded and deadline-aware."""

    def search(self, query: str, kind: str | None = None, limit: int = 20) -> list[StoredEntry]:
        """Full-text search over stored titles and text: entries matching ALL terms of ``query``, best first.

        Terms are split on whitespace and each is quoted, so search syntax in user input is inert on
        both backends (a term is a phrase of its tokens). SQLite: FTS5 ``MATCH`` ranked by ``bm25``;
        PostgreSQL: ``websearch_to_tsquery`` over the ``search_tsv`` column ranked by ``ts_rank``
        (stemmed with the ``english`` configuration, whose stop words are ignored). Returns at most
        ``limit`` entries of any status, optionally of one ``kind``; above
        :data:`~syncd.store.search.RANK_BOUND` matches the most recently stored ones are ranked.
        """
        quoted = self._bounded_terms(query)
        if not quoted:
            return []
        return self._search_entries(" ".join(quoted), kind, False, 0, limit, count=False)[0]

    def search_page(
        self, terms: list[str], kind: str, offset: int = 0, limit: int = 20, *, lines: bool = False
    ) -> tuple[list[StoredEntry], int]:
        """Full-text page of the ``ok`` entries of ``kind`` matching any of ``terms``.

        Entries of ``kind`` with status ``ok`` matching ANY of ``terms`` (over title and search text),
        best first (FTS5 ``bm25`` on SQLite, ``ts_rank`` on PostgreSQL), paged by ``offset``/``limit``;
        returns ``(page, total_matches)``. The total is counted in the index up to
        :data:`SEARCH_COUNT_CAP`; above :data:`~syncd.store.search.RANK_BOUND` matches the ranking is
        bounded: the entries matching ALL terms first, then the others, each ranked among the
        ``RANK_BOUND`` most recently stored (:func:`syncd.store.search.all_terms_first`). Kind and
        status are filtered inside the index (:mod:`syncd.store.search`). Each term is quoted, so search
        syntax in user input is inert.

        ``lines``: each entry carries its stored list line (``summary``) and its body only when it has
        none (a page of lines reads no whole body).
        """
        quoted = self._bounded_terms(" ".join(terms))
        if not quoted:
            return [], 0
        every = (" AND " if self.engine.dialect.name == "sqlite" else " ").join(quoted)
        return self._search_entries(
            " OR ".join(quoted), kind, True, offset, limit, count=True, every=every, lines=lines
        )

    def _search_entries(
        self,
        match: str,
        kind: str | None,
        ok_only: bool,
        offset: int,
        limit: int,
        *,
        count: bool,
        every: str | None = None,
        lines: bool = False,
    ) -> tuple[list[StoredEntry], int]:
        """Ranked entries of ``match`` (quoted terms joined by ``OR`` or blanks) and their capped count.

        The count (0 unless ``count``) and the ranking come from the index; only the page's entries are
        read. Ranking is bounded (:func:`syncd.store.search.ranked_ids_sqlite`) when the count passed
        ``RANK_BOUND`` or was not taken (when fewer match, the bounded ranking is the full one). A kind
        without its own index band (:func:`syncd.store.search.kind_codes`) shares it with the other
        such kinds on SQLite: its page is over-fetched and filtered here, its count is the band's.
        ``every``: the query of all the terms, whose matches come first in a bounded ranking.
        ``lines``: read the list lines, and the bodies only of entries without one.
        """
        with self._search_read() as conn:
            pg = is_postgresql(conn)
            codes = {} if pg else self._kind_codes(conn)
            shared = kind is not None and kind not in codes
            code = None if kind is None else codes.get(kind, 0)
            if pg:
                shared = False
                total = search.count_postgresql(conn, match, kind, ok_only, SEARCH_COUNT_CAP) if count else 0
                start, want = offset, limit
            else:
                total = search.count_sqlite(conn, match, code, ok_only, SEARCH_COUNT_CAP) if count else 0
                start, want = (0, (offset + limit) * 4) if shared else (offset, limit)
            bounded = total > search.RANK_BOUND or not count

            def rank(m: str, off: int, lim: int) -> list[int]:
                if pg:
                    return search.ranked_ids_postgresql(conn, m, kind, ok_only, off, lim, bounded=bounded)
                return search.ranked_ids_sqlite(conn, m, code, ok_only, off, lim, bounded=bounded)

            if bounded and every is not None:
                ids = search.all_terms_first(rank, match, every, start, want)
            else:
                ids = rank(match, start, want)
            if not ids:
                return [], total
            if lines:
                statement = LINES_BY_IDS_OF_KIND if shared else LINES_BY_IDS
            else:
                statement = BY_IDS_OF_KIND if shared else BY_IDS
            rows = conn.execute(statement, {"ids": ids, "kind": kind})
            by_id = {r.id: row_to_entry(r) for r in rows}
        found = [by_id[i] for i in ids if i in by_id]
        return (found[offset : offset + limit] if shared else found), total

    def _kind_codes(self, conn: Connection) -> dict[str, int]:
        """The index's kind codes (:func:`syncd.store.search.kind_codes`), read once per store."""
        if self._codes is None:
            self._codes = search.kind_codes(conn)
        return self._codes

    def _bounded_terms(self, query: str) -> list[str]:
        """The distinct quoted terms of ``query`` (:func:`_terms`) within the search bounds.

        Raises:
            InvalidInput: reason ``invalid_parameter`` (declared by every search tool), the query is
                longer than ``search_max_chars``
                or has more than ``search_max_terms`` distinct terms.
        """
        if len(query) > self.search_max_chars:
            raise InvalidInput(
                f"search query of {len(query)} characters; at most {self.search_max_chars} are searched",
                reason="invalid_parameter",
                hint="Shorten the query (setting store.search_max_chars).",
            )
        terms = search.terms(query)
        if len(terms) > self.search_max_terms:
            raise InvalidInput(
                f"search query of {len(terms)} distinct terms; at most {self.search_max_terms} are searched",
                reason="invalid_parameter",
                hint="Use fewer search terms (setting store.search_max_terms).",
            )
        return terms

    @contextmanager
    def _search_read(self) -> Iterator[Connection]:
        """A read transaction interrupted at the call's deadline (SQLite progress handler).

        The limit is the time left of :meth:`waits_within` when set, else ``search_timeout_s``.

        Raises:
            StoreError: reason ``request_timeout`` when interrupted; ``store_unavailable`` otherwise.
        """
        left = wait_left()
        end = self._monotonic() + (min(left(), self.search_timeout_s) if left else self.search_timeout_s)
        stopped: list[bool] = []

        def past_deadline() -> int:
            if self._monotonic() > end:
                stopped.append(True)
                return 1
            return 0

        try:
            with self.read() as conn:
                sqlite = self.engine.dialect.name == "sqlite"
                if sqlite:
                    conn.connection.driver_connection.set_progress_handler(past_deadline, 10_000)  # type: ignore[union-attr]
                try:
                    yield conn
                finally:
                    if sqlite:
                        conn.connection.driver_connection.set_progress_handler(None, 0)  # type: ignore[union-attr]
        except StoreError as exc:
            if stopped:
                raise StoreError(
                    "local search stopped at the call's deadline",
                    reason="request_timeout",
                    hint="Use fewer or more specific search terms.",
                ) from exc
            raise
