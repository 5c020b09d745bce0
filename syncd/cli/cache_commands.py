"""``syncd cache``: inspect, use and maintain the local store."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from syncd.budget.buckets import Budget
from syncd.cli.choices import NearChoice
from syncd.cli.common import (
    EXIT_FAILURE,
    EXIT_NOT_FOUND,
    EXIT_USAGE,
    ProgressBar,
    emit,
    entry_dict,
    fail,
    handle_errors,
    json_option,
    kind_filter,
    kind_option,
    limit_option,
    parse_duration,
    parse_size,
    pool_rows,
    print_budget,
    print_rows,
    resolve_id,
    session,
    store_kind_option,
    text_cell,
)
from syncd.config import unconfigured
from syncd.errors import InvalidInput, NotFound, SyncdError
from syncd.passes.refresh import named_entries, sweep
from syncd.registry import KINDS, POOLS, STORE_RULES, WATCHED_DOI_KIND, data_files, hooks_of, record_answer
from syncd.road import policy
from syncd.store.maintenance import count_entries, delete_entries, list_entries, prune, vacuum, verify
from syncd.store.repo import Store
from syncd.store.watches import list_watches
from syncd.transfer import (
    WORKERS_MAX,
    default_workers,
    export_entries,
    export_parquet,
    import_paths,
    open_text,
)


@click.group()
def cache() -> None:
    """Inspect and use the local store."""


@cache.command("stats")
@json_option
@click.pass_context
@handle_errors
def cache_stats(ctx: click.Context, as_json: bool) -> None:
    """Entries per kind and status, fresh/stale counts, database size, budget per pool, upstream checks.

    Each upstream's base URL is checked with one cheap request (unless check_upstreams_at_start is false).
    """
    with session(ctx) as svc:
        defaults = unconfigured(svc.settings, ctx.ensure_object(dict).get("config"))
        store = svc.store
        checks = []
        if svc.settings.check_upstreams_at_start:
            checks = [c.as_dict() for c in svc.upstreams.check(svc.settings, read_only=svc.read_only)]
        now = time.time()
        counts = store.counts(policy.staleness(policy.ttls(svc.settings.ttl, KINDS.values()), now))
        pools = pool_rows(svc.budget, now)
        backing_off, backing = store.backing_off(now)
        data = {
            "database_size_bytes": store.size_bytes(),
            "read_only": svc.read_only,
            "write_problem": store.write_problem(),
            "entries": counts,
            "budget": pools,
            "upstreams": checks,
            "backing_off": {"count": backing_off, "entries": backing},
            "unconfigured": None if defaults is None else defaults.sentence(),
        }
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    print_rows(
        counts or [{"kind": "(empty)", "status": "", "entries": 0, "fresh": 0, "stale": 0}],
        ["kind", "status", "entries", "fresh", "stale"],
        "Stored entries",
    )
    if data["unconfigured"]:
        click.echo(f"Configuration: {data['unconfigured']}")
    size = data["database_size_bytes"]
    click.echo(f"Database size: {size:,} bytes" if size is not None else "Database size: n/a")
    if data["read_only"]:
        click.echo("Read-only store: answers come from the store only, no upstream request.")
    elif data["write_problem"]:
        click.echo(
            f"Store cannot be written ({data['write_problem']}): "
            "stored entries are answered, nothing new is kept."
        )
    budget_rows = [
        {
            "pool": p["pool"],
            "tokens": f"{p['tokens']:.2f}",
            "burst": f"{p['burst']:g}",
            "per_s": f"{p['per_s']:g}",
            "in flight": f"{p['in_flight']}/{p['in_flight_limit']}",
            "blocked for (s)": f"{p['blocked_for_s']:g}",
            "offline": "yes" if p["offline"] else "no",
        }
        for p in pools
    ]
    print_rows(
        budget_rows,
        ["pool", "tokens", "burst", "per_s", "in flight", "blocked for (s)", "offline"],
        "Request budget",
    )
    if backing:
        print_rows(
            [{**b, "retry in (s)": f"{b['retry_in_s']:g}", "failures": str(b["failures"])} for b in backing],
            ["kind", "key", "last_error", "failures", "retry in (s)"],
            f"Backing off ({backing_off}: revalidation keeps failing; `cache refresh ID` asks now)",
        )
    for c in checks:
        if c["ok"]:
            click.echo(f"Upstream {c['service']}: ok (HTTP 200, {c['ms']:g} ms) at {c['base_url']}")
        elif c["ok"] is None:
            click.echo(f"Upstream {c['service']}: not checked ({c['skipped']})")
        else:
            answered = f"HTTP {c['status']}" if c["status"] is not None else "no HTTP answer"
            why = c.get("cause") or c["reason"]  # a certificate or proxy failure named as such
            click.echo(f"Upstream {c['service']}: FAILED ({why}, {answered}): {c['hint']}")


@cache.command("show")
@click.argument("ident", metavar="ID")
@kind_option
@json_option
@click.pass_context
@handle_errors
def cache_show(ctx: click.Context, ident: str, kind: str, as_json: bool) -> None:
    """Show one stored entry (a DOI or a Zenodo id): key, status, validators, ages. No upstream request."""
    source, parsed = resolve_id(ident, kind)
    with session(ctx) as svc:
        entry = source.stored(svc.store, parsed)
        if entry is None:
            raise NotFound(f"{ident} is not in the store", reason="not_cached")
        data = entry_dict(entry, svc.settings, time.time())
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    print_rows([{"field": k, "value": v} for k, v in data.items()], ["field", "value"])


VERDICT_SHOWN = ("retracted", "expression_of_concern", "corrected", "reinstated")
"""Verdict severities ``cache get`` shows for a work (every signal: Crossref, stored notices, the
imported Retraction Watch data, the title; the same verdict ``syncd check`` gives)."""


def _verdict_line(verdict: dict[str, Any]) -> str:
    """``retraction verdict: retracted (retraction-watch-data record 999000001, notice 10.x, 2023-05-06)``."""
    shown = [s for s in verdict.get("signals") or [] if not s.get("lifted")]
    parts = [
        " ".join(
            str(x)
            for x in (
                s.get("source"),
                f"record {s['recordId']}" if s.get("recordId") else None,
                f"notice {s['noticeDoi']}" if s.get("noticeDoi") else None,
                s.get("date"),
            )
            if x
        )
        for s in shown
    ]
    basis = f" ({'; '.join(parts)})" if parts else ""
    return text_cell(f"retraction verdict: {verdict.get('severity')}{basis}")


def _title(data: dict[str, Any]) -> str | None:
    """The title ``cache get`` shows: the view's ``title`` (Crossref, Zenodo), else its first ``titles``.

    DataCite's view keeps every title as deposited: ``[{"title": ..., "titleType": ...}]``.
    """
    if data.get("title"):
        return str(data["title"])
    titles = data.get("titles")
    first = titles[0] if isinstance(titles, list) and titles else None
    return str(first["title"]) if isinstance(first, dict) and first.get("title") else None


@cache.command("get")
@click.argument("ident", metavar="ID")
@kind_option
@json_option
@click.option("--refresh", is_flag=True, help="Revalidate against upstream even when fresh.")
@click.pass_context
@handle_errors
def cache_get(ctx: click.Context, ident: str, kind: str, as_json: bool, refresh: bool) -> None:
    """Look an ID up through the local-first path (store first, upstream within the budget)."""
    source, parsed = resolve_id(ident, kind)
    with session(ctx) as svc:
        data = record_answer(source).answer(svc, parsed, ident, force=refresh)
        if data.get("kind") == WATCHED_DOI_KIND and data.get("key"):  # a work: the one retraction verdict
            # loaded here, not at the top: `cache show/ls/search/stats` never load the verdict road
            from syncd.retractions.citations import stored_verdicts

            key = str(data["key"]).lower()
            judged = stored_verdicts(svc.store, [key]).get(key)
            if judged is not None and judged.severity in VERDICT_SHOWN:
                data["retraction"] = judged.as_dict(policy.iso)
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    from rich.console import Console  # syncd.lazy.LAZY: store-only commands never load rich

    console = Console(soft_wrap=True)  # piped: long titles stay on one line
    console.print(text_cell(_title(data) or "(untitled)"), style="bold", markup=False, highlight=False)
    console.print(text_cell(f"{data['kind']} {data['key']}"), markup=False, highlight=False)
    if data.get("flags"):  # retracted / corrected / expression_of_concern, as crossref_get_works flags them
        console.print(f"flags: {', '.join(data['flags'])}", style="bold red", soft_wrap=True, highlight=False)
    verdict = data.get("retraction") or {}
    if verdict and verdict.get("severity") not in (data.get("flags") or ()):  # news beyond Crossref's flags
        console.print(_verdict_line(verdict), style="bold red", markup=False, highlight=False)
    if data.get("notice"):
        console.print(f"notice: {data['notice']}", soft_wrap=True, markup=False, highlight=False)
    c = data["cache"]
    flag = f" upstream_error={c['upstream_error']}" if c.get("upstream_error") else ""
    console.print(f"cache: {c['source']} validated_at={c['validated_at']} stale={c['stale']}{flag}")


# --- syncd cache ls / search ----------------------------------------------------------------------


@cache.command("ls")
@store_kind_option
@click.option(
    "--status", type=NearChoice(["ok", "not_found", "gone", "restricted"], "status"), help="Only this status."
)
@click.option("--stale", is_flag=True, help="Only entries past their lifetime.")
@click.option("--query", "-q", default=None, help="Substring of the key, DOI or title (case-insensitive).")
@click.option(
    "--sort",
    type=NearChoice(["validated", "fetched", "key", "title", "size"], "sort key"),
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
            kind=kind_filter(store_kind),
            status=status,
            stale=policy.staleness(policy.ttls(svc.settings.ttl, KINDS.values()), now) if stale else None,
            query=query,
            sort=sort,
            descending=desc,
            limit=limit or None,
        )
        rows = [entry_dict(e, svc.settings, now) for e in entries]
    emit(rows, as_json, lambda: print_rows(rows, ["kind", "key", "status", "title", "validated_at", "stale"]))


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
        hits = store.search(text, kind=kind_filter(store_kind), limit=limit or 1000)
        rows = [entry_dict(e, svc.settings, now) for e in hits]
    emit(rows, as_json, lambda: print_rows(rows, ["kind", "key", "title", "validated_at"]))


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
    stored are fetched. Exit 3 when any revalidation failed or the refresh stopped early (budget
    spent, upstream unavailable: the entries left are named on stderr), 1 when an ID does not exist upstream.
    """
    if sum(map(bool, (idents, stale_only, everything))) != 1:
        raise InvalidInput("give IDs, --stale or --all (exactly one)", reason="invalid_parameter")
    parsed = [(i, *resolve_id(i, kind)) for i in idents]
    missing: list[str] = []
    fetched = 0
    with session(ctx) as svc:
        store = svc.store
        now = time.time()
        if everything:
            entries = list_entries(store, limit=limit or None)
        elif stale_only:
            ttls = policy.ttls(svc.settings.ttl, KINDS.values())
            entries = store.stale(policy.staleness(ttls, now), limit or 1_000_000, backing_off=True)
        else:  # not stored yet: fetched like `cache get --refresh`
            named = named_entries(svc, parsed)
            entries, fetched, missing = named.entries, named.fetched, named.not_found
        with ProgressBar(not as_json, "revalidating", len(entries)) as bar:
            report = sweep(svc, len(entries), now, entries=entries, on_entry=bar.advance)
    sent = svc.budget.sent.total()  # every request sent: fetches, list and single revalidations, retries
    data = {**report.as_dict(), "requests": sent, "fetched": fetched, "not_found": missing}
    emit(
        data,
        as_json,
        lambda: click.echo(
            f"checked {report.checked}: {report.unchanged} unchanged, {report.changed} changed, "
            f"{report.failed} failed; fetched {fetched}; {sent} requests"
        ),
    )
    left = len(entries) - report.checked
    if report.failed or (report.stopped and left):
        parts = [f"{report.failed} of {report.checked} revalidations failed"] if report.failed else []
        if report.stopped and left:
            parts.append(f"refresh stopped: {left} of {len(entries)} entries not revalidated")
        reason = report.stopped or next(iter(report.failures), "upstream_unavailable")
        fail(SyncdError("; ".join(parts), reason=reason), EXIT_FAILURE)
    if missing:
        fail(NotFound(f"not found upstream: {', '.join(missing)}", reason="not_found"), EXIT_NOT_FOUND)


