"""Initial store: entries, validations, concepts, budget, FTS5 index.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

FTS_SQLITE = [
    "CREATE VIRTUAL TABLE entries_fts USING fts5(title, search_text, content='entries', "
    "content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')",
    "CREATE TRIGGER entries_fts_ai AFTER INSERT ON entries BEGIN "
    "INSERT INTO entries_fts(rowid, title, search_text) VALUES (new.id, new.title, new.search_text); END",
    "CREATE TRIGGER entries_fts_ad AFTER DELETE ON entries BEGIN "
    "INSERT INTO entries_fts(entries_fts, rowid, title, search_text) "
    "VALUES ('delete', old.id, old.title, old.search_text); END",
    "CREATE TRIGGER entries_fts_au AFTER UPDATE OF title, search_text ON entries BEGIN "
    "INSERT INTO entries_fts(entries_fts, rowid, title, search_text) "
    "VALUES ('delete', old.id, old.title, old.search_text); "
    "INSERT INTO entries_fts(rowid, title, search_text) VALUES (new.id, new.title, new.search_text); END",
]


def upgrade() -> None:
    op.create_table(
        "entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("key", sa.String(length=1024), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("body", sa.Text(), nullable=True),
        sa.Column("content_hash", sa.String(length=64), nullable=True),
        sa.Column("upstream_version", sa.String(length=64), nullable=True),
        sa.Column("doi", sa.String(length=1024), nullable=True),
        sa.Column("concept_key", sa.String(length=64), nullable=True),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("search_text", sa.Text(), nullable=True),
        sa.Column("fetched_at", sa.Float(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_entries")),
        sa.UniqueConstraint("kind", "key", name="uq_entries_kind_key"),
    )
    op.create_index("ix_entries_kind_doi", "entries", ["kind", "doi"])
    op.create_index("ix_entries_kind_concept_key", "entries", ["kind", "concept_key"])
    op.create_table(
        "validations",
        sa.Column("entry_id", sa.Integer(), nullable=False),
        sa.Column("validated_at", sa.Float(), nullable=False),
        sa.Column("etag", sa.String(length=256), nullable=True),
        sa.Column("last_modified", sa.String(length=64), nullable=True),
        sa.Column("checks", sa.Integer(), nullable=False),
        sa.Column("changes", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.String(length=64), nullable=True),
        sa.Column("last_error_at", sa.Float(), nullable=True),
        sa.Column("volatile", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["entry_id"], ["entries.id"], name=op.f("fk_validations_entry_id_entries"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("entry_id", name=op.f("pk_validations")),
    )
    op.create_index(op.f("ix_validations_validated_at"), "validations", ["validated_at"])
    op.create_table(
        "concepts",
        sa.Column("concept_recid", sa.String(length=64), nullable=False),
        sa.Column("latest_recid", sa.String(length=64), nullable=False),
        sa.Column("validated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("concept_recid", name=op.f("pk_concepts")),
    )
    op.create_table(
        "budget_pools",
        sa.Column("pool", sa.String(length=32), nullable=False),
        sa.Column("tokens", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.Column("blocked_until", sa.Float(), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("offline_until", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("pool", name=op.f("pk_budget_pools")),
    )
    op.create_table(
        "budget_leases",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("pool", sa.String(length=32), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_budget_leases")),
    )
    op.create_index(op.f("ix_budget_leases_pool"), "budget_leases", ["pool"])
    op.create_table(
        "watches",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("spec", sa.Text(), nullable=False),
        sa.Column("label", sa.Text(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_watches")),
        sa.UniqueConstraint("kind", "spec", name="uq_watches_kind_spec"),
    )
    op.create_table(
        "sync_state",
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("cursor", sa.Text(), nullable=True),
        sa.Column("checkpoint", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=True),
        sa.Column("started_at", sa.Float(), nullable=True),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.Column("last_success_at", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_sync_state")),
    )
    op.create_table(
        "blobs",
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("key", sa.String(length=1024), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("content_type", sa.String(length=128), nullable=True),
        sa.Column("fetched_at", sa.Float(), nullable=False),
        sa.Column("accessed_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("kind", "key", name=op.f("pk_blobs")),
    )
    op.create_index(op.f("ix_blobs_accessed_at"), "blobs", ["accessed_at"])
    if op.get_bind().dialect.name == "sqlite":
        for statement in FTS_SQLITE:
            op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name in ("entries_fts_au", "entries_fts_ad", "entries_fts_ai"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute("DROP TABLE IF EXISTS entries_fts")
    op.drop_index(op.f("ix_blobs_accessed_at"), table_name="blobs")
    op.drop_table("blobs")
    op.drop_table("sync_state")
    op.drop_table("watches")
    op.drop_index(op.f("ix_budget_leases_pool"), table_name="budget_leases")
    op.drop_table("budget_leases")
    op.drop_table("budget_pools")
    op.drop_table("concepts")
    op.drop_index(op.f("ix_validations_validated_at"), table_name="validations")
    op.drop_table("validations")
    op.drop_index("ix_entries_kind_concept_key", table_name="entries")
    op.drop_index("ix_entries_kind_doi", table_name="entries")
    op.drop_table("entries")
