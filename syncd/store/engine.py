"""Engine setup and schema upgrades.

``database_url`` is an SQLAlchemy URL: ``sqlite:///PATH`` (the embedded default) or
``postgresql+psycopg://USER:PASSWORD@HOST/DB`` (a shared lab cache; a bare ``postgresql://`` gets the
psycopg 3 driver). PostgreSQL runs at its default ``READ COMMITTED`` isolation; the code that must
serialize (the budget row, ``put_content``) takes row locks with ``SELECT ... FOR UPDATE`` and writes
with ``INSERT ... ON CONFLICT``, and processes upgrading the schema together serialize on an advisory
lock.

SQLite runs in WAL mode with ``busy_timeout``, ``synchronous=NORMAL`` and foreign keys on. Every
transaction opened through :meth:`Engine.begin` starts with ``BEGIN IMMEDIATE`` (the write lock is
taken up front, so several processes never deadlock on a lock upgrade); read-only work uses
:func:`reader`, which starts ``BEGIN DEFERRED``. Alembic owns the schema: :func:`upgrade_to_head`
runs on every start and from ``syncd db upgrade``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event

from syncd.errors import StoreError
from syncd.store.dialect import migration_lock, normalize_url

__all__ = [
    "BUSY_TIMEOUT_MS",
    "current_revision",
    "head_revision",
    "make_engine",
    "point_reader",
    "reader",
    "upgrade_to_head",
]

BUSY_TIMEOUT_MS = 10_000
PG_CONNECT_ARGS: dict[str, Any] = {
    "connect_timeout": 10,
    "application_name": "syncd",
    # notice a dead server (or a dead network path) within ~1 min instead of hanging on TCP defaults
    "keepalives": 1,
    "keepalives_idle": 30,
    "keepalives_interval": 10,
    "keepalives_count": 3,
}
"""libpq connection parameters of every PostgreSQL connection (seconds)."""


def _migrations_dir() -> Path:
    """The Alembic script directory: installed beside the package, or ``migrations/`` in a checkout."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "migrations", here.parent / "migrations"):
        if (candidate / "env.py").is_file():
            return candidate
    raise StoreError("Alembic migrations directory not found; reinstall syncd")


def _alembic_config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(_migrations_dir()))
    cfg.attributes["configure_logger"] = False
    return cfg


def make_engine(database_url: str, **kwargs: Any) -> Engine:
    """Create the engine for ``database_url`` (an SQLAlchemy URL).

    For PostgreSQL: psycopg 3, pooled connections checked before use, :data:`PG_CONNECT_ARGS`.
    For SQLite the parent directory is created (mode 0o750) and each connection is set up with WAL,
    ``busy_timeout`` (:data:`BUSY_TIMEOUT_MS` milliseconds), ``synchronous=NORMAL`` and
    ``foreign_keys=ON``; transactions begin ``IMMEDIATE`` unless the ``sqlite_begin`` execution
    option says otherwise (see :func:`reader`).

    Raises:
        StoreError: the database directory cannot be created.
    """
    url = normalize_url(database_url)
    if url.get_backend_name() != "sqlite":
        connect_args = dict(PG_CONNECT_ARGS) if url.get_backend_name() == "postgresql" else {}
        connect_args.update(kwargs.pop("connect_args", {}))
        return create_engine(url, pool_pre_ping=True, connect_args=connect_args, **kwargs)
    if url.database and url.database != ":memory:":
        path = Path(url.database).expanduser()
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o750)
        except OSError as exc:
            raise StoreError(f"cannot create database directory {path.parent}: {exc}") from exc
        url = url.set(database=str(path))
    engine = create_engine(url, connect_args={"check_same_thread": False}, **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # no implicit deferred BEGIN from the sqlite3 module
        cursor = dbapi_conn.cursor()
        for pragma in (
            "journal_mode=WAL",
            f"busy_timeout={BUSY_TIMEOUT_MS}",
            "synchronous=NORMAL",
            "foreign_keys=ON",
            "journal_size_limit=67108864",
        ):
            cursor.execute(f"PRAGMA {pragma}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        mode = conn.get_execution_options().get("sqlite_begin", "IMMEDIATE")
        if mode:  # "": no BEGIN at all, each statement on its own (single-statement point reads)
            conn.exec_driver_sql("BEGIN " + mode)

    return engine


def point_reader(engine: Engine) -> Engine:
    """The same engine for single-statement reads (no explicit transaction on SQLite).

    One SELECT is atomic on its own, so the warm path saves the BEGIN/COMMIT of :func:`reader`.
    """
    if engine.dialect.name != "sqlite":
        return engine
    return engine.execution_options(sqlite_begin="")


def reader(engine: Engine) -> Engine:
    """The same engine for read-only transactions (``BEGIN DEFERRED`` on SQLite: no write lock)."""
    if engine.dialect.name != "sqlite":
        return engine
    return engine.execution_options(sqlite_begin="DEFERRED")


def head_revision() -> str | None:
    """The newest migration revision shipped with this syncd."""
    return ScriptDirectory.from_config(_alembic_config()).get_current_head()


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at (None for an empty database)."""
    with reader(engine).connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade_to_head(engine: Engine) -> str | None:
    """Upgrade the schema to the newest revision; a no-op when already there. Returns the revision.

    Runs inside one transaction (``BEGIN IMMEDIATE`` on SQLite; on PostgreSQL, whose DDL is
    transactional, after taking an advisory lock), so processes starting together serialize and the
    later ones find the schema at head.

    Raises:
        StoreError: the database cannot be opened or migrated.
    """
    try:
        head = head_revision()
        if current_revision(engine) == head:
            return head
        cfg = _alembic_config()
        with engine.begin() as conn:
            migration_lock(conn)
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
        if engine.dialect.name == "sqlite" and engine.url.database not in (None, "", ":memory:"):
            _restrict_permissions(Path(str(engine.url.database)))
        return head
    except StoreError:
        raise
    except Exception as exc:
        raise StoreError(f"cannot open or migrate the store at {engine.url!r}: {exc}") from exc


def _restrict_permissions(path: Path) -> None:
    """Keep the database to its owner and group (0o660); ignore what the filesystem refuses."""
    for candidate in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        try:
            if candidate.exists():
                os.chmod(candidate, 0o660)
        except OSError:
            pass
