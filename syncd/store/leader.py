"""Electing the one refreshing daemon of a shared store (PostgreSQL advisory lock).

A lab points several workstations at one PostgreSQL database and may run ``syncd daemon`` on more
than one of them. Every daemon serves the MCP tools, but only the holder of the session-level
advisory lock :data:`DAEMON_LOCK_KEY` runs the revalidation sweep and the watch-list walks. The lock
lives on a dedicated connection: when the holding process dies its connection closes and the server
frees the lock at once; when its machine or network dies, the server notices through TCP keepalives
(:data:`LOCK_SESSION_OPTIONS`, about 25 s). The other daemons try to take the lock every
:data:`POLL_S` seconds, so one of them takes over within a minute. A holder that loses its
connection learns it on its next poll, steps down and tries again like the others.

On SQLite (one workstation, one file) there is nothing to elect: :meth:`DaemonLock.poll` always
answers True, as before.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import NullPool

from syncd.store.dialect import advisory_key, is_postgresql

__all__ = ["DAEMON_LOCK_KEY", "LOCK_SESSION_OPTIONS", "POLL_S", "DaemonLock", "lock_holder"]

log = logging.getLogger("syncd.leader")

DAEMON_LOCK_KEY = advisory_key("syncd:daemon")
"""The advisory-lock key (signed 64-bit) the refreshing daemon holds."""
POLL_S = 5.0
"""Seconds between two tries of a standby daemon (and two liveness checks of the holder)."""
LOCK_SESSION_OPTIONS = "-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3"
"""Server-side keepalives of the lock's session: a vanished holder machine frees the lock in ~25 s."""


def _key_parts(key: int) -> tuple[int, int]:
    """``pg_locks`` (classid, objid) of a bigint advisory key."""
    unsigned = key & 0xFFFFFFFFFFFFFFFF
    return unsigned >> 32, unsigned & 0xFFFFFFFF


def lock_holder(engine: Engine, key: int = DAEMON_LOCK_KEY) -> str | None:
    """``application_name`` of the session holding ``key`` (``syncd-daemon HOST PID``), else None.

    Always None on SQLite. Reading another role's session needs the same role (or
    ``pg_read_all_stats``); otherwise the name reads as an empty string.
    """
    if not is_postgresql(engine):
        return None
    classid, objid = _key_parts(key)
    with engine.connect() as conn:
        row = conn.execute(
            text(
                "SELECT coalesce(a.application_name, '') FROM pg_locks l "
                "LEFT JOIN pg_stat_activity a ON a.pid = l.pid "
                "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
                "AND l.classid::bigint = :c AND l.objid::bigint = :o"
            ),
            {"c": classid, "o": objid},
        ).first()
    return None if row is None else str(row[0])


class DaemonLock:
    """The refreshing daemon's lock over ``engine``'s database.

    Args:
        engine: the store's engine (its URL is reused for one dedicated, unpooled connection).
        key: the advisory-lock key (default :data:`DAEMON_LOCK_KEY`).
        name: ``application_name`` of the lock's session (default ``syncd-daemon HOST PID``).

    :meth:`poll` and :meth:`release` never raise: a database failure reads as "not the holder".
    """

    def __init__(self, engine: Engine, key: int = DAEMON_LOCK_KEY, name: str | None = None) -> None:
        self.key = key
        self.name = (name or f"syncd-daemon {socket.gethostname()} {os.getpid()}")[:63]
        self._postgresql = is_postgresql(engine)
        self._engine: Engine | None = None
        if self._postgresql:
            connect_args: dict[str, Any] = {
                "application_name": self.name,
                "connect_timeout": 10,
                "options": LOCK_SESSION_OPTIONS,
                "keepalives": 1,
                "keepalives_idle": 10,
                "keepalives_interval": 5,
                "keepalives_count": 3,
            }
            self._engine = create_engine(
                engine.url, poolclass=NullPool, isolation_level="AUTOCOMMIT", connect_args=connect_args
            )
        self._conn: Connection | None = None
        self.held = not self._postgresql

    def poll(self) -> bool:
        """Check the lock is still held, or try to take it; returns whether this process holds it now."""
        if not self._postgresql or self._engine is None:
            return True
        if self._conn is not None:
            try:
                self._conn.execute(text("SELECT 1"))
                return True
            except SQLAlchemyError as exc:
                log.warning("event=leader_lost error=%s", exc.__class__.__name__)
                self._drop()
        try:
            conn = self._engine.connect()
        except SQLAlchemyError as exc:
            log.warning("event=leader_poll_failed error=%s", exc.__class__.__name__)
            return False
        try:
            got = bool(conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": self.key}).scalar())
        except SQLAlchemyError as exc:
            log.warning("event=leader_poll_failed error=%s", exc.__class__.__name__)
            got = False
        if got:
            self._conn = conn
            self.held = True
        else:
            conn.close()
        return got

    def release(self) -> None:
        """Give the lock up (closing its session frees it) so a standby takes over at its next poll."""
        if self._conn is not None:
            with contextlib.suppress(SQLAlchemyError):
                self._conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": self.key})
        self._drop()
        if self._engine is not None:
            self._engine.dispose()

    def _drop(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(SQLAlchemyError):
                self._conn.close()
        self._conn = None
        self.held = not self._postgresql
