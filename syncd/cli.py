"""``syncd`` command line (click).

Commands::

    syncd daemon              serve MCP over HTTP and revalidate stale entries (systemd service)
    syncd mcp                 serve MCP over stdio (for Claude Desktop, Claude Code, any stdio client)
    syncd db upgrade          upgrade the store's schema to the newest revision
    syncd cache stats         entries per kind, fresh/stale counts, database size, budget per pool
    syncd cache show ID       one stored entry: key, status, validators, ages (no upstream request)
    syncd cache get ID        look up through the local-first path (same as the MCP tools)

Exit codes: 0 success; 1 not found (nothing stored / upstream says it does not exist);
2 bad usage or invalid input; 3 upstream or store failure. Errors go to stderr as one line
``error: <reason>: <message>``; ``--json`` prints machine-readable output on stdout.
"""

from __future__ import annotations

import functools
import json
import logging
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.table import Table

from syncd import __version__
from syncd.config import Settings, load_settings
from syncd.errors import InvalidInput, NotFound, SyncdError
from syncd.normalize.doi import parse_doi
from syncd.normalize.zenodo_id import parse_record_ref

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
    logging.basicConfig(
        level=getattr(logging, level, logging.INFO),
        stream=sys.stderr,
        format="%(levelname)s %(name)s %(message)s",
    )


@cli.command()
@click.pass_context
@handle_errors
def daemon(ctx: click.Context) -> None:
    """Serve the MCP tools over Streamable HTTP and keep the store fresh (the systemd service)."""
    from syncd.daemon import run_daemon

    _logging(ctx, "INFO")
    run_daemon(_settings(ctx))


@cli.command()
@click.pass_context
@handle_errors
def mcp(ctx: click.Context) -> None:
    """Serve the MCP tools over stdio (point Claude Desktop / Claude Code at `syncd mcp`)."""
    from syncd.cache import Cache
    from syncd.store.repo import Store
    from syncd.tools.server import build_server

    _logging(ctx, "WARNING")
    settings = _settings(ctx)
    store = Store.open(settings.database_url)
    cache = Cache(settings, store, interactive=True)
    try:
        build_server(cache, close_on_exit=True).run("stdio")
    finally:
        store.close()


@cli.group()
def db() -> None:
    """Manage the store's schema."""


@db.command("upgrade")
@click.pass_context
@handle_errors
def db_upgrade(ctx: click.Context) -> None:
    """Upgrade the store to the newest schema revision (also done on every start)."""
    from syncd.store.engine import make_engine, upgrade_to_head

    settings = _settings(ctx)
    engine = make_engine(settings.database_url)
    try:
        revision = upgrade_to_head(engine)
    finally:
        engine.dispose()
    click.echo(f"database at revision {revision}")


@cli.group()
def cache() -> None:
    """Inspect and use the local store."""


def _open(ctx: click.Context) -> tuple[Settings, Any, Any]:
    from syncd.cache import Cache
    from syncd.store.repo import Store

    settings = _settings(ctx)
    store = Store.open(settings.database_url)
    return settings, store, Cache(settings, store, interactive=True)


def _entry_dict(entry: Any, cache_obj: Any, now: float) -> dict[str, Any]:
    from syncd.cache import iso

    ttl = cache_obj.ttl(entry.kind, entry.status)
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


def _stored(cache_obj: Any, which: str, parsed: Any) -> Any:
    if which == "crossref":
        return cache_obj.store.get("crossref_work", parsed.key)
    if parsed.recid is not None:
        concept = cache_obj.store.concept_latest(parsed.recid)
        return cache_obj.store.get("zenodo_record", concept[0] if concept else parsed.recid)
    return cache_obj.store.find_by_doi("zenodo_record", parsed.doi)


@cache.command("stats")
@json_option
@click.pass_context
@handle_errors
def cache_stats(ctx: click.Context, as_json: bool) -> None:
    """Entries per kind and status, fresh/stale counts, database size and budget per pool."""
    _, store, cache_obj = _open(ctx)
    try:
        now = time.time()
        counts = store.counts(cache_obj.ttls(), now)
        pools = [
            {
                "pool": s.pool,
                "tokens": round(s.tokens, 2),
                "burst": s.limits.burst,
                "per_s": s.limits.per_s,
                "in_flight": s.in_flight,
                "in_flight_limit": s.limits.in_flight,
                "blocked_for_s": round(s.blocked_for(now), 1),
                "offline": s.offline(now),
            }
            for s in cache_obj.budget.states()
        ]
        data = {"database_size_bytes": store.size_bytes(), "entries": counts, "budget": pools}
    finally:
        cache_obj.close()
        store.close()
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
    _, store, cache_obj = _open(ctx)
    try:
        entry = _stored(cache_obj, which, parsed)
        if entry is None:
            raise NotFound(f"{ident} is not in the store", reason="not_cached")
        data = _entry_dict(entry, cache_obj, time.time())
    finally:
        cache_obj.close()
        store.close()
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
    from syncd import lookups
    from syncd.cache import document
    from syncd.normalize.crossref import work_view
    from syncd.normalize.zenodo import record_view

    which, parsed = _resolve_id(ident, kind)
    _, store, cache_obj = _open(ctx)
    try:
        if which == "crossref":
            lookup = lookups.crossref.get_work(cache_obj, parsed, force=refresh)
            view: dict[str, Any] = work_view(document(lookup.entry)).model_dump(
                mode="json", exclude_none=True
            )
        else:
            lookup = lookups.zenodo.get_record(cache_obj, parsed, force=refresh)
            if lookup.entry.status != "ok":
                raise NotFound(f"{ident}: {lookup.entry.status}", reason=lookup.entry.status)
            view = record_view(document(lookup.entry)).model_dump(mode="json", exclude_none=True)
        data = {
            "kind": lookup.entry.kind,
            "key": lookup.entry.key,
            "cache": lookup.provenance.as_dict(),
            **view,
        }
    finally:
        cache_obj.close()
        store.close()
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    console = Console()
    console.print(f"[bold]{data.get('title') or '(untitled)'}[/bold]")
    console.print(f"{data['kind']} {data['key']}")
    c = data["cache"]
    flag = f" upstream_error={c['upstream_error']}" if c.get("upstream_error") else ""
    console.print(f"cache: {c['source']} validated_at={c['validated_at']} stale={c['stale']}{flag}")


def main() -> None:
    """Console-script entry point."""
    cli(obj={})


if __name__ == "__main__":
    main()
