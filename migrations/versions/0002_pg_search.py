"""PostgreSQL full-text search: a generated tsvector column over title + search text, GIN-indexed.

SQLite keeps the FTS5 table and triggers of 0001; on SQLite this revision changes nothing.
On PostgreSQL ``entries.search_tsv`` is a stored generated column (recomputed by the server whenever
the row is written, so no trigger is needed): the title weighted ``A``, the search text ``B``, both
with the ``english`` configuration (stemming, like FTS5's ``porter`` tokenizer).

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-06
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

SEARCH_COLUMN = "search_tsv"
SEARCH_INDEX = "ix_entries_search_tsv"

PG_UPGRADE = [
    f"ALTER TABLE entries ADD COLUMN {SEARCH_COLUMN} tsvector GENERATED ALWAYS AS ("
    "setweight(to_tsvector('english'::regconfig, coalesce(title, '')), 'A') || "
    "setweight(to_tsvector('english'::regconfig, coalesce(search_text, '')), 'B')) STORED",
    f"CREATE INDEX {SEARCH_INDEX} ON entries USING gin ({SEARCH_COLUMN})",
]
PG_DOWNGRADE = [
    f"DROP INDEX IF EXISTS {SEARCH_INDEX}",
    f"ALTER TABLE entries DROP COLUMN IF EXISTS {SEARCH_COLUMN}",
]


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for statement in PG_UPGRADE:
            op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for statement in PG_DOWNGRADE:
            op.execute(statement)
