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
    syncd watch sync          walk the watch lists now (full, incremental or resumed)

Exit codes: 0 success; 1 not found (nothing stored / upstream says it does not exist);
2 bad usage or invalid input; 3 upstream or store failure. Errors go to stderr as one line
``error: <reason>: <message>``; ``--json`` prints machine-readable output on stdout.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from syncd import __version__, policy
from syncd import watch as watch_mod
from syncd.budget import Budget
from syncd.config import POOLS, Settings, load_settings
from syncd.daemon import run_daemon
from syncd.dbcopy import copy_store
from syncd.errors import InvalidInput, NotFound, SyncdError
from syncd.kinds import RECORD_KINDS
from syncd.logsetup import setup_logging
from syncd.lookups import crossref as lookups_crossref
from syncd.lookups import zenodo as lookups_zenodo
from syncd.normalize.crossref import work_view
from syncd.normalize.doi import ParsedDOI, parse_doi
from syncd.normalize.zenodo import record_view
from syncd.normalize.zenodo_id import RecordRef, parse_record_ref
from syncd.policy import iso
from syncd.refresh import sweep
from syncd.services import Services
from syncd.store.content import document
from syncd.store.engine import make_engine, upgrade_to_head
from syncd.store.maintenance import count_entries, delete_entries, list_entries, prune, vacuum, verify
from syncd.store.repo import Store, StoredEntry
from syncd.store.watches import list_sync_states, list_watches, remove_watch
from syncd.sync import sync_all
from syncd.tools.server import build_server
from syncd.transfer import export_entries, import_paths, open_text

__all__ = ["cli", "main"]

F = TypeVar("F", bound=Callable[..., Any])
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}

EXIT_NOT_FOUND = 1
EXIT_USAGE = 2
EXIT_FAILURE = 3


def json_option(func: F) -> F:
    """Option bundle: ``--json`` for machine-readable output."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")(func)


def kind_option(func: F) -> F:
    """Option bundle: ``--kind`` to say which upstream an ID belongs to."""
    return click.option(
        "--kind",
        type=click.Choice(["auto", "crossref", "zenodo"]),
        default="auto",
        show_default=True,
        help="crossref: ID is a DOI; zenodo: ID is a record id/DOI/URL; auto: Zenodo forms, else a DOI.",
    )(func)


def _settings(ctx: click.Context) -> Settings:
    obj = ctx.ensure_object(dict)
    if "settings" not in obj:
        try:
            obj["settings"] = load_settings(obj.get("config"))
        except InvalidInput as exc:
            _fail(exc, EXIT_USAGE)
    return obj["settings"]


def _fail(exc: SyncdError, code: int) -> None:
    click.echo(f"error: {exc.reason}: {exc.message}", err=True)
    sys.exit(code)


def handle_errors(func: F) -> F:
    """Map syncd errors to one stderr line and the documented exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except InvalidInput as exc:
            _fail(exc, EXIT_USAGE)
        except NotFound as exc:
            _fail(exc, EXIT_NOT_FOUND)
        except SyncdError as exc:
            _fail(exc, EXIT_FAILURE)

    return wrapper  # type: ignore[return-value]


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


def _logging(ctx: click.Context, default: str = "WARNING") -> None:
    settings = _settings(ctx)
    level = (ctx.obj.get("log_level") or (settings.log_level if default == "INFO" else default)).upper()
    setup_logging(level, settings)


@cli.command()
@click.pass_context
@handle_errors
def daemon(ctx: click.Context) -> None:
    """Serve the MCP tools over Streamable HTTP and keep the store fresh (the systemd service)."""
    _logging(ctx, "INFO")
    run_daemon(_settings(ctx))


@cli.command()
@click.pass_context
@handle_errors
def mcp(ctx: click.Context) -> None:
    """Serve the MCP tools over stdio (point Claude Desktop / Claude Code at `syncd mcp`)."""
    _logging(ctx, "WARNING")
    with session(ctx) as svc:
        build_server(svc).run("stdio")


@cli.group()
def db() -> None:
    """Manage the store's schema."""


