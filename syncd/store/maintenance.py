"""Store functions for the ``syncd cache`` maintenance commands: list, evict, prune, verify, vacuum, export.

Deleting an entry deletes its ``validations`` row (foreign key ``ON DELETE CASCADE``) and its FTS
rows (the ``entries_fts_ad`` trigger) in the same transaction. Entries have no access time, so the
size cap removes the entries upstream confirmed longest ago first (``validated_at``); blobs, which do
carry ``accessed_at``, are removed least recently used first.

On PostgreSQL the search index is the generated ``entries.search_tsv`` column with its GIN index
(migration 0002), which the server keeps in step with every row; :func:`verify` checks that the
index exists and is valid, and :func:`vacuum` runs ``VACUUM ANALYZE``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, func, or_, select, text
from sqlalchemy.exc import SQLAlchemyError

from syncd.errors import StoreError
from syncd.store.codec import (
    ConvertReport,
    CorruptBody,
    convert_bodies,
    decode_body,
    dictionary_of,
    load_dictionaries,
    train_dictionary,
)
from syncd.store.content import content_hash
from syncd.store.models import Blob, Concept, Entry, PreviousBody, Validation
from syncd.store.repo import Store
from syncd.store.rows import StoredEntry, row_to_entry, select_entries
from syncd.store.rules import StoreRules, rules_of
from syncd.store.staleness import Staleness

__all__ = [
    "SORTS",
    "PruneResult",
    "VerifyResult",
    "compress_bodies",
    "delete_entries",
    "iter_entries",
    "list_entries",
    "prune",
    "vacuum",
    "verify",
]

SORTS: dict[str, Any] = {
    "validated": Validation.validated_at,
    "fetched": Entry.fetched_at,
    "key": Entry.key,
    "title": Entry.title,
    "size": func.length(Entry.body),
}
"""Sort keys of :func:`list_entries`."""


def list_entries(
    store: Store,
    *,
    kind: str | None = None,
    status: str | None = None,
    stale: Staleness | None = None,
    query: str | None = None,
    sort: str = "validated",
    descending: bool = False,
    limit: int | None = 50,
    offset: int = 0,
) -> list[StoredEntry]:
    """Stored entries, filtered and sorted.

    Filters: ``kind``, ``status``, ``stale`` (only the entries stale under the policy's bounds,
    :func:`syncd.road.policy.staleness`) and a substring ``query`` of the key/title/DOI; ``sort`` is one
    of :data:`SORTS`.
    """
    q = select_entries()
    if kind:
        q = q.where(Entry.kind == kind)
    if status:
        q = q.where(Entry.status == status)
    if stale is not None:
        q = q.where(stale.clause())
    if query:
        like = f"%{query.lower()}%"
        q = q.where(
            or_(func.lower(Entry.title).like(like), Entry.key.like(like), func.lower(Entry.doi).like(like))
        )
    column = SORTS[sort]
    q = q.order_by(column.desc() if descending else column, Entry.id).offset(offset)
    if limit is not None:
        q = q.limit(limit)
    with store.read() as conn:
        return [row_to_entry(r) for r in conn.execute(q)]


def iter_entries(store: Store, kind: str | None = None, batch: int = 500) -> Iterator[StoredEntry]:
    """Every stored entry (optionally of one ``kind``) in id order, read ``batch`` rows at a time."""
    last = 0
    while True:
        q = select_entries().where(Entry.id > last).order_by(Entry.id).limit(batch)
        if kind:
            q = q.where(Entry.kind == kind)
        with store.read() as conn:
            rows = [row_to_entry(r) for r in conn.execute(q)]
        if not rows:
            return
        yield from rows
        last = rows[-1].id


def count_entries(store: Store, kind: str | None = None) -> int:
    """Number of stored entries (optionally of one ``kind``)."""
    q = select(func.count()).select_from(Entry)
    if kind:
        q = q.where(Entry.kind == kind)
    with store.read() as conn:
        return int(conn.execute(q).scalar_one())


def delete_entries(store: Store, ids: Sequence[int]) -> int:
    """Delete entries by primary key (with their validation and FTS rows); returns how many."""
    if not ids:
        return 0
    with store.write() as conn:
        return int(conn.execute(delete(Entry).where(Entry.id.in_(list(ids)))).rowcount)


@dataclass
class PruneResult:
    """What :func:`prune` removed (or would remove with ``dry_run``)."""

    entries: int = 0
    entry_bytes: int = 0
    blobs: int = 0
    blob_bytes: int = 0
    concepts: int = 0
    dry_run: bool = False
    keys: list[str] = field(default_factory=list)


def prune(
    store: Store,
    *,
    now: float,
    older_than_s: float | None = None,
    misses_older_than_s: float | None = None,
    max_bytes: int | None = None,
    kind: str | None = None,
    protect: set[tuple[str, str]] | None = None,
    dry_run: bool = False,
) -> PruneResult:
    """Remove old entries, old misses and, above a size cap, the longest-unconfirmed entries.

    Removes entries not confirmed by upstream for ``older_than_s``, misses older than
    ``misses_older_than_s``, then (``max_bytes``) the longest-unconfirmed entries and the least
    recently used blobs until bodies + blobs fit. ``protect`` keeps ``(kind, key)`` pairs (watched DOIs).
    """
    protect = protect or set()
    result = PruneResult(dry_run=dry_run)
    base = select(Entry.id, Entry.kind, Entry.key, func.coalesce(func.length(Entry.body), 0)).join(
        Validation, Validation.entry_id == Entry.id
    )
    if kind:
        base = base.where(Entry.kind == kind)
    doomed: dict[int, tuple[str, int]] = {}
    with store.read() as conn:
        if older_than_s is not None:
            _doom(doomed, conn.execute(base.where(Validation.validated_at < now - older_than_s)), protect)
        if misses_older_than_s is not None:
            q = base.where(Entry.status != "ok", Validation.validated_at < now - misses_older_than_s)
            _doom(doomed, conn.execute(q), protect)
        blobs_to_drop = _fit_under(conn, base, doomed, max_bytes, protect) if max_bytes is not None else []
    result.entries = len(doomed)
    result.entry_bytes = sum(size for _, size in doomed.values())
    result.keys = [name for name, _ in doomed.values()]
    result.blobs = len(blobs_to_drop)
    result.blob_bytes = sum(b[2] for b in blobs_to_drop)
    if not dry_run:
        result.concepts = _remove(store, list(doomed), blobs_to_drop)
    return result


def _doom(doomed: dict[int, tuple[str, int]], rows: Iterable[Any], protect: set[tuple[str, str]]) -> None:
    """Add each ``(id, kind, key, body size)`` row not in ``protect`` to ``doomed`` (id -> name, bytes)."""
    for eid, k, key, size in rows:
        if (k, key) not in protect:
            doomed[eid] = (f"{k}:{key}", int(size))


def _fit_under(
    conn: Any, base: Any, doomed: dict[int, tuple[str, int]], max_bytes: int, protect: set[tuple[str, str]]
) -> list[tuple[str, str, int]]:
    """Doom what brings bodies + blobs under ``max_bytes``; returns the blobs to drop ``(kind, key, size)``.

    The least recently used blobs go first, then the entries upstream confirmed longest ago (those
    already doomed and the protected ones skipped); ``doomed`` grows in place.
    """
    total = int(conn.execute(select(func.coalesce(func.sum(func.length(Entry.body)), 0))).scalar_one())
    total -= sum(size for _, size in doomed.values())
    blob_total = int(conn.execute(select(func.coalesce(func.sum(Blob.size), 0))).scalar_one())
    blobs_to_drop: list[tuple[str, str, int]] = []
    for bkind, bkey, bsize in conn.execute(select(Blob.kind, Blob.key, Blob.size).order_by(Blob.accessed_at)):
        if total + blob_total <= max_bytes:
            break
        blobs_to_drop.append((bkind, bkey, int(bsize)))
        blob_total -= int(bsize)
    if total + blob_total > max_bytes:
        for eid, k, key, size in conn.execute(base.order_by(Validation.validated_at, Entry.id)):
            if total + blob_total <= max_bytes:
                break
            if eid in doomed or (k, key) in protect:
                continue
            doomed[eid] = (f"{k}:{key}", int(size))
            total -= int(size)
    return blobs_to_drop


def _remove(store: Store, ids: list[int], blobs: list[tuple[str, str, int]]) -> int:
    """Delete the entries ``ids`` and the ``blobs`` in one transaction; returns the concepts dropped.

    A concept whose latest version is no longer stored is dropped too (re-resolved on the next lookup).
    """
    with store.write() as conn:
        for i in range(0, len(ids), 500):
            conn.execute(delete(Entry).where(Entry.id.in_(ids[i : i + 500])))
        for bkind, bkey, _ in blobs:
            conn.execute(delete(Blob).where(Blob.kind == bkind, Blob.key == bkey))
        return int(
            conn.execute(
                delete(Concept).where(
                    ~select(Entry.id)
                    .where(Entry.concept_key.is_not(None), Entry.key == Concept.latest_recid)
                    .exists()
                )
            ).rowcount
        )


@dataclass
class VerifyResult:
    """Findings of :func:`verify`; ``ok`` when ``problems`` is empty."""

    integrity: str = "ok"
    entries: int = 0
    fts_rows: int = 0
    bodies: int = 0
    """Stored bodies decoded (entries and previous bodies)."""
    bodies_uncompressed: int = 0
    """Of them, bodies stored as plain text (not yet compressed; ``syncd cache vacuum`` compresses them)."""
    bad_bodies: list[str] = field(default_factory=list)
    """``kind:key`` of the entries whose body (or a previous body: ``... (previous)``) does not decode."""
    bad_hashes: list[str] = field(default_factory=list)
    """``kind:key`` of the entries whose content hash is not the one of their body (``check_hashes``)."""
    problems: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing is wrong (after repairs)."""
        return not self.problems


