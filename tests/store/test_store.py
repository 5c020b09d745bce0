"""The store: migrations, one row per key, unchanged content never rewritten, nothing lost."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import text

from syncd.config import Settings
from syncd.crossref.lookups import work_content
from syncd.crossref.rules import WORK_RULES
from syncd.registry import KINDS
from syncd.road import policy
from syncd.store.engine import current_revision, head_revision, make_engine, upgrade_to_head
from syncd.store.repo import EntryContent, Store
from syncd.store.search import entry_id
from tests.conftest import corpus_json

pytestmark = pytest.mark.both_backends

WORK = "crossref/work/10.1101_598821.json"


def _fts_rows(store: Store, word: str) -> list[int]:
    """Entry ids whose index matches ``word`` (``title:word`` for the title only), on either backend."""
    with store.read() as conn:
        if store.engine.dialect.name == "postgresql":
            column, _, term = word.rpartition(":")
            vector = "to_tsvector('english', coalesce(title, ''))" if column == "title" else "search_tsv"
            sql = text(f"SELECT id FROM entries WHERE {vector} @@ plainto_tsquery('english', :w)")
            return [r[0] for r in conn.execute(sql, {"w": term})]
        return [
            entry_id(r[0])  # the index rowid carries the kind/status band (migration 0006)
            for r in conn.execute(
                text("SELECT rowid FROM entries_fts WHERE entries_fts MATCH :w"), {"w": word}
            )
        ]


def _index_version(store: Store) -> object:
    """What changes when an entry's index rows are rewritten (FTS5 data pages; PostgreSQL row versions)."""
    with store.read() as conn:
        if store.engine.dialect.name == "postgresql":
            return conn.execute(text("SELECT array_agg(xmin::text ORDER BY id) FROM entries")).scalar_one()
        return conn.execute(text("SELECT count(*) FROM entries_fts_data")).scalar_one()


def test_upgrade_is_idempotent_and_sets_wal(tmp_path: Path) -> None:
    """upgrade_to_head twice leaves the database at head, in WAL mode, with FTS5 triggers present."""
    url = f"sqlite:///{tmp_path / 'a' / 'syncd.db'}"
    engine = make_engine(url)
    assert upgrade_to_head(engine) == head_revision()
    assert upgrade_to_head(engine) == head_revision()
    assert current_revision(engine) == head_revision()
    engine.dispose()
    con = sqlite3.connect(tmp_path / "a" / "syncd.db")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    triggers = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='trigger'")}
    assert triggers == {"entries_fts_ai", "entries_fts_ad", "entries_fts_au"}
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_database_file_is_kept_to_owner_and_group(tmp_path: Path) -> None:
    """The store file is created with mode 0o660 (no access for other users)."""
    Store.open(f"sqlite:///{tmp_path / 'syncd.db'}").close()
    assert (tmp_path / "syncd.db").stat().st_mode & 0o777 == 0o660


def test_unchanged_content_bumps_validation_only(store: Store) -> None:
    """Same content hash: the entry row (body, fetched_at) and its FTS rows stay; validated_at moves."""
    message = corpus_json(WORK)["message"]
    content = work_content("10.1101/598821", message, None)
    first, changed = store.put_content(content, now=1000.0)
    assert changed is True
    assert (
        first.title == "Raptor genomes reveal evolutionary signatures of predatory and nocturnal lifestyles"
    )
    assert _fts_rows(store, "raptor") == [first.id]
    fts_before = _index_version(store)
    again, changed = store.put_content(content, now=2000.0)
    assert changed is False
    assert (again.id, again.body, again.fetched_at) == (first.id, first.body, 1000.0)
    assert again.validated_at == 2000.0
    assert again.checks == 2 and again.changes == 1
    assert _index_version(store) == fts_before