@db.command("upgrade")
@click.pass_context
@handle_errors
def db_upgrade(ctx: click.Context) -> None:
    """Upgrade the store to the newest schema revision (also done on every start)."""
    settings = _settings(ctx)
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
    when run again. Row counts are compared at the end (exit 3 when they differ). Stop the daemons
    writing to the source first.
    """
    _logging(ctx, "WARNING")
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
        _print_rows(rows, ["table", "source", "destination", "copied"], title=None)
        note = " (resumed)" if report.resumed else ""
        took = f"{report.seconds:.1f} s{note}"
        click.echo(f"copied {report.source} -> {report.destination} in {took}; counts match")

    _emit(data, as_json, human)


@cli.group()
def cache() -> None:
    """Inspect and use the local store."""


@contextlib.contextmanager
def session(ctx: click.Context) -> Iterator[Services]:
    """The command's :class:`~syncd.services.Services` over the configured store; both closed on exit."""
    settings = _settings(ctx)
    store = Store.open(settings.database_url)
    try:
        svc = Services.open(settings, store, interactive=True)
        try:
            yield svc
        finally:
            svc.close()
    finally:
        store.close()


def _entry_dict(entry: StoredEntry, settings: Settings, now: float) -> dict[str, Any]:
    ttl = policy.ttl_s(settings.ttl, entry.kind, entry.status)
    age = max(0.0, now - entry.validated_at)
    return {
        "kind": entry.kind,
        "key": entry.key,
        "status": entry.status,
        "title": entry.title,
        "doi": entry.doi,
        "concept_recid": entry.concept_key,
        "etag": entry.etag,
        "last_modified": entry.last_modified,
        "content_hash": entry.content_hash,
        "upstream_version": entry.upstream_version,
        "fetched_at": iso(entry.fetched_at),
        "validated_at": iso(entry.validated_at),
        "age_s": round(age, 1),
        "ttl_s": ttl,
        "stale": age >= ttl,
        "checks": entry.checks,
        "changes": entry.changes,
        "last_error": entry.last_error,
        "body_bytes": len(entry.body.encode("utf-8")) if entry.body else 0,
    }


def _resolve_id(ident: str, kind: str) -> tuple[str, Any]:
    """Parse ``ident`` as a Zenodo reference or a DOI; raises InvalidInput for neither."""
    if kind == "crossref":
        return "crossref", parse_doi(ident)
    if kind == "zenodo":
        return "zenodo", parse_record_ref(ident)
    try:
        ref = parse_record_ref(ident)
    except InvalidInput:
        return "crossref", parse_doi(ident)
    if ref.recid is None:  # a DOI (bare or doi.org URL) that is not a Zenodo DOI
        return "crossref", parse_doi(ident)
    return "zenodo", ref


def _stored(svc: Services, which: str, parsed: ParsedDOI | RecordRef) -> StoredEntry | None:
    if isinstance(parsed, ParsedDOI):
        return lookups_crossref.stored_work(svc.store, parsed)
    return lookups_zenodo.stored_record(svc.store, parsed)


def _pool_rows(budget: Any, now: float) -> list[dict[str, Any]]:
    """One JSON-ready row per budget pool (shared by ``cache stats`` and ``cache budget``)."""
    rows = []
    for s in budget.states():
        rows.append(
            {
                "pool": s.pool,
                "tokens": round(s.tokens, 2),
                "burst": s.limits.burst,
                "per_s": s.limits.per_s,
                "in_flight": s.in_flight,
                "in_flight_limit": s.limits.in_flight,
                "daemon_floor": round(budget.settings.budget.daemon_reserve * s.limits.burst, 2),
                "blocked_until": iso(s.blocked_until) if s.blocked_until > now else None,
                "blocked_for_s": round(s.blocked_for(now), 1),
                "offline": s.offline(now),
                "offline_until": iso(s.offline_until) if s.offline(now) else None,
                "failures": s.failures,
            }
        )
    return rows


