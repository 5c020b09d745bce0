"""``syncd mcp``: the MCP tools over stdio (loaded only when that command runs)."""

from __future__ import annotations

import anyio
import click

from syncd.cli.common import handle_errors, session, setup_logs
from syncd.registry import mcp_loaders
from syncd.server.app import build_server
from syncd.server.stdio import serve_stdio

__all__ = ["mcp"]


@click.command()
@click.pass_context
@handle_errors
def mcp(ctx: click.Context) -> None:
    """Serve the MCP tools over stdio (point Claude Desktop / Claude Code at `syncd mcp`).

    ``initialize`` is answered before the slices' tool modules are loaded (the first ``tools/list``,
    call or resource request loads those of the slices ``mcp.slices`` names).
    """
    setup_logs(ctx, "WARNING")
    with session(ctx) as svc:
        anyio.run(serve_stdio, build_server(svc, *mcp_loaders(svc.settings)))
