"""PostgreSQL specifics.

Migrations on an empty server database, concurrent writers, search, the budget's row lock across
engines, verify/repair, ``db copy`` between backends, the daemon lock.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from syncd.budget.buckets import Budget
from syncd.config import Settings
from syncd.crossref.lookups import work_content
from syncd.errors import InvalidInput
from syncd.registry import POOLS
from syncd.store.engine import current_revision, head_revision, make_engine, upgrade_to_head
from syncd.store.leader import DaemonLock, lock_holder
from syncd.store.maintenance import iter_entries, verify
from syncd.store.repo import EntryContent, Store
from syncd.store.watches import add_watch, save_sync_state
from syncd.transfer.dbcopy import PROGRESS_PREFIX, copy_store
from tests.conftest import _admin, _with_db, corpus_json

WORK = "crossref/work/10.1101_598821.json"


@pytest.fixture
def empty_pg_url(pg_server_url: str | None) -> Iterator[str]:
    """A new, empty PostgreSQL database (no schema), dropped afterwards."""
    if pg_server_url is None:
        pytest.skip("no PostgreSQL available")
    name = f"syncd_e_{uuid.uuid4().hex[:12]}"
    _admin(pg_server_url, f"CREATE DATABASE {name}")
    yield _with_db(pg_server_url, name)
    _admin(pg_server_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_concurrent_upgrades_of_an_empty_database(empty_pg_url: str) -> None:
    """Four processes' worth of engines upgrading at once: all reach head, the schema is built once.

    The tsvector column and its GIN index exist (0002); no FTS5 object is attempted on PostgreSQL.
    """
    engines = [make_engine(empty_pg_url) for _ in range(4)]
    results: list[object] = []

    def run(engine: object) -> None:
        try:
            results.append(upgrade_to_head(engine))  # type: ignore[arg-type]
        except Exception as exc:  # collected and asserted below
            results.append(exc)

    threads = [threading.Thread(target=run, args=(e,)) for e in engines]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results == [head_revision()] * 4
    assert current_revision(engines[0]) == head_revision() == "0016"
    with engines[0].connect() as conn:
        index = conn.execute(
            text("SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_entries_search_tsv'")
        ).scalar_one()
        assert "gin (search_tsv)" in index
        generated = conn.execute(
            text(
                "SELECT is_generated FROM information_schema.columns "
                "WHERE table_name = 'entries' AND column_name = 'search_tsv'"
            )
        ).scalar_one()
        assert generated == "ALWAYS"
    for e in engines:
        e.dispose()


def test_concurrent_writers_of_one_entry_never_hit_the_unique_key(pg_url: str) -> None:
    """Eight engines store the same new DOI at the same instant: one row, eight checks, no error."""
    message = corpus_json(WORK)["message"]
    content = work_content("10.1101/598821", message, None)
    stores = [Store.open(pg_url, upgrade=False) for _ in range(8)]
    barrier = threading.Barrier(len(stores))
    errors: list[BaseException] = []

    def put(store: Store) -> None:
        barrier.wait()
        try:
            store.put_content(content)
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=put, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    entry = stores[0].get("crossref_work", "10.1101/598821")
    assert entry is not None and entry.checks == 8 and entry.changes == 1
    with stores[0].read() as conn:
        assert conn.execute(text("SELECT count(*) FROM entries")).scalar_one() == 1
    for s in stores:
        s.close()


def _seed(store: Store) -> None:
    message = corpus_json(WORK)["message"]
    store.put_content(work_content("10.1101/598821", message, None), now=1000.0)
    titles = ["Falcon flight over Zanzibar", "Owl quokka genes", "Genomes of eagles and falcons"]
    for i, title in enumerate(titles):
        store.put_content(
            EntryContent("crossref_work", f"10.9/{i}", "ok", "{}", f"h{i}", title=title, search_text=title),
            now=1000.0 + i,
        )
    store.put_content(
        EntryContent(
            "zenodo_record",
            "77",
            "ok",
            '{"id": "77", "metadata": {"title": "Raptor dataset"}}',
            "z",
            title="Raptor dataset",
            search_text="raptor data",
        ),
        now=1000.0,
    )


def test_search_answers_alike_on_both_backends(pg_url: str, tmp_path: Path) -> None:
    """Same entries, same queries: the same matches (as sets; ranking formulas differ), syntax inert."""
    pg, lite = Store(make_engine(pg_url)), Store.open(f"sqlite:///{tmp_path / 's.db'}")
    for store in (pg, lite):
        _seed(store)

    def keys(store: Store, query: str, kind: str | None = None) -> set[str]:
        return {e.key for e in store.search(query, kind=kind, limit=50)}

    for query, kind in [
        ("raptor", None),
        ("raptor", "crossref_work"),
        ("falcon", None),  # stemming: falcons, Falcon
        ("genomes falcons", None),
        ('title:raptor OR -"owl', None),  # search syntax is searched as words, never an error
        ("nothing-like-this", None),
    ]:
        assert keys(pg, query, kind) == keys(lite, query, kind), query
    assert keys(pg, "falcon") == {"10.1101/598821", "10.9/0", "10.9/2"}
    for store in (pg, lite):
        page, total = store.search_page(["zanzibar", "quokkas"], kind="crossref_work", offset=0, limit=1)
        assert total == 2 and len(page) == 1
        rest, _ = store.search_page(["zanzibar", "quokkas"], kind="crossref_work", offset=1, limit=5)
        assert {page[0].key, rest[0].key} == {"10.9/0", "10.9/1"}
    # the title weighs more than the text on PostgreSQL too
    assert pg.search("raptor", kind="crossref_work")[0].key == "10.1101/598821"
    pg.close()
    lite.close()


def test_verify_finds_and_repairs_a_missing_search_index(pg_url: str) -> None:
    """`cache verify` on PostgreSQL: a dropped GIN index is a problem; --repair builds it again."""
    store = Store(make_engine(pg_url))
    _seed(store)
    assert verify(store).ok
    with store.write() as conn:
        conn.execute(text("DROP INDEX ix_entries_search_tsv"))
    found = verify(store)
    assert not found.ok and "ix_entries_search_tsv is missing" in found.problems[0]
    fixed = verify(store, repair=True)
    assert fixed.ok and fixed.repaired == ["rebuilt the search index"] and fixed.fts_rows == 5
    assert store.size_bytes() and store.size_bytes() > 0  # type: ignore[operator]
    store.close()


def _settings(db_url: str, **pool: float) -> Settings:
    return Settings(
        database_url=db_url,
        budget={"crossref_single": {"per_s": 1000.0, "burst": 1000, "in_flight": 2, **pool}},
        crossref={"mailto": "ci@example.org"},
    )


def test_in_flight_limit_holds_across_engines(pg_url: str) -> None:
    """Six engines (as six workstations) race for a 2-slot pool: never more than 2 requests at once.

    The race runs until both slots were seen in use at once and 20 leases were granted (or 60 s on a
    machine too busy for that), so a slow machine only makes it longer, never wrong.
    """
    settings = _settings(pg_url)
    stores = [Store(make_engine(pg_url)) for _ in range(6)]
    lock = threading.Lock()
    current, peak, granted = [0], [0], [0]
    end = time.monotonic() + 60.0

    def worker(store: Store) -> None:
        budget = Budget(store, settings, pools=POOLS)
        while time.monotonic() < end and not (peak[0] >= 2 and granted[0] >= 20):
            grant = budget.try_acquire("crossref_single")
            if grant.lease is None:
                time.sleep(0.002)
                continue
            with lock:
                current[0] += 1
                peak[0] = max(peak[0], current[0])
                granted[0] += 1
            time.sleep(0.01)
            with lock:
                current[0] -= 1
            budget.release(grant.lease)

    threads = [threading.Thread(target=worker, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    assert peak[0] == 2
    assert granted[0] >= 20
    for s in stores:
        s.close()


def test_db_copy_sqlite_to_postgresql_resumes_and_back(pg_url: str, tmp_path: Path) -> None:
    """SQLite -> PostgreSQL, interrupted after two batches and resumed, counts checked; then back.

    The copy keeps bodies, validators and ids; the destination's own index answers searches; a new
    entry after the copy gets a fresh id (sequences moved past the copied ids).
    """
    src_url = f"sqlite:///{tmp_path / 'src.db'}"
    src = Store.open(src_url)
    _seed(src)
    for i in range(20):
        src.put_content(EntryContent("crossref_work", f"10.5/{i}", "not_found", None, None), now=500.0 + i)
    add_watch(src, "doi", {"doi": "10.1101/598821"})
    save_sync_state(src, "watch:1", cursor={"page": 2})
    src.set_concept("76", "77")
    src.close()
    _admin_drop_schema(pg_url)

    calls = [0]

    def interrupt(table: str, rows: int, total: int) -> None:
        calls[0] += 1
        if calls[0] == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        copy_store(src_url, pg_url, batch=4, progress=interrupt)
    dst = Store(make_engine(pg_url))
    with dst.read() as conn:
        assert conn.execute(text("SELECT count(*) FROM entries")).scalar_one() == 8
        assert (
            conn.execute(
                text("SELECT count(*) FROM sync_state WHERE name LIKE :p"), {"p": PROGRESS_PREFIX + "%"}
            ).scalar_one()
            == 1
        )
    report = copy_store(src_url, pg_url, batch=4)
    assert report.resumed
    assert report.tables["entries"] == {"source": 25, "destination": 25, "copied": 17}
    assert all(t["source"] == t["destination"] for t in report.tables.values())
    with dst.read() as conn:
        assert conn.execute(text("SELECT count(*) FROM sync_state")).scalar_one() == 1  # progress rows gone
    assert {e.key for e in dst.search("falcon")} == {"10.1101/598821", "10.9/0", "10.9/2"}
    work = dst.get("crossref_work", "10.1101/598821")
    assert work is not None and work.fetched_at == 1000.0 and work.title and work.title.startswith("Raptor")
    assert dst.concept_latest("76") is not None
    new, _ = dst.put_content(EntryContent("crossref_work", "10.5/new", "not_found", None, None))
    assert new.id == 26
    with pytest.raises(InvalidInput, match="already holds a store"):
        copy_store(src_url, pg_url)

    back_url = f"sqlite:///{tmp_path / 'back.db'}"
    back = copy_store(pg_url, back_url, batch=7)
    assert back.tables["entries"]["destination"] == 26 and not back.resumed
    round_trip = Store.open(back_url)
    assert [e.body for e in iter_entries(round_trip)] == [e.body for e in iter_entries(dst)]
    assert {e.key for e in round_trip.search("falcon")} == {"10.1101/598821", "10.9/0", "10.9/2"}
    round_trip.close()
    dst.close()


def _admin_drop_schema(url: str) -> None:
    """Empty the cloned test database (the copy must start from an empty destination)."""
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()


def test_daemon_lock_elects_one_holder_and_fails_over(pg_url: str) -> None:
    """Two daemons' locks: one holds; when its session dies, the standby takes over on its next poll."""
    engine = make_engine(pg_url)
    first, second = DaemonLock(engine, name="syncd-daemon a"), DaemonLock(engine, name="syncd-daemon b")
    assert first.poll() is True and first.held
    assert second.poll() is False and not second.held
    assert first.poll() is True  # still alive
    assert lock_holder(engine) == "syncd-daemon a"
    # the holder's session is killed (its machine vanished, the server dropped it)
    with engine.connect() as conn:
        kill = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = :n"
        conn.execute(text(kill), {"n": "syncd-daemon a"})
    assert second.poll() is True
    assert lock_holder(engine) == "syncd-daemon b"
    assert first.poll() is False and not first.held  # it notices and steps down
    second.release()
    assert first.poll() is True
    first.release()
    assert lock_holder(engine) is None
    engine.dispose()


def test_daemon_lock_on_sqlite_is_a_lock_file(tmp_path: Path) -> None:
    """One file: the first daemon takes the lock file beside it and is named its holder (issue 12.9)."""
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}")
    lock = DaemonLock(engine, name="syncd-daemon host 1")
    assert not lock.held and lock.poll() and lock.held
    assert lock_holder(engine) == "syncd-daemon host 1"
    lock.release()
    assert lock_holder(engine) is None
    engine.dispose()
