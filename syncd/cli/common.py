"""Shared pieces of the ``syncd`` commands: options, error handling, the session, output helpers."""

from __future__ import annotations

import contextlib
import csv
import functools
import io
import json
import logging
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import click

from syncd.budget.buckets import Budget
from syncd.cli.choices import NearChoice
from syncd.cli.exits import EXIT_FAILURE, EXIT_NOT_FOUND, EXIT_USAGE
from syncd.config import Settings, load_settings
from syncd.errors import InvalidInput, NotFound, StoreError, SyncdError
from syncd.logsetup import setup_logging
from syncd.registry import RECORD_KINDS, RECORD_SOURCES, kind_of, open_services, resolve_record
from syncd.road import policy
from syncd.road.local_first import facts_of
from syncd.road.policy import READ_ONLY_REASON, iso
from syncd.road.records import RecordSource
from syncd.road.services import Services
from syncd.store.engine import READ_ONLY_HINT
from syncd.store.repo import Store, StoredEntry

__all__ = [
    "EXIT_FAILURE",
    "EXIT_NOT_FOUND",
    "EXIT_USAGE",
    "OUTPUT_FORMATS",
    "F",
    "ProgressBar",
    "announced_text",
    "emit",
    "entry_dict",
    "fail",
    "handle_errors",
    "json_option",
    "kind_filter",
    "kind_option",
    "limit_option",
    "output_format",
    "parse_duration",
    "parse_size",
    "pool_rows",
    "print_budget",
    "print_rows",
    "resolve_id",
    "session",
    "settings_of",
    "setup_logs",
    "spreadsheet_cell",
    "store_kind_option",
    "text_cell",
    "writable",
]

log = logging.getLogger("syncd.cli")


F = TypeVar("F", bound=Callable[..., Any])


OUTPUT_FORMATS = ("table", "tsv", "csv", "json")
"""``--format`` values: a table for people, tab- or comma-separated rows, or JSON."""


def output_format() -> str:
    """The output format of the running command: ``--format``, else ``table`` on a terminal, else ``tsv``.

    Piped (``syncd cache ls | grep DOI``), tables are tab-separated: one row per line, nothing cut.
    """
    ctx = click.get_current_context(silent=True)
    chosen = (ctx.obj or {}).get("format") if ctx is not None else None
    if chosen:
        return str(chosen)
    return "table" if sys.stdout.isatty() else "tsv"


def json_option(
    func: F | None = None, *, flag: str = "--format", reports: tuple[str, ...] = (), help_more: str = ""
) -> Any:
    """Option bundle: ``--format table|tsv|csv|json`` and its short form ``--json``.

    The command receives ``as_json`` (True with ``--json`` or ``--format json``); the format itself is
    kept for :func:`print_rows` (:func:`output_format`). ``flag``: the option's name where the command
    has a ``--format`` of its own (``syncd check --format bibtex`` takes ``--output``); ``reports``:
    formats of the command's own besides the tables' (``syncd check``'s ``markdown`` and ``junit``),
    described by ``help_more``; used bare (``@json_option``) or called (``@json_option(flag="--output")``).
    """

    def deco(command: F) -> F:
        @functools.wraps(command)
        def wrapper(*args: Any, output_format: str | None = None, **kwargs: Any) -> Any:
            if output_format is not None:
                click.get_current_context().ensure_object(dict)["format"] = output_format
            kwargs["as_json"] = bool(kwargs.get("as_json")) or output_format == "json"
            return command(*args, **kwargs)

        with_json = click.option("--json", "as_json", is_flag=True, help=f"Print JSON (same as {flag} json).")
        with_format = click.option(
            flag,
            "output_format",
            type=NearChoice((*OUTPUT_FORMATS, *reports), "format"),
            default=None,
            help="table (default on a terminal), tsv (default when piped: one row per line, tab-separated, "
            "nothing cut), csv or json" + (f"; {help_more}" if help_more else "."),
        )
        return with_json(with_format(wrapper))  # type: ignore[return-value]

    return deco(func) if func is not None else deco


