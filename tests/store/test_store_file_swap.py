"""A store whose SQLite file is replaced or deleted while it is open (issue 30.2).

Each test holds a real :class:`~syncd.store.repo.Store` open across the swap, made for real on disk
(``shutil.copyfile`` over the file: same inode, as ``cp`` does; ``os.replace``: a new inode, as
``mv`` does; ``os.unlink``), and reads the result from a second process that opens the file afresh,
as the next CLI command or a restarted daemon would. The live store holds real works from the corpus
in its WAL when the swap happens: the backup's three works must survive, never masked or overwritten
by the old WAL.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from syncd.crossref.lookups import work_content
from syncd.errors import StoreError
from syncd.store import fileguard
from syncd.store.engine import point_reader
from syncd.store.fileguard import file_guard
from syncd.store.repo import Store
from tests.conftest import CORPUS, corpus_json

BACKUP_WORKS = {
    "10.1101/598821": "10.1101_598821",
    "10.1016/j.apsusc.2007.01.131": "10.1016_j.apsusc.2007.01.131",
    "10.1103/physreva.106.022212": "10.1103_physreva.106.022212",
}
LATER_WORKS = {
    "10.1002/jor.1100150407": "10.1002_jor.1100150407",
    "10.1016/j.actao.2019.01.006": "10.1016_j.actao.2019.01.006",
}
RAPTOR_TITLE = "Raptor genomes reveal evolutionary signatures of predatory and nocturnal lifestyles"
EVENTS = ("event=store_replaced", "event=store_deleted", "event=store_overwritten", "event=store_unusable")


@pytest.fixture(autouse=True)
def _quick_settle(monkeypatch: pytest.MonkeyPatch) -> None:
    """A copied file is taken after 0.05 s unchanged instead of 1 s (the copies here are done at once)."""
    monkeypatch.setattr(fileguard, "SETTLE_S", 0.05)


def _put(store: Store, works: dict[str, str]) -> None:
    for doi, name in works.items():
        body = corpus_json(f"crossref/work/{name}.json")
        store.put_content(work_content(doi, body["message"], json.dumps(body)))


def _keys_elsewhere(db: Path) -> list[str]:
    """The works another process finds in ``db`` (opening it afresh, WAL and all), plus its integrity."""
    script = (
        "import sqlite3, sys\n"
        "conn = sqlite3.connect(sys.argv[1])\n"
        "print(conn.execute('PRAGMA integrity_check').fetchone()[0])\n"
        "for (key,) in conn.execute(\"SELECT key FROM entries WHERE kind = 'crossref_work' ORDER BY key\"):\n"
        "    print(key)\n"
    )
    out = subprocess.run([sys.executable, "-c", script, str(db)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    integrity, *keys = out.stdout.split()
    assert integrity == "ok"
    return keys


def _backup_and_live(tmp_path: Path) -> tuple[Path, Path, Store]:
    """backup.db: the three works, closed. syncd.db: a copy of it, open, with two more works in its WAL."""
    backup, live = tmp_path / "backup.db", tmp_path / "syncd.db"
    store = Store.open(f"sqlite:///{backup}")
    _put(store, BACKUP_WORKS)
    store.close()
    shutil.copyfile(backup, live)
    store = Store.open(f"sqlite:///{live}")
    _put(store, LATER_WORKS)
    assert Path(f"{live}-wal").stat().st_size > 0  # the later works are in the WAL, not the file
    return backup, live, store


def _events(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith(EVENTS)]


def test_a_backup_copied_over_the_open_file_keeps_its_entries(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """`cp backup.db syncd.db` under an open store: the store and a fresh process see the backup's works.

    The copy writes into the same inode; the store's next write notices it (no checkpoint ran, yet
    the file changed), restores the file's content through the WAL and goes on writing into it.
    Before: the old WAL was read over the copy and checkpointed into it: 0/3 of the backup's works.
    """
    backup, live, store = _backup_and_live(tmp_path)
    try:
        inode = live.stat().st_ino
        shutil.copyfile(backup, live)
        assert live.stat().st_ino == inode
        with caplog.at_level(logging.INFO, logger="syncd.store"):
            _put(store, {"10.1101/598821": "10.1101_598821"})  # the next write: stored again, unchanged
        assert _keys_elsewhere(live) == sorted(BACKUP_WORKS)
        assert {k for k in BACKUP_WORKS | LATER_WORKS if store.get("crossref_work", k)} == set(BACKUP_WORKS)
        raptor = store.get("crossref_work", "10.1101/598821")
        assert raptor is not None and raptor.title == RAPTOR_TITLE
        assert any("event=store_replaced how=overwritten" in e for e in _events(caplog))
    finally:
        store.close()
    assert _keys_elsewhere(live) == sorted(BACKUP_WORKS)  # the store's close did not checkpoint the old WAL


def test_a_backup_moved_over_the_open_file_keeps_its_entries(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """`mv` of a backup over an open store: it reopens on the new file; the old WAL is never applied.

    The next write lands in the restored file. Before: the old -wal/-shm stayed at the path and the
    next process to open the new file read the old database's pages over it.
    """
    backup, live, store = _backup_and_live(tmp_path)
    try:
        staged = tmp_path / "restore.db"
        shutil.copyfile(backup, staged)
        os.replace(staged, live)
        with caplog.at_level(logging.INFO, logger="syncd.store"):
            _put(store, {"10.1002/jor.1100150407": "10.1002_jor.1100150407"})
        assert _keys_elsewhere(live) == sorted([*BACKUP_WORKS, "10.1002/jor.1100150407"])
        guard = file_guard(store.engine)
        assert guard is not None and guard.reopened == 1
        assert guard.identity == (live.stat().st_dev, live.stat().st_ino)
        events = _events(caplog)
        assert len(events) == 1 and "event=store_replaced how=renamed" in events[0], events
        assert "old WAL was not applied" in events[0]
    finally:
        store.close()
    assert _keys_elsewhere(live) == sorted([*BACKUP_WORKS, "10.1002/jor.1100150407"])


def test_a_file_moved_away_keeps_its_last_writes(tmp_path: Path) -> None:
    """`mv syncd.db old.db`, a backup put in its place: old.db holds every work (its WAL went into it)."""
    backup, live, store = _backup_and_live(tmp_path)
    try:
        old = tmp_path / "old.db"
        os.rename(live, old)
        shutil.copyfile(backup, live)
        store.get("crossref_work", "10.1101/598821")
        _put(store, {"10.1101/598821": "10.1101_598821"})
    finally:
        store.close()
    assert not Path(f"{old}-wal").exists()  # nobody would find it under that name: it went into old.db
    assert _keys_elsewhere(old) == sorted(BACKUP_WORKS | LATER_WORKS)
    assert _keys_elsewhere(live) == sorted(BACKUP_WORKS)


def test_a_deleted_file_is_rehomed_with_every_commit(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The file deleted under an open store: it is copied back to its path; later writes land there.

    Before: writes went on into the deleted inode (lost at the next start), logged as nothing.
    """
    _backup, live, store = _backup_and_live(tmp_path)
    try:
        live.unlink()
        with caplog.at_level(logging.WARNING, logger="syncd.store"):
            store.put_content(work_content(*_later_work("10.1016/j.actao.2019.01.006")))
        events = _events(caplog)
        assert len(events) == 1 and events[0].startswith("event=store_deleted action=rehomed"), events
        assert live.exists()
        assert _keys_elsewhere(live) == sorted(BACKUP_WORKS | LATER_WORKS)
        body = corpus_json("crossref/work/10.1103_physreva.106.022212.json")
        body["message"]["title"] = ["Toy model for local and deterministic wave-function collapse (v2)"]
        store.put_content(work_content("10.1103/physreva.106.022212", body["message"], json.dumps(body)))
    finally:
        store.close()
    reopened = Store.open(f"sqlite:///{live}")
    try:
        entry = reopened.get("crossref_work", "10.1103/physreva.106.022212")
        assert entry is not None and entry.title is not None and entry.title.endswith("(v2)")
    finally:
        reopened.close()


