"""Budget driven by what upstream announces: ``budget_pools`` gains the last announcement, ``budget_sends``.

``budget_pools`` gains, per pool, the limit upstream last announced in its answer headers (Crossref
``x-rate-limit-limit``/``-interval``, ``x-concurrency-limit``, ``x-api-pool``; Zenodo
``X-RateLimit-Limit/-Remaining/-Reset``): ``announced_limit`` (requests per
``announced_interval_s`` seconds), ``announced_in_flight``, ``announced_pool``, ``announced_remaining``,
``announced_reset_at`` (epoch s), the headers as received (``announced_headers``) and when
(``announced_at``, epoch s), plus ``block_reason`` (``429`` or ``remaining``: why ``blocked_until`` is
set). ``budget_sends`` logs when each granted request left (one row per lease, epoch s), so that an
announced "N per interval" is kept over a sliding window by every process.

Both dialects: plain ``ADD COLUMN`` of nullable columns and a new table; the downgrade drops them.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

COLUMNS = (
    ("announced_at", sa.Float()),
    ("announced_limit", sa.Integer()),
    ("announced_interval_s", sa.Float()),
    ("announced_in_flight", sa.Integer()),
    ("announced_pool", sa.String(length=64)),
    ("announced_remaining", sa.Integer()),
    ("announced_reset_at", sa.Float()),
    ("announced_headers", sa.String(length=512)),
    ("block_reason", sa.String(length=16)),
)


def upgrade() -> None:
    for name, type_ in COLUMNS:
        op.add_column("budget_pools", sa.Column(name, type_, nullable=True))
    op.create_table(
        "budget_sends",
        sa.Column("id", sa.String(length=36), primary_key=True),
        sa.Column("pool", sa.String(length=32), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
    )
    op.create_index("ix_budget_sends_pool_at", "budget_sends", ["pool", "at"])


def downgrade() -> None:
    op.drop_index("ix_budget_sends_pool_at", table_name="budget_sends")
    op.drop_table("budget_sends")
    with op.batch_alter_table("budget_pools") as batch:
        for name, _ in reversed(COLUMNS):
            batch.drop_column(name)
