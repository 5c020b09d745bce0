"""``syncd`` command line (click).

Commands::

    syncd daemon              serve MCP over HTTP and revalidate stale entries (systemd service)
    syncd mcp                 serve MCP over stdio (for Claude Desktop, Claude Code, any stdio client)
    syncd db upgrade          upgrade the store's schema to the newest revision
    syncd db copy             copy a whole store to another database (SQLite <-> PostgreSQL)
    syncd cache stats         entries per kind, fresh/stale counts, database size, budget per pool
    syncd cache show ID       one stored entry: key, status, validators, ages (no upstream request)
    syncd cache get ID        look up through the local-first path (same as the MCP tools)
    syncd cache ls            list stored entries (filter by kind, status, stale, text; sort)
    syncd cache search TEXT   full-text search of the stored titles, authors, abstracts
    syncd cache refresh       revalidate IDs, --stale or --all through the budget
    syncd cache evict ID...   delete stored entries
    syncd cache prune         delete by age, misses, size cap
    syncd cache export        JSON Lines of the raw upstream bodies
    syncd cache import FILE   syncd exports and Crossref public data files
    syncd cache verify        integrity check, orphans, FTS consistency (--repair)
    syncd cache vacuum        checkpoint the WAL, optimize the FTS index, VACUUM
    syncd cache budget        the shared request budget: pools, tokens, blocked until
    syncd watch add|ls|rm     manage the watch lists the daemon keeps mirrored
    syncd watch stop ID       stop a running walk after its current page (resumable)
    syncd watch sync          walk the watch lists now (full, incremental or resumed)
    syncd changes             what changed in the stored works and records (retractions, versions, ...)
    syncd check FILE          a bibliography's retracted, corrected and unresolvable references

Exit codes: 0 success; 1 not found (nothing stored / upstream says it does not exist);
2 bad usage or invalid input; 3 upstream or store failure. Errors go to stderr as one line
``error: <reason>: <message>``; ``--json`` prints machine-readable output on stdout.
"""

from __future__ import annotations

import anyio
import click

from syncd import __version__
from syncd.cli.cache_commands import cache
from syncd.cli.change_commands import changes
from syncd.cli.check_commands import check
from syncd.cli.common import (
    CONTEXT_SETTINGS,
    handle_errors,
    parse_duration,
    parse_size,
    session,
    settings_of,
    setup_logs,
)
from syncd.cli.db_commands import db
from syncd.cli.watch_commands import watch
from syncd.daemon import run_daemon
from syncd.tools.server import build_server
from syncd.tools.stdio import serve_stdio

__all__ = ["cli", "main", "parse_duration", "parse_size"]


@click.group(context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, prog_name="syncd")
@click.option(
    "--config",
    type=click.Path(dir_okay=False),
    default=None,
    help="Config file (TOML). Default: $SYNCD_CONFIG, ~/.config/syncd/syncd.toml, /etc/syncd/syncd.toml.",
)
@click.option("--log-level", default=None, help="Logging level (DEBUG, INFO, WARNING, ...).")
@click.pass_context
def cli(ctx: click.Context, config: str | None, log_level: str | None) -> None:
    """syncd: an offline-capable cache of Crossref works and Zenodo records behind MCP tools."""
    ctx.ensure_object(dict)["config"] = config
    ctx.obj["log_level"] = log_level


@cli.command()
@click.pass_context
@handle_errors
def daemon(ctx: click.Context) -> None:
    """Serve the MCP tools over Streamable HTTP and keep the store fresh (the systemd service)."""
    setup_logs(ctx, "INFO")
    run_daemon(settings_of(ctx))


@cli.command()
@click.pass_context
@handle_errors
def mcp(ctx: click.Context) -> None:
    """Serve the MCP tools over stdio (point Claude Desktop / Claude Code at `syncd mcp`)."""
    setup_logs(ctx, "WARNING")
    with session(ctx) as svc:
        anyio.run(serve_stdio, build_server(svc))


cli.add_command(db)
cli.add_command(cache)
cli.add_command(watch)
cli.add_command(changes)
cli.add_command(check)


def main() -> None:
    """Console-script entry point."""
    cli(obj={})
