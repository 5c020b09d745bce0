"""``syncd db``: the store's schema and copying a store between backends."""

from __future__ import annotations

import sys
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from syncd.cli.common import (
    emit,
    handle_errors,
    json_option,
    print_rows,
    settings_of,
    setup_logs,
)
from syncd.store.engine import make_engine, upgrade_to_head
from syncd.transfer.dbcopy import copy_store


@click.group()
def db() -> None:
    """Manage the store's schema."""


@db.command("upgrade")
@click.pass_context
@handle_errors
def db_upgrade(ctx: click.Context) -> None:
    """Upgrade the store to the newest schema revision (also done on every start)."""
    settings = settings_of(ctx)
    engine = make_engine(settings.database_url)
    try:
        revision = upgrade_to_head(engine)
    finally:
        engine.dispose()
    click.echo(f"database at revision {revision}")


# --- syncd db copy (moving a store between backends) -----------------------------------------------


@db.command("copy")
@click.option("--from", "source", required=True, metavar="URL", help="Database URL of the store to copy.")
@click.option("--to", "destination", required=True, metavar="URL", help="Database URL to copy it into.")
@click.option(
    "--batch", default=500, show_default=True, type=click.IntRange(1, 100_000), help="Rows per commit."
)
@json_option
@click.pass_context
@handle_errors
def db_copy(ctx: click.Context, source: str, destination: str, batch: int, as_json: bool) -> None:
    """Copy a whole store into another database, e.g. SQLite to a lab's PostgreSQL.

    The destination is migrated to the newest schema and must be empty; an interrupted copy resumes
    when run again, and a copy run again after it completed says so and exits 0. Row counts are
    compared at the end (exit 3 when they differ). Stop the daemons writing to the source first.
    """
    setup_logs(ctx, "WARNING")
    show = not as_json and sys.stderr.isatty()
    bar: Any = None
    tasks: dict[str, Any] = {}

    def progress(table: str, rows: int, total: int) -> None:
        if bar is None:
            return
        if table not in tasks:
            tasks[table] = bar.add_task(f"copying {table}", total=total or None)
        bar.advance(tasks[table], rows)

    if show:
        bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        bar.start()
    try:
        report = copy_store(source, destination, batch=batch, progress=progress)
    finally:
        if bar is not None:
            bar.stop()
    data = report.as_dict()

    def human() -> None:
        rows = [{"table": name, **counts} for name, counts in data["tables"].items()]
        print_rows(rows, ["table", "source", "destination", "copied"], title=None)
        if report.complete:
            click.echo(
                f"already complete: {report.destination} holds every row of {report.source} "
                "(a copy that finished before); nothing copied"
            )
            return
        note = " (resumed)" if report.resumed else ""
        took = f"{report.seconds:.1f} s{note}"
        click.echo(f"copied {report.source} -> {report.destination} in {took}; counts match")

    emit(data, as_json, human)
