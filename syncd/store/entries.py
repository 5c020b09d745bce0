"""The store's entries and their history: read entries, write new content, record revalidations.

Writes follow DESIGN.md's "nothing lost" rule: a body is replaced only by a newer valid body from
upstream (:meth:`EntryStore.put_content`); a revalidation that finds the same content writes the
``validations`` row only (:meth:`EntryStore.mark_validated`), so the entry row and its FTS index rows
stay untouched; an upstream failure is recorded beside the entry (:meth:`EntryStore.mark_error`) and
never touches the body. A replaced body is kept beside its entry (``previous_bodies``), as is a
suspicious one awaiting confirmation and a body a caller sets aside (:meth:`EntryStore.keep_body`).

Both backends (SQLite, PostgreSQL) run the same code. Concurrent writers of the same entry (two lab
workstations fetching one DOI) are serialized by a row lock (``SELECT ... FOR UPDATE``) and an
``INSERT ... ON CONFLICT DO NOTHING``, so neither fails on the unique ``(kind, key)`` constraint. The
store knows no kind: each kind's rules come on the :class:`EntryContent` (:mod:`syncd.store.rules`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import Connection, and_, delete, func, insert, or_, select, tuple_, update
from sqlalchemy.exc import SQLAlchemyError

from syncd.errors import MalformedResponse, StoreError
from syncd.store import guard
from syncd.store.changelog import record_arrival, record_replacement
from syncd.store.codec import decode_body
from syncd.store.dialect import insert_ignore, upsert
from syncd.store.lines import lines_of, write_line, write_many
from syncd.store.models import Concept, Entry, PreviousBody, Validation
from syncd.store.reach import empty_when_unreachable, unstored_when_unreachable
from syncd.store.references import write_cites
from syncd.store.rows import (
    GET,
    GET_BY_ID,
    ID_OF,
    INSERT_VALIDATION,
    LOCKED,
    EntryContent,
    StoredEntry,
    indexable,
    row_to_entry,
    select_entries,
)
from syncd.store.rules import Side
from syncd.store.session import StoreSession
from syncd.store.staleness import Staleness

__all__ = ["EntryStore"]


CONFIRM_CHUNK = 500
"""Entries one ``UPDATE`` of :meth:`EntryStore.mark_validated_many` names (bound parameters per statement)."""


def _confirmed(now: float) -> dict[str, Any]:
    """The ``validations`` values of a confirmation at ``now`` (epoch seconds): checked, no error."""
    return {
        "validated_at": now,
        "checks": Validation.checks + 1,
        "last_error": None,
        "last_error_at": None,
        **NO_BACKOFF,
    }


NO_BACKOFF: dict[str, Any] = {"failures": 0, "retry_at": None}
"""The ``validations`` values of an entry with no failure streak (a success, a manual refresh)."""

BACKOFF_BASE_S = 300.0
"""Seconds a sweep leaves an entry alone after its first failed revalidation, doubled per failure
(with the same reason) in a row: 600 s after the first, 1,200 s after the second, ... The daemon's
default sweep interval (``revalidate_interval_s``): a record upstream keeps answering malformed is
asked in sweeps 0, 2, 6, 14, ... instead of every one."""
BACKOFF_MAX_S = 86_400.0
"""The longest backoff (seconds): a broken record is still asked once a day."""
NO_BACKOFF_REASONS = frozenset({"rate_limited", "upstream_unavailable", "request_timeout"})
"""Failures that say nothing of the record (the budget, the service, the network): no backoff (the
sweep stops, and the pool's breaker spaces the next tries)."""


def backoff_s(failures: int) -> float:
    """Seconds a sweep waits after ``failures`` failed revalidations in a row (at least 1): bounded."""
    return min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2.0 ** max(1, failures))


