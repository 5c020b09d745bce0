"""Sync walks name their walker: ``sync_state`` gains ``pid``, ``host``, ``heartbeat_at``, ``stop_requested``.

A running walk writes its process id and host when it starts and ``heartbeat_at`` (epoch seconds)
after every page; a ``running`` row whose heartbeat is old or whose process is gone (same host)
reads as ``interrupted`` and is resumed, not waited for. ``stop_requested`` (set by ``syncd watch
stop``) makes the walk stop at its next page boundary, its position saved.

Both dialects: plain ``ADD COLUMN`` of nullable columns (``stop_requested`` with a server default).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("sync_state", sa.Column("pid", sa.Integer(), nullable=True))
    op.add_column("sync_state", sa.Column("host", sa.String(length=255), nullable=True))
    op.add_column("sync_state", sa.Column("heartbeat_at", sa.Float(), nullable=True))
    op.add_column(
        "sync_state",
        sa.Column("stop_requested", sa.Boolean(), nullable=False, server_default=sa.false()),
    )


def downgrade() -> None:
    with op.batch_alter_table("sync_state") as batch:
        batch.drop_column("stop_requested")
        batch.drop_column("heartbeat_at")
        batch.drop_column("host")
        batch.drop_column("pid")
