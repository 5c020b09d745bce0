"""The DataCite slice: the ``datacite`` budget pool's row, and ``datacite_work`` its own search band (code 3).

``budget_pools`` gets the ``datacite`` row (as 0003 made the first five: ``tokens = 0`` refilled
from the epoch, so the first take fills the bucket to the configured burst).

The band arithmetic of 0006 (``band = 2 * kind code + (status <> 'ok')``, rowid ``band * 2**40 +
entries.id``) with one more ``CASE`` arm: ``crossref_work`` 1, ``zenodo_record`` 2, ``datacite_work``
3, every other kind 0. Without it a DataCite search would share band 0 with the list pages and
entities (its page over-fetched and filtered, its count the band's). The view and triggers are made
again with the new arm and the index rebuilt from ``entries`` (the stored DataCite works move to
their band); :func:`syncd.store.search.kind_codes` reads the codes back from the view.

PostgreSQL: unchanged (kind filtering uses the ``(kind, doi)`` index).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

_TOKENIZE = "tokenize='porter unicode61 remove_diacritics 2'"


def _band_rowid(row: str, *, datacite: bool) -> str:
    """SQL of the index rowid of ``row`` (``new``, ``old`` or a table name), with or without DataCite."""
    arm = "WHEN 'datacite_work' THEN 6 " if datacite else ""
    return (
        f"((CASE {row}.kind WHEN 'crossref_work' THEN 2 WHEN 'zenodo_record' THEN 4 {arm}ELSE 0 END) "
        f"+ ({row}.status <> 'ok')) * 1099511627776 + {row}.id"
    )


def _statements(*, datacite: bool) -> list[str]:
    """Drop the view, index and triggers, make them again with the band of each kind, rebuild."""

    def band(row: str) -> str:
        return _band_rowid(row, datacite=datacite)

    return [
        "DROP TRIGGER IF EXISTS entries_fts_au",
        "DROP TRIGGER IF EXISTS entries_fts_ad",
        "DROP TRIGGER IF EXISTS entries_fts_ai",
        "DROP TABLE IF EXISTS entries_fts",
        "DROP VIEW IF EXISTS entries_fts_source",
        f"CREATE VIEW entries_fts_source AS SELECT {band('entries')} AS fts_rowid, title, search_text "
        "FROM entries",
        "CREATE VIRTUAL TABLE entries_fts USING fts5(title, search_text, content='entries_fts_source', "
        f"content_rowid='fts_rowid', {_TOKENIZE})",
        "CREATE TRIGGER entries_fts_ai AFTER INSERT ON entries BEGIN "
        f"INSERT INTO entries_fts(rowid, title, search_text) VALUES ({band('new')}, new.title, "
        "new.search_text); END",
        "CREATE TRIGGER entries_fts_ad AFTER DELETE ON entries BEGIN "
        "INSERT INTO entries_fts(entries_fts, rowid, title, search_text) "
        f"VALUES ('delete', {band('old')}, old.title, old.search_text); END",
        "CREATE TRIGGER entries_fts_au AFTER UPDATE OF kind, status, title, search_text ON entries BEGIN "
        "INSERT INTO entries_fts(entries_fts, rowid, title, search_text) "
        f"VALUES ('delete', {band('old')}, old.title, old.search_text); "
        f"INSERT INTO entries_fts(rowid, title, search_text) VALUES ({band('new')}, new.title, "
        "new.search_text); END",
        "INSERT INTO entries_fts(entries_fts) VALUES ('rebuild')",
    ]


POOL = "datacite"
"""The pool this revision adds."""


def _pools() -> sa.TableClause:
    return sa.table(
        "budget_pools",
        sa.column("pool", sa.String),
        sa.column("tokens", sa.Float),
        sa.column("updated_at", sa.Float),
        sa.column("blocked_until", sa.Float),
        sa.column("failures", sa.Integer),
        sa.column("offline_until", sa.Float),
    )


def upgrade() -> None:
    pools = _pools()
    present = {row[0] for row in op.get_bind().execute(sa.select(pools.c.pool))}
    if POOL not in present:
        op.bulk_insert(
            pools,
            [
                {
                    "pool": POOL,
                    "tokens": 0.0,
                    "updated_at": 0.0,
                    "blocked_until": 0.0,
                    "failures": 0,
                    "offline_until": 0.0,
                }
            ],
        )
    if op.get_bind().dialect.name == "sqlite":
        for statement in _statements(datacite=True):
            op.execute(statement)


def downgrade() -> None:
    op.execute(sa.text("DELETE FROM budget_pools WHERE pool = :pool").bindparams(pool=POOL))
    if op.get_bind().dialect.name == "sqlite":
        for statement in _statements(datacite=False):
            op.execute(statement)
