"""Previous bodies: what a replacement set aside, and suspicious new bodies awaiting confirmation.

``previous_bodies`` holds, per entry, the body the entry had before upstream replaced it (``role``
``previous``, pruned after ``store.keep_previous_s``) and a new body that dropped most of the stored
one (``role`` ``suspect``, reason ``suspicious_shrink``) until a later answer confirms it. Rows go
with their entry (``ON DELETE CASCADE``). Both dialects: one plain ``CREATE TABLE`` and two indexes.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "previous_bodies",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("entry_id", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("body", sa.Text(), nullable=True),
        sa.Column("content_hash", sa.String(length=64), nullable=True),
        sa.Column("fetched_at", sa.Float(), nullable=False),
        sa.Column("kept_at", sa.Float(), nullable=False),
        sa.Column("reason", sa.String(length=64), nullable=True),
        sa.ForeignKeyConstraint(
            ["entry_id"], ["entries.id"], name=op.f("fk_previous_bodies_entry_id_entries"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_previous_bodies")),
    )
    op.create_index(op.f("ix_previous_bodies_entry_id"), "previous_bodies", ["entry_id"])
    op.create_index(op.f("ix_previous_bodies_kept_at"), "previous_bodies", ["kept_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_previous_bodies_kept_at"), table_name="previous_bodies")
    op.drop_index(op.f("ix_previous_bodies_entry_id"), table_name="previous_bodies")
    op.drop_table("previous_bodies")
