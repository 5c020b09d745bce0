"""``/healthz``: can this daemon do its job now? One JSON document, HTTP 200 when it can, else 503.

Checks, each with its own field:

* ``store_readable``: one index lookup on the change feed answers.
* ``store_writable``: the write lock is taken within :data:`WRITE_PROBE_S` seconds
  (:meth:`syncd.store.repo.Store.can_write`); ``write_problem`` names the cause otherwise
  (``disk_full``, ``read_only``, ``locked``, a swapped file ...).
* ``scheduler_alive``: the scheduler runs and its heartbeat job ran within
  :data:`SCHEDULER_STALL_S` seconds.
* ``last_sweep_age_s``: seconds since the last revalidation sweep ended (None before the first);
  ``sweep_overdue`` when the refreshing daemon has run none for two intervals plus the startup
  delay (a sweep running now is never overdue; a standby daemon never sweeps).
* ``retractions_held_back``: the Retraction Watch file the daemon last read and refused (cut,
  damaged, row-less or shrinking; :func:`syncd.retractions.fetch.held_back`), as
  ``{"refusal", "detail", "sha256", "at"}``; None while the newest file read was imported. Verdicts
  then rest on the version held before it: reported, not unhealthy (the daemon still does its job).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from syncd.daemon.ops.activity import SCHEDULER_BEAT_S, Activity
from syncd.errors import SyncdError
from syncd.retractions.fetch import HeldBack, held_back
from syncd.store.changes import latest_change_id
from syncd.store.repo import Store

__all__ = ["SCHEDULER_STALL_S", "WRITE_PROBE_S", "Health", "check_health"]

WRITE_PROBE_S = 1.0
"""Seconds ``/healthz`` waits for the store's write lock."""
SCHEDULER_STALL_S = 4 * SCHEDULER_BEAT_S
"""A heartbeat older than this (seconds) means the scheduler is stuck."""
STARTUP_GRACE_S = 30.0
"""Seconds after start before a missing first sweep counts as overdue (beside the sweep interval)."""


@dataclass(frozen=True)
class Health:
    """The answer of ``/healthz`` (see the module docstring); ``ok`` is the conjunction of the checks."""

    ok: bool
    role: str
    store_readable: bool
    store_writable: bool
    write_problem: str | None
    read_error: str | None
    scheduler_alive: bool
    scheduler_beat_age_s: float | None
    last_sweep_age_s: float | None
    last_sweep_outcome: str | None
    sweep_running: bool
    sweep_overdue: bool
    uptime_s: float
    retractions_held_back: HeldBack | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain dict (the JSON body), ``status`` ``ok`` or ``unhealthy`` first."""
        return {"status": "ok" if self.ok else "unhealthy", **asdict(self)}


def _readable(store: Store) -> str | None:
    try:
        latest_change_id(store)
    except SyncdError as exc:
        return exc.reason
    except Exception as exc:  # a driver error the store did not map: still an answer, never a traceback
        return type(exc).__name__
    return None


def _held_back(store: Store) -> HeldBack | None:
    try:
        return held_back(store)
    except SyncdError:
        return None  # the store read check reports an unreadable store


def check_health(store: Store, activity: Activity, revalidate_interval_s: float) -> Health:
    """Run every check of ``/healthz`` now (two reads, one write-lock probe; nothing written)."""
    now = activity.clock()
    read_error = _readable(store)
    problem = (
        store.can_write(WRITE_PROBE_S) if read_error is None else (store.write_problem() or "unreadable")
    )
    beat = activity.beat_age_s()
    running = activity.scheduler_running() if activity.scheduler_running is not None else False
    alive = running and beat is not None and beat <= SCHEDULER_STALL_S
    last = activity.last_sweep
    age = round(now - last.finished_at, 1) if last is not None else None
    sweeping = activity.sweep_running_since() is not None
    since = last.finished_at if last is not None else activity.started_at
    overdue = (
        activity.role == "active"
        and not sweeping
        and now - since > 2 * revalidate_interval_s + STARTUP_GRACE_S
    )
    ok = read_error is None and problem is None and alive and not overdue
    return Health(
        ok=ok,
        role=activity.role,
        store_readable=read_error is None,
        store_writable=problem is None,
        write_problem=problem,
        read_error=read_error,
        scheduler_alive=alive,
        scheduler_beat_age_s=None if beat is None else round(beat, 1),
        last_sweep_age_s=age,
        last_sweep_outcome=last.outcome if last is not None else None,
        sweep_running=sweeping,
        sweep_overdue=overdue,
        uptime_s=round(now - activity.started_at, 1),
        retractions_held_back=_held_back(store) if read_error is None else None,
    )
