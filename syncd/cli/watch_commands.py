"""``syncd watch``: the watch lists the daemon keeps mirrored."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType

import click

from syncd.cli.choices import NearChoice
from syncd.cli.common import (
    EXIT_FAILURE,
    EXIT_NOT_FOUND,
    ProgressBar,
    emit,
    fail,
    handle_errors,
    json_option,
    print_rows,
    session,
    setup_logs,
    writable,
)
from syncd.cli.exits import EXIT_INTERRUPTED
from syncd.errors import InvalidInput, NotFound, SyncdError
from syncd.passes import watches as watch_mod
from syncd.passes.sync import DOI_WATCH, STOP, SyncReport, sync_all
from syncd.registry import WATCH_TYPES
from syncd.road.policy import iso
from syncd.store.watches import (
    SyncRow,
    get_watch,
    list_sync_states,
    list_watches,
    remove_watch,
    request_stop,
    walk_status,
)

# --- syncd watch ------------------------------------------------------------------------------------


@click.group()
def watch() -> None:
    """Manage the watch lists the daemon keeps mirrored (DOIs, Crossref, Zenodo and DataCite queries)."""


@watch.command("add")
@click.argument(
    "what", type=NearChoice([DOI_WATCH, *(t.command for t in WATCH_TYPES.values())], "watch kind")
)
@click.argument("values", nargs=-1)
@click.option(
    "--file", "doi_file", type=click.Path(dir_okay=False), help="doi: read DOIs from a file, one per line."
)
@click.option("--orcid", help="crossref: works of this ORCID iD.")
@click.option("--funder", help="crossref: works funded by this funder id (e.g. 10.13039/100000001).")
@click.option("--issn", help="crossref: works in this ISSN.")
@click.option("--member", help="crossref: works of this Crossref member id.")
@click.option("--filter", "filters", multiple=True, help="crossref: any filter name:value (repeatable).")
@click.option("--query", help="crossref: free-text query.")
@click.option("--route", help="crossref: works route, e.g. /journals/1932-6203/works (default /works).")
@click.option(
    "--rows", type=click.IntRange(1, 1000), default=1000, show_default=True, help="crossref: page size."
)
@click.option("--label", help="Free text shown by `syncd watch ls`.")
@click.option(
    "--skip-invalid",
    is_flag=True,
    help="doi: add the valid DOIs and skip the invalid ones (default: any invalid DOI adds none).",
)
@json_option
@click.pass_context
@handle_errors
def watch_add(
    ctx: click.Context,
    what: str,
    values: tuple[str, ...],
    doi_file: str | None,
    orcid: str | None,
    funder: str | None,
    issn: str | None,
    member: str | None,
    filters: tuple[str, ...],
    query: str | None,
    route: str | None,
    rows: int,
    label: str | None,
    skip_invalid: bool,
    as_json: bool,
) -> None:
    """Add watches: DOIs, a Crossref query, Zenodo communities, a Zenodo or a DataCite query.

    `doi DOI... | --file F`, `crossref --orcid/--funder/--issn/--member/--filter/--query/--route`,
    `zenodo-community ID... [--query Q]`, `zenodo-query QUERY`, `datacite-query QUERY [REPOSITORY]`
    (DataCite query syntax; `*` with a repository id such as cern.zenodo). Identifiers are checked
    first (a DOI's form, an ORCID iD's check character, an ISSN's check digit, a ROR id's checksum):
    every invalid DOI is named (`dois.txt:3`) and none is added unless --skip-invalid adds the
    others; exit 2.
    """
    if what == DOI_WATCH:
        specs = [(DOI_WATCH, s) for s in _doi_specs(values, doi_file, skip_invalid)]
    else:
        watch_type = next(t for t in WATCH_TYPES.values() if t.command == what)
        options = {
            "route": route,
            "filters": filters,
            "query": query,
            "rows": rows,
            "orcid": orcid,
            "funder": funder,
            "issn": issn,
            "member": member,
        }
        specs = [(watch_type.kind, s) for s in watch_type.from_cli(values, options)]
    with session(ctx) as svc:
        writable(svc)
        added = [watch_mod.add(svc.store, k, s, label) for k, s in specs]
    rows_out = [
        {"id": w.id, "kind": w.kind, "watch": watch_mod.describe(w), "created": created}
        for w, created in added
    ]
    emit(rows_out, as_json, lambda: print_rows(rows_out, ["id", "kind", "watch", "created"]))


def _doi_specs(values: tuple[str, ...], doi_file: str | None, skip_invalid: bool) -> list[dict[str, object]]:
    """The DOI watch specs of the arguments and the file's lines; each invalid one named on stderr.

    Raises:
        InvalidInput: no DOI given, or an invalid one without ``skip_invalid`` (nothing is added).
    """
    lines = [(f"argument {i}", v) for i, v in enumerate(values, 1) if v.strip()]
    if doi_file:
        lines += [(f"{doi_file}:{n}", text) for n, text in watch_mod.read_doi_lines(doi_file)]
    if not lines:
        raise InvalidInput("give DOIs or --file", reason="invalid_parameter")
    specs, bad = watch_mod.check_doi_lines(lines)
    for b in bad:
        prefix = "skipped" if skip_invalid else "error: invalid_identifier"
        click.echo(f"{prefix}: {b.where}: {b.message}", err=True)
    if bad and not skip_invalid:
        others = f"; --skip-invalid adds the other {len(specs)}" if specs else ""
        raise InvalidInput(
            f"{len(bad)} of {len(lines)} DOIs are invalid, nothing added{others}", reason="invalid_identifier"
        )
    if not specs:
        raise InvalidInput(
            f"none of the {len(lines)} DOIs is valid, nothing added", reason="invalid_identifier"
        )
    return specs


@watch.command("ls")
@json_option
@click.pass_context
@handle_errors
def watch_ls(ctx: click.Context, as_json: bool) -> None:
    """List watches with their sync progress (status, seen / total, checkpoint, last success).

    ``seen / total``: the works the current (or last) Crossref walk has seen and the ``total-results``
    upstream answered for it; a walk is complete only when the two meet. A walk that ended short shows
    ``incomplete`` and resumes from its ``watermark`` (the indexed time of the last work it stored).
    A walk whose process died (no page for 3 minutes, or its process gone on this host) shows
    ``interrupted``, not ``running``; it resumes from its saved position on the next walk.
    """
    with session(ctx) as svc:
        watches = list_watches(svc.store)
        states = list_sync_states(svc.store)
    rows = []
    for w in watches:
        st = states.get(f"watch:{w.id}")
        rows.append(
            {
                "id": w.id,
                "kind": w.kind,
                "watch": watch_mod.describe(w),
                "spec": w.spec,
                "label": w.label,
                "status": walk_status(st),
                "seen": st.seen if st else None,
                "total": st.total if st else None,
                "progress": _progress(st),
                "watermark": st.watermark if st else None,
                "checkpoint": st.checkpoint if st else None,
                "resumable": bool(st and st.cursor),
                "last_success_at": iso(st.last_success_at) if st and st.last_success_at else None,
            }
        )
    emit(
        rows,
        as_json,
        lambda: print_rows(rows, ["id", "kind", "watch", "label", "status", "progress", "last_success_at"]),
    )


def _progress(row: SyncRow | None) -> str | None:
    """``seen / total`` of a walk's works (``seen / ?`` before upstream said a total), None before one."""
    if row is None or row.seen is None:
        return None
    return f"{row.seen} / {row.total if row.total is not None else '?'}"