@cache.command("stats")
@json_option
@click.pass_context
@handle_errors
def cache_stats(ctx: click.Context, as_json: bool) -> None:
    """Entries per kind and status, fresh/stale counts, database size and budget per pool."""
    with session(ctx) as svc:
        store = svc.store
        now = time.time()
        counts = store.counts(policy.ttls(svc.settings.ttl), now)
        pools = _pool_rows(svc.budget, now)
        data = {"database_size_bytes": store.size_bytes(), "entries": counts, "budget": pools}
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    console = Console()
    table = Table(title="Stored entries")
    for col in ("kind", "status", "entries", "fresh", "stale"):
        table.add_column(col, justify="right" if col in ("entries", "fresh", "stale") else "left")
    for row in counts:
        table.add_row(row["kind"], row["status"], str(row["entries"]), str(row["fresh"]), str(row["stale"]))
    if not counts:
        table.add_row("(empty)", "", "0", "0", "0")
    console.print(table)
    size = data["database_size_bytes"]
    console.print(f"Database size: {size:,} bytes" if size is not None else "Database size: n/a")
    budget = Table(title="Request budget")
    for col in ("pool", "tokens", "burst", "per_s", "in flight", "blocked for (s)", "offline"):
        budget.add_column(col)
    for p in pools:
        budget.add_row(
            p["pool"],
            f"{p['tokens']:.2f}",
            f"{p['burst']:g}",
            f"{p['per_s']:g}",
            f"{p['in_flight']}/{p['in_flight_limit']}",
            f"{p['blocked_for_s']:g}",
            "yes" if p["offline"] else "no",
        )
    console.print(budget)


@cache.command("show")
@click.argument("ident", metavar="ID")
@kind_option
@json_option
@click.pass_context
@handle_errors
def cache_show(ctx: click.Context, ident: str, kind: str, as_json: bool) -> None:
    """Show one stored entry (a DOI or a Zenodo id): key, status, validators, ages. No upstream request."""
    which, parsed = _resolve_id(ident, kind)
    with session(ctx) as svc:
        entry = _stored(svc, which, parsed)
        if entry is None:
            raise NotFound(f"{ident} is not in the store", reason="not_cached")
        data = _entry_dict(entry, svc.settings, time.time())
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    table = Table(show_header=False)
    table.add_column("field")
    table.add_column("value")
    for k, v in data.items():
        table.add_row(k, "" if v is None else str(v))
    Console().print(table)


@cache.command("get")
@click.argument("ident", metavar="ID")
@kind_option
@json_option
@click.option("--refresh", is_flag=True, help="Revalidate against upstream even when fresh.")
@click.pass_context
@handle_errors
def cache_get(ctx: click.Context, ident: str, kind: str, as_json: bool, refresh: bool) -> None:
    """Look an ID up through the local-first path (store first, upstream within the budget)."""
    which, parsed = _resolve_id(ident, kind)
    with session(ctx) as svc:
        if which == "crossref":
            lookup = lookups_crossref.get_work(svc, parsed, force=refresh)
            view: dict[str, Any] = work_view(document(lookup.entry)).model_dump(
                mode="json", exclude_none=True
            )
        else:
            lookup = lookups_zenodo.get_record(svc, parsed, force=refresh)
            if lookup.entry.status != "ok":
                raise lookups_zenodo.miss_error(lookup.entry, ident)
            view = record_view(document(lookup.entry)).model_dump(mode="json", exclude_none=True)
        data = {
            "kind": lookup.entry.kind,
            "key": lookup.entry.key,
            "cache": lookup.provenance.as_dict(),
            **view,
        }
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    console = Console()
    console.print(f"[bold]{data.get('title') or '(untitled)'}[/bold]")
    console.print(f"{data['kind']} {data['key']}")
    c = data["cache"]
    flag = f" upstream_error={c['upstream_error']}" if c.get("upstream_error") else ""
    console.print(f"cache: {c['source']} validated_at={c['validated_at']} stale={c['stale']}{flag}")


# --- helpers of the maintenance commands ----------------------------------------------------------