def kind_option(func: F) -> F:
    """Option bundle: ``--kind`` to say which upstream an ID belongs to."""
    return click.option(
        "--kind",
        type=NearChoice(["auto", *RECORD_SOURCES], "kind"),
        default="auto",
        show_default=True,
        help="crossref: ID is a DOI (a Crossref work); zenodo: ID is a record id/DOI/URL; datacite: ID is a "
        "DOI (a DataCite record); auto: Zenodo forms, else a Crossref DOI.",
    )(func)


def settings_of(ctx: click.Context) -> Settings:
    """The settings of this invocation (``--config`` and the environment), loaded once per command."""
    obj = ctx.ensure_object(dict)
    if "settings" not in obj:
        try:
            obj["settings"] = load_settings(obj.get("config"))
        except InvalidInput as exc:
            fail(exc, EXIT_USAGE)
    settings: Settings = obj["settings"]
    return settings


def fail(exc: SyncdError, code: int) -> None:
    """Print ``error: <reason>: <message>`` on stderr, one line, and exit with ``code``.

    Only the message's first line: a driver's error carries the SQL statement and its parameters on
    the lines after it (logged at DEBUG, never printed).
    """
    lines = exc.message.splitlines() or [""]
    if len(lines) > 1:
        log.debug("event=cli_error_detail reason=%s detail=%r", exc.reason, exc.message)
    click.echo(f"error: {exc.reason}: {lines[0]}", err=True)
    sys.exit(code)


def writable(svc: Services) -> None:
    """Refuse a command that writes the store when this user cannot write it.

    Raises:
        StoreError: reason ``store_read_only`` (with the fix) on a read-only store, or
            ``store_unavailable`` naming the cause (``disk_full``, a swapped file ...).
    """
    if svc.read_only:
        raise StoreError(f"the store is read-only for this user; {READ_ONLY_HINT}", reason=READ_ONLY_REASON)
    problem = svc.store.write_problem()
    if problem is not None:
        raise StoreError(f"the store cannot be written now ({problem})")


def handle_errors(func: F) -> F:
    """Map syncd errors to one stderr line and the documented exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except InvalidInput as exc:
            fail(exc, EXIT_USAGE)
        except NotFound as exc:
            fail(exc, EXIT_NOT_FOUND)
        except SyncdError as exc:
            fail(exc, EXIT_FAILURE)

    return wrapper  # type: ignore[return-value]


def setup_logs(ctx: click.Context, default: str = "WARNING") -> None:
    """Set up logging: ``--log-level``, else ``default`` (``INFO`` reads the configured level)."""
    settings = settings_of(ctx)
    level = (ctx.obj.get("log_level") or (settings.log_level if default == "INFO" else default)).upper()
    setup_logging(level, settings)


@contextlib.contextmanager
def session(ctx: click.Context) -> Iterator[Services]:
    """The command's :class:`~syncd.road.services.Services` over the configured store; both closed on exit."""
    settings = settings_of(ctx)
    store = Store.open(
        settings.database_url, search_timeout_s=settings.deadline_s, **settings.store.model_dump()
    )
    try:
        svc = open_services(settings, store, interactive=True)
        try:
            yield svc
        finally:
            svc.close()
    finally:
        store.close()


def entry_dict(entry: StoredEntry, settings: Settings, now: float) -> dict[str, Any]:
    """One stored entry as a JSON-ready row: key, status, validators, ages, TTL and staleness.

    ``stale`` is the policy's one rule (:func:`syncd.road.policy.fresh_bounds`: past the lifetime, or
    validated more than :data:`syncd.road.policy.CLOCK_SKEW_S` after ``now``); ``age_s`` never negative.
    """
    ttl = policy.ttl_s(settings.ttl, kind_of(entry.kind), entry.status)
    facts = facts_of(entry, ttl)
    age = facts.age_s(now)
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
        "stale": not facts.fresh(now),
        "checks": entry.checks,
        "changes": entry.changes,
        "last_error": entry.last_error,
        "body_bytes": len(entry.body.encode("utf-8")) if entry.body else 0,
    }


def resolve_id(ident: str, kind: str) -> tuple[RecordSource[Any], Any]:
    """The record source of ``ident`` for the ``--kind`` choice and its reference (the registry decides).

    Raises:
        InvalidInput: ``ident`` is no identifier of that source (``auto``: neither Zenodo's nor a DOI).
    """
    return resolve_record(ident, kind)


