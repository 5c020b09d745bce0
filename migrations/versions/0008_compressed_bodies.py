"""Compressed bodies: ``body_dictionaries``; every stored body re-encoded (:mod:`syncd.store.codec`).

Creates ``body_dictionaries`` (zstd dictionaries keyed by zstd's dictionary id). On PostgreSQL the
``body`` columns of ``entries`` and ``previous_bodies`` become ``bytea`` (the UTF-8 text as it was,
readable as such); on SQLite the ``TEXT`` columns hold the encoded blobs as they are (no rebuild).
Then, when the store holds enough bodies, a dictionary is trained on them, and every body is
re-encoded (:func:`syncd.store.codec.convert_bodies`) in batches of
:data:`syncd.store.codec.CONVERT_BATCH` rows, each committed on its own: an upgrade that is killed
keeps the batches done, and the next run (the revision is stamped only at the end) re-creates
nothing that exists, reuses the dictionary and converts what is left. Other processes wait as for
any migration (SQLite's write lock, re-taken per batch; PostgreSQL's advisory lock, re-taken after
each commit); one that gets the lock between two batches shares the conversion, and both start.
Offline (``--sql``) mode emits the schema changes only.

The downgrade decodes every body back to text (one transaction, 1,000 rows read at a time; on
PostgreSQL into a new ``text`` column that replaces the ``bytea`` one) and drops the table.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context, op

from syncd.store.codec import BODY_TABLES, convert_bodies, decode_body, load_dictionaries
from syncd.store.dialect import migration_lock

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

TABLE = "body_dictionaries"


def _commit(bind: sa.Connection) -> None:
    """Commit the work so far (earlier migrations included) and open the next transaction.

    Goes through the driver connection: the migration runs inside the caller's transaction, which
    SQLAlchemy does not let a migration end (SQLite: ``BEGIN IMMEDIATE`` again, taking the write lock;
    PostgreSQL: the advisory migration lock again, the driver beginning the transaction).
    """
    bind.connection.driver_connection.commit()  # type: ignore[union-attr]
    if bind.dialect.name == "sqlite":
        bind.exec_driver_sql("BEGIN IMMEDIATE")
    else:
        migration_lock(bind)


def upgrade() -> None:
    offline = context.is_offline_mode()
    bind = None if offline else op.get_bind()
    if offline or TABLE not in sa.inspect(bind).get_table_names():
        op.create_table(
            TABLE,
            sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
            sa.Column("data", sa.LargeBinary(), nullable=False),
            sa.Column("samples", sa.Integer(), nullable=False),
            sa.Column("sample_bytes", sa.BigInteger(), nullable=False),
            sa.Column("created_at", sa.Float(), nullable=False),
            sa.PrimaryKeyConstraint("id", name=op.f("pk_body_dictionaries")),
        )
    if offline or bind.dialect.name == "postgresql":  # type: ignore[union-attr]
        for table in ("entries", "previous_bodies"):
            if bind is None or _pg_type(bind, table) == "text":
                op.execute(f"ALTER TABLE {table} ALTER COLUMN body TYPE bytea USING convert_to(body, 'UTF8')")
    if bind is None:
        return
    convert_bodies(bind, lambda: _commit(bind))
    _restamp_if_overtaken(bind)


def _restamp_if_overtaken(bind: sa.Connection) -> None:
    """Let Alembic stamp this revision even when another process finished it meanwhile.

    A process that started upgrading while this one was converting (it got the lock between two
    batches) ran this migration too, sharing the conversion; the first to finish moved
    ``alembic_version`` past :data:`down_revision`, and Alembic's stamp of the other one would then
    match no row and fail its start. Put back (in this transaction) the revision Alembic expects.
    """
    version = sa.table("alembic_version", sa.column("version_num", sa.String()))
    current = bind.execute(sa.select(version.c.version_num)).scalar()
    if current is not None and current != down_revision:
        bind.execute(version.update().values(version_num=down_revision))


def _pg_type(bind: sa.Connection, table: str) -> str:
    """PostgreSQL: the data type of ``table.body`` (``text`` before this migration, ``bytea`` after)."""
    return str(
        bind.execute(
            sa.text(
                "SELECT data_type FROM information_schema.columns WHERE table_schema = current_schema() "
                "AND table_name = :t AND column_name = 'body'"
            ),
            {"t": table},
        ).scalar_one()
    )


def downgrade() -> None:
    bind = op.get_bind()
    load_dictionaries(bind)
    pg = bind.dialect.name == "postgresql"
    for table in BODY_TABLES:
        column = "body_text" if pg else "body"
        if pg:
            op.execute(f"ALTER TABLE {table.name} ADD COLUMN body_text text")
        plain = sa.table(table.name, sa.column("id", sa.Integer()), sa.column(column, sa.Text()))
        write = (
            plain.update().where(plain.c.id == sa.bindparam("_id")).values({column: sa.bindparam("_body")})
        )
        last = 0
        while True:
            rows = bind.execute(
                sa.select(table.c.id, table.c.body)
                .where(table.c.id > last, table.c.body.is_not(None))
                .order_by(table.c.id)
                .limit(1000)
            ).all()
            if not rows:
                break
            last = rows[-1][0]
            bind.execute(write, [{"_id": i, "_body": decode_body(b)} for i, b in rows])
        if pg:
            op.execute(f"ALTER TABLE {table.name} DROP COLUMN body")
            op.execute(f"ALTER TABLE {table.name} RENAME COLUMN body_text TO body")
    op.drop_table(TABLE)