def test_volatile_fields_do_not_count_as_change(store: Store) -> None:
    """A re-indexed work (new `indexed` stamp, new score) hashes the same: no rewrite."""
    message = corpus_json(WORK)["message"]
    store.put_content(work_content("10.1101/598821", message, None), now=1000.0)
    reindexed = dict(message, indexed={"date-time": "2027-01-01T00:00:00Z", "timestamp": 1798761600000})
    _, changed = store.put_content(work_content("10.1101/598821", reindexed, None), now=2000.0)
    assert changed is False


def test_changed_content_replaces_body_and_index(store: Store) -> None:
    """A new title is stored with its index rows in one transaction; the old title no longer matches."""
    message = corpus_json(WORK)["message"]
    first, _ = store.put_content(work_content("10.1101/598821", message, None), now=1000.0)
    renamed = dict(message, title=["Falcon genomes"])
    second, changed = store.put_content(work_content("10.1101/598821", renamed, None), now=2000.0)
    assert changed is True
    assert second.id == first.id and second.title == "Falcon genomes" and second.fetched_at == 2000.0
    assert _fts_rows(store, "title:raptor") == []
    assert _fts_rows(store, "title:falcon") == [first.id]


def test_not_found_never_replaces_a_stored_body(store: Store) -> None:
    """A later 404 (index lag, BC-09) keeps the stored work and records not_found beside it."""
    message = corpus_json(WORK)["message"]
    first, _ = store.put_content(work_content("10.1101/598821", message, None), now=1000.0)
    miss = EntryContent("crossref_work", "10.1101/598821", "not_found", None, None)
    kept, changed = store.put_content(miss, now=2000.0)
    assert changed is False
    assert kept.status == "ok" and kept.body == first.body and kept.last_error == "not_found"


def test_stale_listing_is_oldest_first(store: Store) -> None:
    """stale() lists entries past their TTL ordered by validated_at, and only those."""
    for i, key in enumerate(["10.1/a", "10.1/b", "10.1/c"]):
        store.put_content(EntryContent("crossref_work", key, "not_found", None, None), now=100.0 * (3 - i))
    rows = store.stale(policy.staleness({("crossref_work", "not_found"): 50.0}, 320.0), limit=10)
    assert [r.key for r in rows] == ["10.1/c", "10.1/b"]


def test_volatile_counters_refreshed_in_place(store: Store) -> None:
    """A new citation count is laid over the stored body without rewriting it (DESIGN: counters in place)."""
    from syncd.store.content import document

    message = corpus_json(WORK)["message"]
    first, _ = store.put_content(work_content("10.1101/598821", message, None), now=1000.0)
    assert document(first, WORK_RULES)["is-referenced-by-count"] == message["is-referenced-by-count"]
    cited = dict(message, **{"is-referenced-by-count": 42})
    again, changed = store.put_content(work_content("10.1101/598821", cited, None), now=2000.0)
    assert changed is False
    assert again.body == first.body and again.fetched_at == 1000.0
    assert document(again, WORK_RULES)["is-referenced-by-count"] == 42


def test_background_sweep_skips_search_pages(settings: Settings) -> None:
    """The daemon's sweep never revalidates stored search pages; works and entities it does."""
    kinds = {kind for kind, _ in policy.ttls(settings.ttl, KINDS.values(), background=True)}
    assert "crossref_work" in kinds and "zenodo_record" in kinds and "crossref_journal" in kinds
    assert "crossref_search" not in kinds and "zenodo_search" not in kinds
    assert "crossref_search" in {kind for kind, _ in policy.ttls(settings.ttl, KINDS.values())}


def test_nul_characters_never_reach_the_search_columns(store: Store) -> None:
    """A title with NUL (hostile upstream) is stored without it (PostgreSQL text cannot hold NUL)."""
    content = EntryContent(
        "zenodo_record", "1", "ok", '{"title": "a\\u0000b"}', "h", title="a\x00b", search_text="c\x00d"
    )
    entry, _ = store.put_content(content)
    assert entry.title == "ab"
    assert [e.key for e in store.search("ab")] == ["1"]