def _named(keys: list[str]) -> str:
    """``N (k1, k2, ... and M more)``: a count and the first :data:`BAD_BODIES_SHOWN` entry keys."""
    more = len(keys) - BAD_BODIES_SHOWN
    return f"{len(keys)} ({', '.join(keys[:BAD_BODIES_SHOWN])}{f' and {more} more' if more > 0 else ''})"


def verify(
    store: Store,
    *,
    repair: bool = False,
    check_hashes: bool = False,
    rules: Mapping[str, StoreRules] | None = None,
) -> VerifyResult:
    """Check the database; with ``repair``, fix what can be fixed.

    Checks ``PRAGMA integrity_check`` and ``foreign_key_check`` (SQLite), that every stored body
    (entries and previous bodies) decodes (:func:`syncd.store.codec.decode_body`: for a compressed body
    the zstd frame is intact and the XXH64 checksum of the text written with it matches; with
    ``check_hashes`` also that each ``ok`` entry of a kind whose ``rules`` (kind name -> its store
    rules, from the caller) supply a content-hash ``projection`` has the content hash of its body,
    recomputed over the canonical JSON of its normalized content as a lookup computes it: about
    1 ms per body, and a syncd whose normalization changed reports older entries too), entries
    without a validation row, validation rows without an entry, ``ok`` entries without a body or hash, and the
    FTS index against the entries (FTS5 ``integrity-check``; on PostgreSQL: the search column and its
    GIN index exist and are valid). With ``repair``: add missing validation rows, delete orphans and
    rebuild the FTS (or GIN) index; what was fixed is listed in ``repaired``.
    """
    res = VerifyResult()
    sqlite = store.engine.dialect.name == "sqlite"
    with store.read() as conn:
        if sqlite:
            _check_sqlite(conn, res)
        res.entries = int(conn.execute(select(func.count()).select_from(Entry)).scalar_one())
        _check_bodies(conn, res, rules if check_hashes else None)
        no_validation, orphans, no_body = _unpaired(conn)
        fts_problem = _check_index(conn, res, sqlite)
    if res.bad_bodies:
        res.problems.append(
            f"bodies that do not decode: {_named(res.bad_bodies)}; "
            "delete those entries (syncd cache evict ID...) to fetch them again"
        )
    if res.bad_hashes:
        res.problems.append(f"bodies whose content hash does not match: {_named(res.bad_hashes)}")
    if no_validation:
        res.problems.append(f"entries without a validation row: {len(no_validation)}")
    if orphans:
        res.problems.append(f"validation rows without an entry: {len(orphans)}")
    if no_body:
        res.problems.append(f"ok entries without a body or hash: {no_body}")
    if fts_problem:
        res.problems.append(fts_problem)
    if repair and res.problems:
        repaired = _repair(store, res, no_validation, orphans, fts_problem, sqlite)
        again = verify(store, repair=False, check_hashes=check_hashes, rules=rules)
        again.repaired = repaired
        return again
    return res


