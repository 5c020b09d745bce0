"""``syncd daemon``: the systemd service (loaded only when that command runs)."""

from __future__ import annotations

import click

from syncd.cli.common import handle_errors, settings_of, setup_logs
from syncd.daemon.ready import run_daemon

__all__ = ["daemon"]


@click.command()
@click.pass_context
@handle_errors
def daemon(ctx: click.Context) -> None:
    """Serve the MCP tools over Streamable HTTP and keep the store fresh (the systemd service)."""
    setup_logs(ctx, "INFO")
    run_daemon(settings_of(ctx))