@watch.command("rm")
@click.argument("ids", metavar="WATCH_ID...", nargs=-1, required=True, type=int)
@click.pass_context
@handle_errors
def watch_rm(ctx: click.Context, ids: tuple[int, ...]) -> None:
    """Remove watches by id (stored entries stay); exit 1 when an id does not exist.

    A walk of a removed watch that is running stops after its current page.
    """
    with session(ctx) as svc:
        writable(svc)
        states = list_sync_states(svc.store)
        running = [i for i in ids if walk_status(states.get(f"watch:{i}")) == "running"]
        missing = [i for i in ids if not remove_watch(svc.store, i)]
    click.echo(f"removed {len(ids) - len(missing)} watches")
    for i in running:
        if i not in missing:
            click.echo(f"watch {i}: its running walk stops after the current page", err=True)
    if missing:
        fail(NotFound(f"no watch with id {', '.join(map(str, missing))}", reason="not_found"), EXIT_NOT_FOUND)


@watch.command("stop")
@click.argument("ids", metavar="WATCH_ID...", nargs=-1, required=True, type=int)
@click.pass_context
@handle_errors
def watch_stop(ctx: click.Context, ids: tuple[int, ...]) -> None:
    """Stop running walks after their current page (position saved; the next walk resumes from it).

    Exit 1 when an id does not exist; a watch with no running walk is reported and left alone.
    """
    missing = []
    with session(ctx) as svc:
        states = list_sync_states(svc.store)
        for i in ids:
            status = walk_status(states.get(f"watch:{i}"))
            if get_watch(svc.store, i) is None:
                missing.append(i)
            elif status == "running" and request_stop(svc.store, f"watch:{i}"):
                click.echo(f"watch {i}: stop requested; the walk stops after its current page")
            else:
                click.echo(f"watch {i}: no walk running ({status})")
    if missing:
        fail(NotFound(f"no watch with id {', '.join(map(str, missing))}", reason="not_found"), EXIT_NOT_FOUND)