_DURATION = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}
_SIZE = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def parse_duration(value: str) -> float:
    """``90d``, ``12h``, ``30m``, ``45s``, ``2w`` or plain seconds -> seconds (InvalidInput otherwise)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", value.lower())
    if not m:
        raise InvalidInput(f"not a duration: {value!r} (use e.g. 90d, 12h, 3600)", reason="invalid_parameter")
    return float(m.group(1)) * _DURATION.get(m.group(2) or "s", 1)


def parse_size(value: str) -> int:
    """``500M``, ``2G``, ``100k`` or plain bytes -> bytes (InvalidInput otherwise)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", value.lower())
    if not m:
        raise InvalidInput(f"not a size: {value!r} (use e.g. 500M, 2G)", reason="invalid_parameter")
    return int(float(m.group(1)) * _SIZE[m.group(2)])


def store_kind_option(func: F) -> F:
    """Option bundle: ``--kind`` to restrict a listing or maintenance command to one upstream."""
    return click.option(
        "--kind",
        "store_kind",
        type=click.Choice(["all", "crossref", "zenodo"]),
        default="all",
        show_default=True,
        help="Only Crossref works or only Zenodo records.",
    )(func)


def limit_option(default: int | None) -> Callable[[F], F]:
    """Option bundle: ``--limit N`` (0: no limit)."""

    def deco(func: F) -> F:
        return click.option(
            "--limit",
            type=click.IntRange(min=0),
            default=default,
            show_default=True,
            help="Most rows (0: all).",
        )(func)

    return deco


class _Progress:
    """A rich progress bar on stderr, shown only on a terminal and never with ``--json``."""

    def __init__(self, enabled: bool, description: str, total: int | None = None) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self.description = description
        self.total = total
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> _Progress:
        if self.enabled:
            self._progress = Progress(console=Console(stderr=True), transient=True)
            self._progress.start()
            self._task = self._progress.add_task(self.description, total=self.total)
        return self

    def advance(self, *_: Any) -> None:
        """One step done."""
        if self._progress is not None:
            self._progress.advance(self._task)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()


def _store_kind(value: str) -> str | None:
    return RECORD_KINDS.get(value)


def _print_rows(rows: list[dict[str, Any]], columns: list[str], title: str | None = None) -> None:
    table = Table(title=title)
    for i, col in enumerate(columns):
        table.add_column(col, overflow="fold", no_wrap=i == 0)
    for row in rows:
        table.add_row(*("" if row.get(c) is None else str(row.get(c)) for c in columns))
    if not rows:
        table.add_row("(none)", *[""] * (len(columns) - 1))
    Console().print(table)


def _emit(data: Any, as_json: bool, human: Callable[[], None]) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        human()


# --- syncd cache ls / search ----------------------------------------------------------------------


@cache.command("ls")
@store_kind_option
@click.option(
    "--status", type=click.Choice(["ok", "not_found", "gone", "restricted"]), help="Only this status."
)
@click.option("--stale", is_flag=True, help="Only entries past their lifetime.")
@click.option("--query", "-q", default=None, help="Substring of the key, DOI or title (case-insensitive).")
@click.option(
    "--sort",
    type=click.Choice(["validated", "fetched", "key", "title", "size"]),
    default="validated",
    show_default=True,
    help="Sort key (validated: oldest validation first).",
)
@click.option("--desc", is_flag=True, help="Reverse the sort order.")
@limit_option(50)
@json_option
@click.pass_context
@handle_errors
def cache_ls(
    ctx: click.Context,
    store_kind: str,
    status: str | None,
    stale: bool,
    query: str | None,
    sort: str,
    desc: bool,
    limit: int,
    as_json: bool,
) -> None:
    """List stored entries: filter by kind, status, staleness or text; sort by age, key, title, size."""
    with session(ctx) as svc:
        store = svc.store
        now = time.time()
        entries = list_entries(
            store,
            kind=_store_kind(store_kind),
            status=status,
            stale=(policy.ttls(svc.settings.ttl), now) if stale else None,
            query=query,
            sort=sort,
            descending=desc,
            limit=limit or None,
        )
        rows = [_entry_dict(e, svc.settings, now) for e in entries]
    _emit(
        rows, as_json, lambda: _print_rows(rows, ["kind", "key", "status", "title", "validated_at", "stale"])
    )


