"""Whether the lab database (PostgreSQL) can be reached, remembered so calls do not each wait for it.

A shared PostgreSQL cache can be down (server stopped, network path gone) while upstream is
healthy. Every new connection of an engine goes through its :class:`Reach` (SQLAlchemy's
``do_connect`` event, :func:`attach_reach`): a connection attempt that fails at the network level
(connection refused, ``connect_timeout`` expired, server closed the connection, host not resolved:
psycopg's ``OperationalError`` without an SQLSTATE, or of class 08 *connection exception* / 57
*operator intervention*) marks the database unreachable for :data:`UNREACHABLE_RECHECK_S` seconds.
Meanwhile every connection attempt fails at once (no wait for the connect timeout); the first
attempt after that window tries the server again, so recovery needs nobody. A wrong password or
database name (an SQLSTATE of another class) is a configuration error, not an outage: it is raised
as it is, never remembered.

One warning is logged when the database becomes unreachable and one when it answers again
(``event=lab_db_unreachable`` / ``event=lab_db_back``). The store reads entries as nothing stored
meanwhile (:func:`empty_when_unreachable`) and refuses writes with
:class:`~syncd.errors.StoreUnreachable`; the local-first road answers from upstream without storing
(:func:`syncd.road.local_first.local_first`), the budget falls back to this workstation's share
(:mod:`syncd.budget.fallback`).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, ParamSpec, Protocol, TypeVar

from sqlalchemy import Engine, event

from syncd.errors import StoreError, StoreUnreachable

__all__ = [
    "CONNECT_TIMEOUT_S",
    "UNREACHABLE_RECHECK_S",
    "Reach",
    "attach_reach",
    "empty_when_unreachable",
    "network_failure",
    "reach_of",
    "unstored_when_unreachable",
]

log = logging.getLogger("syncd.store")

UNREACHABLE_RECHECK_S = 30.0
"""After a connection attempt to the lab database failed at the network level, no other attempt is
made this long (seconds); the first one after it tries the server again."""

CONNECT_TIMEOUT_S = 2
"""Default longest wait for a PostgreSQL connection (seconds, libpq ``connect_timeout``; setting
``store.connect_timeout_s``; libpq's own minimum is 2)."""

UNREACHABLE_SQLSTATE_CLASSES = ("08", "57")
"""SQLSTATE classes of a failed connection that count as the server being unreachable: connection
exception (08) and operator intervention (57: shutting down, starting up, cannot connect now)."""

_REACHES: weakref.WeakKeyDictionary[Engine, Reach] = weakref.WeakKeyDictionary()


def network_failure(exc: BaseException) -> bool:
    """True when ``exc`` (a DBAPI error raised while connecting) says the server could not be reached.

    psycopg's ``OperationalError`` (or a subclass) without an SQLSTATE (refused, timed out, closed,
    host unknown) or with one of :data:`UNREACHABLE_SQLSTATE_CLASSES`; anything else (bad password,
    unknown database) is not an outage.
    """
    if not any(cls.__name__ == "OperationalError" for cls in type(exc).__mro__):
        return False
    sqlstate = getattr(exc, "sqlstate", None)
    return sqlstate is None or str(sqlstate)[:2] in UNREACHABLE_SQLSTATE_CLASSES


class Reach:
    """The reachability of one engine's database server.

    Args:
        where: the server named in logs (``host:port``, no credentials).
        recheck_s: seconds an unreachable server is not tried again (:data:`UNREACHABLE_RECHECK_S`).
        monotonic: the clock of that window, seconds (default ``time.monotonic``; tests inject one).

    Attributes:
        attempts: connection attempts sent to the server so far (refused ones inside the window are
            not counted: they never left this process).
    """

    def __init__(
        self,
        where: str,
        *,
        recheck_s: float = UNREACHABLE_RECHECK_S,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.where = where
        self.recheck_s = recheck_s
        self.monotonic = monotonic
        self.attempts = 0
        self._down: tuple[str, float] | None = None
        self._lock = threading.Lock()

    def unreachable(self) -> str | None:
        """Why the server is taken as unreachable now (the connection error, one line), or None.

        None also once the window is over: the next connection attempt tries the server again.
        """
        with self._lock:
            if self._down is None:
                return None
            cause, until = self._down
            return cause if self.monotonic() < until else None

    def was_unreachable(self) -> bool:
        """True when the last attempt failed (whether or not its window is over)."""
        return self._down is not None

    def retry_in_s(self) -> float:
        """Seconds until the server is tried again (0 when it may be tried now)."""
        with self._lock:
            return 0.0 if self._down is None else max(0.0, self._down[1] - self.monotonic())

    def failed(self, exc: BaseException) -> None:
        """A connection attempt failed at the network level: no other for :attr:`recheck_s` seconds."""
        lines = str(exc).strip().splitlines()
        cause = f"{exc.__class__.__name__}: {lines[0][:200] if lines else ''}"
        with self._lock:
            first = self._down is None
            self._down = (cause, self.monotonic() + self.recheck_s)
        if first:
            log.warning(
                "event=lab_db_unreachable server=%s cause=%r retry_s=%.0f answers=%r",
                self.where,
                cause,
                self.recheck_s,
                "from upstream, flagged stored:false, nothing stored; budget: this workstation's share",
            )

    def answered(self) -> None:
        """A connection attempt succeeded: the server is reachable (logged once after an outage)."""
        with self._lock:
            was = self._down is not None
            self._down = None
        if was:
            log.warning("event=lab_db_back server=%s answers='stored again'", self.where)

    def connect(self, connect: Callable[[], Any]) -> Any:
        """``connect()`` unless the server is unreachable now; remember how it went.

        Raises:
            StoreError: at once, without an attempt, while the server is unreachable.
            Exception: the attempt's own error (a DBAPI ``OperationalError``), wrapped by SQLAlchemy.
        """
        cause = self.unreachable()
        if cause is not None:
            raise StoreError(
                f"the lab database {self.where} is unreachable ({cause}); next attempt in "
                f"{self.retry_in_s():.0f} s",
                cause="unreachable",
            )
        self.attempts += 1
        try:
            conn = connect()
        except Exception as exc:
            if network_failure(exc):
                self.failed(exc)
            raise
        self.answered()
        return conn


def attach_reach(engine: Engine, *, monotonic: Callable[[], float] = time.monotonic) -> Reach:
    """Route every new connection of ``engine`` through a new :class:`Reach`, returned.

    The reach is kept for :func:`reach_of` as long as the engine lives.
    """
    url = engine.url
    reach = Reach(f"{url.host or 'localhost'}:{url.port or 5432}", monotonic=monotonic)
    _REACHES[engine] = reach

    @event.listens_for(engine, "do_connect")
    def _do_connect(dialect: Any, _record: Any, cargs: Any, cparams: Any) -> Any:
        return reach.connect(lambda: dialect.connect(*cargs, **cparams))

    return reach


def reach_of(engine: Engine) -> Reach | None:
    """The :class:`Reach` of ``engine`` (None: an engine without one, e.g. SQLite)."""
    return _REACHES.get(engine)


class _HasUnreachable(Protocol):
    def unreachable(self) -> str | None: ...


P = ParamSpec("P")
R = TypeVar("R")


def empty_when_unreachable(read: Callable[P, R | None]) -> Callable[P, R | None]:
    """A store read method that answers None (nothing stored) while the database is unreachable.

    Any other failure is raised as it is (:class:`~syncd.errors.StoreError`).
    """

    @functools.wraps(read)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R | None:
        store: _HasUnreachable = args[0]  # type: ignore[assignment]
        try:
            return read(*args, **kwargs)
        except StoreError:
            if store.unreachable() is None:
                raise
            return None

    return wrapper


def unstored_when_unreachable(put: Callable[P, R]) -> Callable[P, R]:
    """A store method writing upstream content that says so when the database is unreachable.

    The content is the method's first argument after ``self``; while the database is unreachable the
    failure is :class:`~syncd.errors.StoreUnreachable` carrying it. Any other failure is raised as it is.
    """

    @functools.wraps(put)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        store: _HasUnreachable = args[0]  # type: ignore[assignment]
        try:
            return put(*args, **kwargs)
        except StoreError as exc:
            cause = store.unreachable()
            if cause is None or isinstance(exc, StoreUnreachable):
                raise
            content = args[1] if len(args) > 1 else kwargs.get("content")
            raise StoreUnreachable(
                f"not stored: the lab database is unreachable ({cause})", content=content, cause="unreachable"
            ) from exc

    return wrapper
