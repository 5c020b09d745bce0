"""``syncd daemon``: the Streamable HTTP MCP endpoint plus the revalidation and sync scheduler.

One asyncio loop runs uvicorn (the MCP server at ``http://{http.host}:{http.port}/mcp``) and an
APScheduler 3.11 ``AsyncIOScheduler`` with an in-memory job store. Jobs derive from settings
(:func:`plan_jobs`); the durable state lives in the store: ``validated_at`` for revalidation
(oldest first) and ``sync_state`` for watch-list walks (checkpoints and the last success), so a
restart resumes where it stopped without a burst: an overdue sync runs once, shortly after start,
never once per missed interval. Jobs coalesce, never run twice at once (``max_instances=1``), and
the revalidation sweep and the sync walk take turns (one lock), so they never overlap either.
On a shared PostgreSQL store only one daemon of the lab refreshes: the holder of the advisory lock
(:class:`~syncd.store.leader.DaemonLock`, polled every ``POLL_S`` seconds); the others serve the tools
and take over when it goes away (see :func:`_leader_hook`).
Under systemd (``Type=notify``): READY=1 once migrations ran and the port is bound (before this module
is loaded: :mod:`syncd.daemon.ready`; a connection waits in the backlog until the endpoint serves,
``STATUS=serving``), WATCHDOG=1
from the loop, STOPPING=1 on SIGTERM, then a drain of the running job. Every ``changes.poll_s``
seconds the refreshing daemon alerts the watched retractions and deletions the change feed recorded
(:mod:`syncd.daemon.alerts`: ``event=alert`` at WARNING, the optional ``alerts.command``). With
``retractions.source`` set, it reads the Retraction Watch data at most once per
``retractions.interval_s`` (:mod:`syncd.retractions.fetch`; a failed read keeps the last good data).

The SQLite database file is guarded by the store (:mod:`syncd.store.fileguard`: looked at before
every write and new connection, and here every :data:`FILE_CHECK_S` seconds): a backup restored over
it (copied in place or moved over it) is taken, never merged with the old WAL, and a deleted file is
rehomed with every commit; the daemon keeps serving throughout (``event=store_replaced``,
``event=store_deleted``). The HTTP server closes connections that do not finish their request line
and headers within ``http.header_timeout_s`` (:class:`HeaderTimeoutProtocol`), and answers 408 to a
body that does not arrive within ``http.body_timeout_s`` and 400 to a request without ``Host``
(:class:`~syncd.daemon.httpauth.RequestGuard`).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import signal
import socket
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any

import h11
import uvicorn
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.schedulers.base import STATE_RUNNING
from uvicorn.protocols.http.h11_impl import H11Protocol

from syncd.daemon.httpauth import (
    BearerAuth,
    NoOAuth,
    RequestGuard,
    check_bind,
    token_file_warning,
    transport_security,
)
from syncd.daemon.jobs import DaemonJobs
from syncd.daemon.ops.activity import SCHEDULER_BEAT_S, Activity
from syncd.daemon.ops.routes import ops_routes
from syncd.daemon.sdnotify import notify, watchdog_interval_s
from syncd.errors import StoreError
from syncd.passes.sync import STOP as sync_stop
from syncd.passes.watches import apply_config
from syncd.registry import JOBS, mcp_specs, open_services
from syncd.road.services import Services
from syncd.server.app import build_server
from syncd.store.fileguard import file_guard
from syncd.store.leader import POLL_S, DaemonLock
from syncd.store.repo import Store
from syncd.store.watches import list_sync_states, list_watches

if TYPE_CHECKING:
    from syncd.config import Settings

__all__ = [
    "AFTER_READY_JOBS",
    "FILE_CHECK_S",
    "JOB_DEFAULTS",
    "STARTUP_DELAY_S",
    "HeaderTimeoutProtocol",
    "plan_jobs",
    "schedule_watchers",
    "serve",
    "start_after_ready",
    "web_app",
    "web_config",
    "web_server",
]

JOB_DEFAULTS = {"coalesce": True, "max_instances": 1, "misfire_grace_time": 300}
"""Every job: missed runs coalesce into one, never two instances at once."""
STARTUP_DELAY_S = 5.0
"""Seconds after start before the first sweep (and an overdue sync) runs."""
FILE_CHECK_S = 2.0
"""Seconds between two looks at the SQLite database file from the daemon's timer (the store also looks
before every write; :func:`syncd.store.fileguard.FileGuard.check`)."""


def plan_jobs(settings: Settings, store: Store, now: dt.datetime) -> dict[str, dict[str, object]]:
    """The daemon's scheduled jobs: id -> ``{"seconds": interval, "next_run_time": first run}``.

    ``revalidate`` first runs :data:`STARTUP_DELAY_S` after start (what is stale is read from the
    store each time). ``sync`` first runs when the oldest watch's last successful walk is one
    ``sync_interval_s`` old, but not before the startup delay; a watch never synced, or a walk
    left unfinished by a crash, makes it run right after the delay (and resume from its checkpoint).
    A store that cannot be read (the lab database unreachable) plans as with no watch.
    """
    soon = now + dt.timedelta(seconds=min(STARTUP_DELAY_S, settings.revalidate_interval_s))
    jobs: dict[str, dict[str, object]] = {
        "revalidate": {"seconds": settings.revalidate_interval_s, "next_run_time": soon},
    }
    try:
        watches = list_watches(store)
        states = list_sync_states(store)
    except StoreError as exc:  # the lab database unreachable: the sync runs after the delay, and skips
        log.warning("event=plan_unread cause=%r first_sync='after the startup delay'", exc.message)
        watches, states = [], {}
    first_sync = now + dt.timedelta(seconds=settings.sync_interval_s)
    for w in watches:
        st = states.get(f"watch:{w.id}")
        if st is None or st.last_success_at is None or st.cursor:
            first_sync = soon
            break
        due = dt.datetime.fromtimestamp(st.last_success_at + settings.sync_interval_s, dt.UTC)
        first_sync = min(first_sync, max(due, soon))
    jobs["sync"] = {"seconds": settings.sync_interval_s, "next_run_time": first_sync}
    return jobs


log = logging.getLogger("syncd.daemon")


class HeaderTimeoutProtocol(H11Protocol):
    """uvicorn's h11 protocol, closing connections that never finish a request head.

    A connection whose request line and headers are not complete within ``header_timeout_s``
    seconds of its opening (or of the first bytes of a next request on a kept-alive connection) is
    closed, so half-open connections cannot pile up.
    """

    header_timeout_s = 10.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Arm the header timer when the connection opens."""
        super().connection_made(transport)
        self.header_timer: asyncio.TimerHandle | None = self.loop.call_later(
            self.header_timeout_s, self.close_if_headers_unfinished
        )

    def data_received(self, data: bytes) -> None:
        """Feed h11; re-arm the timer when bytes of a new request arrive on a kept-alive connection."""
        super().data_received(data)
        if self.conn.their_state is h11.IDLE and self.header_timer is None:
            self.header_timer = self.loop.call_later(self.header_timeout_s, self.close_if_headers_unfinished)

    def close_if_headers_unfinished(self) -> None:
        """Close the connection when the client still has not sent a whole request head."""
        self.header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            log.info("event=http_header_timeout client=%s timeout_s=%g", self.client, self.header_timeout_s)
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        """Disarm the timer, then let uvicorn clean up."""
        if self.header_timer is not None:
            self.header_timer.cancel()
            self.header_timer = None
        super().connection_lost(exc)