def _later_work(doi: str) -> tuple[str, dict[str, object], str]:
    body = corpus_json(f"crossref/work/{LATER_WORKS[doi]}.json")
    return doi, body["message"], json.dumps(body)


def test_a_file_replaced_by_something_else_refuses_writes_then_takes_a_good_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A non-database moved over the file: writes answer store_unavailable naming it; a good file is taken.

    Reads go on from the connections still open meanwhile; nothing is written into either file.
    """
    monkeypatch.setattr(fileguard, "RETRY_S", 0.0)
    backup, live, store = _backup_and_live(tmp_path)
    try:
        junk = tmp_path / "junk"
        junk.write_bytes(b"not a database\n" * 500)
        os.replace(junk, live)
        with caplog.at_level(logging.ERROR, logger="syncd.store"), pytest.raises(StoreError) as err:
            _put(store, {"10.1101/598821": "10.1101_598821"})
        assert err.value.reason == "store_unavailable" and "not a usable database" in err.value.message
        assert [e for e in _events(caplog) if e.startswith("event=store_unusable")]
        assert live.read_bytes().startswith(b"not a database")
        staged = tmp_path / "restore.db"
        shutil.copyfile(backup, staged)
        os.replace(staged, live)
        _put(store, {"10.1002/jor.1100150407": "10.1002_jor.1100150407"})
        assert _keys_elsewhere(live) == sorted([*BACKUP_WORKS, "10.1002/jor.1100150407"])
    finally:
        store.close()


CONCURRENT_WRITER = """
import json, sqlite3, sys
from syncd.crossref.lookups import work_content
from syncd.store.repo import Store
db, body_file, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
body = json.loads(open(body_file, encoding="utf-8").read())
store = Store.open(f"sqlite:///{db}")
for i in range(n):
    message = dict(body["message"], DOI=f"10.5555/other-{i}")
    store.put_content(work_content(f"10.5555/other-{i}", message, json.dumps({"message": message})))
    if i % 10 == 9:  # another process's checkpoint changes the file under the first
        sqlite3.connect(db).execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
