"""The reference index: which stored entries cite a DOI (``work_references``; no kind named here).

Each write of an entry's body hands the DOIs its reference list cites
(:attr:`~syncd.store.repo.EntryContent.cites`, from the kind that built the content); the store
replaces the entry's rows in the same transaction (:func:`write_cites`), so the index is in step with
every store, revalidation, replacement and import, and goes with the entry. Reads: :func:`cited_by`,
:func:`citing_among`, :func:`coverage`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, delete, func, insert, select

from syncd.store.models import Entry, WorkReference

__all__ = [
    "CHUNK",
    "INSERT_SQLITE",
    "Citing",
    "cited_by",
    "cites_of",
    "citing_among",
    "coverage",
    "reference_rows",
    "write_cites",
    "write_many",
]

CHUNK = 500
"""Rows or keys per statement."""


@dataclass(frozen=True)
class Citing:
    """A stored entry whose reference list cites ``cited``: its ``kind``, ``key``, ``doi``, ``title``."""

    cited: str
    entry_id: int
    kind: str
    key: str
    doi: str | None
    title: str | None


def write_cites(conn: Connection, entry_id: int, cites: Iterable[str]) -> None:
    """Replace entry ``entry_id``'s rows with ``cites`` (lower-cased DOIs), in ``conn``'s transaction."""
    conn.execute(delete(WorkReference).where(WorkReference.entry_id == entry_id))
    rows = [{"entry_id": entry_id, "cited_doi": d} for d in dict.fromkeys(d.lower() for d in cites)]
    for i in range(0, len(rows), CHUNK):
        conn.execute(insert(WorkReference), rows[i : i + CHUNK])


def reference_rows(pairs: Iterable[tuple[int, Sequence[str]]]) -> list[tuple[int, str]]:
    """The ``(entry_id, cited_doi)`` rows of ``(entry_id, cites)`` pairs (lower-cased, each DOI once)."""
    return [(entry_id, d) for entry_id, cites in pairs for d in dict.fromkeys(c.lower() for c in cites)]


INSERT_SQLITE = "INSERT INTO work_references (entry_id, cited_doi) VALUES (?, ?)"
"""The driver statement of a row (SQLite bulk writes, :mod:`syncd.store.bulk`)."""


def write_many(conn: Connection, pairs: Iterable[tuple[int, Sequence[str]]]) -> None:
    """Rows of entries just inserted (none held before): ``(entry_id, cites)`` pairs, in ``conn``."""
    rows = [{"entry_id": entry_id, "cited_doi": d} for entry_id, d in reference_rows(pairs)]
    for i in range(0, len(rows), 5000):
        conn.execute(insert(WorkReference), rows[i : i + 5000])


def _citing(conn: Connection, dois: Sequence[str], limit: int | None) -> list[Citing]:
    out: list[Citing] = []
    for i in range(0, len(dois), CHUNK):
        query = (
            select(WorkReference.cited_doi, Entry.id, Entry.kind, Entry.key, Entry.doi, Entry.title)
            .join(Entry, Entry.id == WorkReference.entry_id)
            .where(WorkReference.cited_doi.in_(dois[i : i + CHUNK]), Entry.status == "ok")
            .order_by(WorkReference.cited_doi, Entry.key)
        )
        if limit is not None:
            query = query.limit(limit)
        out += [Citing(r[0], r[1], r[2], r[3], r[4], r[5]) for r in conn.execute(query)]
    return out


def cited_by(conn: Connection, doi: str, limit: int) -> tuple[list[Citing], int]:
    """The stored entries citing ``doi`` (at most ``limit``, by key) and how many there are in all."""
    key = doi.lower()
    total = conn.execute(
        select(func.count())
        .select_from(WorkReference)
        .join(Entry, Entry.id == WorkReference.entry_id)
        .where(WorkReference.cited_doi == key, Entry.status == "ok")
    ).scalar_one()
    return _citing(conn, [key], limit), int(total)


def citing_among(conn: Connection, cited: Sequence[str]) -> list[Citing]:
    """Every stored entry citing any of ``cited`` (lower-cased DOIs)."""
    return _citing(conn, sorted({d.lower() for d in cited}), None)


def cites_of(conn: Connection, entry_id: int) -> list[str]:
    """The DOIs entry ``entry_id`` cites, as indexed (sorted)."""
    rows = conn.execute(select(WorkReference.cited_doi).where(WorkReference.entry_id == entry_id))
    return sorted(r[0] for r in rows)


def coverage(conn: Connection) -> int:
    """How many stored entries have an indexed reference list (at least one DOI cited)."""
    return int(conn.execute(select(func.count(func.distinct(WorkReference.entry_id)))).scalar_one())
