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
runs on every start and from ``syncd db upgrade``; when the store is already at the revision the
shipped migration files end on (read from the files, a few ms) it returns without importing Alembic
(~0.1 s of every command's start-up), which is imported only to migrate or to ask its own view.

Read-only users: an SQLite file this user can read but not write (or a URL with ``?mode=ro``) is
opened read-only (:func:`is_read_only`): connections use ``mode=ro`` (``immutable=1`` when no
process holds the database open and its directory cannot hold the ``-wal``/``-shm`` files), every
transaction is ``BEGIN DEFERRED`` under ``PRAGMA query_only``, migrations are skipped when the schema
is at head and refused when it is behind, and one warning names the fix (:data:`READ_ONLY_HINT`).
"""

from __future__ import annotations

import logging
import math
import os
import re
import sqlite3
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import URL, Engine, NullPool, create_engine, event, text
from sqlalchemy.exc import SQLAlchemyError

from syncd.errors import StoreError
from syncd.store.dialect import migration_lock, normalize_url
from syncd.store.fileguard import attach_guard
from syncd.store.reach import CONNECT_TIMEOUT_S, attach_reach

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = [
    "BUSY_TIMEOUT_MS",
    "READ_ONLY_HINT",
    "current_revision",
    "free_bytes",
    "head_revision",
    "is_read_only",
    "make_engine",
    "point_reader",
    "reader",
    "upgrade_to_head",
]

BUSY_TIMEOUT_MS = 10_000
PG_CONNECT_ARGS: dict[str, Any] = {
    "connect_timeout": CONNECT_TIMEOUT_S,
    "application_name": "syncd",
    # notice a dead server (or a dead network path) within ~1 min instead of hanging on TCP defaults
    "keepalives": 1,
    "keepalives_idle": 30,
    "keepalives_interval": 10,
    "keepalives_count": 3,
}
"""libpq connection parameters of every PostgreSQL connection (seconds; ``connect_timeout`` is the
setting ``store.connect_timeout_s``)."""

READ_ONLY_HINT = (
    "to let this user fetch and store, give it write access: add it to the group owning the database "
    "(e.g. `sudo usermod -aG syncd $USER`, then log in again) and make the file, its -wal/-shm files "
    "and its directory group-writable (chmod 0660 files, 0770 directory)"
)
"""The fix named by the read-only warning (logged once per engine)."""

log = logging.getLogger("syncd.store")


def _migrations_dir() -> Path:
    """The Alembic script directory: installed beside the package, or ``migrations/`` in a checkout."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "migrations", here.parent / "migrations"):
        if (candidate / "env.py").is_file():
            return candidate
    raise StoreError("Alembic migrations directory not found; reinstall syncd")


def _alembic_config() -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(_migrations_dir()))
    cfg.attributes["configure_logger"] = False
    return cfg


def make_engine(
    database_url: str,
    *,
    read_only: str | None = None,
    connect_timeout_s: float = CONNECT_TIMEOUT_S,
    **kwargs: Any,
) -> Engine:
    """Create the engine for ``database_url`` (an SQLAlchemy URL).

    ``read_only``: open an SQLite file read-only for this reason (logged with the read-only warning),
    e.g. the daemon on a full disk, where the file opens but its ``-wal``/``-shm`` cannot be created.

    For PostgreSQL: psycopg 3, pooled connections checked before use, :data:`PG_CONNECT_ARGS` with
    ``connect_timeout_s`` (seconds, whole, at least libpq's minimum of 2), every new connection
    through the engine's :class:`~syncd.store.reach.Reach` (an unreachable server is not waited for
    again for 30 s).
    For an SQLite file the parent directory is created (mode 0o750), the file is guarded against being
    replaced or deleted under the engine (:mod:`syncd.store.fileguard`: the engine then reopens on the
    file there, migrated by :func:`upgrade_to_head`), and each connection is set up with WAL,
    ``busy_timeout`` (:data:`BUSY_TIMEOUT_MS` milliseconds), ``synchronous=NORMAL`` and
    ``foreign_keys=ON``; transactions begin ``IMMEDIATE`` unless the ``sqlite_begin`` execution
    option says otherwise (see :func:`reader`).

    Raises:
        StoreError: the database directory cannot be created.
    """
    url = normalize_url(database_url)
    if url.get_backend_name() != "sqlite":
        postgresql = url.get_backend_name() == "postgresql"
        connect_args = dict(PG_CONNECT_ARGS) if postgresql else {}
        if postgresql:
            connect_args["connect_timeout"] = max(2, math.ceil(connect_timeout_s))
        connect_args.update(kwargs.pop("connect_args", {}))
        engine = create_engine(url, pool_pre_ping=True, connect_args=connect_args, **kwargs)
        if postgresql:
            attach_reach(engine)
        return engine
    if url.database and url.database != ":memory:":
        path = Path(url.database).expanduser()
        if read_only is not None or _sqlite_read_only(url, path):
            return _read_only_engine(url.set(database=str(path)), path, why=read_only, **kwargs)
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o750)
        except OSError as exc:
            raise StoreError(f"cannot create database directory {path.parent}: {exc}") from exc
        url = url.set(database=str(path))
    engine = create_engine(url, connect_args={"check_same_thread": False}, **kwargs)
    if url.database and url.database != ":memory:" and not url.database.startswith("file:"):
        attach_guard(engine, Path(url.database), upgrade_to_head)  # before the PRAGMAs touch the WAL

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