store.close()
"""


def test_checkpoints_by_this_and_another_process_are_never_taken_for_a_restore(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two processes writing one store, checkpointing it every 10 writes: no switch, no restore, every row.

    The guard's in-place check must tell a checkpoint (which raises the WAL index's marks first) from
    another writer; a false alarm would roll the store back to the file.
    """
    db = tmp_path / "shared.db"
    store = Store.open(f"sqlite:///{db}")
    body = corpus_json("crossref/work/10.1101_598821.json")
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            CONCURRENT_WRITER,
            str(db),
            str(CORPUS / "crossref/work/10.1101_598821.json"),
            "150",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with caplog.at_level(logging.INFO, logger="syncd.store"):
            for i in range(150):
                message = dict(body["message"], DOI=f"10.5555/mine-{i}")
                store.put_content(
                    work_content(f"10.5555/mine-{i}", message, json.dumps({"message": message}))
                )
                if i % 10 == 9:
                    with point_reader(store.engine).connect() as conn:  # no transaction around it
                        conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            _, errors = writer.communicate(timeout=120)
            store.get("crossref_work", "10.5555/mine-0")
            guard = file_guard(store.engine)
            assert guard is not None
            guard.check(deep=True)
        assert writer.returncode == 0, errors
        assert not _events(caplog), _events(caplog)
        assert not [line for line in errors.splitlines() if line.startswith(EVENTS)]
        assert guard.reopened == 0 and guard.checkpoints_seen >= 5  # the file did change under it
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT count(*) FROM entries").fetchone()[0] == 300
    finally:
        if writer.poll() is None:
            writer.kill()
        store.close()