def pool_rows(budget: Budget, now: float) -> list[dict[str, Any]]:
    """One JSON-ready row per budget pool (shared by ``cache stats`` and ``cache budget``).

    ``per_s``, ``burst`` and ``in_flight_limit`` are the effective limits (the configured ones, in
    ``configured``, lowered by what upstream announced); ``announced`` is the announcement in force
    (limit per interval, concurrency, ``x-api-pool``, Zenodo's remaining/reset, the headers as
    received and when, epoch seconds as ISO 8601), or None; ``window`` the requests sent in the
    announced window; ``group`` the shared in-flight count of a concurrency group (Crossref).
    """
    rows = []
    for s in budget.states():
        said = s.announced
        conf = s.configured or s.limits
        rows.append(
            {
                "pool": s.pool,
                "tokens": round(s.tokens, 2),
                "burst": round(s.limits.burst, 2),
                "per_s": round(s.limits.per_s, 3),
                "in_flight": s.in_flight,
                "in_flight_limit": s.limits.in_flight,
                "configured": {"per_s": conf.per_s, "burst": conf.burst, "in_flight": conf.in_flight},
                "daemon_floor": round(budget.settings.budget.daemon_reserve * s.limits.burst, 2),
                "blocked_until": iso(s.blocked_until) if s.blocked_until > now else None,
                "blocked_for_s": round(s.blocked_for(now), 1),
                "block_reason": (s.block_reason or "429") if s.blocked_until > now else None,
                "offline": s.offline(now),
                "offline_until": iso(s.offline_until) if s.offline(now) else None,
                "failures": s.failures,
                "announced": None
                if said is None
                else {
                    "limit": said.limit,
                    "interval_s": said.interval_s,
                    "in_flight": said.in_flight,
                    "api_pool": said.api_pool,
                    "remaining": said.remaining,
                    "reset_at": iso(said.reset_at) if said.reset_at is not None else None,
                    "headers": said.headers,
                    "at": iso(said.at),
                    "age_s": round(max(0.0, now - said.at), 1),
                    "expires_at": iso(said.expires_at),
                },
                "window": None
                if s.window_limit is None
                else {"limit": s.window_limit, "seconds": round(s.window_s, 3), "sent": len(s.window_sends)},
                "group": None
                if s.group is None
                else {
                    "name": s.group,
                    "pools": list(budget.pools.members(s.pool)),
                    "in_flight": s.group_in_flight,
                    "limit": s.group_limit,
                },
            }
        )
    return rows


def announced_text(row: dict[str, Any]) -> str:
    """``10/1s, 5 in flight, polite-single`` for a :func:`pool_rows` row's announcement, ``-`` when none."""
    said = row.get("announced")
    if not said:
        return "-"
    parts = []
    if said["limit"] is not None:
        parts.append(f"{said['limit']}/{said['interval_s']:g}s")
    if said["in_flight"] is not None:
        parts.append(f"{said['in_flight']} in flight")
    if said["remaining"] is not None:
        parts.append(f"{said['remaining']} left")
    if said["api_pool"]:
        parts.append(said["api_pool"])
    return ", ".join(parts) or "-"


def print_budget(pools: list[dict[str, Any]]) -> None:
    """``syncd cache budget``: the :func:`pool_rows` table, each announced limit's source, shared counts."""
    rows = [
        {
            **p,
            "in_flight": f"{p['in_flight']}/{p['in_flight_limit']}",
            "announced": announced_text(p),
            "blocked_until": f"{p['blocked_until']} ({p['block_reason']})" if p["blocked_until"] else None,
        }
        for p in pools
    ]
    print_rows(
        rows,
        ["pool", "tokens", "burst", "per_s", "in_flight", "announced", "blocked_until", "offline_until"],
        "Request budget",
    )
    for p in pools:
        said = p["announced"]
        if said:
            click.echo(
                f"{p['pool']}: announced by its answer at {said['at']} ({said['age_s']:g} s ago, rules until "
                f"{said['expires_at']}): {said['headers'] or '-'}"
            )
    groups = {p["group"]["name"]: p["group"] for p in pools if p["group"]}
    for name, group in groups.items():
        members = " + ".join(group["pools"])
        click.echo(f"{name} in flight ({members} together): {group['in_flight']} of {group['limit']}")


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
        type=NearChoice(["all", *RECORD_KINDS], "kind"),
        default="all",
        show_default=True,
        help="Only Crossref works, Zenodo records or DataCite records.",
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