@contextlib.contextmanager
def _ctrl_c_stops_walks() -> Iterator[threading.Event]:
    """Ctrl-C during a walk: the first stops it at its next page boundary (position saved).

    A second Ctrl-C interrupts at once (the walk is marked ``interrupted``). Yields an event set on
    Ctrl-C. Outside the main thread (no signal handler can be set) nothing is installed.
    """
    pressed = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield pressed
        return

    def on_sigint(_sig: int, _frame: FrameType | None) -> None:
        if pressed.is_set():
            raise KeyboardInterrupt
        pressed.set()
        STOP.set()
        click.echo("stopping after the current page (Ctrl-C again to interrupt now)", err=True)

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield pressed
    finally:
        signal.signal(signal.SIGINT, previous)
        STOP.clear()


@watch.command("sync")
@click.argument("ids", metavar="[WATCH_ID]...", nargs=-1, type=int)
@click.option("--full", is_flag=True, help="Walk everything again instead of incrementally.")
@json_option
@click.pass_context
@handle_errors
def watch_sync(ctx: click.Context, ids: tuple[int, ...], full: bool, as_json: bool) -> None:
    """Walk the watch lists now (config watches included).

    Full walk first, then incremental; a crashed walk resumes from its checkpoint. Each walk gets a
    row with its outcome (a failed walk keeps what it stored before failing; watches left when the
    pass ended show ``not run: <reason>``; one that could not finish, ``incomplete``). Exit 1 when an
    id does not exist (nothing is walked), 3 when a walk failed, was not run or is incomplete.
    """
    setup_logs(ctx, "ERROR")  # stderr keeps to the one `error:` line unless --log-level says otherwise
    with session(ctx) as svc, _ctrl_c_stops_walks() as pressed:
        settings = svc.settings
        store = svc.store
        watch_mod.apply_config(store, settings.watch)
        known = {w.id for w in list_watches(store)}
        missing = sorted(set(ids) - known)
        if missing:
            raise NotFound(f"no watch with id {', '.join(map(str, missing))}", reason="not_found")
        with ProgressBar(not as_json, "syncing") as bar:
            try:
                reports = sync_all(svc, ids=list(ids) or None, full=full, on_watch=lambda w, r: bar.advance())
            except KeyboardInterrupt:
                click.echo("interrupted: the walk resumes from its last saved page", err=True)
                sys.exit(EXIT_INTERRUPTED)
    rows = [{**r.as_dict(), "outcome": _outcome(r)} for r in reports]
    emit(
        rows,
        as_json,
        lambda: print_rows(
            rows, ["watch_id", "kind", "mode", "resumed", "requests", "stored", "new", "changed", "outcome"]
        ),
    )
    if pressed.is_set():
        click.echo("stopped by Ctrl-C: the walk resumes from its last saved page", err=True)
        sys.exit(EXIT_INTERRUPTED)
    failed = [r for r in reports if r.error]
    not_run = [r for r in reports if r.not_run]
    short = [r for r in reports if r.short]
    if failed or not_run or short:
        parts = [f"{len(failed)} of {len(reports)} walks failed"]
        if not_run:
            parts.append(f"{len(not_run)} not run")
        if short:
            parts.append(f"{len(short)} incomplete (their cursors kept expiring; the next pass resumes them)")
        reason = failed[0].error if failed else not_run[0].not_run if not_run else "upstream_unavailable"
        fail(SyncdError("; ".join(parts), reason=reason or "upstream_unavailable"), EXIT_FAILURE)


def _outcome(report: SyncReport) -> str:
    """One walk's outcome for the table.

    ``failed: R``, ``not run: R``, ``stopped: R`` (R a reason code), ``incomplete`` (the walk ended
    short of what upstream said there is), else ``complete`` or ``partial``.
    """
    if report.error:
        return f"failed: {report.error}"
    if report.not_run:
        return f"not run: {report.not_run}"
    if report.stopped:
        return f"stopped: {report.stopped}"
    if report.short:
        return "incomplete"
    return "complete" if report.complete else "partial"