# --- syncd cache evict / prune ----------------------------------------------------------------------


@cache.command("evict")
@click.argument("idents", metavar="ID...", nargs=-1, required=True)
@kind_option
@json_option
@click.pass_context
@handle_errors
def cache_evict(ctx: click.Context, idents: tuple[str, ...], kind: str, as_json: bool) -> None:
    """Delete stored entries by ID (with their index rows); exit 1 when none of them was stored."""
    parsed = [(i, *resolve_id(i, kind)) for i in idents]
    with session(ctx) as svc:
        store = svc.store
        found = {ident: source.stored(store, ref) for ident, source, ref in parsed}
        ids = [e.id for e in found.values() if e is not None]
        deleted = delete_entries(store, ids)
    absent = [i for i, e in found.items() if e is None]
    data = {"evicted": deleted, "not_cached": absent}
    emit(data, as_json, lambda: click.echo(f"evicted {deleted} entries"))
    if not deleted:
        fail(NotFound(f"not in the store: {', '.join(absent)}", reason="not_cached"), EXIT_NOT_FOUND)


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
        protect = _watched(store)
        result = prune(
            store,
            now=time.time(),
            older_than_s=age,
            misses_older_than_s=miss_age,
            max_bytes=cap,
            kind=kind_filter(store_kind),
            protect=protect,
            dry_run=dry_run,
        )
    data = asdict(result)
    verb = "would delete" if dry_run else "deleted"
    emit(
        data,
        as_json,
        lambda: click.echo(
            f"{verb} {result.entries} entries ({result.entry_bytes:,} bytes) and {result.blobs} blobs "
            f"({result.blob_bytes:,} bytes)"
        ),
    )