def web_config(settings: Settings, app: Any) -> uvicorn.Config:
    """The uvicorn configuration of the daemon's endpoint for ``app`` (header timeout included)."""
    protocol = type(
        "SyncdH11Protocol", (HeaderTimeoutProtocol,), {"header_timeout_s": settings.http.header_timeout_s}
    )
    return uvicorn.Config(
        app,
        host=settings.http.host,
        port=settings.http.port,
        log_level="warning",
        lifespan="on",
        http=protocol,
        timeout_keep_alive=5,
    )


def web_app(settings: Settings, services: Services, activity: Activity) -> Any:
    """The daemon's ASGI app: ``/mcp`` and the operator routes (``/healthz``, ``/metrics``, ``/status``).

    Every route sits behind the request guard and, when a token is set, the bearer auth; the operator
    routes follow ``/mcp``'s Host/Origin rules too (:mod:`syncd.daemon.ops.routes`). Each tool answer is
    counted by source in ``activity``.

    Raises:
        SyncdError: a non-loopback bind without a bearer token (:func:`syncd.daemon.httpauth.check_bind`).
    """
    server = build_server(services, *mcp_specs(settings))
    server.middleware.append(activity.answers_middleware)
    token = settings.http.bearer_token()
    check_bind(settings.http.host, token)
    security = transport_security(settings.http.host, settings.http.port, settings.http.allowed_hosts)
    app: Any = server.streamable_http_app(
        host=settings.http.host,
        transport_security=security,
        max_request_body_size=settings.http.max_request_bytes,
        custom_starlette_routes=ops_routes(services, activity, security),
    )
    if token:
        app = BearerAuth(app, token)
    if settings.http.token_file and (why := token_file_warning(settings.http.token_file)):
        log.warning("event=token_file_readable path=%s problem=%r", settings.http.token_file, why)
    app = NoOAuth(app)  # OAuth discovery answered before the token check: 404 saying what to do
    return RequestGuard(app, settings.http.body_timeout_s, settings.http.max_request_bytes)


