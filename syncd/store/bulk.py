"""Bulk writes of many entries in one transaction (``syncd cache import``).

:func:`put_many` takes a batch of :class:`~syncd.store.repo.EntryContent` (each with the time it counts
as validated at) and, in ONE write transaction of the store:

* reads what the store holds for the batch's keys (one ``SELECT ... IN`` per 500 keys);
* inserts the entries it does not hold with ``executemany`` (``entries`` then ``validations``; on
  SQLite the search index of the batch is written by one ``INSERT ... SELECT`` with the insert trigger
  paused, :func:`syncd.store.search.paused_index`, or by the trigger on a store before migration 0014;
  on PostgreSQL it is the generated ``search_tsv`` column), bodies through
  :meth:`Store.encode_body <syncd.store.repo.Store.encode_body>` (the store's one body encoder)
  unless the caller already gave them in stored form;
* leaves alone the held entries the caller's ``keep`` says are as new or newer (``skipped``);
* for a held ``ok`` entry with the same content hash, does what :meth:`Store.put_content
  <syncd.store.repo.Store.put_content>` does for an unchanged answer (bumps the ``validations`` row,
  refreshes ``upstream_version``), with ``executemany``;
* writes the reference index rows and the list lines of the new entries (:mod:`syncd.store.references`,
  :mod:`syncd.store.lines`);
* then lets the store train its first body dictionary when due (:meth:`Store.train_dictionary_when_due
  <syncd.store.repo.Store.train_dictionary_when_due>`), as ``put_content`` does;
* hands back every other item (a different body, a non-``ok`` entry, a second copy of a key in the
  batch, a kind whose arrival the store records) as ``deferred``: the caller stores each with
  ``Store.put_content`` after the batch, so a replaced body goes through the one place that keeps
  the previous body, applies the shrink guard and records the change.

Precondition on new entries: their body is complete (``guard.missing`` is empty); the caller checks it
on the object it parsed (the importer does) so the body is not parsed again here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from sqlalchemy import Connection, bindparam, select, update

from syncd.store import lines, search
from syncd.store.dialect import is_postgresql, postgresql_insert
from syncd.store.models import Entry, Validation
from syncd.store.references import INSERT_SQLITE, reference_rows, write_many
from syncd.store.repo import EntryContent, Store

__all__ = ["BulkItem", "BulkResult", "Held", "put_many"]

_KEYS_PER_SELECT = 500
"""Keys per ``SELECT ... IN`` (SQLite's bound-parameter limit is far above; plans stay small)."""


class Held(NamedTuple):
    """What the store holds for one key: the columns the import decisions read."""

    id: int
    status: str
    content_hash: str | None
    upstream_version: str | None


class BulkItem(NamedTuple):
    """One entry to store.

    Its content, the time it counts as fetched and validated at (epoch seconds), and optionally its
    body already in stored form (:meth:`Store.encode_body`; None: encoded by :func:`put_many`).
    """

    content: EntryContent
    when: float
    stored_body: bytes | str | None = None


@dataclass
class BulkResult:
    """What :func:`put_many` did.

    ``new`` inserted, ``unchanged`` bumped, ``skipped`` (the store holds as new or newer), and the
    ``deferred`` items the caller stores one by one with ``put_content``.
    """

    new: int = 0
    unchanged: int = 0
    skipped: int = 0
    deferred: list[BulkItem] = field(default_factory=list)


_SQLITE_VALIDATION = (
    "INSERT INTO validations (entry_id, validated_at, etag, last_modified, checks, changes, volatile, "
    "last_error, last_error_at) VALUES (?,?,?,?,1,1,?,NULL,NULL)"
)
_BUMP = (
    update(Validation)
    .where(Validation.entry_id == bindparam("b_id"))
    .values(
        validated_at=bindparam("b_at"),
        checks=Validation.checks + 1,
        last_error=None,
        last_error_at=None,
    )
)
_BUMP_VOLATILE = _BUMP.values(volatile=bindparam("b_volatile"))
_VERSION = update(Entry).where(Entry.id == bindparam("b_id")).values(upstream_version=bindparam("b_version"))


def _indexable(value: str | None) -> str | None:
    """A title or search text as the store keeps it: NUL dropped (as :meth:`Store.put_content` does)."""
    return value.replace("\x00", "") if value else value


def held(conn: Connection, kind: str, keys: Sequence[str]) -> dict[str, Held]:
    """What the store holds of ``kind`` for ``keys``: key -> :class:`Held` (absent keys left out)."""
    out: dict[str, Held] = {}
    for i in range(0, len(keys), _KEYS_PER_SELECT):
        chunk = list(keys[i : i + _KEYS_PER_SELECT])
        rows = conn.execute(
            select(Entry.key, Entry.id, Entry.status, Entry.content_hash, Entry.upstream_version).where(
                Entry.kind == kind, Entry.key.in_(chunk)
            )
        )
        for key, *rest in rows:
            out[key] = Held(*rest)
    return out


_ENTRY_COLUMNS = (
    "kind", "key", "status", "body", "content_hash", "upstream_version", "doi", "concept_key", "title",
    "search_text", "fetched_at", "created_at",
)  # fmt: skip
"""The ``entries`` columns a bulk insert writes, in the order of :func:`_entry_row`."""

_SQLITE_ENTRY = f"INSERT INTO entries (id,{','.join(_ENTRY_COLUMNS)}) VALUES (?{',?' * len(_ENTRY_COLUMNS)})"


def _entry_row(store: Store, conn: Connection, item: BulkItem) -> tuple[Any, ...]:
    """The :data:`_ENTRY_COLUMNS` values of ``item``: body in stored form, title and text indexable."""
    c = item.content
    body = item.stored_body if item.stored_body is not None else store.encode_body(c.body, conn, bulk=True)
    return (
        c.kind, c.key, c.status, body, c.content_hash, c.upstream_version, c.doi, c.concept_key,
        _indexable(c.title), _indexable(c.search_text), item.when, item.when,
    )  # fmt: skip


BULK_CACHE_KIB = 65_536
"""SQLite page cache of a bulk-writing connection (KiB; the default is 2,000): the reference index's
``cited_doi`` B-tree takes random inserts, which a larger cache keeps in memory (-20% writer time)."""


def _insert_sqlite(store: Store, conn: Connection, items: Sequence[BulkItem]) -> list[BulkItem]:
    """SQLite: insert ``items`` (none held, all ``ok``, one kind) under the write lock.

    Ids continue after the largest; the index rows come by one statement when the store can pause
    its trigger (:func:`syncd.store.search.can_pause`).
    """
    cur = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
    try:
        cur.execute(f"PRAGMA cache_size=-{BULK_CACHE_KIB}")
        first = int(cur.execute("SELECT COALESCE(MAX(id), 0) FROM entries").fetchone()[0]) + 1
        rows = []
        validations = []
        for n, item in enumerate(items):
            rows.append((first + n, *_entry_row(store, conn, item)))
            c = item.content
            validations.append((first + n, item.when, c.etag, c.last_modified, c.volatile))
        if search.can_pause(conn):
            code = search.kind_codes(conn).get(items[0].content.kind, 0)
            with search.paused_index(cur, code, first, first + len(rows) - 1):
                cur.executemany(_SQLITE_ENTRY, rows)
        else:
            cur.executemany(_SQLITE_ENTRY, rows)
        cur.executemany(_SQLITE_VALIDATION, validations)
        pairs = [(first + n, item.content.cites) for n, item in enumerate(items) if item.content.cites]
        cur.executemany(INSERT_SQLITE, reference_rows(pairs))
        cur.executemany(
            lines.INSERT_SQLITE,
            [
                (first + n, item.content.summary)
                for n, item in enumerate(items)
                if item.content.summary is not None
            ],
        )
    finally:
        cur.close()
    return []


def _insert_postgresql(store: Store, conn: Connection, items: Sequence[BulkItem]) -> list[BulkItem]:
    """PostgreSQL: insert ``items``; a key another process stored meanwhile is returned (deferred)."""
    stmt = (
        postgresql_insert(Entry.__table__)
        .on_conflict_do_nothing()
        .returning(Entry.__table__.c.id, Entry.__table__.c.key, sort_by_parameter_order=True)
    )
    values = [dict(zip(_ENTRY_COLUMNS, _entry_row(store, conn, item), strict=True)) for item in items]
    rows = conn.execute(stmt, values).all()
    ids = {key: entry_id for entry_id, key in rows}
    validations = [
        {
            "entry_id": ids[item.content.key],
            "validated_at": item.when,
            "etag": item.content.etag,
            "last_modified": item.content.last_modified,
            "checks": 1,
            "changes": 1,
            "volatile": item.content.volatile,
            "last_error": None,
            "last_error_at": None,
        }
        for item in items
        if item.content.key in ids
    ]
    if validations:
        conn.execute(Validation.__table__.insert(), validations)
    write_many(
        conn,
        [(ids[i.content.key], i.content.cites) for i in items if i.content.key in ids and i.content.cites],
    )
    lines.write_many(conn, [(ids[i.content.key], i.content.summary) for i in items if i.content.key in ids])
    return [item for item in items if item.content.key not in ids]


def put_many(
    store: Store,
    items: Sequence[BulkItem],
    keep: Callable[[Held, EntryContent], bool],
) -> BulkResult:
    """Store the batch ``items`` of one kind in one write transaction (see the module docstring).

    Args:
        store: the store written.
        items: entries of one kind, in input order.
        keep: ``keep(held, content)`` is True when what the store holds is as new or newer than
            ``content`` (the item is then skipped, nothing written).

    Returns:
        The counts and the deferred items (store them with ``Store.put_content``, in order).

    Raises:
        StoreError: the database failed (nothing of the batch is written).
    """
    result = BulkResult()
    if not items:
        return result
    kind = items[0].content.kind
    if any(item.content.kind != kind for item in items):
        raise ValueError("put_many takes entries of one kind")
    with store.write() as conn:
        stored = held(conn, kind, list(dict.fromkeys(item.content.key for item in items)))
        fresh: list[BulkItem] = []
        seen: set[str] = set()
        bumps: list[dict[str, Any]] = []
        bumps_volatile: list[dict[str, Any]] = []
        versions: list[dict[str, Any]] = []
        for item in items:
            c = item.content
            old = stored.get(c.key)
            if c.key in seen:
                result.deferred.append(item)  # a second copy in the batch: after the first is stored
            elif old is None:
                seen.add(c.key)
                if c.rules.bulk and c.status == "ok":
                    fresh.append(item)
                else:
                    result.deferred.append(item)
            elif keep(old, c):
                result.skipped += 1
            elif (
                old.status == c.status == "ok"
                and old.content_hash == c.content_hash
                and not (c.etag or c.last_modified)
            ):
                seen.add(c.key)
                result.unchanged += 1
                bump = {"b_id": old.id, "b_at": item.when}
                if c.volatile is not None:
                    bumps_volatile.append({**bump, "b_volatile": c.volatile})
                else:
                    bumps.append(bump)
                if c.upstream_version != old.upstream_version:
                    versions.append({"b_id": old.id, "b_version": c.upstream_version})
            else:
                seen.add(c.key)
                result.deferred.append(item)
        if fresh:
            insert = _insert_postgresql if is_postgresql(conn) else _insert_sqlite
            raced = insert(store, conn, fresh)
            result.new += len(fresh) - len(raced)
            result.deferred.extend(raced)
        for statement, params in ((_BUMP, bumps), (_BUMP_VOLATILE, bumps_volatile), (_VERSION, versions)):
            if params:
                conn.execute(statement, params)
    store.train_dictionary_when_due()  # the store's first body dictionary, once enough bodies are in
    return result