# --- syncd cache export / import --------------------------------------------------------------------


@cache.command("export")
@click.argument("destination", metavar="[DIR]", required=False, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "file_format",
    type=NearChoice(["jsonl", "parquet"], "format"),
    default="jsonl",
    show_default=True,
    help="jsonl: one file of JSON Lines; parquet: a directory DIR of Parquet files, one per table "
    "(needs the syncd[parquet] extra).",
)
@click.option(
    "--output", "-o", default="-", show_default=True, help="File to write (.gz: gzip); - for stdout."
)
@store_kind_option
@click.pass_context
@handle_errors
def cache_export(
    ctx: click.Context, destination: Path | None, file_format: str, output: str, store_kind: str
) -> None:
    """Write stored entries as JSON Lines of the raw upstream bodies, or the store as Parquet (--format).

    JSON Lines go to --output or the argument (stdout by default), one entry per line.
    ``--format parquet DIR`` writes the works, records, DataCite works, references, Retraction Watch
    rows and changes into the new directory DIR, one Parquet table each, with their schema in
    DIR/schema.json.
    """
    if file_format == "parquet":
        if destination is None:
            raise InvalidInput(
                "--format parquet needs the directory DIR to write", reason="invalid_parameter"
            )
        if output != "-" or store_kind != "all":
            raise InvalidInput(
                "--output and --kind are for JSON Lines: --format parquet writes every table into DIR",
                reason="invalid_parameter",
            )
        _export_parquet(ctx, destination)
        return
    if destination is not None:
        if output != "-":
            raise InvalidInput("give the file once: DIR or --output", reason="invalid_parameter")
        output = str(destination)
    with session(ctx) as svc:
        store = svc.store
        total = count_entries(store, kind_filter(store_kind))
        try:
            out = open_text(output, "w")
        except OSError as exc:
            raise InvalidInput(f"cannot write {output}: {exc}", reason="invalid_parameter") from exc
        try:
            with ProgressBar(output != "-", "exporting", total) as bar:
                n = export_entries(store, out, kind=kind_filter(store_kind), on_entry=bar.advance)
        finally:
            if output != "-":
                out.close()
    if output != "-":
        click.echo(f"exported {n} entries to {output}", err=True)


