"""The change feed: ``changes``, one row per change found in a stored work, record or agency entry.

Written in the transaction that replaces an entry's body (revalidation, sync walk, fetch, import)
or stores a new Zenodo version of a series already held; read by ``syncd changes``, the
``syncd_list_changes`` tool, the ``syncd://changes`` resource and the daemon's alerts. Rows go with
their entry (``ON DELETE CASCADE``) and after ``changes.keep_s``. Both dialects: one plain
``CREATE TABLE`` and three indexes.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "changes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("entry_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("key", sa.String(length=1024), nullable=False),
        sa.Column("doi", sa.String(length=1024), nullable=True),
        sa.Column("series", sa.String(length=64), nullable=True),
        sa.Column("detected_at", sa.Float(), nullable=False),
        sa.Column("types", sa.String(length=512), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["entry_id"], ["entries.id"], name=op.f("fk_changes_entry_id_entries"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_changes")),
    )
    op.create_index(op.f("ix_changes_entry_id"), "changes", ["entry_id"])
    op.create_index(op.f("ix_changes_doi"), "changes", ["doi"])
    op.create_index(op.f("ix_changes_detected_at"), "changes", ["detected_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_changes_detected_at"), table_name="changes")
    op.drop_index(op.f("ix_changes_doi"), table_name="changes")
    op.drop_index(op.f("ix_changes_entry_id"), table_name="changes")
    op.drop_table("changes")
