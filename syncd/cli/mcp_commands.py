"""``syncd mcp``: the MCP tools over stdio (loaded only when that command runs)."""

from __future__ import annotations

import logging

import anyio
import click

from syncd.cli.common import handle_errors, session, settings_of, setup_logs
from syncd.config import unconfigured
from syncd.registry import mcp_loaders
from syncd.server.app import build_server
from syncd.server.stdio import serve_stdio

__all__ = ["mcp"]

log = logging.getLogger("syncd.cli")


@click.command()
@click.pass_context
@handle_errors
def mcp(ctx: click.Context) -> None:
    """Serve the MCP tools over stdio (point Claude Desktop / Claude Code at `syncd mcp`).

    ``initialize`` is answered before the slices' tool modules are loaded (the first ``tools/list``,
    call or resource request loads those of the slices ``mcp.slices`` names). Started with no config
    file and no ``SYNCD_*`` setting, it says so at WARNING (``event=unconfigured``), naming the database
    and the upstream hosts it uses: the MCP client may not have passed its environment.
    """
    setup_logs(ctx, "WARNING")
    defaults = unconfigured(settings_of(ctx), ctx.ensure_object(dict).get("config"))
    if defaults is not None:
        log.warning("event=unconfigured %s", defaults.sentence())
    with session(ctx) as svc:
        anyio.run(serve_stdio, build_server(svc, *mcp_loaders(svc.settings)))
