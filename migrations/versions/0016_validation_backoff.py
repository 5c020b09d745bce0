"""Backoff for a broken record: ``validations.failures`` and ``validations.retry_at``.

An entry whose revalidation keeps failing for the same declared reason (a record upstream answers
malformed, a body the store's guard refuses) was asked again by every sweep. ``failures`` counts the
failed revalidations in a row with the reason ``last_error`` names (0 after a success);
``retry_at`` (epoch seconds, NULL: no backoff) is when a sweep may ask it again
(:meth:`syncd.store.entries.EntryStore.mark_error`). ``syncd cache stats`` lists the entries
backing off.

Both dialects: two ``ADD COLUMN`` (``failures`` with a server default of 0, so rows written by any
earlier writer read as no streak; a catalog change on both, no row rewritten); the downgrade drops them.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("validations", sa.Column("failures", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("validations", sa.Column("retry_at", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("validations") as batch:
        batch.drop_column("retry_at")
        batch.drop_column("failures")
