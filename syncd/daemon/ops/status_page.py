"""``/status``: one small HTML page for a person, rendered on the server (no JavaScript, no assets).

The same facts as ``/healthz`` and ``/metrics`` (:class:`~syncd.daemon.ops.health.Health`,
:class:`~syncd.daemon.ops.facts.Facts`, the last sweep of
:class:`~syncd.daemon.ops.activity.Activity`), the watch lists with their last successful walk,
the last :data:`RECENT` changes and alerts of the change feed. Every value from the store (titles,
DOIs, labels) is HTML-escaped; the page reloads itself every :data:`REFRESH_S` seconds
(``<meta http-equiv="refresh">``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape

from syncd import __version__
from syncd.daemon.ops.activity import SweepRecord
from syncd.daemon.ops.facts import Facts
from syncd.daemon.ops.health import Health
from syncd.road.policy import iso
from syncd.store.changes import StoredChange

__all__ = ["RECENT", "REFRESH_S", "render_status"]

RECENT = 20
"""Changes and alerts listed."""
REFRESH_S = 30
"""Seconds between two reloads of the page by the browser."""

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:80em}
h1{font-size:1.4em;margin:0 0 .3em} h2{font-size:1.1em;margin:1.4em 0 .4em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.3em 0} th,td{padding:.15em .7em;text-align:left;vertical-align:top}
th{background:#f0f0f0} tr:nth-child(even) td{background:#fafafa} td.n{text-align:right}
.ok{color:#186a3b;font-weight:bold} .bad{color:#a00;font-weight:bold} .muted{color:#777}
"""


def _when(ts: float | None) -> str:
    return iso(ts) if ts else "never"


def _table(
    headers: Sequence[str], rows: Iterable[Sequence[object]], numeric: frozenset[int] = frozenset()
) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="n">{escape(str(v))}</td>' if i in numeric else f"<td>{escape(str(v))}</td>"
            for i, v in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    if not body:
        body.append(f'<tr><td colspan="{len(headers)}" class="muted">none</td></tr>')
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _flag(ok: bool, good: str = "yes", bad: str = "no") -> str:
    return f'<span class="ok">{good}</span>' if ok else f'<span class="bad">{bad}</span>'


def _health(h: Health) -> str:
    rows = [
        ("store readable", _flag(h.store_readable) + (f" ({escape(h.read_error)})" if h.read_error else "")),
        (
            "store writable",
            _flag(h.store_writable) + (f" ({escape(h.write_problem)})" if h.write_problem else ""),
        ),
        ("scheduler alive", _flag(h.scheduler_alive)),
        ("role", escape(h.role)),
        (
            "last sweep",
            "none yet"
            if h.last_sweep_age_s is None
            else f"{h.last_sweep_age_s:g} s ago ({escape(h.last_sweep_outcome or '')})",
        ),
        ("sweep overdue", _flag(not h.sweep_overdue, "no", "yes")),
        ("uptime", f"{h.uptime_s:g} s"),
    ]
    held = h.retractions_held_back
    rows.append(
        (
            "Retraction Watch data",
            '<span class="ok">current</span>'
            if held is None
            else f'<span class="bad">held back</span>: the last file read was refused '
            f"({escape(str(held.get('refusal')))}: {escape(str(held.get('detail')))}); "
            "verdicts rest on the version held before it",
        )
    )
    cells = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f"<table>{cells}</table>"


def _sweep(record: SweepRecord | None) -> str:
    if record is None:
        return '<p class="muted">No sweep has run since the daemon started.</p>'
    r = record.report
    failures = ", ".join(f"{k}: {n}" for k, n in sorted(r.failures.items())) or "none"
    return _table(
        [
            "ended",
            "outcome",
            "checked",
            "unchanged",
            "changed",
            "failed",
            "requests",
            "seconds",
            "stopped",
            "failures",
        ],
        [
            (
                _when(record.finished_at),
                record.outcome,
                r.checked,
                r.unchanged,
                r.changed,
                r.failed,
                r.requests,
                f"{r.elapsed_s:g}",
                r.stopped or "-",
                failures,
            )
        ],
        frozenset({2, 3, 4, 5, 6, 7}),
    )


def _changes(changes: Sequence[StoredChange]) -> str:
    rows = [
        (
            c.id,
            _when(c.detected_at),
            ", ".join(c.types),
            c.kind,
            c.doi or c.key,
            str(c.summary.get("title") or "")[:160],
        )
        for c in changes
    ]
    return _table(["id", "detected", "types", "kind", "DOI / key", "title"], rows, frozenset({0}))


def render_status(
    facts: Facts,
    health: Health,
    last_sweep: SweepRecord | None,
    changes: Sequence[StoredChange],
    alerts: Sequence[StoredChange],
) -> str:
    """The whole page (UTF-8 text of an HTML5 document)."""
    state = _flag(health.ok, "healthy", "unhealthy")
    entries = _table(
        ["kind", "status", "entries", "fresh", "stale"],
        [(r["kind"], r["status"], r["entries"], r["fresh"], r["stale"]) for r in facts.entries],
        frozenset({2, 3, 4}),
    )
    pools = _table(
        ["pool", "requests", "429s", "tokens", "rate/s", "in flight", "blocked (s)", "offline", "announced"],
        [
            (
                p.pool,
                p.requests_total,
                p.rate_limited_total,
                f"{p.tokens:.2f} / {p.burst:g}",
                f"{p.per_s:g}",
                f"{p.in_flight} / {p.in_flight_limit}",
                f"{p.blocked_for_s:g}" + (f" ({p.block_reason})" if p.block_reason else ""),
                "yes" if p.offline else "no",
                "-"
                if p.announced_limit is None
                else f"{p.announced_limit} per {p.announced_interval_s or 0:g} s"
                + (f", {p.announced_in_flight} in flight" if p.announced_in_flight is not None else "")
                + (f" ({p.api_pool})" if p.api_pool else ""),
            )
            for p in facts.pools
        ],
        frozenset({1, 2}),
    )
    watches = _table(
        ["id", "kind", "watch", "label", "status", "seen / total", "last success"],
        [
            (
                w.id,
                w.kind,
                w.watch,
                w.label or "",
                w.status,
                "" if w.seen is None else f"{w.seen} / {w.total if w.total is not None else '?'}",
                _when(w.last_success_at),
            )
            for w in facts.watches
        ],
        frozenset({0}),
    )
    feed = ", ".join(f"{t}: {n}" for t, n in facts.changes_by_type.items()) or "empty"
    size = f"{facts.database_size_bytes:,} bytes" if facts.database_size_bytes is not None else "n/a"
    pending = "n/a" if facts.alerts_pending is None else str(facts.alerts_pending)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="refresh" content="{REFRESH_S}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>syncd status</title><style>{STYLE}</style></head>
<body>
<h1>syncd {escape(__version__)}: {state}</h1>
<p class="muted">As of {_when(facts.now)}. JSON: <a href="healthz">/healthz</a>, Prometheus:
<a href="metrics">/metrics</a>.</p>
<h2>Health</h2>{_health(health)}
<h2>Store</h2><p>Database size: {size}.</p>{entries}
<h2>Request budget</h2>{pools}
<h2>Last sweep</h2>{_sweep(last_sweep)}
<h2>Watch lists</h2>{watches}
<h2>Last {RECENT} changes</h2>
<p>In the feed: {escape(feed)}; newest id {facts.changes_latest_id}.</p>{_changes(changes)}
<h2>Last {RECENT} alerts</h2><p>Not yet alerted: {pending}.</p>{_changes(alerts)}
</body></html>
"""