class EntryStore(StoreSession):
    """Entries, their validations and the bodies kept beside them (previous, suspect, caller-kept)."""

    def _point_read(self, statement: Any, params: dict[str, Any]) -> StoredEntry | None:
        try:
            with self._point.connect() as conn:
                row = conn.execute(statement, params).first()
        except SQLAlchemyError as exc:
            raise StoreError(f"store read failed: {exc.__class__.__name__}: {exc}") from exc
        return row_to_entry(row) if row else None

    @empty_when_unreachable
    def get(self, kind: str, key: str) -> StoredEntry | None:
        """The entry of ``kind`` with ``key`` (a lowercased DOI or a Zenodo record id), or None."""
        return self._point_read(GET, {"kind": kind, "key": key})

    @empty_when_unreachable
    def get_by_id(self, entry_id: int) -> StoredEntry | None:
        """The entry with primary key ``entry_id``, or None."""
        return self._point_read(GET_BY_ID, {"entry_id": entry_id})

    def with_lines(self, entries: Sequence[StoredEntry]) -> list[StoredEntry]:
        """``entries`` (in order) with their stored list lines (``summary``), read in one statement per 500.

        For a caller that renders list lines of entries it already holds (``crossref_get_works`` items):
        an entry without a line is handed back as it is (its body is then read).

        Raises:
            StoreError: the store could not be read.
        """
        ids = [e.id for e in entries if e.summary is None]
        if not ids:
            return list(entries)
        with self.read() as conn:
            found = lines_of(conn, ids)
        return [replace(e, summary=found[e.id]) if e.id in found else e for e in entries]

    @empty_when_unreachable
    def find_by_doi(self, kind: str, doi_key: str) -> StoredEntry | None:
        """The entry of ``kind`` whose DOI (lowercased) is ``doi_key``; the newest record first."""
        with self.read() as conn:
            row = conn.execute(
                select_entries().where(Entry.kind == kind, Entry.doi == doi_key).order_by(Entry.id.desc())
            ).first()
        return row_to_entry(row) if row else None

    @empty_when_unreachable
    def concept_latest(self, concept_recid: str) -> tuple[str, float] | None:
        """Latest version record id of a Zenodo concept and when that was last seen, or None."""
        with self.read() as conn:
            row = conn.execute(
                select(Concept.latest_recid, Concept.validated_at).where(
                    Concept.concept_recid == concept_recid
                )
            ).first()
        return (row[0], row[1]) if row else None

    def newest(self, kind: str, limit: int, *, status: str = "ok") -> list[StoredEntry]:
        """The ``status`` entries of ``kind``, newest ``fetched_at`` first, at most ``limit``."""
        query = (
            select_entries()
            .where(Entry.kind == kind, Entry.status == status)
            .order_by(Entry.fetched_at.desc())
            .limit(limit)
        )
        with self.read() as conn:
            return [row_to_entry(r) for r in conn.execute(query)]

    def series_ids(self, kind: str, concept_key: str, *, besides: str, status: str = "ok") -> list[int]:
        """Ids of the ``status`` entries of ``kind`` in the series ``concept_key``, except key ``besides``.

        A series is the entries sharing one ``concept_key`` (e.g. the versions of one concept record).
        """
        with self.read() as conn:
            rows = conn.execute(
                select(Entry.id).where(
                    Entry.kind == kind,
                    Entry.concept_key == concept_key,
                    Entry.key != besides,
                    Entry.status == status,
                )
            )
            return [r[0] for r in rows]

    def stale(
        self,
        staleness: Staleness,
        limit: int,
        after: tuple[float, int] | None = None,
        *,
        now: float | None = None,
        backing_off: bool = False,
    ) -> list[StoredEntry]:
        """Entries past their lifetime at the bounds' moment, oldest ``validated_at`` first (then id).

        Args:
            staleness: the bounds of the policy's one staleness rule (:func:`syncd.road.policy.staleness`):
                per ``(kind, status)`` the lifetime's start, and the clock-skew bound after which an
                entry (validated "in the future" by a clock that ran ahead) is stale too; those last.
            limit: most entries returned.
            after: ``(validated_at, id)`` of the last entry of the previous page: this page starts
                after it (keyset paging, so a caller reads a long list a page at a time).
            now: the sweep's moment (epoch seconds; default the clock): an entry backing off
                (``retry_at`` after it, :meth:`mark_error`) is left out...
            backing_off: ... unless this is True (a manual refresh asks every stale entry).
        """
        if not staleness.before:
            return []
        query = select_entries().where(staleness.clause())
        if not backing_off:
            now = time.time() if now is None else now
            query = query.where(or_(Validation.retry_at.is_(None), Validation.retry_at <= now))
        if after is not None:
            query = query.where(tuple_(Validation.validated_at, Entry.id) > tuple_(*after))
        query = query.order_by(Validation.validated_at, Entry.id).limit(limit)
        with self.read() as conn:
            return [row_to_entry(r) for r in conn.execute(query)]

    def counts(self, staleness: Staleness) -> list[dict[str, Any]]:
        """Per ``(kind, status)``: number of entries and how many are stale under ``staleness``.

        ``staleness``: the policy's bounds (:func:`syncd.road.policy.staleness`); pairs it does not list
        count no stale entry.
        """
        result: list[dict[str, Any]] = []
        with self.read() as conn:
            rows = conn.execute(
                select(Entry.kind, Entry.status, func.count())
                .join(Validation, Validation.entry_id == Entry.id)
                .group_by(Entry.kind, Entry.status)
                .order_by(Entry.kind, Entry.status)
            ).all()
            for kind, status, count in rows:
                stale = 0
                if (kind, status) in staleness.before:
                    stale = conn.execute(
                        select(func.count())
                        .select_from(Entry)
                        .join(Validation, Validation.entry_id == Entry.id)
                        .where(
                            Entry.kind == kind, Entry.status == status, staleness.pair_clause(kind, status)
                        )
                    ).scalar_one()
                result.append(
                    {"kind": kind, "status": status, "entries": count, "stale": stale, "fresh": count - stale}
                )
        return result

    # --- writes ----------------------------------------------------------------------------------

    @unstored_when_unreachable
    def put_content(self, content: EntryContent, now: float | None = None) -> tuple[StoredEntry, bool]:
        """Store what upstream answered, in one transaction. Returns ``(entry, changed)``.

        When an entry with the same ``(kind, key)``, status and ``content_hash`` exists, only its
        validation row is bumped (``validated_at``, validators, ``checks``): the entry row, its body
        and its index rows are not rewritten and ``changed`` is False. Otherwise the body and its
        search columns are written together and ``changed`` is True.

        A ``not_found`` answer never replaces a stored ``ok`` body (index lag, BC-09): the entry keeps
        its body and gets ``last_error = "not_found"`` instead; ``changed`` is False.

        Nothing lost (:mod:`syncd.store.guard`): a record body lacking what every real answer of its
        kind carries is refused before any write; a valid body that drops most of the stored one is
        set aside (``previous_bodies`` role ``suspect``) and only stored when a later answer with the
        same content hash confirms it; whatever replaces a body, the previous one is kept for
        ``keep_previous_s`` seconds.

        Change feed (:mod:`syncd.store.changelog`): a replaced work, record or agency body, and a new
        Zenodo version of a series already held, write one ``changes`` row in the same transaction.

        Raises:
            MalformedResponse: reason ``malformed_response`` (hollow body, nothing written) or
                ``suspicious_shrink`` (the suspect was set aside and ``last_error`` recorded; the
                stored body is untouched).
            StoreError: the database failed.
        """
        now = time.time() if now is None else now
        lacking = guard.missing(content.rules, content.status, content.body)
        if lacking:
            raise MalformedResponse(
                f"{content.kind} {content.key}: upstream answered a body without {', '.join(lacking)}; "
                "the stored copy is kept",
                missing=lacking,
            )
        held_back: str | None = None
        changed = True
        with self.write() as conn:
            existing = self._locked(conn, content.kind, content.key)
            if existing is None:
                entry_id = self._insert(conn, content, now)
                if entry_id is None:  # another process stored it meanwhile (PostgreSQL): update what it wrote
                    existing = self._locked(conn, content.kind, content.key)
                    if existing is None:
                        raise StoreError(f"entry {content.kind}:{content.key} vanished while being stored")
            if existing is not None:
                old = row_to_entry(existing)
                entry_id = old.id
                held_back = self._held_back(conn, old, content, now)
                changed = False if held_back else self._apply(conn, old, content, now)
            row = conn.execute(GET_BY_ID, {"entry_id": entry_id}).one()
        if self.codec.due:
            self.train_dictionary_when_due()
        if held_back:
            raise MalformedResponse(
                f"{content.kind} {content.key}: upstream answered a body that drops most of the stored "
                "one; it is stored only if the next revalidation confirms it",
                reason=held_back,
                hint="The stored copy is answered meanwhile; a later revalidation decides.",
            )
        return row_to_entry(row), changed

    def _insert(self, conn: Connection, content: EntryContent, now: float) -> int | None:
        """Insert a new entry, its validation row and its arrival in the change feed; its id.

        None when another writer inserted the same ``(kind, key)`` first (``ON CONFLICT DO NOTHING``).
        """
        inserted = insert_ignore(
            conn,
            Entry.__table__,
            {
                "kind": content.kind,
                "key": content.key,
                "status": content.status,
                "body": self.encode_body(content.body, conn),
                "content_hash": content.content_hash,
                "upstream_version": content.upstream_version,
                "doi": content.doi,
                "concept_key": content.concept_key,
                "title": indexable(content.title),
                "search_text": indexable(content.search_text),
                "fetched_at": now,
                "created_at": now,
            },
        )
        if not inserted:
            return None
        entry_id: int = conn.execute(ID_OF, {"kind": content.kind, "key": content.key}).scalar_one()
        conn.execute(
            INSERT_VALIDATION,
            {
                "entry_id": entry_id,
                "validated_at": now,
                "etag": content.etag,
                "last_modified": content.last_modified,
                "checks": 1,
                "changes": 1,
                "volatile": content.volatile,
                "last_error": None,
                "last_error_at": None,
            },
        )
        if content.cites:
            write_cites(conn, entry_id, content.cites)
        if content.summary is not None:
            write_many(conn, [(entry_id, content.summary)])
        arrival = (content.kind, content.key, content.concept_key, content.body, now)
        if record_arrival(conn, content.rules, entry_id, *arrival):
            self.changes_recorded += 1
        return entry_id

    def _held_back(self, conn: Connection, old: StoredEntry, content: EntryContent, now: float) -> str | None:
        """The suspicion that holds ``content`` back from replacing ``old`` (recorded), or None.

        A suspicious body (:func:`syncd.store.guard.shrink`) seen for the first time is set aside as
        the entry's ``suspect`` and the suspicion recorded as ``last_error``; the same body again
        (same content hash) is the confirmation: the suspect row goes and the body is stored.
        """
        if old.status != "ok" or content.status != "ok" or old.content_hash == content.content_hash:
            return None
        suspicion = guard.shrink(content.rules, old.body, content.body)
        if suspicion is None:
            return None
        suspects = PreviousBody.__table__
        confirmed = conn.execute(
            select(func.count())
            .select_from(suspects)
            .where(
                suspects.c.entry_id == old.id,
                suspects.c.role == "suspect",
                suspects.c.content_hash == content.content_hash,
            )
        ).scalar_one()
        conn.execute(delete(suspects).where(suspects.c.entry_id == old.id, suspects.c.role == "suspect"))
        if confirmed:
            return None
        conn.execute(
            insert(suspects).values(
                entry_id=old.id,
                role="suspect",
                status=content.status,
                body=self.encode_body(content.body, conn),
                content_hash=content.content_hash,
                fetched_at=now,
                kept_at=now,
                reason=suspicion,
            )
        )
        conn.execute(
            update(Validation)
            .where(Validation.entry_id == old.id)
            .values(last_error=suspicion, last_error_at=now)
        )
        return suspicion

    def _keep_previous(self, conn: Connection, old: StoredEntry, now: float) -> None:
        """Set ``old``'s body aside (role ``previous``); drop its suspect and the ones past retention."""
        table = PreviousBody.__table__
        if old.body is not None:
            conn.execute(
                insert(table).values(
                    entry_id=old.id,
                    role="previous",
                    status=old.status,
                    body=self.encode_body(old.body, conn),
                    content_hash=old.content_hash,
                    fetched_at=old.fetched_at,
                    kept_at=now,
                    reason=None,
                )
            )
        conn.execute(
            delete(table).where(
                table.c.entry_id == old.id,
                or_(
                    table.c.role == "suspect",
                    and_(table.c.role == "previous", table.c.kept_at < now - self.keep_previous_s),
                ),
            )
        )

    def previous_bodies(self, entry_id: int) -> list[dict[str, Any]]:
        """Bodies set aside beside entry ``entry_id``, newest first.

        Each: ``role`` (``previous`` or ``suspect``), ``status``, ``body``, ``content_hash``,
        ``fetched_at`` and ``kept_at`` (epoch seconds), ``reason``.
        """
        table = PreviousBody.__table__
        with self.read() as conn:
            rows = conn.execute(
                select(table)
                .where(table.c.entry_id == entry_id)
                .order_by(table.c.kept_at.desc(), table.c.id.desc())
            ).all()
        return [
            {
                k: decode_body(v) if k == "body" else v
                for k, v in r._mapping.items()
                if k not in ("id", "entry_id")
            }
            for r in rows
        ]

    def prune_previous(self, now: float | None = None) -> int:
        """Drop every replaced body kept longer than ``keep_previous_s``; returns how many went."""
        now = time.time() if now is None else now
        table = PreviousBody.__table__
        with self.write() as conn:
            result = conn.execute(
                delete(table).where(table.c.role == "previous", table.c.kept_at < now - self.keep_previous_s)
            )
        return int(result.rowcount or 0)

    @staticmethod
    def _locked(conn: Connection, kind: str, key: str) -> Any:
        """The entry row ``(kind, key)`` joined with its validation, row-locked (FOR UPDATE), or None.

        On PostgreSQL the lock makes a concurrent writer of the same entry wait for this transaction;
        on SQLite the clause is left out (``BEGIN IMMEDIATE`` already holds the write lock).
        """
        return conn.execute(LOCKED, {"kind": kind, "key": key}).first()

    def _apply(self, conn: Connection, old: StoredEntry, content: EntryContent, now: float) -> bool:
        """Apply a new upstream answer to the stored entry ``old``; True when its content changed."""
        if content.status == "not_found" and old.status == "ok":
            conn.execute(
                update(Validation)
                .where(Validation.entry_id == old.id)
                .values(last_error="not_found", last_error_at=now)
            )
            return False
        if old.status == content.status and old.content_hash == content.content_hash:
            self._bump(conn, old.id, now, content.etag, content.last_modified, content.volatile)
            if content.upstream_version != old.upstream_version:
                conn.execute(
                    update(Entry).where(Entry.id == old.id).values(upstream_version=content.upstream_version)
                )
            return False
        self._keep_previous(conn, old, now)
        conn.execute(
            update(Entry)
            .where(Entry.id == old.id)
            .values(
                status=content.status,
                body=self.encode_body(content.body, conn),
                content_hash=content.content_hash,
                upstream_version=content.upstream_version,
                doi=content.doi,
                concept_key=content.concept_key,
                title=indexable(content.title),
                search_text=indexable(content.search_text),
                fetched_at=now,
            )
        )
        write_line(conn, old.id, content.summary)  # the line follows the body (none: a miss, a tombstone)
        conn.execute(
            update(Validation)
            .where(Validation.entry_id == old.id)
            .values(
                validated_at=now,
                etag=content.etag,
                last_modified=content.last_modified,
                checks=Validation.checks + 1,
                changes=Validation.changes + 1,
                last_error=None,
                last_error_at=None,
                volatile=content.volatile,
                **NO_BACKOFF,
            )
        )
        if content.cites is not None or content.status != "ok":  # the reference index follows the body
            write_cites(conn, old.id, content.cites or ())
        before, after = Side(old.status, old.body), Side(content.status, content.body)
        if record_replacement(conn, content.rules, old.id, old.kind, old.key, before, after, now):
            self.changes_recorded += 1
        return True

    @staticmethod
    def _bump(
        conn: Connection,
        entry_id: int,
        now: float,
        etag: str | None,
        last_modified: str | None,
        volatile: str | None = None,
    ) -> None:
        values: dict[str, Any] = _confirmed(now)
        if etag is not None:
            values["etag"] = etag
        if last_modified is not None:
            values["last_modified"] = last_modified
        if volatile is not None:
            values["volatile"] = volatile
        conn.execute(update(Validation).where(Validation.entry_id == entry_id).values(**values))

    def mark_validated(
        self,
        entry_id: int,
        now: float | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
    ) -> None:
        """Record that upstream confirmed the stored content (a 304, or an unchanged 200).

        Writes the ``validations`` row only.
        """
        now = time.time() if now is None else now
        with self.write() as conn:
            self._bump(conn, entry_id, now, etag, last_modified)

    def mark_validated_many(self, entry_ids: Sequence[int], now: float | None = None) -> None:
        """Record that upstream confirmed the stored content of every entry of ``entry_ids`` at once.

        One write transaction whatever their number (a batch revalidation's list request confirms its
        works together: :mod:`syncd.crossref.lookups_revalidate`), one ``UPDATE`` of the ``validations``
        rows per :data:`CONFIRM_CHUNK` entries: ``validated_at`` = ``now`` (epoch seconds), ``checks``
        + 1, the last error cleared; validators and volatile fields untouched (a list answer carries
        none). Raises :class:`~syncd.errors.StoreError` when the store cannot be written.
        """
        ids = list(dict.fromkeys(entry_ids))
        if not ids:
            return
        confirmed = _confirmed(time.time() if now is None else now)
        with self.write() as conn:
            for i in range(0, len(ids), CONFIRM_CHUNK):
                chunk = ids[i : i + CONFIRM_CHUNK]
                conn.execute(update(Validation).where(Validation.entry_id.in_(chunk)).values(**confirmed))

    def overlay_volatile(self, entry_id: int, volatile: str | None) -> None:
        """Replace the volatile fields laid over entry ``entry_id``'s stored body and drop its ETag.

        ``volatile``: JSON text of the top-level keys read over the body
        (:func:`syncd.store.content.document`), or None. The stored body and its content hash stay as
        upstream sent them; without the ETag the next revalidation is unconditional (a full answer,
        not a 304).
        """
        with self.write() as conn:
            conn.execute(
                update(Validation).where(Validation.entry_id == entry_id).values(volatile=volatile, etag=None)
            )

    def keep_body(self, entry: StoredEntry, role: str, reason: str | None, now: float | None = None) -> None:
        """Set ``entry``'s current body aside beside it as ``role``, replacing that role's earlier one.

        For a body a caller must keep longer than ``keep_previous_s`` (a role other than ``previous``
        and ``suspect`` is never pruned): read back with :meth:`previous_bodies`; ``reason`` is stored
        with it, ``now`` (epoch seconds) is its ``kept_at``.
        """
        now = time.time() if now is None else now
        table = PreviousBody.__table__
        with self.write() as conn:
            conn.execute(delete(table).where(table.c.entry_id == entry.id, table.c.role == role))
            conn.execute(
                insert(table).values(
                    entry_id=entry.id,
                    role=role,
                    status=entry.status,
                    body=self.encode_body(entry.body, conn),
                    content_hash=entry.content_hash,
                    fetched_at=entry.fetched_at,
                    kept_at=now,
                    reason=reason,
                )
            )

    def mark_error(self, entry_id: int, reason: str, now: float | None = None) -> None:
        """Record a failed revalidation (``reason`` code) beside the entry; the body is untouched.

        The entry backs off: ``failures`` counts the failures in a row with this ``reason`` (a
        different reason starts again at 1) and ``retry_at`` is ``now`` + :func:`backoff_s` of it,
        before which :meth:`stale` does not return the entry (a sweep leaves it alone). A reason of
        :data:`NO_BACKOFF_REASONS` (the pool's, not the record's) sets no backoff.
        """
        now = time.time() if now is None else now
        with self.write() as conn:
            row = conn.execute(
                select(Validation.last_error, Validation.failures).where(Validation.entry_id == entry_id)
            ).first()
            values: dict[str, Any] = {"last_error": reason, "last_error_at": now, **NO_BACKOFF}
            if reason not in NO_BACKOFF_REASONS:
                failures = (row.failures or 0) + 1 if row is not None and row.last_error == reason else 1
                values.update(failures=failures, retry_at=now + backoff_s(failures))
            conn.execute(update(Validation).where(Validation.entry_id == entry_id).values(**values))

    def clear_backoff(self, entry_ids: Sequence[int]) -> None:
        """Forget the failure streak of ``entry_ids`` (a manual refresh asks them now, backoff or not)."""
        with self.write() as conn:
            for chunk in range(0, len(entry_ids), CONFIRM_CHUNK):
                ids = list(entry_ids[chunk : chunk + CONFIRM_CHUNK])
                conn.execute(update(Validation).where(Validation.entry_id.in_(ids)).values(**NO_BACKOFF))

    def backing_off(self, now: float | None = None, limit: int = 20) -> tuple[int, list[dict[str, Any]]]:
        """Entries a sweep leaves alone until their ``retry_at`` (their revalidation keeps failing).

        Returns:
            How many there are, and up to ``limit`` of them, soonest retry first, each
            ``{"kind", "key", "last_error", "failures", "retry_at", "retry_in_s"}`` (``retry_at`` epoch
            seconds; ``retry_in_s`` seconds from ``now``).
        """
        now = time.time() if now is None else now
        where = Validation.retry_at > now
        with self.read() as conn:
            total = conn.execute(select(func.count()).select_from(Validation).where(where)).scalar_one()
            rows = conn.execute(
                select(Entry.kind, Entry.key, Validation.last_error, Validation.failures, Validation.retry_at)
                .join(Validation, Validation.entry_id == Entry.id)
                .where(where)
                .order_by(Validation.retry_at, Entry.id)
                .limit(limit)
            ).all()
        return int(total), [
            {
                "kind": r.kind,
                "key": r.key,
                "last_error": r.last_error,
                "failures": r.failures,
                "retry_at": r.retry_at,
                "retry_in_s": round(r.retry_at - now, 1),
            }
            for r in rows
        ]

    def set_concept(self, concept_recid: str, latest_recid: str, now: float | None = None) -> None:
        """Remember that the latest version of Zenodo concept ``concept_recid`` is ``latest_recid``."""
        now = time.time() if now is None else now
        with self.write() as conn:
            upsert(
                conn,
                Concept.__table__,
                {"concept_recid": concept_recid, "latest_recid": latest_recid, "validated_at": now},
                ["concept_recid"],
            )
