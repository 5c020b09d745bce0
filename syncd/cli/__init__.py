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
    syncd cache export        JSON Lines of the raw upstream bodies, or Parquet tables (--format parquet DIR)
    syncd cache import FILE   syncd exports and Crossref public data files
    syncd cache verify        integrity check, orphans, FTS consistency (--repair)
    syncd cache vacuum        checkpoint the WAL, optimize the FTS index, VACUUM
    syncd cache budget        the shared request budget: pools, tokens, blocked until
    syncd watch add|ls|rm     manage the watch lists the daemon keeps mirrored
    syncd watch stop ID       stop a running walk after its current page (resumable)
    syncd watch sync          walk the watch lists now (full, incremental or resumed)
    syncd changes             what changed in the stored works and records (retractions, versions, ...)
    syncd check FILE          a bibliography's retracted, corrected and unresolvable references
    syncd retractions import|status  the Retraction Watch data the verdicts rest on
    syncd cited-by DOI        stored works whose reference lists cite DOI (offline)

Exit codes: 0 success; 1 not found (nothing stored / upstream says it does not exist);
2 bad usage or invalid input (an unknown option or value: the nearest name is suggested); 3 upstream
or store failure; 130 interrupted (Ctrl-C, every command). Errors go to stderr as one line
``error: <reason>: <message>``. Tables follow ``--format table|tsv|csv|json`` (``--json`` for json);
the default is a table on a terminal and TSV when piped (one row per line, nothing cut).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Final

import click

from syncd import __version__
from syncd.cli.exits import EXIT_INTERRUPTED
from syncd.lazy import load

__all__ = ["COMMANDS", "CONTEXT_SETTINGS", "Command", "LazyGroup", "cli", "main"]

CONTEXT_SETTINGS: Final = {"help_option_names": ["-h", "--help"]}


@dataclass(frozen=True)
class Command:
    """One top-level command: the module defining it (loaded when it runs), its name there, its summary.

    ``summary`` is what ``syncd --help`` lists without loading the module: the first sentence of
    the command's own help (a test holds the two equal).
    """

    module: str
    attribute: str
    summary: str


COMMANDS: Final[dict[str, Command]] = {
    "cache": Command("syncd.cli.cache_commands", "cache", "Inspect and use the local store."),
    "changes": Command(
        "syncd.cli.change_commands",
        "changes",
        "What changed in the stored works and records: retractions, corrections, new versions, deletions.",
    ),
    "check": Command(
        "syncd.cli.check_commands",
        "check",
        "Check a bibliography: print its retracted, corrected and unresolvable references.",
    ),
    "cited-by": Command(
        "syncd.cli.retraction_commands",
        "cited_by",
        "Stored works whose reference lists cite DOI, answered offline from the mirror's reference index.",
    ),
    "daemon": Command(
        "syncd.cli.daemon_commands",
        "daemon",
        "Serve the MCP tools over Streamable HTTP and keep the store fresh (the systemd service).",
    ),
    "db": Command("syncd.cli.db_commands", "db", "Manage the store's schema."),
    "mcp": Command(
        "syncd.cli.mcp_commands",
        "mcp",
        "Serve the MCP tools over stdio (point Claude Desktop / Claude Code at `syncd mcp`).",
    ),
    "retractions": Command(
        "syncd.cli.retraction_commands",
        "retractions",
        "Import the Retraction Watch data and show the version held (the data retraction verdicts rest on).",
    ),
    "watch": Command(
        "syncd.cli.watch_commands",
        "watch",
        "Manage the watch lists the daemon keeps mirrored (DOIs, Crossref, Zenodo and DataCite queries).",
    ),
}
"""Every top-level ``syncd`` command; each module is declared in :data:`syncd.lazy.LAZY` too."""


class LazyGroup(click.Group):
    """A click group whose subcommands are imported when one runs (click's documented lazy pattern).

    ``syncd --help`` lists :data:`COMMANDS` with their summaries and imports none of them, so a
    command pays only for the modules it uses (``syncd cache show`` never loads the MCP SDK).
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, :data:`COMMANDS` included, sorted (nothing imported)."""
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name``, its module imported now (None for an unknown name).

        Raises:
            TypeError: the declared attribute is not a click command.
        """
        spec = COMMANDS.get(cmd_name)
        if spec is None:
            return super().get_command(ctx, cmd_name)
        command = getattr(load(__name__, spec.module), spec.attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{spec.module}.{spec.attribute} is not a click command")
        return command

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; Ctrl-C during it ends the process with :data:`EXIT_INTERRUPTED` (130).

        Never 1 (click's ``Aborted!``), the code ``syncd check`` gives for a retracted entry.
        """
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        """Run the command line; a usage error (an unknown option, a bad value) is one stderr line.

        ``error: invalid_parameter: <click's message>``, then ``Try '<command> --help'.``, exit 2:
        the form of every other syncd error (click's own ``Usage:`` block otherwise); Ctrl-C is 130
        (:meth:`invoke`). Outside standalone mode (tests, embedding) click's behaviour is unchanged.
        """
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
        except click.UsageError as exc:
            click.echo(f"error: invalid_parameter: {exc.format_message()}", err=True)
            if exc.ctx is not None:
                click.echo(f"Try '{exc.ctx.command_path} --help'.", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands section of ``--help`` from the summaries, without importing a command."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = []
        for name in names:
            spec = COMMANDS.get(name)
            if spec is not None:
                rows.append((name, click.Command(name, help=spec.summary).get_short_help_str(limit)))
            elif (command := super().get_command(ctx, name)) is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, prog_name="syncd")
@click.option(
    "--config",
    type=click.Path(dir_okay=False),
    default=None,
    help="Config file (TOML). Default: $SYNCD_CONFIG, $XDG_CONFIG_HOME/syncd/syncd.toml "
    "(~/.config/syncd/syncd.toml), /etc/syncd/syncd.toml.",
)
@click.option("--log-level", default=None, help="Logging level (DEBUG, INFO, WARNING, ...).")
@click.pass_context
def cli(ctx: click.Context, config: str | None, log_level: str | None) -> None:
    """syncd: an offline-capable cache of Crossref works and Zenodo records behind MCP tools."""
    ctx.ensure_object(dict)["config"] = config
    ctx.obj["log_level"] = log_level


def main() -> None:
    """Console-script entry point."""
    cli(obj={})