def _check_sqlite(conn: Any, res: VerifyResult) -> None:
    """SQLite's ``PRAGMA integrity_check`` and ``foreign_key_check`` into ``res``."""
    rows = [r[0] for r in conn.exec_driver_sql("PRAGMA integrity_check")]
    res.integrity = "ok" if rows == ["ok"] else "; ".join(rows[:5])
    if res.integrity != "ok":
        res.problems.append(f"integrity_check: {res.integrity}")
    fk = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
    if fk:
        res.problems.append(f"foreign_key_check: {len(fk)} rows violate foreign keys")


def _unpaired(conn: Any) -> tuple[list[int], list[int], int]:
    """Rows that lack their pair: ``(entry ids, orphan validation ids, ok entries without body or hash)``.

    The entries without a validation row, the validation rows' entry ids without an entry, and the
    number of ``ok`` entries without a body or content hash.
    """
    validated = select(Validation.entry_id).where(Validation.entry_id == Entry.id).exists()
    no_validation = list(conn.execute(select(Entry.id).where(~validated)).scalars().all())
    stored = select(Entry.id).where(Entry.id == Validation.entry_id).exists()
    orphans = list(conn.execute(select(Validation.entry_id).where(~stored)).scalars().all())
    no_body = conn.execute(
        select(func.count())
        .select_from(Entry)
        .where(Entry.status == "ok", or_(Entry.body.is_(None), Entry.content_hash.is_(None)))
    ).scalar_one()
    return no_validation, orphans, int(no_body)