def _watched(store: Store) -> set[tuple[str, str]]:
    """``(kind, key)`` of the entries a DOI watch names (kept by prune, marked by the Parquet export)."""
    return {(WATCHED_DOI_KIND, w.spec["doi"]) for w in list_watches(store, "doi")}


def _export_parquet(ctx: click.Context, directory: Path) -> None:
    """``cache export --format parquet DIR``: every kind with an ``export`` hook and the store's tables."""
    exports = {name: hooks.export for name in KINDS if (hooks := hooks_of(name)).export is not None}
    with session(ctx) as svc:
        store = svc.store
        total = sum(count_entries(store, name) for name in exports)
        with ProgressBar(True, "exporting", total) as bar:
            report = export_parquet(store, directory, exports, watched=_watched(store), on_entry=bar.advance)
    tables = ", ".join(f"{name} {rows}" for name, rows in report.rows.items())
    click.echo(
        f"exported to {directory} ({report.bytes:,} bytes in {sum(report.files.values())} files): {tables}",
        err=True,
    )


@cache.command("import")
@click.argument("paths", metavar="FILE...", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--workers",
    type=click.IntRange(min=1, max=WORKERS_MAX),
    default=None,
    help="Processes parsing Crossref works (default: the CPUs available; 1: none besides this one).",
)
@json_option
@click.pass_context
@handle_errors
def cache_import(ctx: click.Context, paths: tuple[Path, ...], workers: int | None, as_json: bool) -> None:
    """Import syncd exports or Crossref public data files (.jsonl[.gz], .json[.gz], directories).

    Never replaces a stored entry with an older one; an entry already stored with the same content is
    not rewritten. Unreadable items are skipped and counted (``invalid``). Exit 2 when a file is
    missing or not JSON, or when no item at all could be read.
    """
    with session(ctx) as svc:
        store = svc.store
        with ProgressBar(not as_json, "importing") as bar:
            report = import_paths(
                store,
                list(paths),
                data_files=data_files(),
                on_item=bar.advance,
                workers=workers or default_workers(),
            )
    emit(
        report.as_dict(),
        as_json,
        lambda: click.echo(
            f"read {report.read}: {report.new} new, {report.changed} changed, {report.unchanged} unchanged, "
            f"{report.skipped_older} kept (store newer), {report.invalid} invalid"
        ),
    )
    if report.read and report.invalid == report.read:
        fail(InvalidInput(f"no readable item: {report.errors[0]}", reason="invalid_parameter"), EXIT_USAGE)


