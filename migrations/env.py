"""Alembic environment: runs on the connection syncd hands over, or builds one from the ini URL."""

from __future__ import annotations

from logging.config import fileConfig

from alembic import context
from sqlalchemy import Connection, Engine, create_engine

from syncd.store.models import Base

config = context.config
if config.config_file_name is not None and config.attributes.get("configure_logger", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = Base.metadata


SEARCH_OBJECTS = {("column", "search_tsv"), ("index", "ix_entries_search_tsv")}
"""PostgreSQL search column and index of migration 0002 (written by hand, not in the models)."""


def include_name(name: str | None, type_: str, parent_names: object) -> bool:
    """Keep the hand-written search objects (FTS5 tables, the PostgreSQL tsvector) out of autogenerate."""
    if type_ == "table" and name is not None and name.startswith("entries_fts"):
        return False
    return (type_, name) not in SEARCH_OBJECTS


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,
        include_name=include_name,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    given = config.attributes.get("connection")
    if isinstance(given, Connection):
        _run(given)
        return
    engine = given if isinstance(given, Engine) else create_engine(config.get_main_option("sqlalchemy.url"))
    with engine.begin() as connection:
        _run(connection)


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