def web_server(settings: Settings, services: Services, activity: Activity | None = None) -> uvicorn.Server:
    """The uvicorn server of :func:`web_app` (a fresh :class:`~.ops.activity.Activity` by default).

    Raises:
        SyncdError: a non-loopback bind without a bearer token (:func:`syncd.daemon.httpauth.check_bind`).
    """
    return _Server(web_config(settings, web_app(settings, services, activity or Activity())))


def _schedule(
    scheduler: AsyncIOScheduler,
    settings: Settings,
    store: Store,
    jobs: dict[str, Callable[[], Awaitable[None]]],
) -> None:
    """Add the sweep and sync ``jobs`` (first runs from :func:`plan_jobs`), the leader poll, the watchdog."""
    plan = plan_jobs(settings, store, dt.datetime.now(dt.UTC))
    for job_id in ("revalidate", "sync"):
        scheduler.add_job(
            jobs[job_id],
            "interval",
            seconds=plan[job_id]["seconds"],
            id=job_id,
            next_run_time=plan[job_id]["next_run_time"],
            replace_existing=True,
        )
    log.info(
        "event=scheduled revalidate_first=%s sync_first=%s",
        plan["revalidate"]["next_run_time"].isoformat(timespec="seconds"),  # type: ignore[attr-defined]
        plan["sync"]["next_run_time"].isoformat(timespec="seconds"),  # type: ignore[attr-defined]
    )
    scheduler.add_job(jobs["leader"], "interval", seconds=POLL_S, id="leader")
    wd = watchdog_interval_s()
    if wd:
        scheduler.add_job(lambda: notify("WATCHDOG=1"), "interval", seconds=wd, id="watchdog")


async def _serve(settings: Settings, store: Store, listener: socket.socket) -> None:
    """Serve the MCP endpoint on ``listener`` and run the scheduled jobs until SIGTERM/SIGINT, then drain."""
    tools_services = open_services(settings, store, interactive=True)
    sweep_services = open_services(settings, store, interactive=False)
    activity = Activity()
    web = web_server(settings, tools_services, activity)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, _request_exit, web, sig)
    lock = DaemonLock(store.engine)
    jobs = DaemonJobs(settings, sweep_services, activity, lock, loop, file_guard(store.engine))
    scheduler = AsyncIOScheduler(timezone=dt.UTC, job_defaults=JOB_DEFAULTS)
    activity.scheduler_running = lambda: scheduler.state == STATE_RUNNING
    leader_job = _leader_hook(lock, scheduler, settings, store, activity)
    await leader_job()
    _schedule(scheduler, settings, store, {"revalidate": jobs.sweep, "sync": jobs.sync, "leader": leader_job})
    schedule_watchers(scheduler, settings, jobs, activity)
    scheduler.start()

    def after_ready() -> None:
        start_after_ready(scheduler)
        if settings.check_upstreams_at_start:  # one request per upstream, logged (event=upstream_check)
            jobs.running.add(loop.run_in_executor(None, lambda: tools_services.upstreams.check(settings)))

    ready = asyncio.create_task(_ready_when_listening(web, settings, after_ready))
    try:
        await web.serve(sockets=[listener])
    finally:
        notify("STOPPING=1")
        log.info("event=stopping draining=%d", len(jobs.running))
        scheduler.pause()
        if jobs.running:
            await asyncio.wait(jobs.running, timeout=25)
        scheduler.shutdown(wait=False)
        ready.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ready
        tools_services.close()
        sweep_services.close()
        await loop.run_in_executor(None, lock.release)
        log.info("event=stopped")


