"""The store's facade: :class:`Store`, one object over the session, entries and search parts.

Callers use ``Store`` (``Store.open(url)``); its parts live in their own modules, as requests-cache
separates ``SQLiteDict`` (the connection) from ``SQLiteCache`` (the cached responses):

* :mod:`syncd.store.session`: engine, transactions, the bounded write lock, write health
  (full disk, read-only file), body encoding;
* :mod:`syncd.store.entries`: entries, validations, the change feed rows and the bodies kept beside
  an entry (``put_content``, ``mark_validated``, ``mark_error``, reads, stale queries);
* :mod:`syncd.store.searching`: the local full-text search (FTS5 / ``tsvector``);
* :mod:`syncd.store.rows`: the row types (:class:`StoredEntry`, :class:`EntryContent`) and prepared reads.

The names callers import from here (``Store``, ``StoredEntry``, ``EntryContent``, ``write_cause``,
the defaults) are re-exported unchanged.
"""

from __future__ import annotations

from syncd.store.entries import EntryStore
from syncd.store.rows import EntryContent, StoredEntry
from syncd.store.search import SEARCH_COUNT_CAP
from syncd.store.searching import SearchStore
from syncd.store.session import (
    KEEP_PREVIOUS_S,
    MIN_FREE_BYTES,
    SEARCH_MAX_CHARS,
    SEARCH_MAX_TERMS,
    SEARCH_TIMEOUT_S,
    UNWRITABLE_RECHECK_S,
    WRITE_WAIT_FLOOR_S,
    write_cause,
)

__all__ = [
    "KEEP_PREVIOUS_S",
    "MIN_FREE_BYTES",
    "SEARCH_COUNT_CAP",
    "SEARCH_MAX_CHARS",
    "SEARCH_MAX_TERMS",
    "SEARCH_TIMEOUT_S",
    "UNWRITABLE_RECHECK_S",
    "WRITE_WAIT_FLOOR_S",
    "EntryContent",
    "Store",
    "StoredEntry",
    "write_cause",
]


class Store(EntryStore, SearchStore):
    """The local store: one database (SQLite by default) shared by every syncd process.

    Args:
        engine: an engine from :func:`syncd.store.engine.make_engine`.
        keep_previous_s: how long a replaced body is kept in ``previous_bodies`` (seconds).
        search_max_chars, search_max_terms: the longest local search query (characters) and the
            most distinct terms; above them a search is refused (``invalid_parameter``).
        search_timeout_s: a local search is interrupted after this many seconds, or sooner at the
            deadline given by :meth:`waits_within` (the call's deadline).
        monotonic: the clock a search's deadline is kept on, in seconds (default ``time.monotonic``,
            read when the search starts and every 10,000 SQLite VM steps; tests inject one).

    All methods raise :class:`~syncd.errors.StoreError` when the database fails.
    """
