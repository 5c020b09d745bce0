"""Compressed bodies (issue 15 target 3): every corpus body reads back exactly, hashes stay over the
canonical JSON, the migration converts an existing store in resumable batches, verify finds a
damaged body, and set-aside bodies stay readable.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, select, text

from syncd.crossref import views as crossref_norm
from syncd.crossref.lookups import work_content
from syncd.crossref.names import CROSSREF_SEARCH, CROSSREF_WORK
from syncd.registry import STORE_RULES
from syncd.store import codec
from syncd.store.content import content_hash
from syncd.store.engine import current_revision, head_revision, make_engine, upgrade_to_head
from syncd.store.maintenance import compress_bodies, vacuum, verify
from syncd.store.models import BodyDictionary, Entry, PreviousBody
from syncd.store.repo import EntryContent, Store
from syncd.transfer.dbcopy import copy_store
from syncd.zenodo import views as zenodo_norm
from syncd.zenodo.lookups_fetch import record_content
from syncd.zenodo.names import ZENODO_RECORD
from tests.corpus_path import CORPUS

pytestmark = pytest.mark.both_backends(full_only=True)

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"
PREVIOUS = next(
    str(s.down_revision)
    for s in ScriptDirectory(str(MIGRATIONS)).walk_revisions()
    if str(s.path).endswith("_compressed_bodies.py")
)
"""The revision before the compressed bodies (whatever number the migration got)."""


def _corpus_texts() -> list[tuple[str, str]]:
    """Every recorded JSON body of the corpus (Crossref and Zenodo), as text, by corpus path."""
    out = []
    for service in ("crossref", "zenodo"):
        for path in sorted((CORPUS / service).rglob("*.json")):
            if path.name.endswith(".headers.json"):
                continue
            out.append((path.relative_to(CORPUS).as_posix(), path.read_text(encoding="utf-8")))
    return out


TEXTS = _corpus_texts()


def _records() -> list[EntryContent]:
    """The stored form of every corpus Crossref work and Zenodo record, as the lookups build it."""
    out = []
    for rel, raw in TEXTS:
        body = json.loads(raw)
        if rel.startswith("crossref/work/") and isinstance(body, dict) and body.get("status") == "ok":
            message = body["message"]
            if isinstance(message, dict) and message.get("DOI") and message.get("title"):
                out.append(work_content(message["DOI"].lower(), message, raw))
        elif (
            rel.startswith("zenodo/record/")
            and isinstance(body, dict)
            and body.get("metadata", {}).get("title")
        ):
            out.append(record_content(body, raw))
    return out


def _alembic(conn: Any) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["configure_logger"] = False
    cfg.attributes["connection"] = conn
    return cfg


def _at_previous_revision(db_url: str) -> Engine:
    """An engine on an empty store at revision :data:`PREVIOUS` (PostgreSQL: the head store downgraded)."""
    engine = make_engine(db_url)
    with engine.begin() as conn:
        if current_revision(engine) is None:
            command.upgrade(_alembic(conn), PREVIOUS)
        else:
            command.downgrade(_alembic(conn), PREVIOUS)
    assert current_revision(engine) == PREVIOUS
    return engine


def _seed_raw(engine: Engine, texts: list[tuple[str, str]]) -> dict[int, str]:
    """Entries (ok, plain text bodies as the previous revision stored them), one previous body; id -> text."""
    now = 1_700_000_000.0
    ids: dict[int, str] = {}
    with engine.begin() as conn:
        for i, (rel, raw) in enumerate(texts, start=1):
            conn.execute(
                text(
                    "INSERT INTO entries (id, kind, key, status, body, content_hash, fetched_at, created_at) "
                    "VALUES (:i, :k, :key, 'ok', :b, :h, :t, :t)"
                ),
                {"i": i, "k": CROSSREF_SEARCH, "key": rel, "b": raw, "h": f"h{i}", "t": now},
            )
            conn.execute(
                text(
                    "INSERT INTO validations (entry_id, validated_at, checks, changes) VALUES (:i, :t, 1, 1)"
                ),
                {"i": i, "t": now},
            )
            ids[i] = raw
        conn.execute(
            text(
                "INSERT INTO previous_bodies (entry_id, role, status, body, content_hash, fetched_at, "
                "kept_at) "
                "VALUES (1, 'previous', 'ok', :b, 'old', :t, :t)"
            ),
            {"b": texts[1][1], "t": now},
        )
    return ids


def _stored(engine: Engine) -> dict[int, Any]:
    with engine.connect() as conn:
        return {i: b for i, b in conn.execute(select(Entry.id, Entry.body).order_by(Entry.id))}


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    s = Store.open(db_url)
    yield s
    s.close()


def test_every_corpus_body_round_trips_with_and_without_a_dictionary(store: Store) -> None:
    """Each of the corpus bodies (Crossref and Zenodo) encodes to a zstd frame and decodes to the exact
    same text, without a dictionary and with one trained on the corpus; the trained one compresses the
    corpus to under 30% of its bytes and is named in each frame.
    """
    assert len(TEXTS) == 246  # with the two bodies shaped for issue 43 (a thin prefix, an abstract)
    raw_bytes = sum(len(t.encode("utf-8")) for _, t in TEXTS)
    plain = [store.encode_body(t) for _, t in TEXTS]
    assert store.codec.current() == 0
    with store.write() as conn:
        for i, (rel, raw) in enumerate(TEXTS, start=1):
            conn.execute(
                Entry.__table__.insert().values(
                    id=i,
                    kind=CROSSREF_SEARCH,
                    key=rel,
                    status="ok",
                    body=raw.encode(),
                    fetched_at=0.0,
                    created_at=0.0,
                )
            )
        dict_id = codec.train_dictionary(conn, min_bodies=100)
    assert dict_id
    store.codec.use(dict_id)
    trained = [store.encode_body(t) for _, t in TEXTS]
    for (rel, raw), p, d in zip(TEXTS, plain, trained, strict=True):
        assert p is not None and d is not None
        assert p[:4] == codec.MAGIC and codec.dictionary_of(p) == 0, rel
        assert codec.dictionary_of(d) == dict_id, rel
        assert codec.decode_body(p) == raw, rel
        assert codec.decode_body(d) == raw, rel
        assert codec.decode_body(raw.encode("utf-8")) == raw  # uncompressed bytes read as they are
    assert sum(len(d or b"") for d in trained) < 0.30 * raw_bytes
    assert sum(len(d or b"") for d in trained) < sum(len(p or b"") for p in plain)


def test_stored_works_and_records_read_back_with_their_content_hash(store: Store) -> None:
    """Corpus works and records stored through put_content are zstd frames in the database; Store.get
    answers the exact text received, and the content hash is the one of the canonical JSON of the
    normalized content (recomputed here from the decoded body), not of the stored bytes.
    """
    records = _records()
    assert len(records) > 80
    for c in records:
        store.put_content(c, now=1_700_000_000.0)
    with store.read() as conn:
        raw_rows = {(k, key): b for k, key, b in conn.execute(select(Entry.kind, Entry.key, Entry.body))}
    for c in records:
        stored = raw_rows[(c.kind, c.key)]
        assert isinstance(stored, bytes) and stored[:4] == codec.MAGIC
        entry = store.get(c.kind, c.key)
        assert entry is not None and entry.body == c.body
        body = json.loads(entry.body)
        if c.kind == CROSSREF_WORK:
            expected = content_hash(crossref_norm.content_hash_projection(body["message"]))
        else:
            assert c.kind == ZENODO_RECORD
            expected = content_hash(zenodo_norm.content_hash_projection(body))
        assert entry.content_hash == expected == c.content_hash


def test_replaced_body_is_kept_compressed_and_readable(store: Store) -> None:
    """A replaced body is set aside compressed; previous_bodies answers its exact text, the entry the new."""
    first = next(c for c in _records() if c.kind == CROSSREF_WORK)
    store.put_content(first, now=1_700_000_000.0)
    message = json.loads(first.body or "{}")["message"]
    message["title"] = ["A new title"]
    new_raw = json.dumps({"status": "ok", "message-type": "work", "message": message})
    entry, changed = store.put_content(work_content(first.key, message, new_raw), now=1_700_000_100.0)
    assert changed and entry.body == new_raw
    kept = store.previous_bodies(entry.id)
    assert [(k["role"], k["body"]) for k in kept] == [("previous", first.body)]
    with store.read() as conn:
        (stored,) = conn.execute(select(PreviousBody.body)).one()
    assert bytes(stored)[:4] == codec.MAGIC


def test_verify_names_the_entry_whose_body_is_damaged(store: Store) -> None:
    """Flipping one byte inside a compressed body makes verify report that entry by kind:key (the frame's
    checksum fails), while the other bodies still read; before, verify is clean.
    """
    records = _records()[:20]
    for c in records:
        store.put_content(c, now=1_700_000_000.0)
    clean = verify(store)
    assert clean.ok and clean.bodies == 20 and clean.bodies_uncompressed == 0 and clean.bad_bodies == []
    victim = records[7]
    with store.write() as conn:
        (stored,) = conn.execute(
            select(Entry.body).where(Entry.kind == victim.kind, Entry.key == victim.key)
        ).one()
        damaged = bytearray(stored)
        damaged[len(damaged) // 2] ^= 0x40
        conn.execute(
            Entry.__table__.update()
            .where(Entry.kind == victim.kind, Entry.key == victim.key)
            .values(body=bytes(damaged))
        )
    found = verify(store)
    assert not found.ok
    assert found.bad_bodies == [f"{victim.kind}:{victim.key}"]
    assert any(f"{victim.kind}:{victim.key}" in p for p in found.problems)
    assert store.get(records[8].kind, records[8].key).body == records[8].body  # type: ignore[union-attr]


def test_verify_with_hashes_names_the_entry_whose_hash_does_not_match(store: Store) -> None:
    """With check_hashes, verify recomputes the content hash of each stored work and record from its body
    (as the lookups compute it): clean after put_content; a stored hash changed behind the store's back
    is reported by entry.
    """
    records = _records()[:30]
    assert {c.kind for c in records} >= {CROSSREF_WORK} and any(c.kind == ZENODO_RECORD for c in _records())
    for c in [*records, next(c for c in _records() if c.kind == ZENODO_RECORD)]:
        store.put_content(c, now=1_700_000_000.0)
    assert verify(store, check_hashes=True, rules=STORE_RULES).ok
    victim = records[3]
    with store.write() as conn:
        conn.execute(
            Entry.__table__.update()
            .where(Entry.kind == victim.kind, Entry.key == victim.key)
            .values(content_hash="0" * 64)
        )
    assert verify(store).ok  # the body still decodes
    found = verify(store, check_hashes=True, rules=STORE_RULES)
    assert found.bad_hashes == [f"{victim.kind}:{victim.key}"] and not found.ok


def test_migration_converts_a_store_in_batches_and_resumes_after_interruption(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store at the previous revision holding every corpus body as text: the upgrade is interrupted
    after two committed batches (revision unchanged, those rows compressed with a dictionary trained on
    the store, the rest still text); the next upgrade reuses that dictionary, converts the rest and
    stamps head; every body and the previous body read back exactly.
    """
    engine = _at_previous_revision(db_url)
    texts = TEXTS[:230]
    originals = _seed_raw(engine, texts)
    monkeypatch.setattr(codec, "CONVERT_BATCH", 50)
    monkeypatch.setattr(codec, "TRAIN_MIN_BODIES", 100)
    real_encode = codec.BodyCodec.encode
    calls = {"n": 0}

    def failing_encode(self: codec.BodyCodec, body: str | None, conn: Any = None) -> bytes | None:
        calls["n"] += 1
        if calls["n"] > 120:  # in the third batch of 50
            raise RuntimeError("killed")
        return real_encode(self, body, conn)

    monkeypatch.setattr(codec.BodyCodec, "encode", failing_encode)
    with pytest.raises(Exception, match="killed"):
        upgrade_to_head(engine)
    assert current_revision(engine) == PREVIOUS
    stored = _stored(engine)
    compressed = [i for i, b in stored.items() if codec.dictionary_of(b) is not None]
    assert compressed == list(range(1, 101))
    with engine.connect() as conn:
        dictionaries = conn.execute(select(BodyDictionary.id)).scalars().all()
    assert len(dictionaries) == 1 and {codec.dictionary_of(stored[i]) for i in compressed} == set(
        dictionaries
    )

    monkeypatch.setattr(codec.BodyCodec, "encode", real_encode)
    assert upgrade_to_head(engine) == head_revision()
    stored = _stored(engine)
    assert {codec.dictionary_of(b) for b in stored.values()} == set(dictionaries)
    assert {i: codec.decode_body(b) for i, b in stored.items()} == originals
    with engine.connect() as conn:
        assert conn.execute(select(BodyDictionary.id)).scalars().all() == dictionaries
    engine.dispose()
    store = Store.open(db_url)
    try:
        assert store.previous_bodies(1)[0]["body"] == texts[1][1]
        assert store.get(CROSSREF_SEARCH, texts[5][0]).body == texts[5][1]  # type: ignore[union-attr]
        assert verify(store).ok
    finally:
        store.close()


