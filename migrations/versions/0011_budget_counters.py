"""Request counters per pool: ``budget_pools`` gains ``requests_total`` and ``rate_limited_total``.

Every attempt that reached upstream (answered, failed or timed out: not one the budget gave back
unsent) adds one to ``requests_total`` of its pool, and every 429 one to ``rate_limited_total``, in
the write transaction that releases the request's lease, so the counts cover every process sharing
the store (the daemon, ``syncd mcp``, the CLI). Read by the daemon's ``/metrics`` (Prometheus
counters: they only grow, except when the store is replaced).

Both dialects: plain ``ADD COLUMN ... NOT NULL DEFAULT 0``; the downgrade drops them.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

COLUMNS = ("requests_total", "rate_limited_total")


def upgrade() -> None:
    for name in COLUMNS:
        op.add_column(
            "budget_pools", sa.Column(name, sa.BigInteger(), nullable=False, server_default=sa.text("0"))
        )


def downgrade() -> None:
    with op.batch_alter_table("budget_pools") as batch:
        for name in reversed(COLUMNS):
            batch.drop_column(name)