def _check_index(conn: Any, res: VerifyResult, sqlite: bool) -> str | None:
    """The search index's problem (sets ``res.fts_rows``), or None.

    SQLite: FTS5 ``integrity-check`` and one index row per entry; PostgreSQL: the search column and
    its GIN index exist and are valid (:func:`_pg_search_index`).
    """
    if not sqlite:
        res.fts_rows, problem = _pg_search_index(conn)
        return problem
    res.fts_rows = int(conn.execute(text("SELECT count(*) FROM entries_fts_docsize")).scalar_one())
    try:
        conn.execute(text("INSERT INTO entries_fts(entries_fts, rank) VALUES ('integrity-check', 1)"))
    except Exception as exc:  # sqlite3.DatabaseError: the index does not match the entries
        return f"fts: {exc.__class__.__name__}: {str(exc).splitlines()[0]}"
    if res.fts_rows != res.entries:
        return f"fts: {res.fts_rows} index rows for {res.entries} entries"
    return None


def _repair(
    store: Store,
    res: VerifyResult,
    no_validation: list[int],
    orphans: list[int],
    fts_problem: str | None,
    sqlite: bool,
) -> list[str]:
    """Fix what :func:`verify` found and can be fixed, in one transaction; what was fixed."""
    repaired: list[str] = []
    with store.write() as conn:
        if no_validation:
            for eid in no_validation:
                conn.execute(
                    Validation.__table__.insert().values(entry_id=eid, validated_at=0.0, checks=0, changes=0)
                )
            repaired.append(f"added {len(no_validation)} validation rows (stale, revalidated next)")
        if orphans:
            conn.execute(delete(Validation).where(Validation.entry_id.in_(orphans)))
            repaired.append(f"deleted {len(orphans)} orphan validation rows")
        if fts_problem and sqlite:
            conn.execute(text("INSERT INTO entries_fts(entries_fts) VALUES ('rebuild')"))
            repaired.append("rebuilt the FTS index")
        elif fts_problem and res.fts_rows >= 0:  # PostgreSQL: the column exists, the index is bad
            conn.execute(text(f"DROP INDEX IF EXISTS {PG_SEARCH_INDEX}"))
            conn.execute(text(f"CREATE INDEX {PG_SEARCH_INDEX} ON entries USING gin (search_tsv)"))
            repaired.append("rebuilt the search index")
    return repaired


PG_SEARCH_INDEX = "ix_entries_search_tsv"
BAD_BODIES_SHOWN = 20
"""Entries named in the problem line of undecodable bodies (all are in ``VerifyResult.bad_bodies``)."""


def _rehash(rules: StoreRules, text: str) -> str | None:
    """The content hash a lookup stores for the ``ok`` body ``text`` by ``rules`` (None: not re-hashed)."""
    if rules.projection is None:
        return None
    projected = rules.projection(json.loads(text))
    return None if projected is None else content_hash(projected)


