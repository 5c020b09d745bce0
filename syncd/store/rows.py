"""The store's row types and the prepared reads of entries (shared by the entries and search parts).

:class:`StoredEntry` is one entry joined with its ``validations`` row as callers see it (body decoded);
:class:`EntryContent` what a caller hands :meth:`syncd.store.repo.Store.put_content`. The statements
are built once (the warm path runs them on every tool call).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, case, select

from syncd.store.codec import decode_body
from syncd.store.models import Entry, EntryLine, Validation
from syncd.store.rules import PLAIN, StoreRules

__all__ = [
    "BY_IDS",
    "BY_IDS_OF_KIND",
    "GET",
    "GET_BY_ID",
    "ID_OF",
    "INSERT_VALIDATION",
    "LINES_BY_IDS",
    "LINES_BY_IDS_OF_KIND",
    "LOCKED",
    "EntryContent",
    "StoredEntry",
    "indexable",
    "row_to_entry",
    "select_entries",
]


@dataclass(frozen=True)
class StoredEntry:
    """One stored entry joined with its freshness row (times in epoch seconds, UTC)."""

    id: int
    kind: str
    key: str
    status: str
    body: str | None
    content_hash: str | None
    upstream_version: str | None
    doi: str | None
    concept_key: str | None
    title: str | None
    fetched_at: float
    validated_at: float
    etag: str | None
    last_modified: str | None
    checks: int
    changes: int
    last_error: str | None
    last_error_at: float | None
    volatile: str | None
    summary: str | None = None
    """The entry's list line (``entry_lines.line``, migration 0015), read only where lines are rendered
    (:data:`LINES_BY_IDS`, :meth:`~syncd.store.entries.EntryStore.with_lines`); None elsewhere and for an
    entry stored without one."""


@dataclass(frozen=True)
class EntryContent:
    """What upstream answered for one object, ready to store.

    ``body`` is the upstream JSON text exactly as received (for ``gone``: the tombstone JSON;
    ``None`` for ``not_found``). ``content_hash`` is the hash of the normalized content with the
    volatile parts left out; it alone decides whether the stored body changes. ``rules`` are the
    kind's store rules (hollow-body guard, change summary, search band), put on by the kind that built
    the content (:attr:`syncd.kinds.Kind.rules`); the store itself knows no kind.
    """

    kind: str
    key: str
    status: str
    body: str | None
    content_hash: str | None
    upstream_version: str | None = None
    doi: str | None = None
    concept_key: str | None = None
    title: str | None = None
    search_text: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    volatile: str | None = None
    rules: StoreRules = field(default=PLAIN, compare=False, repr=False)
    cites: tuple[str, ...] | None = field(default=None, compare=False, repr=False)
    """The DOIs the body cites (lower-cased) for the reference index (:mod:`syncd.store.references`);
    None: the kind keeps no reference list (the index is left as it is)."""
    summary: str | None = field(default=None, compare=False, repr=False)
    """The list line of the body (the fields a list line shows, as the kind writes them, e.g.
    :func:`syncd.crossref.views_lines.list_line`), stored beside it (``entry_lines``,
    :mod:`syncd.store.lines`); None: none (readers parse the body)."""


_COLUMNS = (
    Entry.id,
    Entry.kind,
    Entry.key,
    Entry.status,
    Entry.body,
    Entry.content_hash,
    Entry.upstream_version,
    Entry.doi,
    Entry.concept_key,
    Entry.title,
    Entry.fetched_at,
    Validation.validated_at,
    Validation.etag,
    Validation.last_modified,
    Validation.checks,
    Validation.changes,
    Validation.last_error,
    Validation.last_error_at,
    Validation.volatile,
)


def row_to_entry(row: Any) -> StoredEntry:
    """The entry of a row of :data:`_COLUMNS`, its body decoded (:func:`syncd.store.codec.decode_body`)."""
    return StoredEntry(**{**row._mapping, "body": decode_body(row.body)})


def select_entries() -> Any:
    """``SELECT`` of :data:`_COLUMNS`: entries joined with their validations (add ``.where``)."""
    return select(*_COLUMNS).join(Validation, Validation.entry_id == Entry.id)


GET = select_entries().where(Entry.kind == bindparam("kind"), Entry.key == bindparam("key"))
GET_BY_ID = select_entries().where(Entry.id == bindparam("entry_id"))
LOCKED = (
    select_entries()
    .where(Entry.kind == bindparam("kind"), Entry.key == bindparam("key"))
    .with_for_update(of=Entry)
)
ID_OF = select(Entry.id).where(Entry.kind == bindparam("kind"), Entry.key == bindparam("key"))
INSERT_VALIDATION = Validation.__table__.insert()
"""Point reads built once (the warm path runs them on every tool call)."""
BY_IDS = select_entries().where(Entry.id.in_(bindparam("ids", expanding=True)))
BY_IDS_OF_KIND = BY_IDS.where(Entry.kind == bindparam("kind"))
"""A search page's entries (and of one kind), built once (the offline search runs them on every call)."""

_LINE_COLUMNS = tuple(
    case((EntryLine.line.is_(None), Entry.body), else_=None).label("body") if c is Entry.body else c
    for c in _COLUMNS
)
LINES_BY_IDS = (
    select(*_LINE_COLUMNS, EntryLine.line.label("summary"))
    .join(Validation, Validation.entry_id == Entry.id)
    .outerjoin(EntryLine, EntryLine.entry_id == Entry.id)
    .where(Entry.id.in_(bindparam("ids", expanding=True)))
)
LINES_BY_IDS_OF_KIND = LINES_BY_IDS.where(Entry.kind == bindparam("kind"))
"""A search page's entries with their list lines: the body read (and decoded) only when there is none."""


def indexable(value: str | None) -> str | None:
    """A title or search text as stored: NUL characters dropped (PostgreSQL text cannot hold them)."""
    return value.replace("\x00", "") if value else value
