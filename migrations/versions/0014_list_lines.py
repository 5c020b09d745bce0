"""List lines beside the bodies (``entries.summary``) and a search index a bulk write fills per batch.

``entries.summary`` (nullable text) holds the fields a list line of the entry shows, written by the
kind with the body (:func:`syncd.crossref.views_lines.list_line` for a Crossref work) so an offline
search hit is rendered without parsing the whole body. The upgrade adds the column and fills it for
every stored ``ok`` Crossref work, 1,000 entries per statement batch, bodies decoded with the store's
dictionaries (:mod:`syncd.store.codec`); a body that does not parse keeps NULL (readers then parse
the body, as before). The downgrade drops the column (SQLite: in place, ``DROP COLUMN``).

SQLite only: the table ``entries_fts_paused`` (no row, but inside a bulk write's own transaction) and
the index's insert trigger recreated with ``WHEN NOT EXISTS (SELECT 1 FROM entries_fts_paused)``, so
the bulk writer (:mod:`syncd.store.bulk`) indexes the rows of a batch with one ``INSERT ... SELECT``
(:func:`syncd.store.search.paused_index`) instead of one trigger run per row. The trigger's body is
kept as it is (read back from ``sqlite_master``); the downgrade puts the plain trigger back and drops
the table.

Both dialects: ``ALTER TABLE entries ADD COLUMN summary`` (SQLite: no table rebuild).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-01
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

from syncd.crossref.views_lines import list_line
from syncd.store.codec import decode_body, load_dictionaries

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

_BATCH = 1000


def _line(body: Any) -> str | None:
    """The list line of a stored work body (``/works/{doi}`` envelope or bare message), or None."""
    try:
        doc = json.loads(decode_body(body) or "null")
    except ValueError:
        return None
    message = doc.get("message") if isinstance(doc, dict) else None
    return list_line(message) if isinstance(message, dict) else None


_PAUSE = "entries_fts_paused"
_PLAIN = "AFTER INSERT ON entries BEGIN"
_PAUSABLE = f"AFTER INSERT ON entries WHEN NOT EXISTS (SELECT 1 FROM {_PAUSE}) BEGIN"


def _retrigger(old: str, new: str) -> None:
    """Recreate the index's insert trigger with its ``old`` header replaced by ``new`` (SQLite)."""
    sql = (
        op.get_bind()
        .exec_driver_sql("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'entries_fts_ai'")
        .scalar()
    )
    if not sql or old not in sql:
        raise RuntimeError(f"entries_fts_ai is not the trigger migration 0014 expects: {sql!r}")
    op.execute("DROP TRIGGER entries_fts_ai")
    op.execute(str(sql).replace(old, new))


def upgrade() -> None:
    op.add_column("entries", sa.Column("summary", sa.Text(), nullable=True))
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":
        op.execute(f"CREATE TABLE {_PAUSE} (id INTEGER PRIMARY KEY)")
        _retrigger(_PLAIN, _PAUSABLE)
    load_dictionaries(conn)
    select = sa.text(
        "SELECT id, body FROM entries WHERE kind = 'crossref_work' AND status = 'ok' AND id > :after "
        "ORDER BY id LIMIT :n"
    )
    write = sa.text("UPDATE entries SET summary = :summary WHERE id = :id")
    after = 0
    while rows := conn.execute(select, {"after": after, "n": _BATCH}).all():
        after = rows[-1][0]
        lines = [{"id": i, "summary": line} for i, body in rows if (line := _line(body)) is not None]
        if lines:
            conn.execute(write, lines)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _retrigger(_PAUSABLE, _PLAIN)
        op.execute(f"DROP TABLE {_PAUSE}")
        op.execute("ALTER TABLE entries DROP COLUMN summary")  # in place: the index triggers stay
    else:
        op.drop_column("entries", "summary")
