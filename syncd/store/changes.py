"""Reading and pruning the change feed (``changes``; rows are written by :mod:`syncd.store.changelog`).

A change is *watched* when its entry is on the DOI watch list (``watches`` of kind ``doi``, spec
``{"doi": ...}``): its DOI is watched, or, for an entry of a series (a Zenodo record), the concept
DOI of its series (``<series prefix><series>``, the prefixes handed in by the caller, e.g.
``10.5281/zenodo.``) or the DOI of another stored entry of the series is. Query
and community watches are not matched (the store does not keep which walk brought an entry).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import JSON, ColumnElement, and_, cast, delete, func, literal, or_, select, type_coerce

from syncd.store.models import Change, Entry, Watch
from syncd.store.repo import Store

__all__ = [
    "StoredChange",
    "changes_of_entry",
    "latest_change_id",
    "list_changes",
    "prune_changes",
    "watched_clause",
    "watched_ids",
]

"""Zenodo's DOIs: ``10.5281/zenodo.<recid>`` (a concept DOI names the concept record id)."""


@dataclass(frozen=True)
class StoredChange:
    """One row of the change feed (``detected_at`` epoch seconds; ``summary`` decoded)."""

    id: int
    entry_id: int
    kind: str
    key: str
    doi: str | None
    series: str | None
    detected_at: float
    types: tuple[str, ...]
    summary: dict[str, Any]


def _change(row: Any) -> StoredChange:
    try:
        summary = json.loads(row.summary)
    except ValueError:
        summary = {}
    return StoredChange(
        id=row.id,
        entry_id=row.entry_id,
        kind=row.kind,
        key=row.key,
        doi=row.doi,
        series=row.series,
        detected_at=row.detected_at,
        types=tuple(t for t in row.types.split(",") if t),
        summary=summary if isinstance(summary, dict) else {},
    )


def watched_clause(dialect: str, series_prefixes: Sequence[str] = ()) -> ColumnElement[bool]:
    """SQL condition: the change's entry is on the DOI watch list (see the module docstring).

    ``dialect``: the engine's dialect name; ``series_prefixes``: the DOI prefixes that make a series
    id a concept DOI (``10.5281/zenodo.`` + concept recid). SQLite reads the spec with ``json_extract``
    (a ``CAST`` to JSON would give the text numeric affinity); PostgreSQL casts the text to ``json``
    for ``->>``.
    """
    spec = type_coerce(Watch.spec, JSON) if dialect == "sqlite" else cast(Watch.spec, JSON)
    watched_dois = select(spec["doi"].as_string()).where(Watch.kind == "doi")
    series_of_watched = select(Entry.concept_key).where(
        Entry.concept_key.is_not(None), Entry.doi.in_(watched_dois)
    )
    concept_dois = [(literal(prefix) + Change.series).in_(watched_dois) for prefix in series_prefixes]
    return or_(
        Change.doi.in_(watched_dois),
        and_(Change.series.is_not(None), or_(*concept_dois, Change.series.in_(series_of_watched))),
    )


def _types_clause(types: Sequence[str]) -> ColumnElement[bool]:
    """SQL condition: the change has any of ``types`` (``types`` is comma-separated in the row)."""
    padded = literal(",") + Change.types + literal(",")
    return or_(*(padded.like(f"%,{_escaped(t)},%", escape="\\") for t in types))


def _escaped(value: str) -> str:
    """``value`` with the LIKE wildcards (``%``, ``_``) and the escape character taken literally."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def list_changes(
    store: Store,
    *,
    since: float | None = None,
    kinds: Sequence[str] = (),
    types: Sequence[str] = (),
    watched_only: bool = False,
    series_prefixes: Sequence[str] = (),
    before_id: int | None = None,
    after_id: int | None = None,
    limit: int = 50,
) -> list[StoredChange]:
    """Changes newest first (or oldest first from ``after_id``), filtered.

    Args:
        store: the store.
        since: only changes detected at or after this time (epoch seconds).
        kinds: only these entry kinds (empty: all).
        types: only changes with any of these types (empty: all).
        watched_only: only changes of watched entries (see the module docstring).
        series_prefixes: DOI prefixes that make a series id a concept DOI (see :func:`watched_clause`).
        before_id: keyset paging, newest first: only ids below this one.
        after_id: only ids above this one, oldest first (the daemon's alert cursor).
        limit: most rows returned.
    """
    query = select(Change)
    if since is not None:
        query = query.where(Change.detected_at >= since)
    if kinds:
        query = query.where(Change.kind.in_(list(kinds)))
    if types:
        query = query.where(_types_clause(types))
    if watched_only:
        query = query.where(watched_clause(store.engine.dialect.name, series_prefixes))
    if before_id is not None:
        query = query.where(Change.id < before_id)
    if after_id is not None:
        query = query.where(Change.id > after_id).order_by(Change.id)
    else:
        query = query.order_by(Change.id.desc())
    with store.read() as conn:
        return [_change(r) for r in conn.execute(query.limit(limit))]


def changes_of_entry(store: Store, entry_id: int, types: Sequence[str] = ()) -> list[StoredChange]:
    """The changes recorded for entry ``entry_id`` (of any of ``types`` when given), oldest first."""
    query = select(Change).where(Change.entry_id == entry_id)
    if types:
        query = query.where(_types_clause(types))
    with store.read() as conn:
        return [_change(r) for r in conn.execute(query.order_by(Change.id))]


def latest_change_id(store: Store) -> int:
    """The id of the newest change row (0 when the feed is empty): one index lookup."""
    with store.read() as conn:
        return int(conn.execute(select(func.max(Change.id))).scalar_one() or 0)


def prune_changes(store: Store, keep_s: float, now: float | None = None) -> int:
    """Drop changes detected more than ``keep_s`` seconds before ``now``; returns how many went."""
    now = time.time() if now is None else now
    with store.write() as conn:
        result = conn.execute(delete(Change).where(Change.detected_at < now - keep_s))
    return int(result.rowcount or 0)


def watched_ids(store: Store, ids: Sequence[int], series_prefixes: Sequence[str] = ()) -> set[int]:
    """Which of the change ids ``ids`` belong to watched entries (see :func:`watched_clause`)."""
    if not ids:
        return set()
    watched = watched_clause(store.engine.dialect.name, series_prefixes)
    query = select(Change.id).where(Change.id.in_(list(ids)), watched)
    with store.read() as conn:
        return {r[0] for r in conn.execute(query)}