@cache.command("search")
@click.argument("text")
@store_kind_option
@limit_option(20)
@json_option
@click.pass_context
@handle_errors
def cache_search(ctx: click.Context, text: str, store_kind: str, limit: int, as_json: bool) -> None:
    """Full-text search of the local index (titles, authors, abstracts, journals); no upstream request."""
    if not text.strip():
        raise InvalidInput("the search text is empty", reason="invalid_parameter")
    with session(ctx) as svc:
        store = svc.store
        now = time.time()
        hits = store.search(text, kind=_store_kind(store_kind), limit=limit or 1000)
        rows = [_entry_dict(e, svc.settings, now) for e in hits]
    _emit(rows, as_json, lambda: _print_rows(rows, ["kind", "key", "title", "validated_at"]))


# --- syncd cache refresh ----------------------------------------------------------------------------


@cache.command("refresh")
@click.argument("idents", metavar="[ID]...", nargs=-1)
@click.option("--stale", "stale_only", is_flag=True, help="Every stale entry, oldest first.")
@click.option("--all", "everything", is_flag=True, help="Every stored entry, oldest validation first.")
@kind_option
@limit_option(0)
@json_option
@click.pass_context
@handle_errors
def cache_refresh(
    ctx: click.Context,
    idents: tuple[str, ...],
    stale_only: bool,
    everything: bool,
    kind: str,
    limit: int,
    as_json: bool,
) -> None:
    """Revalidate entries against upstream now (IDs, --stale or --all), through the shared budget.

    Crossref works are confirmed in groups through list requests (filter=doi:...). IDs not yet
    stored are fetched. Exit 3 when any revalidation failed, 1 when an ID does not exist upstream.
    """
    if sum(map(bool, (idents, stale_only, everything))) != 1:
        raise InvalidInput("give IDs, --stale or --all (exactly one)", reason="invalid_parameter")
    parsed = [(i, *_resolve_id(i, kind)) for i in idents]
    missing: list[str] = []
    fetched = 0
    with session(ctx) as svc:
        store = svc.store
        now = time.time()
        if everything:
            entries = list_entries(store, limit=limit or None)
        elif stale_only:
            entries = store.stale(policy.ttls(svc.settings.ttl), now, limit or 1_000_000)
        else:
            entries = []
            for ident, which, ref in parsed:
                entry = _stored(svc, which, ref)
                if entry is not None:
                    entries.append(entry)
                    continue
                try:  # not stored yet: fetch it like `cache get --refresh`
                    if which == "crossref":
                        lookups_crossref.get_work(svc, ref, force=True)
                    else:
                        lookups_zenodo.get_record(svc, ref, force=True)
                    fetched += 1
                except NotFound:
                    missing.append(ident)
        with _Progress(not as_json, "revalidating", len(entries)) as bar:
            report = sweep(svc, len(entries), now, entries=entries, on_entry=bar.advance)
    data = {**report.as_dict(), "fetched": fetched, "not_found": missing}
    _emit(
        data,
        as_json,
        lambda: click.echo(
            f"checked {report.checked}: {report.unchanged} unchanged, {report.changed} changed, "
            f"{report.failed} failed; fetched {fetched}; {report.requests} requests"
        ),
    )
    if report.failed:
        reason = next(iter(report.failures), "upstream_unavailable")
        _fail(
            SyncdError(f"{report.failed} of {report.checked} revalidations failed", reason=reason),
            EXIT_FAILURE,
        )
    if missing:
        _fail(NotFound(f"not found upstream: {', '.join(missing)}", reason="not_found"), EXIT_NOT_FOUND)


# --- syncd cache evict / prune ----------------------------------------------------------------------


