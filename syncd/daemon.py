"""``syncd daemon``: the Streamable HTTP MCP endpoint plus the revalidation scheduler.

One asyncio loop runs uvicorn (the MCP server at ``http://{http.host}:{http.port}/mcp``) and an
APScheduler 3.11 ``AsyncIOScheduler`` with an in-memory job store (jobs derive from settings; the
durable state is the store's ``validated_at``, so a restart resumes oldest-first without a burst).
Under systemd (``Type=notify``): READY=1 once migrations ran and the endpoint listens, WATCHDOG=1
from the loop, STOPPING=1 on SIGTERM, then a drain of the running sweep.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import signal
from collections.abc import Iterator

import uvicorn
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from mcp.server.transport_security import TransportSecuritySettings

from syncd.cache import Cache
from syncd.config import Settings
from syncd.refresh import sweep
from syncd.sdnotify import notify, watchdog_interval_s
from syncd.store.repo import Store
from syncd.tools.server import build_server

__all__ = ["run_daemon", "transport_security"]

log = logging.getLogger("syncd.daemon")

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def transport_security(host: str, port: int) -> TransportSecuritySettings:
    """DNS-rebinding protection: only loopback Host/Origin values on a loopback bind."""
    if host in LOOPBACK:
        hosts = [f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"]
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=hosts,
            allowed_origins=[f"http://{h}" for h in hosts],
        )
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{host}:{port}"],
        allowed_origins=[f"http://{host}:{port}"],
    )


async def _serve(settings: Settings, store: Store) -> None:
    tools_cache = Cache(settings, store, interactive=True)
    sweep_cache = Cache(settings, store, interactive=False)
    server = build_server(tools_cache)
    app = server.streamable_http_app(
        host=settings.http.host,
        transport_security=transport_security(settings.http.host, settings.http.port),
    )
    config = uvicorn.Config(
        app, host=settings.http.host, port=settings.http.port, log_level="warning", lifespan="on"
    )
    web = _Server(config)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, _request_exit, web, sig)
    running: set[asyncio.Future[object]] = set()

    async def sweep_job() -> None:
        fut = loop.run_in_executor(None, sweep, sweep_cache, settings.revalidate_batch)
        running.add(fut)
        try:
            report = await fut
            counts = f"{report.checked} checked, {report.changed} changed, {report.failed} failed"
            notify(f"STATUS=last sweep: {counts}")
        finally:
            running.discard(fut)

    scheduler = AsyncIOScheduler(
        timezone=dt.UTC, job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": 300}
    )
    first_run = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=min(5.0, settings.revalidate_interval_s))
    scheduler.add_job(
        sweep_job,
        "interval",
        seconds=settings.revalidate_interval_s,
        id="revalidate",
        next_run_time=first_run,
        replace_existing=True,
    )
    wd = watchdog_interval_s()
    if wd:
        scheduler.add_job(lambda: notify("WATCHDOG=1"), "interval", seconds=wd, id="watchdog")

    async def ready_when_listening() -> None:
        while not web.started:
            if web.should_exit:
                return
            await asyncio.sleep(0.05)
        log.info(
            "event=ready endpoint=http://%s:%d/mcp database=%s",
            settings.http.host,
            settings.http.port,
            _redact_url(settings.database_url),
        )
        notify("READY=1", f"STATUS=serving MCP on {settings.http.host}:{settings.http.port}")

    scheduler.start()
    ready = asyncio.create_task(ready_when_listening())
    try:
        await web.serve()
    finally:
        notify("STOPPING=1")
        log.info("event=stopping draining=%d", len(running))
        scheduler.pause()
        if running:
            await asyncio.wait(running, timeout=25)
        scheduler.shutdown(wait=False)
        ready.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ready
        tools_cache.close()
        sweep_cache.close()
        log.info("event=stopped")


class _Server(uvicorn.Server):
    """uvicorn without its own signal capture: the daemon handles SIGTERM/SIGINT and drains itself."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _request_exit(web: uvicorn.Server, sig: int) -> None:
    log.info("event=signal signal=%s", signal.Signals(sig).name)
    notify("STOPPING=1")
    web.should_exit = True


def _redact_url(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def run_daemon(settings: Settings) -> None:
    """Open (and migrate) the store, then serve until SIGINT/SIGTERM.

    Raises:
        StoreError: the store cannot be opened or migrated.
    """
    if not settings.crossref.mailto:
        log.warning("event=public_pool hint='set crossref.mailto to use the polite pool (higher limits)'")
    store = Store.open(settings.database_url)
    try:
        asyncio.run(_serve(settings, store))
    finally:
        store.close()