def _check_bodies(
    conn: Any, res: VerifyResult, rules: Mapping[str, StoreRules] | None = None, batch: int = 1000
) -> None:
    """Decode every stored body (entries, then previous bodies), ``batch`` rows at a time, into ``res``.

    With ``rules`` (kind name -> store rules), also re-hash each ``ok`` entry body of a kind with a
    content-hash projection.
    """
    load_dictionaries(conn)
    queries = [
        (
            select(Entry.id, Entry.kind, Entry.key, Entry.body, Entry.status, Entry.content_hash),
            Entry.id,
            Entry.body,
            "",
        ),
        (
            select(
                PreviousBody.id,
                Entry.kind,
                Entry.key,
                PreviousBody.body,
                PreviousBody.status,
                PreviousBody.content_hash,
            ).join(Entry, Entry.id == PreviousBody.entry_id),
            PreviousBody.id,
            PreviousBody.body,
            " (previous)",
        ),
    ]
    for base, id_col, body_col, suffix in queries:
        last = 0
        while True:
            rows = conn.execute(
                base.where(id_col > last, body_col.is_not(None)).order_by(id_col).limit(batch)
            ).all()
            if not rows:
                break
            last = rows[-1][0]
            for _, kind, key, body, status, stored_hash in rows:
                res.bodies += 1
                if dictionary_of(body) is None:
                    res.bodies_uncompressed += 1
                try:
                    decoded = decode_body(body)
                except CorruptBody:
                    res.bad_bodies.append(f"{kind}:{key}{suffix}")
                    continue
                if rules is not None and not suffix and status == "ok" and decoded is not None:
                    try:
                        again = _rehash(rules_of(rules, kind), decoded)
                    except ValueError:  # not JSON, or content the normalization refuses
                        again = ""
                    if again is not None and again != stored_hash:
                        res.bad_hashes.append(f"{kind}:{key}")


def compress_bodies(store: Store, *, batch: int | None = None, retrain: bool = False) -> ConvertReport:
    """Compress every stored body with the store's newest dictionary, ``batch`` rows per transaction.

    ``batch`` defaults to :data:`syncd.store.codec.CONVERT_BATCH`. Trains a dictionary first when the
    store has none yet (and enough bodies), or with ``retrain`` a new one (later writes use it; bodies
    compressed with older ones stay readable and are re-encoded here). Resumable: an interrupted run
    leaves the batches it committed.

    Raises:
        StoreError: the database failed, or a stored body does not decode (``CorruptBody``).
    """
    try:
        with store.engine.connect() as conn:
            trained = train_dictionary(conn) if retrain else None
            conn.commit()
            report = convert_bodies(conn, conn.commit, batch=batch)
            conn.commit()
    except SQLAlchemyError as exc:
        raise StoreError(f"store write failed: {exc.__class__.__name__}: {exc}") from exc
    report.trained = report.trained or trained is not None
    store.codec.use(report.dictionary)
    return report


def _pg_search_index(conn: Any) -> tuple[int, str | None]:
    """PostgreSQL: ``(entries with a search vector, problem or None)``; -1 rows when the column is missing."""
    has_column = conn.execute(
        text(
            "SELECT count(*) FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = 'entries' AND column_name = 'search_tsv'"
        )
    ).scalar_one()
    if not has_column:
        return -1, "search: the entries.search_tsv column is missing (run `syncd db upgrade`)"
    rows = int(conn.execute(text("SELECT count(search_tsv) FROM entries")).scalar_one())
    valid = conn.execute(
        text("SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(:name)"),
        {"name": PG_SEARCH_INDEX},
    ).first()
    if valid is None:
        return rows, f"search: index {PG_SEARCH_INDEX} is missing"
    if not valid[0]:
        return rows, f"search: index {PG_SEARCH_INDEX} is invalid"
    return rows, None


def vacuum(store: Store) -> dict[str, Any]:
    """Compress the bodies and reclaim space; returns sizes before/after and what was compressed.

    Keys: ``size_before_bytes``, ``size_after_bytes``, ``bodies_compressed`` (bodies re-encoded now)
    and ``dictionary`` (the body dictionary's id, 0: none).

    First :func:`compress_bodies` (trains a dictionary when the store has none and enough bodies). Then
    SQLite: checkpoint the WAL, optimize the FTS index and ``VACUUM``. PostgreSQL: ``VACUUM ANALYZE``
    (space returns to the server's free-space map; the database file rarely shrinks).
    """
    before = store.size_bytes()
    compressed = compress_bodies(store)
    if store.engine.dialect.name == "sqlite":
        with store.write() as conn:
            conn.execute(text("INSERT INTO entries_fts(entries_fts) VALUES ('optimize')"))
        raw = store.engine.raw_connection()
        try:
            cur = raw.cursor()
            cur.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            cur.execute("VACUUM")
            cur.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            cur.close()
        finally:
            raw.close()
    else:  # PostgreSQL: VACUUM cannot run inside a transaction
        with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("VACUUM ANALYZE")
    return {
        "size_before_bytes": before,
        "size_after_bytes": store.size_bytes(),
        "bodies_compressed": compressed.converted,
        "dictionary": compressed.dictionary,
    }
