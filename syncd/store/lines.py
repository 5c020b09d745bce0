"""The list lines of the stored entries (``entry_lines``, migration 0015; no kind named here).

Each write of an entry's body hands the line its kind derived from it
(:attr:`~syncd.store.rows.EntryContent.summary`, e.g. :func:`syncd.crossref.views_lines.list_line`);
the store writes it in the same transaction (:func:`write_line`): a new body gets its line, a body
replaced by one without a line (a tombstone, a miss, a kind that keeps none) loses it, and a deleted
entry takes its line along (``ON DELETE CASCADE``). Reads: the search pages' lines
(:data:`syncd.store.rows.LINES_BY_IDS`) and :func:`lines_of`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import Connection, bindparam, delete, insert, select

from syncd.store.models import EntryLine

__all__ = ["CHUNK", "INSERT_SQLITE", "lines_of", "write_line", "write_many"]

CHUNK = 500
"""Ids per ``SELECT ... IN`` and rows per ``INSERT`` statement."""

INSERT_SQLITE = "INSERT INTO entry_lines (entry_id, line) VALUES (?, ?)"
"""The driver statement of one row (SQLite bulk writes, :mod:`syncd.store.bulk`)."""

_DELETE = delete(EntryLine).where(EntryLine.entry_id == bindparam("entry_id"))
_INSERT = insert(EntryLine)
_LINES = select(EntryLine.entry_id, EntryLine.line).where(
    EntryLine.entry_id.in_(bindparam("ids", expanding=True))
)


def write_line(conn: Connection, entry_id: int, line: str | None) -> None:
    """Set entry ``entry_id``'s line to ``line`` (None: it has none), in ``conn``'s transaction."""
    conn.execute(_DELETE, {"entry_id": entry_id})
    if line is not None:
        conn.execute(_INSERT, {"entry_id": entry_id, "line": line})


def write_many(conn: Connection, pairs: Iterable[tuple[int, str | None]]) -> None:
    """Lines of entries just inserted (none held before): ``(entry_id, line)`` pairs, None skipped."""
    rows = [{"entry_id": entry_id, "line": line} for entry_id, line in pairs if line is not None]
    for i in range(0, len(rows), CHUNK):
        conn.execute(_INSERT, rows[i : i + CHUNK])


def lines_of(conn: Connection, ids: Sequence[int]) -> dict[int, str]:
    """The lines of the entries ``ids`` that have one: entry id -> line (JSON text)."""
    out: dict[int, str] = {}
    for i in range(0, len(ids), CHUNK):
        out.update((r[0], r[1]) for r in conn.execute(_LINES, {"ids": list(ids[i : i + CHUNK])}))
    return out