@cache.command("evict")
@click.argument("idents", metavar="ID...", nargs=-1, required=True)
@kind_option
@json_option
@click.pass_context
@handle_errors
def cache_evict(ctx: click.Context, idents: tuple[str, ...], kind: str, as_json: bool) -> None:
    """Delete stored entries by ID (with their index rows); exit 1 when none of them was stored."""
    parsed = [(i, *_resolve_id(i, kind)) for i in idents]
    with session(ctx) as svc:
        store = svc.store
        found = {ident: _stored(svc, which, ref) for ident, which, ref in parsed}
        ids = [e.id for e in found.values() if e is not None]
        deleted = delete_entries(store, ids)
    absent = [i for i, e in found.items() if e is None]
    data = {"evicted": deleted, "not_cached": absent}
    _emit(data, as_json, lambda: click.echo(f"evicted {deleted} entries"))
    if not deleted:
        _fail(NotFound(f"not in the store: {', '.join(absent)}", reason="not_cached"), EXIT_NOT_FOUND)


@cache.command("prune")
@click.option(
    "--older-than", default=None, help="Delete entries not confirmed by upstream for this long (e.g. 180d)."
)
@click.option(
    "--misses-older-than", default=None, help="Delete misses (404/410/403) older than this (e.g. 7d)."
)
@click.option(
    "--max-size",
    default=None,
    help="Shrink bodies + blobs to this size (e.g. 2G): blobs LRU, then the entries confirmed longest ago.",
)
@store_kind_option
@click.option("--dry-run", is_flag=True, help="Only say what would be deleted.")
@json_option
@click.pass_context
@handle_errors
def cache_prune(
    ctx: click.Context,
    older_than: str | None,
    misses_older_than: str | None,
    max_size: str | None,
    store_kind: str,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Delete entries by age, misses by age, and the oldest entries above a size cap (watched DOIs kept)."""
    if not (older_than or misses_older_than or max_size):
        raise InvalidInput("give --older-than, --misses-older-than or --max-size", reason="invalid_parameter")
    age = parse_duration(older_than) if older_than else None
    miss_age = parse_duration(misses_older_than) if misses_older_than else None
    cap = parse_size(max_size) if max_size else None
    with session(ctx) as svc:
        store = svc.store
        protect = {("crossref_work", w.spec["doi"]) for w in list_watches(store, "doi")}
        result = prune(
            store,
            now=time.time(),
            older_than_s=age,
            misses_older_than_s=miss_age,
            max_bytes=cap,
            kind=_store_kind(store_kind),
            protect=protect,
            dry_run=dry_run,
        )
    data = asdict(result)
    verb = "would delete" if dry_run else "deleted"
    _emit(
        data,
        as_json,
        lambda: click.echo(
            f"{verb} {result.entries} entries ({result.entry_bytes:,} bytes) and {result.blobs} blobs "
            f"({result.blob_bytes:,} bytes)"
        ),
    )


# --- syncd cache export / import --------------------------------------------------------------------


@cache.command("export")
@click.option(
    "--output", "-o", default="-", show_default=True, help="File to write (.gz: gzip); - for stdout."
)
@store_kind_option
@click.pass_context
@handle_errors
def cache_export(ctx: click.Context, output: str, store_kind: str) -> None:
    """Write stored entries as JSON Lines of the raw upstream bodies (one entry per line)."""
    with session(ctx) as svc:
        store = svc.store
        total = count_entries(store, _store_kind(store_kind))
        try:
            out = open_text(output, "w")
        except OSError as exc:
            raise InvalidInput(f"cannot write {output}: {exc}", reason="invalid_parameter") from exc
        try:
            with _Progress(output != "-", "exporting", total) as bar:
                n = export_entries(store, out, kind=_store_kind(store_kind), on_entry=bar.advance)
        finally:
            if output != "-":
                out.close()
    if output != "-":
        click.echo(f"exported {n} entries to {output}", err=True)


@cache.command("import")
@click.argument("paths", metavar="FILE...", nargs=-1, required=True, type=click.Path(path_type=Path))
@json_option
@click.pass_context
@handle_errors
def cache_import(ctx: click.Context, paths: tuple[Any, ...], as_json: bool) -> None:
    """Import syncd exports or Crossref public data files (.jsonl[.gz], .json[.gz], directories).

    Never replaces a stored entry with an older one. Exit 2 when a file is missing or not JSON, or
    when no item at all could be read.
    """
    with session(ctx) as svc:
        store = svc.store
        with _Progress(not as_json, "importing") as bar:
            report = import_paths(store, list(paths), on_item=bar.advance)
    _emit(
        report.as_dict(),
        as_json,
        lambda: click.echo(
            f"read {report.read}: {report.new} new, {report.changed} changed, {report.unchanged} unchanged, "
            f"{report.skipped_older} kept (store newer), {report.invalid} invalid"
        ),
    )
    if report.read and report.invalid == report.read:
        _fail(InvalidInput(f"no readable item: {report.errors[0]}", reason="invalid_parameter"), EXIT_USAGE)


# --- syncd cache verify / vacuum / budget ----------------------------------------------------------


@cache.command("verify")
@click.option("--repair", is_flag=True, help="Fix what can be fixed (orphans, FTS index rebuild).")
@json_option
@click.pass_context
@handle_errors
def cache_verify(ctx: click.Context, repair: bool, as_json: bool) -> None:
    """Check the store: SQLite integrity, orphan rows, FTS index consistency. Exit 3 on problems."""
    with session(ctx) as svc:
        store = svc.store
        result = verify(store, repair=repair)
    data = {
        "ok": result.ok,
        "integrity": result.integrity,
        "entries": result.entries,
        "fts_rows": result.fts_rows,
        "problems": result.problems,
        "repaired": result.repaired,
    }

    def human() -> None:
        for line in result.repaired:
            click.echo(f"repaired: {line}")
        for line in result.problems:
            click.echo(f"problem: {line}")
        click.echo(
            f"{'ok' if result.ok else 'NOT OK'}: {result.entries} entries, {result.fts_rows} index rows"
        )

    _emit(data, as_json, human)
    if not result.ok:
        _fail(SyncdError(result.problems[0], reason="store_inconsistent"), EXIT_FAILURE)


@cache.command("vacuum")
@json_option
@click.pass_context
@handle_errors
def cache_vacuum(ctx: click.Context, as_json: bool) -> None:
    """Checkpoint the WAL, optimize the FTS index and VACUUM the database (sizes before/after)."""
    with session(ctx) as svc:
        store = svc.store
        data = vacuum(store)
    _emit(
        data,
        as_json,
        lambda: click.echo(f"size {data['size_before_bytes']:,} -> {data['size_after_bytes']:,} bytes"),
    )


@cache.command("budget")
@click.argument("pool", required=False, type=click.Choice(POOLS))
@click.option("--reset", is_flag=True, help="Clear 429 blocks and open breakers (of POOL, else all).")
@json_option
@click.pass_context
@handle_errors
def cache_budget(ctx: click.Context, pool: str | None, reset: bool, as_json: bool) -> None:
    """The shared request budget: per pool tokens, limits, requests in flight, blocked/offline until.

    With --reset [POOL], first clear the 429 blocks and breakers of POOL (every pool when omitted).
    """
    if pool is not None and not reset:
        raise click.UsageError("POOL is only taken with --reset")
    with session(ctx) as svc:
        settings = svc.settings
        store = svc.store
        budget = Budget(store, settings)
        if reset:
            click.echo(f"reset: {', '.join(budget.reset(pool))}", err=True)
        now = time.time()
        pools = _pool_rows(budget, now)
    _emit(
        pools,
        as_json,
        lambda: _print_rows(
            pools,
            ["pool", "tokens", "burst", "per_s", "in_flight", "blocked_until", "offline_until"],
            "Request budget",
        ),
    )


# --- syncd watch ------------------------------------------------------------------------------------


@cli.group()
def watch() -> None:
    """Manage the watch lists the daemon keeps mirrored (DOIs, Crossref queries, Zenodo communities)."""


@watch.command("add")
@click.argument("what", type=click.Choice(["doi", "crossref", "zenodo-community", "zenodo-query"]))
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
    as_json: bool,
) -> None:
    """Add watches: DOIs, a Crossref query, Zenodo communities or a Zenodo query.

    `doi DOI... | --file F`, `crossref --orcid/--funder/--issn/--member/--filter/--query/--route`,
    `zenodo-community ID... [--query Q]`, `zenodo-query QUERY`.
    """
    if what == "doi":
        dois = list(values) + (watch_mod.read_doi_file(doi_file) if doi_file else [])
        if not dois:
            raise InvalidInput("give DOIs or --file", reason="invalid_parameter")
        specs = [("doi", s) for s in watch_mod.doi_specs(dois)]
    elif what == "crossref":
        if values:
            raise InvalidInput("crossref watches take options, not arguments", reason="invalid_parameter")
        spec = watch_mod.crossref_spec(
            route=route,
            filters=filters,
            query=query,
            rows=rows,
            orcid=orcid,
            funder=funder,
            issn=issn,
            member=member,
        )
        specs = [("crossref_query", spec)]
    elif what == "zenodo-community":
        if not values:
            raise InvalidInput("give community ids", reason="invalid_parameter")
        specs = [("zenodo_community", watch_mod.zenodo_spec(community=v, q=query)) for v in values]
    else:
        if len(values) != 1:
            raise InvalidInput("give one query", reason="invalid_parameter")
        specs = [("zenodo_query", watch_mod.zenodo_spec(q=values[0]))]
    with session(ctx) as svc:
        added = [watch_mod.add(svc.store, k, s, label) for k, s in specs]
    rows_out = [
        {"id": w.id, "kind": w.kind, "watch": watch_mod.describe(w), "created": created}
        for w, created in added
    ]
    _emit(rows_out, as_json, lambda: _print_rows(rows_out, ["id", "kind", "watch", "created"]))


@watch.command("ls")
@json_option
@click.pass_context
@handle_errors
def watch_ls(ctx: click.Context, as_json: bool) -> None:
    """List watches with their sync progress (status, checkpoint, last success)."""
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
                "status": st.status if st else "never",
                "checkpoint": st.checkpoint if st else None,
                "resumable": bool(st and st.cursor),
                "last_success_at": iso(st.last_success_at) if st and st.last_success_at else None,
            }
        )
    _emit(
        rows,
        as_json,
        lambda: _print_rows(rows, ["id", "kind", "watch", "label", "status", "last_success_at"]),
    )


@watch.command("rm")
@click.argument("ids", metavar="WATCH_ID...", nargs=-1, required=True, type=int)
@click.pass_context
@handle_errors
def watch_rm(ctx: click.Context, ids: tuple[int, ...]) -> None:
    """Remove watches by id (stored entries stay); exit 1 when an id does not exist."""
    with session(ctx) as svc:
        missing = [i for i in ids if not remove_watch(svc.store, i)]
    click.echo(f"removed {len(ids) - len(missing)} watches")
    if missing:
        _fail(
            NotFound(f"no watch with id {', '.join(map(str, missing))}", reason="not_found"), EXIT_NOT_FOUND
        )


@watch.command("sync")
@click.argument("ids", metavar="[WATCH_ID]...", nargs=-1, type=int)
@click.option("--full", is_flag=True, help="Walk everything again instead of incrementally.")
@json_option
@click.pass_context
@handle_errors
def watch_sync(ctx: click.Context, ids: tuple[int, ...], full: bool, as_json: bool) -> None:
    """Walk the watch lists now (config watches included).

    Full walk first, then incremental; a crashed walk resumes from its checkpoint. Exit 3 when a walk failed.
    """
    _logging(ctx, "ERROR")  # stderr keeps to the one `error:` line unless --log-level says otherwise
    with session(ctx) as svc:
        settings = svc.settings
        store = svc.store
        watch_mod.apply_config(store, settings.watch)
        with _Progress(not as_json, "syncing") as bar:
            reports = sync_all(svc, ids=list(ids) or None, full=full, on_watch=lambda w, r: bar.advance())
    rows = [r.as_dict() for r in reports]
    _emit(
        rows,
        as_json,
        lambda: _print_rows(
            rows, ["watch_id", "kind", "mode", "resumed", "requests", "stored", "new", "changed", "error"]
        ),
    )
    failed = [r for r in reports if r.error]
    if failed:
        _fail(
            SyncdError(f"{len(failed)} of {len(reports)} walks failed", reason=failed[0].error), EXIT_FAILURE
        )


def main() -> None:
    """Console-script entry point."""
    cli(obj={})


if __name__ == "__main__":
    main()