class ProgressBar:
    """A rich progress bar on stderr, shown only on a terminal and never with ``--json``."""

    def __init__(self, enabled: bool, description: str, total: int | None = None) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self.description = description
        self.total = total
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> ProgressBar:
        if self.enabled:
            from rich.console import Console  # rich only where a terminal shows it (syncd.lazy.LAZY)
            from rich.progress import Progress

            self._progress = Progress(console=Console(stderr=True), transient=True)
            self._progress.start()
            self._task = self._progress.add_task(self.description, total=self.total)
        return self

    def advance(self, *_: object) -> None:
        """One step done."""
        if self._progress is not None:
            self._progress.advance(self._task)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()


def kind_filter(value: str) -> str | None:
    """The stored kind a ``--kind`` choice selects (None for ``all``)."""
    return RECORD_KINDS.get(value)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters but tab and line feed: C0 (ESC of a terminal escape included), DEL and C1."""
_FORMULA_START = ("=", "+", "-", "@")
"""What a spreadsheet reads as the start of a formula (OWASP, CSV injection, CWE-1236)."""


def text_cell(value: object) -> str:
    """One cell as text for people: None empty, booleans ``true``/``false``, control characters removed.

    A title deposited with terminal escape bytes (ESC ``[2J``) never reaches the terminal as an escape.
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return _CONTROL.sub("", str(value))


def spreadsheet_cell(value: object) -> str:
    """One CSV/TSV cell: :func:`text_cell`, and a text starting as a formula made inert.

    A text whose first character (after blanks, tabs and carriage returns) is ``=``, ``+``, ``-`` or ``@``
    gets a leading ``'`` (OWASP's advice for CSV injection, CWE-1236), so a title deposited as
    ``=HYPERLINK(...)`` is shown, never run, by the spreadsheet a lab opens the file in. Numbers, and
    a lone ``-`` (a placeholder), are left as they are.
    """
    text = text_cell(value)
    start = text.lstrip(" \t\r\n")
    if isinstance(value, str) and start.startswith(_FORMULA_START) and len(start) > 1:
        return "'" + text
    return text


def _cell(value: object) -> str:
    """One TSV cell: :func:`spreadsheet_cell`, tabs and line breaks turned into spaces (one row per line)."""
    return re.sub(r"[\t\r\n]+", " ", spreadsheet_cell(value))


def print_rows(rows: list[dict[str, Any]], columns: list[str], title: str | None = None) -> None:
    """Print ``columns`` of ``rows`` in the :func:`output_format`.

    ``table``: a rich table (``title`` above it; cells as plain text, never rich markup, control
    characters removed: :func:`text_cell`); ``tsv``: a header line then one line per row, cells
    tab-separated, nothing cut or wrapped; ``csv``: the same as CSV (RFC 4180 quoting); both with
    cells a spreadsheet cannot run (:func:`spreadsheet_cell`); ``json``: the rows' ``columns`` as a
    JSON list, values as they are.
    """
    fmt = output_format()
    if fmt == "tsv":
        for line in [columns, *([row.get(c) for c in columns] for row in rows)]:
            click.echo("\t".join(_cell(v) for v in line))
        return
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[spreadsheet_cell(row.get(c)) for c in columns] for row in rows])
        click.echo(out.getvalue(), nl=False)
        return
    if fmt == "json":
        picked = [{c: row.get(c) for c in columns} for row in rows]
        click.echo(json.dumps(picked, indent=2, ensure_ascii=False))
        return
    from rich.console import Console  # rich only for a table on a terminal (syncd.lazy.LAZY)
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title)
    for i, col in enumerate(columns):
        table.add_column(col, overflow="fold", no_wrap=i == 0)
    for row in rows:
        table.add_row(*(Text(text_cell(row.get(c))) for c in columns))
    if not rows:
        table.add_row("(none)", *[""] * (len(columns) - 1))
    Console().print(table)


def emit(data: object, as_json: bool, human: Callable[[], None]) -> None:
    """Print ``data`` as JSON with ``--json``, else call ``human`` to print it for people."""
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        human()
