"""Budget: every pool's row created here, and leases that name their holder (process id and host).

The five pools of DESIGN.md get their ``budget_pools`` row now, so the budget never creates rows
while serving (a take is one write transaction, ``state()`` is a plain read). A new row holds
``tokens = 0`` refilled from ``updated_at = 0`` (the epoch): the first take refills it to the
pool's configured burst, whatever the settings say, so the migration needs no settings.

``budget_leases`` gains ``pid`` and ``host``: the next take frees a lease whose process is gone
(same host, checked with ``kill(pid, 0)``) instead of waiting for its expiry. Leases held when the
schema changes are runtime state and are dropped.

Both dialects: plain ``ADD COLUMN`` of nullable columns and row inserts, no batch mode needed.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

POOLS = ("crossref_single", "crossref_list", "zenodo_general", "zenodo_search", "doi")
"""The budget pools at this revision (frozen here: a later pool comes with its own migration)."""


def upgrade() -> None:
    op.execute("DELETE FROM budget_leases")
    op.add_column("budget_leases", sa.Column("pid", sa.Integer(), nullable=True))
    op.add_column("budget_leases", sa.Column("host", sa.String(length=255), nullable=True))
    pools = sa.table(
        "budget_pools",
        sa.column("pool", sa.String),
        sa.column("tokens", sa.Float),
        sa.column("updated_at", sa.Float),
        sa.column("blocked_until", sa.Float),
        sa.column("failures", sa.Integer),
        sa.column("offline_until", sa.Float),
    )
    present = {row[0] for row in op.get_bind().execute(sa.select(pools.c.pool))}
    missing = [
        {
            "pool": pool,
            "tokens": 0.0,
            "updated_at": 0.0,
            "blocked_until": 0.0,
            "failures": 0,
            "offline_until": 0.0,
        }
        for pool in POOLS
        if pool not in present
    ]
    if missing:
        op.bulk_insert(pools, missing)


def downgrade() -> None:
    op.execute("DELETE FROM budget_leases")
    with op.batch_alter_table("budget_leases") as batch:
        batch.drop_column("host")
        batch.drop_column("pid")
