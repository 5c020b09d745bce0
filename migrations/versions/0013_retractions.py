"""Retraction Watch data as a local source (``retraction_datasets``, ``retraction_rows``), the reference index.

``retraction_datasets`` holds one row per imported version of Crossref's ``retraction_watch.csv``
(file SHA-256, rows, source, git commit, when imported, rows added/changed/removed/skipped);
``retraction_rows`` the rows of the newest version keyed by Retraction Watch record id, indexed by
original DOI and original PubMed id (:mod:`syncd.retractions`). ``work_references`` is the reference
index: one row per (entry, DOI its reference list cites), written with the body from now on; works
stored before it are indexed by ``syncd cited-by --rebuild``.

Both dialects: two plain ``CREATE TABLE`` and three indexes; the downgrade drops them.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "retraction_datasets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("row_count", sa.Integer(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("git_commit", sa.String(length=64), nullable=True),
        sa.Column("imported_at", sa.Float(), nullable=False),
        sa.Column("added", sa.Integer(), nullable=False),
        sa.Column("changed", sa.Integer(), nullable=False),
        sa.Column("removed", sa.Integer(), nullable=False),
        sa.Column("skipped", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_retraction_datasets")),
    )
    op.create_index(op.f("ix_retraction_datasets_sha256"), "retraction_datasets", ["sha256"])
    op.create_table(
        "retraction_rows",
        sa.Column("record_id", sa.String(length=32), nullable=False),
        sa.Column("original_doi", sa.String(length=1024), nullable=True),
        sa.Column("original_pmid", sa.String(length=16), nullable=True),
        sa.Column("notice_doi", sa.String(length=1024), nullable=True),
        sa.Column("notice_pmid", sa.String(length=16), nullable=True),
        sa.Column("nature", sa.String(length=64), nullable=False),
        sa.Column("notice_date", sa.String(length=10), nullable=True),
        sa.Column("original_date", sa.String(length=10), nullable=True),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("fields", sa.Text(), nullable=False),
        sa.Column("row_hash", sa.String(length=64), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("record_id", name=op.f("pk_retraction_rows")),
    )
    op.create_index("ix_retraction_rows_original_doi", "retraction_rows", ["original_doi"])
    op.create_index("ix_retraction_rows_original_pmid", "retraction_rows", ["original_pmid"])
    op.create_table(
        "work_references",
        sa.Column("entry_id", sa.Integer(), nullable=False),
        sa.Column("cited_doi", sa.String(length=1024), nullable=False),
        sa.ForeignKeyConstraint(
            ["entry_id"], ["entries.id"], name=op.f("fk_work_references_entry_id_entries"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("entry_id", "cited_doi", name=op.f("pk_work_references")),
    )
    op.create_index(op.f("ix_work_references_cited_doi"), "work_references", ["cited_doi"])


def downgrade() -> None:
    op.drop_index(op.f("ix_work_references_cited_doi"), table_name="work_references")
    op.drop_table("work_references")
    op.drop_index("ix_retraction_rows_original_pmid", table_name="retraction_rows")
    op.drop_index("ix_retraction_rows_original_doi", table_name="retraction_rows")
    op.drop_table("retraction_rows")
    op.drop_index(op.f("ix_retraction_datasets_sha256"), table_name="retraction_datasets")
    op.drop_table("retraction_datasets")
