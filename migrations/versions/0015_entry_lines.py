"""List lines out of the body's row: ``entry_lines(entry_id, line)``, filled from ``entries.summary``.

Migration 0014 kept each work's list line in ``entries.summary``, the last column of the row, after
the body: SQLite keeps a row's columns in order and spills a large body to a chain of overflow pages,
so reading the line walked that chain (the whole body's pages, for a 250 KB body with 2,932 authors).
The line now has a row of its own, ``entry_lines`` (``entry_id`` the primary key, SQLite's rowid;
``ON DELETE CASCADE``), written with the body by the store (:mod:`syncd.store.lines`).

The upgrade creates the table and copies every line (one ``INSERT ... SELECT``). A line 0014 wrote has
no ``issued`` (added to :data:`~syncd.crossref.views_lines.LINE_KEYS` with this revision, for the
``crossref_get_works`` items, whose date falls back to ``issued``); a reader only reaches ``issued``
when none of ``published``, ``published-print`` and ``published-online`` names a year, so exactly
those lines are built again from their bodies (decoded with the store's dictionaries), 1,000 lines
per statement batch.

``entries.summary`` is dropped on PostgreSQL (a catalog change). On SQLite it is left in place, no
longer written or read (the models do not map it): ``ALTER TABLE ... DROP COLUMN`` rewrites every row,
bodies included (22 s for the 100,000-work benchmark store, a write-ahead log the size of the table),
which a migration run at every start must not risk on a nearly full disk.

The downgrade copies the lines back into ``entries.summary`` (added again on PostgreSQL) and drops
the table.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-01
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

from syncd.crossref.views_entries import parse_date_parts
from syncd.crossref.views_lines import list_line
from syncd.store.codec import decode_body, load_dictionaries

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

_BATCH = 1000
_DATES = ("published", "published-print", "published-online")
"""The dates a reader takes before ``issued`` (:func:`syncd.crossref.views_entries._published`)."""


def _dated(line: str) -> bool:
    """Whether a 0014 line names a year in one of :data:`_DATES` (then ``issued`` is never read)."""
    try:
        item = json.loads(line)
    except ValueError:
        return False
    return isinstance(item, dict) and any(parse_date_parts(item.get(k)) is not None for k in _DATES)


def _line(body: Any) -> str | None:
    """The list line of a stored work body (``/works/{doi}`` envelope), or None."""
    try:
        doc = json.loads(decode_body(body) or "null")
    except ValueError:
        return None
    message = doc.get("message") if isinstance(doc, dict) else None
    return list_line(message) if isinstance(message, dict) else None


def _rebuild_undated(conn: sa.Connection) -> None:
    """Build again, from the body, each copied line without a year before ``issued``."""
    load_dictionaries(conn)
    select = sa.text(
        "SELECT entry_id, line FROM entry_lines WHERE entry_id > :after ORDER BY entry_id LIMIT :n"
    )
    body = sa.text("SELECT id, body FROM entries WHERE id IN :ids").bindparams(
        sa.bindparam("ids", expanding=True)
    )
    write = sa.text("UPDATE entry_lines SET line = :line WHERE entry_id = :id")
    after = 0
    while rows := conn.execute(select, {"after": after, "n": _BATCH}).all():
        after = rows[-1][0]
        undated = [i for i, line in rows if not _dated(line)]
        if not undated:
            continue
        lines = [
            {"id": i, "line": line}
            for i, stored in conn.execute(body, {"ids": undated})
            if (line := _line(stored)) is not None
        ]
        if lines:
            conn.execute(write, lines)


def upgrade() -> None:
    op.create_table(
        "entry_lines",
        sa.Column("entry_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("line", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["entry_id"], ["entries.id"], name=op.f("fk_entry_lines_entry_id_entries"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("entry_id", name=op.f("pk_entry_lines")),
    )
    conn = op.get_bind()
    conn.execute(
        sa.text(
            "INSERT INTO entry_lines (entry_id, line) "
            "SELECT id, summary FROM entries WHERE summary IS NOT NULL"
        )
    )
    _rebuild_undated(conn)
    if conn.dialect.name != "sqlite":
        op.drop_column("entries", "summary")


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "sqlite":
        op.add_column("entries", sa.Column("summary", sa.Text(), nullable=True))
    conn.execute(
        sa.text(
            "UPDATE entries SET summary = "
            "(SELECT line FROM entry_lines WHERE entry_lines.entry_id = entries.id)"
        )
    )
    op.drop_table("entry_lines")