# --- syncd cache verify / vacuum / budget ----------------------------------------------------------


@cache.command("verify")
@click.option("--repair", is_flag=True, help="Fix what can be fixed (orphans, FTS index rebuild).")
@click.option(
    "--hashes",
    is_flag=True,
    help="Also recompute each stored work's and record's content hash from its body (about 1 ms each).",
)
@json_option
@click.pass_context
@handle_errors
def cache_verify(ctx: click.Context, repair: bool, hashes: bool, as_json: bool) -> None:
    """Check the store: integrity, every body decodes, orphan rows, FTS index. Exit 3 on problems."""
    with session(ctx) as svc:
        store = svc.store
        result = verify(store, repair=repair, check_hashes=hashes, rules=STORE_RULES)
    data = {
        "ok": result.ok,
        "integrity": result.integrity,
        "entries": result.entries,
        "fts_rows": result.fts_rows,
        "problems": result.problems,
        "repaired": result.repaired,
        "bad_bodies": result.bad_bodies,
        "bad_hashes": result.bad_hashes,
    }

    def human() -> None:
        for line in result.repaired:
            click.echo(f"repaired: {line}")
        for line in result.problems:
            click.echo(f"problem: {line}")
        click.echo(
            f"{'ok' if result.ok else 'NOT OK'}: {result.entries} entries, {result.fts_rows} index rows"
        )

    emit(data, as_json, human)
    if not result.ok:
        fail(SyncdError(result.problems[0], reason="store_inconsistent"), EXIT_FAILURE)


@cache.command("vacuum")
@json_option
@click.pass_context
@handle_errors
def cache_vacuum(ctx: click.Context, as_json: bool) -> None:
    """Checkpoint the WAL, optimize the FTS index and VACUUM the database (sizes before/after)."""
    with session(ctx) as svc:
        store = svc.store
        data = vacuum(store)
    emit(
        data,
        as_json,
        lambda: click.echo(f"size {data['size_before_bytes']:,} -> {data['size_after_bytes']:,} bytes"),
    )


@cache.command("budget")
@click.argument("pool", required=False, type=NearChoice(POOLS.names, "pool"))
@click.option(
    "--reset",
    is_flag=True,
    help="Clear 429 blocks, pauses and open breakers and fill the bucket (of POOL, else all).",
)
@json_option
@click.pass_context
@handle_errors
def cache_budget(ctx: click.Context, pool: str | None, reset: bool, as_json: bool) -> None:
    """The shared request budget: per pool tokens, limits, requests in flight, blocked/offline until.

    The limits are the effective ones: the configured limits, lowered by what upstream announced in
    the headers of its last answers (shown with the headers and when they came). With --reset
    [POOL], first clear the 429 blocks, pauses and breakers of POOL (every pool when omitted) and
    fill its bucket.
    """
    if pool is not None and not reset:
        raise click.UsageError("POOL is only taken with --reset")
    with session(ctx) as svc:
        settings = svc.settings
        store = svc.store
        budget = Budget(store, settings, pools=POOLS)
        if reset:
            click.echo(f"reset: {', '.join(budget.reset(pool))}", err=True)
        now = time.time()
        pools = pool_rows(budget, now)
    emit(pools, as_json, lambda: print_budget(pools))
