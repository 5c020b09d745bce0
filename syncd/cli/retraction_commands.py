"""``syncd retractions`` (the Retraction Watch data held here), ``syncd cited-by`` (the reference index)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import click

from syncd.cli.common import emit, handle_errors, json_option, print_rows, settings_of
from syncd.errors import InvalidInput
from syncd.normalize.doi import parse_doi
from syncd.retractions.citations import cited_by_answer, rebuild_index
from syncd.retractions.importer import import_path
from syncd.retractions.settings import SECTION as RETRACTIONS
from syncd.retractions.storage import Dataset, datasets
from syncd.road.policy import iso
from syncd.store.repo import Store

__all__ = ["cited_by", "retractions"]


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
@click.option(
    "--accept-shrink",
    is_flag=True,
    help="Import the file even when it removes more than retractions.max_removed_share of the rows held.",
)
@json_option
@click.pass_context
@handle_errors
def retractions_import(ctx: click.Context, path: str, accept_shrink: bool, as_json: bool) -> None:
    """Import retraction_watch.csv from PATH: the file, or a directory holding it (a git checkout).

    The file as Crossref publishes it (github.com/crossref/retraction-watch-data, replaced each working
    day). A file already imported (same SHA-256) is not read again; a new one becomes the newest
    version, its rows added, changed and removed against the version before, and an added or changed
    row of a work held in the store goes into the change feed (the daemon alerts watched works).

    A cut or damaged file (an open quote at the end, a last row without its line break, a row with
    fewer cells than the header), a file with no rows, and one removing more than
    retractions.max_removed_share (2%) of the rows held are refused with exit 2 and nothing
    changed; --accept-shrink imports a file that shrinks on purpose.
    """
    guard = RETRACTIONS.of(settings_of(ctx)).max_removed_share
    with _store(ctx) as store:
        report = import_path(store, path, max_removed_share=guard, accept_shrink=accept_shrink)
    data = report.as_dict()
    data["dataset"] = _version(report.dataset)

    def human() -> None:
        d = report.dataset
        if report.flushed:
            click.echo(f"{report.flushed} pending changes of watched works recorded")
        if report.unchanged:
            click.echo(
                f"unchanged: {d.source} is the version already held (sha256 {d.sha256[:12]}, {d.rows} rows)"
            )
            return
        click.echo(
            f"imported {d.rows} rows (sha256 {d.sha256[:12]}"
            f"{', commit ' + d.commit[:12] if d.commit else ''}) "
            f"in {report.seconds:.1f} s: {d.added} added, {d.changed} changed, {d.removed} removed, "
            f"{d.skipped} skipped; {report.changes} changes of stored or watched works recorded"
        )
        if report.pending:
            click.echo(
                f"{report.pending} changes of watched DOIs not stored yet kept pending: they reach the "
                "change feed once the daemon has stored those works"
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


@click.command("cited-by")
@click.argument("doi", required=False)
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 10_000), help="Works listed.")
@click.option("--rebuild", is_flag=True, help="First index the reference lists of every stored work.")
@json_option
@click.pass_context
@handle_errors
def cited_by(ctx: click.Context, doi: str | None, limit: int, rebuild: bool, as_json: bool) -> None:
    """Stored works whose reference lists cite DOI, answered offline from the mirror's reference index.

    Crossref's public API has no cited-by list: the answer covers the works stored here with
    deposited reference lists (the coverage is printed). --rebuild indexes the works stored before
    the index existed. Exit 1 when no stored work cites DOI.
    """
    with _store(ctx) as store:
        rebuilt = rebuild_index(store) if rebuild else None
        if doi is None:
            if rebuilt is None:
                raise InvalidInput("give a DOI, or --rebuild", reason="invalid_parameter")
            click.echo(
                f"indexed the reference lists of {rebuilt.works} stored works; {rebuilt.junk} reference "
                "DOIs skipped as not DOIs (spaces, control characters, over 300 characters)"
            )
            return
        answer = cited_by_answer(store, parse_doi(doi).key, limit)
    data = answer.as_dict(iso)

    def human() -> None:
        print_rows(
            data["works"],
            ["doi", "title", "selfCitation"],
            title=f"{answer.total} stored works cite {answer.doi}",
        )
        cov = data["coverage"]
        click.echo(
            f"among {cov['indexedWorks']} stored works with deposited reference lists "
            f"({cov['storedWorks']} Crossref works stored); Crossref's public API has no cited-by"
        )
        if cov.get("notice"):
            click.echo(cov["notice"])

    emit(data, as_json, human)
    if not answer.total:
        ctx.exit(1)