def test_upgrade_finished_meanwhile_by_another_process_still_starts(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When another process (which got the lock between two batches) finished the conversion and
    stamped the revision first, this process's upgrade still ends at head instead of failing Alembic's
    stamp (which expects the previous revision), and every body reads back.
    """
    engine = _at_previous_revision(db_url)
    originals = _seed_raw(engine, TEXTS[:30])
    real = codec.convert_bodies

    def overtaken(conn: Any, commit: Any, **kwargs: Any) -> codec.ConvertReport:
        report = real(conn, commit, **kwargs)
        conn.execute(text("UPDATE alembic_version SET version_num = :h"), {"h": head_revision()})
        return report

    monkeypatch.setattr(codec, "convert_bodies", overtaken)
    try:
        assert upgrade_to_head(engine) == head_revision()
        assert current_revision(engine) == head_revision()
        assert {i: codec.decode_body(b) for i, b in _stored(engine).items()} == originals
    finally:
        engine.dispose()


KILLED_UPGRADE = """
import os, signal, sys
from syncd.store import codec
from syncd.store.engine import make_engine, upgrade_to_head

codec.CONVERT_BATCH = 40
codec.TRAIN_MIN_BODIES = 100
real = codec.BodyCodec.encode
calls = [0]

def encode(self, body, conn=None):
    calls[0] += 1
    if calls[0] > 100:  # in the third batch: the process dies mid-transaction
        os.kill(os.getpid(), signal.SIGKILL)
    return real(self, body, conn)

codec.BodyCodec.encode = encode
upgrade_to_head(make_engine(sys.argv[1]))
"""


def test_upgrade_killed_mid_batch_keeps_committed_batches_and_finishes_next_time(db_url: str) -> None:
    """A process killed (SIGKILL) inside the third batch of the conversion leaves the store at the previous
    revision with the first two batches (80 bodies) compressed and readable; the next upgrade finishes.
    """
    engine = _at_previous_revision(db_url)
    originals = _seed_raw(engine, TEXTS[:150])
    engine.dispose()
    proc = subprocess.run([sys.executable, "-c", KILLED_UPGRADE, db_url], capture_output=True, timeout=120)
    assert proc.returncode == -9, proc.stderr.decode()[-2000:]
    engine = make_engine(db_url)
    try:
        assert current_revision(engine) == PREVIOUS
        with engine.connect() as conn:
            assert codec.load_dictionaries(conn)  # trained by the killed process, not known to this one
        stored = _stored(engine)
        assert [i for i, b in stored.items() if codec.dictionary_of(b) is not None] == list(range(1, 81))
        assert {i: codec.decode_body(b) for i, b in stored.items()} == originals
        assert upgrade_to_head(engine) == head_revision()
        stored = _stored(engine)
        assert all(codec.dictionary_of(b) for b in stored.values())
        assert {i: codec.decode_body(b) for i, b in stored.items()} == originals
    finally:
        engine.dispose()


def test_small_store_migrates_without_a_dictionary_and_vacuum_trains_one_later(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under the training minimum the migration compresses without a dictionary; once the store holds
    enough bodies, `cache vacuum` trains one, re-encodes every body with it (smaller), later writes use
    it, and the bodies compressed before stay readable.
    """
    engine = _at_previous_revision(db_url)
    originals = _seed_raw(engine, TEXTS[:60])
    upgrade_to_head(engine)
    engine.dispose()
    store = Store.open(db_url)
    try:
        before = _stored(store.engine)
        assert {codec.dictionary_of(b) for b in before.values()} == {0}
        monkeypatch.setattr(codec, "TRAIN_MIN_BODIES", 50)
        result = vacuum(store)
        assert result["bodies_compressed"] == 61  # 60 entries and the previous body
        dict_id = result["dictionary"]
        after = _stored(store.engine)
        assert {codec.dictionary_of(b) for b in after.values()} == {dict_id}
        assert sum(len(b) for b in after.values()) < sum(len(b) for b in before.values())
        assert {i: codec.decode_body(b) for i, b in after.items()} == originals
        assert codec.dictionary_of(store.encode_body(TEXTS[70][1])) == dict_id
        again = compress_bodies(store)
        assert again.converted == 0 and again.scanned == 61
    finally:
        store.close()


def test_a_store_filled_from_empty_trains_its_dictionary_once_it_holds_enough_bodies(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new store compresses without a dictionary; after enough writes put_content trains one on the
    stored bodies (kept in body_dictionaries) and every later body uses it, the earlier ones still read.
    """
    monkeypatch.setattr(codec, "TRAIN_MIN_BODIES", 40)
    monkeypatch.setattr(codec, "TRAIN_CHECK_EVERY", 25)
    records = _records()[:80]
    for c in records:
        store.put_content(c, now=1_700_000_000.0)
    with store.read() as conn:
        dictionaries = conn.execute(select(BodyDictionary.id)).scalars().all()
        stored = dict(conn.execute(select(Entry.key, Entry.body).order_by(Entry.id)).all())
    assert len(dictionaries) == 1 and store.codec.current() == dictionaries[0]
    used = [codec.dictionary_of(stored[c.key]) for c in records]
    assert used[:50] == [0] * 50  # checks at 25 (24 bodies stored: too few) and 50 (trained)
    assert used[50:] == [dictionaries[0]] * 30
    assert all(store.get(c.kind, c.key).body == c.body for c in records)  # type: ignore[union-attr]


def test_db_copy_carries_dictionaries_and_previous_bodies(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`db copy` from an SQLite store whose bodies use a trained dictionary (and one plain-text body left
    from before compression) into an empty store: the dictionary and the previous bodies come along, the
    compressed bodies are copied as stored, and every entry and previous body reads back exactly.
    """
    monkeypatch.setattr(codec, "TRAIN_MIN_BODIES", 40)
    source_url = f"sqlite:///{tmp_path / 'source.db'}"
    source = Store.open(source_url)
    records = _records()[:60]
    try:
        for c in records:
            source.put_content(c, now=1_700_000_000.0)
        assert vacuum(source)["dictionary"]
        first = records[0]
        message = json.loads(first.body or "{}")["message"]
        message["title"] = ["Another title"]
        raw = json.dumps({"status": "ok", "message-type": "work", "message": message})
        entry, _ = source.put_content(work_content(first.key, message, raw), now=1_700_000_100.0)
        with source.write() as conn:  # one body as a store from before compression holds it
            conn.execute(
                Entry.__table__.update().where(Entry.key == records[1].key).values(body=records[1].body)
            )
        with source.read() as conn:
            stored = dict(conn.execute(select(Entry.key, Entry.body)).all())
    finally:
        source.close()
    report = copy_store(source_url, db_url, batch=7)
    assert report.tables["body_dictionaries"]["destination"] == 1
    assert report.tables["previous_bodies"]["destination"] == 1
    copy = Store.open(db_url)
    try:
        with copy.read() as conn:
            copied = dict(conn.execute(select(Entry.key, Entry.body)).all())
        assert bytes(copied[records[2].key]) == stored[records[2].key]  # compressed bytes copied as they are
        assert copy.get(first.kind, first.key).body == raw  # type: ignore[union-attr]
        assert [k["body"] for k in copy.previous_bodies(entry.id)] == [first.body]
        for c in records[1:]:
            assert copy.get(c.kind, c.key).body == c.body  # type: ignore[union-attr]
        assert verify(copy).ok
    finally:
        copy.close()


def test_downgrade_turns_every_body_back_into_text(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Downgrading below the compressed bodies leaves every entry and previous body as its exact text (a
    plain text column again on PostgreSQL) and drops the dictionaries; upgrading again compresses them.
    """
    monkeypatch.setattr(codec, "TRAIN_MIN_BODIES", 40)
    engine = _at_previous_revision(db_url)
    originals = _seed_raw(engine, TEXTS[:50])
    upgrade_to_head(engine)
    assert all(codec.dictionary_of(b) for b in _stored(engine).values())
    with engine.begin() as conn:
        command.downgrade(_alembic(conn), PREVIOUS)
    with engine.connect() as conn:
        assert "body_dictionaries" not in conn.dialect.get_table_names(conn)
        previous = conn.execute(text("SELECT body FROM previous_bodies")).scalar_one()
    assert _stored(engine) == originals and previous == TEXTS[1][1]
    upgrade_to_head(engine)
    assert {i: codec.decode_body(b) for i, b in _stored(engine).items()} == originals
    engine.dispose()
