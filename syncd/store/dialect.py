"""The few places where SQLite and PostgreSQL need different SQL, kept small and named.

Everything else in :mod:`syncd.store` is dialect-neutral SQLAlchemy Core. What differs:

- upserts (``INSERT ... ON CONFLICT``): both dialects speak it, through different SQLAlchemy
  ``insert`` constructs (:func:`insert_ignore`, :func:`upsert`);
- full-text search: SQLite's FTS5 table ``entries_fts`` (migration 0001) vs PostgreSQL's generated
  ``entries.search_tsv`` column with a GIN index (migration 0002) (:mod:`syncd.store.repo`);
- database size (:func:`database_size`), sequences after explicit ids (:func:`reset_sequences`);
- advisory locks, PostgreSQL only (:mod:`syncd.store.leader`, :func:`migration_lock`).

Row locks (``SELECT ... FOR UPDATE``) are written with SQLAlchemy's ``with_for_update()``, which the
SQLite dialect leaves out: there every write transaction starts ``BEGIN IMMEDIATE`` and already holds
the database's only write lock.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, Engine, Table, text
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import URL, make_url

__all__ = [
    "PG_TS_CONFIG",
    "advisory_key",
    "database_size",
    "insert_ignore",
    "insert_many_ignore",
    "is_postgresql",
    "migration_lock",
    "normalize_url",
    "postgresql_insert",
    "reset_sequences",
    "upsert",
]

PG_TS_CONFIG = "english"
"""PostgreSQL text-search configuration of the search column (stemming like FTS5's ``porter``)."""


def normalize_url(database_url: str) -> URL:
    """Parse ``database_url``; a bare ``postgresql://`` / ``postgres://`` URL gets the psycopg 3 driver.

    Raises:
        sqlalchemy.exc.ArgumentError: the URL cannot be parsed.
    """
    if database_url.startswith("postgres://"):
        database_url = "postgresql://" + database_url[len("postgres://") :]
    url = make_url(database_url)
    if url.drivername == "postgresql":
        url = url.set(drivername="postgresql+psycopg")
    return url


def is_postgresql(bind: Connection | Engine) -> bool:
    """True when ``bind`` talks to PostgreSQL (else SQLite)."""
    return bind.dialect.name == "postgresql"


def postgresql_insert(table: Table) -> Any:
    """PostgreSQL's ``INSERT`` construct for ``table`` (``on_conflict_do_nothing``/``_do_update``).

    SQLAlchemy's PostgreSQL dialect package (about 40 ms to import, its driver modules included) is
    loaded on the first PostgreSQL write, never by a process that only uses a SQLite store.
    """
    from sqlalchemy.dialects.postgresql import insert

    return insert(table)


def _insert(conn: Connection, table: Table) -> Any:
    return postgresql_insert(table) if is_postgresql(conn) else sqlite_insert(table)


def insert_ignore(conn: Connection, table: Table, values: Mapping[str, Any]) -> int:
    """``INSERT ... ON CONFLICT DO NOTHING``: returns 1 when the row was inserted, 0 when it existed.

    Safe under concurrency on both backends (no unique violation when two processes race).
    """
    stmt = _insert(conn, table).on_conflict_do_nothing()  # values bound as parameters: no per-call coercion
    if is_postgresql(conn):  # psycopg reports no rowcount here: count the RETURNING rows instead
        return len(conn.execute(stmt.returning(*table.primary_key.columns), dict(values)).all())
    return int(conn.execute(stmt, dict(values)).rowcount or 0)


def insert_many_ignore(conn: Connection, table: Table, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert ``rows`` (one executemany), skipping every row that conflicts with a stored one."""
    if rows:
        conn.execute(_insert(conn, table).on_conflict_do_nothing(), [dict(r) for r in rows])


def upsert(
    conn: Connection,
    table: Table,
    values: Mapping[str, Any],
    index_elements: Sequence[str],
    update: Mapping[str, Any] | None = None,
) -> None:
    """``INSERT ... ON CONFLICT (index_elements) DO UPDATE SET update`` (default: every non-key value)."""
    stmt = _insert(conn, table).values(**values)
    if update is None:
        update = {k: v for k, v in values.items() if k not in index_elements}
    set_ = dict(update)
    conn.execute(stmt.on_conflict_do_update(index_elements=list(index_elements), set_=set_))


def database_size(conn: Connection) -> int:
    """Size of the database in bytes (SQLite: pages x page size; PostgreSQL: ``pg_database_size``)."""
    if is_postgresql(conn):
        return int(conn.execute(text("SELECT pg_database_size(current_database())")).scalar_one())
    pages = conn.exec_driver_sql("PRAGMA page_count").scalar_one()
    size = conn.exec_driver_sql("PRAGMA page_size").scalar_one()
    return int(pages) * int(size)


def reset_sequences(conn: Connection, columns: Sequence[tuple[str, str]]) -> None:
    """After rows were inserted with explicit ids, move PostgreSQL's serial sequences past them.

    ``columns`` are ``(table, column)`` pairs of serial primary keys. A no-op on SQLite, whose
    ``INTEGER PRIMARY KEY`` always continues after the largest id.
    """
    if not is_postgresql(conn):
        return
    for table, column in columns:
        conn.execute(
            text(
                f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                f"coalesce((SELECT max({column}) FROM {table}), 0) + 1, false)"
            )
        )


def advisory_key(name: str) -> int:
    """A stable signed 64-bit advisory-lock key for ``name`` (first 8 bytes of its SHA-256)."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big", signed=True)


MIGRATION_LOCK = advisory_key("syncd:migrations")


def migration_lock(conn: Connection) -> None:
    """Serialize schema upgrades of processes starting together (PostgreSQL transaction-level lock).

    On SQLite ``BEGIN IMMEDIATE`` already serializes them; this is then a no-op.
    """
    if is_postgresql(conn):
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": MIGRATION_LOCK})
