"""The operator routes of the daemon's HTTP server: ``GET /healthz``, ``/metrics`` and ``/status``.

Served by the same Starlette app as ``/mcp`` (the SDK's ``custom_starlette_routes``), so behind the
same :class:`~syncd.daemon.httpauth.BearerAuth` (a token is required beyond loopback) and
:class:`~syncd.daemon.httpauth.RequestGuard`; the same DNS-rebinding rules as ``/mcp`` apply (the SDK's
:class:`~mcp.server.transport_security.TransportSecurityMiddleware`: 421 for a Host, 403 for an Origin
this endpoint does not serve), so a web page the operator visits cannot read them through a rebound
name. The store is read on a worker thread; each answer says ``Cache-Control: no-store``.
"""

from __future__ import annotations

import functools

import anyio.to_thread
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from syncd.daemon.ops.activity import Activity
from syncd.daemon.ops.facts import read_facts, recent_alerts, recent_changes
from syncd.daemon.ops.health import check_health
from syncd.daemon.ops.metrics import register, render
from syncd.daemon.ops.status_page import RECENT, render_status
from syncd.errors import SyncdError
from syncd.road.services import Services

__all__ = ["NO_STORE", "ops_routes"]

NO_STORE = {"cache-control": "no-store"}


def _page(svc: Services, activity: Activity) -> tuple[str, int]:
    """The status page and its HTTP status (200 healthy, 503 not; a store that cannot be read: 503)."""
    health = check_health(svc.store, activity, svc.settings.revalidate_interval_s)
    try:
        facts = read_facts(svc)
        changes = recent_changes(svc.store, RECENT)
        alerts = recent_alerts(svc.store, RECENT)
    except SyncdError as exc:
        text = (
            "<!DOCTYPE html><title>syncd status</title>"
            f"<h1>syncd: the store cannot be read ({exc.reason})</h1>"
        )
        return text, 503
    return render_status(facts, health, activity.last_sweep, changes, alerts), 200 if health.ok else 503


def ops_routes(svc: Services, activity: Activity, security: TransportSecuritySettings) -> list[Route]:
    """The three routes over ``svc`` (store, budget, settings) and ``activity`` (the daemon's jobs).

    Registers the store collector in ``activity``'s registry. ``security``: the Host/Origin rules of
    ``/mcp`` (:func:`syncd.daemon.httpauth.transport_security`).
    """
    register(activity, svc)
    guard = TransportSecurityMiddleware(security)

    async def healthz(request: Request) -> Response:
        refused = await guard.validate_request(request)
        if refused is not None:
            return refused
        interval = svc.settings.revalidate_interval_s
        health = await anyio.to_thread.run_sync(
            functools.partial(check_health, svc.store, activity, interval)
        )
        return JSONResponse(health.as_dict(), status_code=200 if health.ok else 503, headers=NO_STORE)

    async def metrics(request: Request) -> Response:
        refused = await guard.validate_request(request)
        if refused is not None:
            return refused
        accept = request.headers.get("accept", "")
        body, content_type = await anyio.to_thread.run_sync(render, activity, accept)
        return Response(body, headers={**NO_STORE, "content-type": content_type})

    async def status(request: Request) -> Response:
        refused = await guard.validate_request(request)
        if refused is not None:
            return refused
        text, code = await anyio.to_thread.run_sync(_page, svc, activity)
        return HTMLResponse(text, status_code=code, headers=NO_STORE)

    methods = ["GET", "HEAD"]
    return [
        Route("/healthz", healthz, methods=methods),
        Route("/metrics", metrics, methods=methods),
        Route("/status", status, methods=methods),
    ]
