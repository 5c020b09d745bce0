"""List lines beside the bodies: ``entries.summary``, filled for the stored Crossref works.

``entries.summary`` (nullable text) holds the fields a list line of the entry shows, written by the
kind with the body (:func:`syncd.crossref.views_lines.list_line` for a Crossref work) so an offline
search hit is rendered without parsing the whole body. The upgrade adds the column and fills it for
every stored ``ok`` Crossref work, 1,000 entries per statement batch, bodies decoded with the store's
dictionaries (:mod:`syncd.store.codec`); a body that does not parse keeps NULL (readers then parse
the body, as before). The downgrade drops the column (SQLite: in place, ``DROP COLUMN``).

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


def upgrade() -> None:
    op.add_column("entries", sa.Column("summary", sa.Text(), nullable=True))
    conn = op.get_bind()
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
        op.execute("ALTER TABLE entries DROP COLUMN summary")  # in place: the index triggers stay
    else:
        op.drop_column("entries", "summary")
