"""Search index keyed by kind and status: FTS5 rowids carry a band, so filters never read ``entries``.

SQLite: ``entries_fts`` is rebuilt over the view ``entries_fts_source``, whose rowid is
``band * 2**40 + entries.id`` with ``band = 2 * kind code + (status <> 'ok')`` (kind codes:
``crossref_work`` 1, ``zenodo_record`` 2, every other kind 0). A kind (and "status ok") is then a rowid
range, which FTS5 applies inside its own index: the ranked top-N and the capped match count of one kind
never touch the wide ``entries`` rows (before: up to 10,001 primary-key probes of ``entries`` per count,
one per match to check ``kind``). The triggers keep the index in step with every write of ``entries``
(insert, delete, and updates of ``kind``, ``status``, ``title``, ``search_text``), whichever path writes.
The Python side of the same arithmetic is :mod:`syncd.store.search`. The rebuild reads every entry's
title and search text once, so the whole file (348 s for the 12 GB, 1,000,000-work benchmark store on
2 shared cores at load ~9).

PostgreSQL: unchanged (the generated ``search_tsv`` column with its GIN index of 0002; kind filtering
uses the ``(kind, doi)`` index's leading column).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def _band_rowid(row: str) -> str:
    """SQL of the index rowid of ``row`` (``new``, ``old`` or a table name)."""
    return (
        f"((CASE {row}.kind WHEN 'crossref_work' THEN 2 WHEN 'zenodo_record' THEN 4 ELSE 0 END) "
        f"+ ({row}.status <> 'ok')) * 1099511627776 + {row}.id"
    )


_TOKENIZE = "tokenize='porter unicode61 remove_diacritics 2'"
_DROP = [
    "DROP TRIGGER IF EXISTS entries_fts_au",
    "DROP TRIGGER IF EXISTS entries_fts_ad",
    "DROP TRIGGER IF EXISTS entries_fts_ai",
    "DROP TABLE IF EXISTS entries_fts",
    "DROP VIEW IF EXISTS entries_fts_source",
]
UPGRADE_SQLITE = [
    *_DROP,
    f"CREATE VIEW entries_fts_source AS SELECT {_band_rowid('entries')} AS fts_rowid, title, search_text "
    "FROM entries",
    "CREATE VIRTUAL TABLE entries_fts USING fts5(title, search_text, content='entries_fts_source', "
    f"content_rowid='fts_rowid', {_TOKENIZE})",
    "CREATE TRIGGER entries_fts_ai AFTER INSERT ON entries BEGIN "
    f"INSERT INTO entries_fts(rowid, title, search_text) VALUES ({_band_rowid('new')}, new.title, "
    "new.search_text); END",
    "CREATE TRIGGER entries_fts_ad AFTER DELETE ON entries BEGIN "
    "INSERT INTO entries_fts(entries_fts, rowid, title, search_text) "
    f"VALUES ('delete', {_band_rowid('old')}, old.title, old.search_text); END",
    "CREATE TRIGGER entries_fts_au AFTER UPDATE OF kind, status, title, search_text ON entries BEGIN "
    "INSERT INTO entries_fts(entries_fts, rowid, title, search_text) "
    f"VALUES ('delete', {_band_rowid('old')}, old.title, old.search_text); "
    f"INSERT INTO entries_fts(rowid, title, search_text) VALUES ({_band_rowid('new')}, new.title, "
    "new.search_text); END",
    "INSERT INTO entries_fts(entries_fts) VALUES ('rebuild')",
]
DOWNGRADE_SQLITE = [  # the 0001 layout: rowid = entries.id
    *_DROP,
    "CREATE VIRTUAL TABLE entries_fts USING fts5(title, search_text, content='entries', "
    f"content_rowid='id', {_TOKENIZE})",
    "CREATE TRIGGER entries_fts_ai AFTER INSERT ON entries BEGIN "
    "INSERT INTO entries_fts(rowid, title, search_text) VALUES (new.id, new.title, new.search_text); END",
    "CREATE TRIGGER entries_fts_ad AFTER DELETE ON entries BEGIN "
    "INSERT INTO entries_fts(entries_fts, rowid, title, search_text) "
    "VALUES ('delete', old.id, old.title, old.search_text); END",
    "CREATE TRIGGER entries_fts_au AFTER UPDATE OF title, search_text ON entries BEGIN "
    "INSERT INTO entries_fts(entries_fts, rowid, title, search_text) "
    "VALUES ('delete', old.id, old.title, old.search_text); "
    "INSERT INTO entries_fts(rowid, title, search_text) VALUES (new.id, new.title, new.search_text); END",
    "INSERT INTO entries_fts(entries_fts) VALUES ('rebuild')",
]


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for statement in UPGRADE_SQLITE:
            op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for statement in DOWNGRADE_SQLITE:
            op.execute(statement)
