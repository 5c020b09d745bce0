"""``syncd retractions``: the Retraction Watch data on this machine (import it, say which version is held)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import click

from syncd.cli.common import emit, handle_errors, json_option, print_rows, settings_of
from syncd.policy import iso
from syncd.retractions.importer import import_path
from syncd.retractions.storage import Dataset, datasets
from syncd.store.repo import Store

__all__ = ["retractions"]


@contextlib.contextmanager
def _store(ctx: click.Context) -> Iterator[Store]:
    settings = settings_of(ctx)
    store = Store.open(settings.database_url, **settings.store.model_dump())
    try:
        yield store
    finally:
        store.close()


def _version(d: Dataset) -> dict[str, Any]:
    return {**d.as_dict(), "importedAt": iso(d.imported_at)}


@click.group("retractions")
def retractions() -> None:
    """Import the Retraction Watch data and show the version held (the data retraction verdicts rest on)."""


@retractions.command("import")
@click.argument("path", type=click.Path(exists=True))
@json_option
@click.pass_context
@handle_errors
def retractions_import(ctx: click.Context, path: str, as_json: bool) -> None:
    """Import retraction_watch.csv from PATH: the file, or a directory holding it (a git checkout).

    The file as Crossref publishes it (github.com/crossref/retraction-watch-data, replaced each working
    day). A file already imported (same SHA-256) is not read again; a new one becomes the newest
    version, its rows added, changed and removed against the version before, and an added or changed
    row of a work held in the store goes into the change feed (the daemon alerts watched works).
    """
    with _store(ctx) as store:
        report = import_path(store, path)
    data = report.as_dict()
    data["dataset"] = _version(report.dataset)

    def human() -> None:
        d = report.dataset
        if report.unchanged:
            click.echo(
                f"unchanged: {d.source} is the version already held (sha256 {d.sha256[:12]}, {d.rows} rows)"
            )
            return
        click.echo(
            f"imported {d.rows} rows (sha256 {d.sha256[:12]}"
            f"{', commit ' + d.commit[:12] if d.commit else ''}) "
            f"in {report.seconds:.1f} s: {d.added} added, {d.changed} changed, {d.removed} removed, "
            f"{d.skipped} skipped; {report.changes} changes of stored works recorded"
        )
        if report.replaced_bytes:
            click.echo(f"{report.replaced_bytes} bytes were not UTF-8 and were read as Windows-1252")

    emit(data, as_json, human)


@retractions.command("status")
@click.option(
    "--history", default=5, show_default=True, type=click.IntRange(1, 1000), help="Versions listed."
)
@json_option
@click.pass_context
@handle_errors
def retractions_status(ctx: click.Context, history: int, as_json: bool) -> None:
    """The Retraction Watch version held: SHA-256, rows, when imported, source; the versions before it.

    Exit 1 when no version was ever imported (verdicts then rest on Crossref alone).
    """
    with _store(ctx) as store:
        versions = datasets(store, history)
    data = {
        "current": _version(versions[0]) if versions else None,
        "versions": [_version(v) for v in versions],
    }

    def human() -> None:
        if not versions:
            click.echo("no Retraction Watch data imported (syncd retractions import PATH)")
            return
        cur = versions[0]
        click.echo(
            f"Retraction Watch version {cur.sha256[:12]}: {cur.rows} rows, imported {iso(cur.imported_at)} "
            f"from {cur.source}" + (f" (commit {cur.commit})" if cur.commit else "")
        )
        print_rows(
            [{**_version(v), "sha256": v.sha256[:12]} for v in versions],
            ["id", "sha256", "rows", "importedAt", "added", "changed", "removed", "source"],
            title="versions",
        )

    emit(data, as_json, human)
    if not versions:
        ctx.exit(1)
