"""Walk progress in ``sync_state``: ``watermark``, ``seen``, ``total``.

A Crossref walk pages in ``indexed`` order (``sort=indexed&order=asc``) and writes, with every stored
page, ``watermark``: the ``indexed`` time of the last work stored (ISO 8601 UTC with milliseconds,
from the work's ``indexed.timestamp``). A walk whose cursor expired resumes from the watermark's day
(``from-index-date``) instead of page 1. ``seen`` and ``total`` are the works the walk has seen and
the ``total-results`` upstream answered for it (``syncd watch ls`` shows ``seen / total``); a walk
is complete only when its pages account for that total.

Both dialects: plain ``ADD COLUMN`` of nullable columns; rows written before stay NULL (unknown).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("sync_state", sa.Column("watermark", sa.String(length=40), nullable=True))
    op.add_column("sync_state", sa.Column("seen", sa.BigInteger(), nullable=True))
    op.add_column("sync_state", sa.Column("total", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sync_state") as batch:
        batch.drop_column("total")
        batch.drop_column("seen")
        batch.drop_column("watermark")
