"""``syncd changes``: the change feed of the store, newest first (no upstream request)."""

from __future__ import annotations

import time

import click

from syncd.cli.choices import NearChoice, comma_choices
from syncd.cli.common import emit, handle_errors, json_option, print_rows, session
from syncd.normalize.changes import UPDATE_TYPES, since_epoch
from syncd.registry import CHANGE_SOURCES, SERIES_DOI_PREFIXES
from syncd.server.changes import change_entries
from syncd.store.changes import list_changes

__all__ = ["CHANGE_TYPES", "changes"]

CHANGE_TYPES: tuple[str, ...] = tuple(
    sorted(
        UPDATE_TYPES
        | {"title", "authors", "date", "superseded", "deleted", "restricted", "agency_changed", "metadata"}
    )
)
"""Every change type the feed records (:mod:`syncd.normalize.changes`): Crossref's update types and their
removal, and the changes syncd finds itself; ``--type`` refuses any other with the nearest one named."""


@click.command("changes")
@click.option(
    "--since",
    default="7d",
    show_default=True,
    help="Window: a duration back from now (7d, 12h, 2w) or an ISO date (2026-11-01, UTC).",
)
@click.option(
    "--kind",
    type=NearChoice(list(CHANGE_SOURCES), "kind"),
    default="all",
    show_default=True,
    help="Only Crossref works, Zenodo records or registration agencies (DOI prefixes).",
)
@click.option(
    "--type",
    "types",
    default=None,
    callback=comma_choices(CHANGE_TYPES, "change type"),
    help="Only these change types, comma-separated: " + ",".join(CHANGE_TYPES) + ".",
)
@click.option("--watched", is_flag=True, help="Only entries on the DOI watch list.")
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=100,
    show_default=True,
    help="Most changes (0: all).",
)
@json_option
@click.pass_context
@handle_errors
def changes(
    ctx: click.Context, since: str, kind: str, types: list[str], watched: bool, limit: int, as_json: bool
) -> None:
    """What changed in the stored works and records: retractions, corrections, new versions, deletions.

    One line per change, newest first, from the store only: each time syncd revalidates, syncs or
    fetches an entry it holds and the content changed, it records what changed (updatedBy entries
    that appeared or went, title, authors, date, a Zenodo version superseded or a new version of a
    series, a deleted or restricted record, a prefix now registered with another agency).
    """
    with session(ctx) as svc:
        start = since_epoch(since, time.time())
        found = list_changes(
            svc.store,
            since=start,
            kinds=CHANGE_SOURCES[kind],
            types=types,
            watched_only=watched,
            series_prefixes=SERIES_DOI_PREFIXES,
            limit=limit or 1_000_000_000,
        )
        rows = change_entries(svc.store, found)
    for row in rows:
        row["entry"] = row.get("doi") or row["key"]
        row["type"] = ",".join(row["types"])
        row["watched"] = "yes" if row["watched"] else ""
    emit(
        rows,
        as_json,
        lambda: print_rows(rows, ["detected_at", "entry", "type", "summary", "watched"]),
    )