def _sqlite_read_only(url: URL, path: Path) -> bool:
    """True when the SQLite file is to be opened read-only: ``?mode=ro`` asked, or not writable here."""
    if url.query.get("mode") == "ro":
        return True
    return path.is_file() and not os.access(path, os.W_OK)


def is_read_only(engine: Engine) -> bool:
    """True when ``engine`` opened its SQLite file read-only (see the module docstring)."""
    return engine.dialect.name == "sqlite" and engine.url.query.get("mode") == "ro"


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """One read-only connection to ``path``: ``mode=ro``, else ``immutable=1`` when no WAL is open.

    ``mode=ro`` reads a WAL database only while its ``-wal``/``-shm`` files exist (a writer has it
    open) or can be created; with neither, and no ``-wal`` file or an empty one (a full disk lets
    the files be created but not grown), the file holds every commit and is read as ``immutable``
    (a fresh connection per use, so a later writer's checkpoints are seen).
    """
    uri = path.resolve().as_uri()
    conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, check_same_thread=False)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        conn.close()
        wal = Path(f"{path}-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise
    return sqlite3.connect(f"{uri}?immutable=1", uri=True, check_same_thread=False)


def _read_only_engine(url: URL, path: Path, *, why: str | None = None, **kwargs: Any) -> Engine:
    """An engine over ``path`` that never writes (``mode=ro`` connections, ``query_only``, no pool).

    ``why``: the reason logged (default: the URL's ``mode=ro``, or this user cannot write the file).

    Raises:
        StoreError: the file does not exist (a read-only user cannot create it).
    """
    if not path.is_file():
        raise StoreError(f"the database {path} does not exist and was asked for read-only (mode=ro)")
    engine = create_engine(
        url.set(query={"mode": "ro", "uri": "true"}),  # the creator connects; the URL records the mode
        creator=lambda: _connect_read_only(path),
        poolclass=NullPool,
        **kwargs,
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        for pragma in (f"busy_timeout={BUSY_TIMEOUT_MS}", "query_only=ON", "foreign_keys=ON"):
            cursor.execute(f"PRAGMA {pragma}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        if conn.get_execution_options().get("sqlite_begin", "IMMEDIATE"):
            conn.exec_driver_sql("BEGIN DEFERRED")  # a read-only file takes no write lock

    hint = READ_ONLY_HINT
    if why is None:
        asked = url.query.get("mode") == "ro"
        why = "the database URL asks for mode=ro" if asked else "this user cannot write it"
    else:
        hint = "remove the cause named by why, then start syncd again to fetch and store"
    log.warning(
        "event=store_read_only path=%s why=%r answers='from the store only, no upstream request' hint=%r",
        path,
        why,
        hint,
    )
    return engine


def free_bytes(engine_or_url: Engine | str) -> int | None:
    """Bytes free for this user on the filesystem of an SQLite database file (``statvfs``).

    None for PostgreSQL, an in-memory database, or a directory that cannot be inspected.
    """
    url = engine_or_url.url if isinstance(engine_or_url, Engine) else normalize_url(engine_or_url)
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    if url.database.startswith("file:"):
        return None
    try:
        fs = os.statvfs(Path(url.database).expanduser().resolve().parent)
    except OSError:
        return None
    return fs.f_bavail * fs.f_frsize


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
    """The newest migration revision shipped with this syncd (Alembic's reading of the scripts)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_alembic_config()).get_current_head()


_REVISION = re.compile(r"^(down_revision|revision)\s*(?::[^=]*)?=\s*(.+?)\s*$", re.MULTILINE)
_QUOTED = re.compile(r"""^["']([^"']+)["']$""")


@cache
def shipped_head() -> str | None:
    """The one head of the shipped migration files, read without importing Alembic.

    Read from each file's ``revision`` / ``down_revision`` lines; None when that reading is not
    plain (no file, a merge, a branch, a value that is not one quoted string): callers then ask
    :func:`head_revision`.
    """
    revisions: set[str] = set()
    parents: set[str] = set()
    try:
        files = sorted((_migrations_dir() / "versions").glob("*.py"))
    except StoreError:
        return None
    for path in files:
        found = dict(m.groups() for m in _REVISION.finditer(path.read_text(encoding="utf-8")))
        if "revision" not in found:
            continue
        rev = _QUOTED.match(found["revision"])
        down = found.get("down_revision", "None")
        if rev is None or (down != "None" and _QUOTED.match(down) is None):
            return None
        revisions.add(rev.group(1))
        if down != "None":
            parents.add(_QUOTED.match(down).group(1))  # type: ignore[union-attr]
    heads = revisions - parents
    return next(iter(heads)) if len(heads) == 1 else None


def _stored_revision(engine: Engine) -> str | None:
    """``alembic_version.version_num`` read with plain SQL; None when there is none or it cannot be read."""
    try:
        with reader(engine).connect() as conn:
            rows = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    except SQLAlchemyError:
        return None
    return rows[0] if len(rows) == 1 else None


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at (None for an empty database)."""
    from alembic.runtime.migration import MigrationContext

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
        shipped = shipped_head()
        if shipped is not None and _stored_revision(engine) == shipped:
            return shipped  # at head: nothing to migrate, Alembic not imported
        head = head_revision()
        current = current_revision(engine)
        if current == head:
            return head
        if is_read_only(engine):
            raise StoreError(
                f"the store {engine.url.database} is at schema revision {current}, this syncd needs {head}, "
                "and it is read-only for this user: ask its owner to run `syncd db upgrade`"
            )
        from alembic import command

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