def schedule_watchers(
    scheduler: AsyncIOScheduler, settings: Settings, jobs: DaemonJobs, activity: Activity
) -> None:
    """Add the file watch (every FILE_CHECK_S s), the heartbeat, the alert pass and the slices' jobs.

    The alert pass and the slices' jobs (the Retraction Watch read) are added paused: their first runs
    are started by :func:`start_after_ready` once the endpoint serves (READY=1 is not held back by them).
    """
    scheduler.add_job(jobs.file_check, "interval", seconds=FILE_CHECK_S, id="file_watch")
    scheduler.add_job(
        activity.beat,
        "interval",
        seconds=SCHEDULER_BEAT_S,
        id="heartbeat",
        next_run_time=dt.datetime.now(dt.UTC),
    )
    scheduler.add_job(
        jobs.alerts, "interval", seconds=settings.changes.poll_s, id="alerts", next_run_time=None
    )
    for job in JOBS:
        scheduler.add_job(
            jobs.slice_job, "interval", (job,), seconds=job.interval_s, id=job.name, next_run_time=None
        )


AFTER_READY_JOBS = ("alerts", *(job.name for job in JOBS))
"""The scheduled jobs whose first run waits for READY=1 (then runs at once, then every interval)."""


def start_after_ready(scheduler: AsyncIOScheduler) -> None:
    """Run the :data:`AFTER_READY_JOBS` now (they were added paused), then on their intervals."""
    now = dt.datetime.now(dt.UTC)
    for job_id in AFTER_READY_JOBS:
        scheduler.modify_job(job_id, next_run_time=now)


async def _ready_when_listening(
    web: uvicorn.Server, settings: Settings, after_ready: Callable[[], None] | None = None
) -> None:
    """Log ``event=serving`` and tell systemd ``STATUS=serving`` once ``web`` serves (nothing if it exits).

    READY=1 was told when the port was bound (:func:`syncd.daemon.ready.run_daemon`).

    ``after_ready`` runs right after: the start-up work that must not delay the endpoint (the first
    alert pass and retractions read, the upstream check).
    """
    while not web.started:
        if web.should_exit:
            return
        await asyncio.sleep(0.05)
    log.info("event=serving endpoint=http://%s:%d/mcp", settings.http.host, settings.http.port)
    notify(f"STATUS=serving MCP on {settings.http.host}:{settings.http.port}")
    if after_ready is not None:
        after_ready()


# --- daemon lock (shared PostgreSQL store: one refreshing daemon per lab) ---------------------------


def _leader_hook(
    lock: DaemonLock, scheduler: AsyncIOScheduler, settings: Settings, store: Store, activity: Activity
) -> Callable[[], Awaitable[None]]:
    """The scheduler job that polls ``lock`` (in a worker thread) and logs role changes (``activity.role``).

    A daemon that becomes the holder brings the sweep and an overdue sync forward (as after a start),
    so a takeover does not wait one full interval. Always the holder on SQLite.
    """
    loop = asyncio.get_running_loop()

    async def poll() -> None:
        was = lock.held if scheduler.running else None
        held = await loop.run_in_executor(None, lock.poll)
        if held == was:
            return
        activity.role = "active" if held else "standby"
        log.info("event=leader role=%s lock=%s", "active" if held else "standby", lock.name)
        notify(f"STATUS={'refreshing daemon' if held else 'standby: another daemon refreshes'}")
        if held and scheduler.running:
            plan = plan_jobs(settings, store, dt.datetime.now(dt.UTC))
            for job_id in ("revalidate", "sync"):
                scheduler.modify_job(job_id, next_run_time=plan[job_id]["next_run_time"])

    return poll


class _Server(uvicorn.Server):
    """uvicorn without its own signal capture: the daemon handles SIGTERM/SIGINT and drains itself."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _request_exit(web: uvicorn.Server, sig: int) -> None:
    log.info("event=signal signal=%s", signal.Signals(sig).name)
    notify("STOPPING=1")
    sync_stop.set()  # running walks stop at their next page boundary, position saved
    web.should_exit = True


def serve(settings: Settings, store: Store, listener: socket.socket) -> None:
    """Serve the MCP endpoint on ``listener`` and run the jobs until SIGINT/SIGTERM.

    Called by :func:`syncd.daemon.ready.run_daemon` once the store is open, the port bound and READY=1
    told: the watch lists of the config are applied first (a failure is logged and retried on every
    sync pass), then the endpoint starts on the socket (``event=serving``, ``STATUS=serving``).
    """
    try:
        apply_config(store, settings.watch)
    except Exception as exc:  # reported, retried on every sync pass
        log.warning("event=watch_config_failed error=%s", getattr(exc, "message", exc))
    asyncio.run(_serve(settings, store, listener))
