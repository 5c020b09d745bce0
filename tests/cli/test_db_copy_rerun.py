"""`syncd db copy` run again (issue 30.9): after it completed, or was killed after its last commit.

The kill is real: a child process runs the copy and SIGKILLs itself once the copy's last transaction is
committed (when the engines are disposed), or right after the commit of its last batch. The rerun is
the real command (`python -m syncd db copy`), so its exit status and words are what a user sees.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from syncd.store.blobs import put_blob
from syncd.store.models import SyncState
from syncd.store.repo import EntryContent, Store
from syncd.transfer.dbcopy import PROGRESS_PREFIX, copy_store
from tests.conftest import corpus_json
from tests.store.test_changes import DAY, LANCET, lancet_bodies, store_work

LANCET_TITLE = (
    "RETRACTED: Hydroxychloroquine or chloroquine with or without a macrolide for treatment of COVID-19: "
    "a multinational registry analysis"
)

KILL_AFTER_LAST_COMMIT = """
import os, signal, sys
from sqlalchemy.engine import Engine
from syncd.transfer.dbcopy import copy_store

def die(self, *args, **kwargs):  # the copy disposes its engines right after its last commit
    os.kill(os.getpid(), signal.SIGKILL)

Engine.dispose = die
copy_store(sys.argv[1], sys.argv[2], batch=1)
"""

KILL_AFTER_LAST_BATCH = """
import os, signal, sys
from syncd.transfer.dbcopy import COPY_TABLES, copy_store

last = COPY_TABLES[-1].name

def progress(table, rows, total):  # called after each committed batch
    if table == last:
        os.kill(os.getpid(), signal.SIGKILL)

copy_store(sys.argv[1], sys.argv[2], batch=1, progress=progress)
"""


PREVIEW = (
    "zenodo/non-json/"
    "records-22917909_files_Intensivregister_Deutschland_Altersgruppen.csv_content_bytes-0-299.exchange.json"
)


def _source(tmp_path: Path) -> str:
    """A store holding the Lancet paper (stored twice: one change row), a not-found DOI and a file preview."""
    url = f"sqlite:///{tmp_path / 'source.db'}"
    before, after = lancet_bodies()
    preview = corpus_json(PREVIEW)["body_text"].encode()
    store = Store.open(url)
    try:
        store_work(store, before, 1_700_000_000.0)
        store_work(store, after, 1_700_000_000.0 + DAY)
        store.put_content(EntryContent("crossref_work", "10.5555/none", "not_found", None, None))
        put_blob(
            store,
            "zenodo_preview",
            "22917909/Intensivregister_Deutschland_Altersgruppen.csv",
            preview,
            "text/csv",
            10_000_000,
        )
    finally:
        store.close()
    return url


def _run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120)


def _cli_copy(source: str, destination: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCD_")}
    return subprocess.run(
        [sys.executable, "-m", "syncd", "db", "copy", "--from", source, "--to", destination, *extra],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def _lancet_title(url: str) -> str:
    store = Store.open(url)
    try:
        entry = store.get("crossref_work", LANCET)
        assert entry is not None and entry.title is not None
        return entry.title
    finally:
        store.close()


def test_a_copy_killed_after_its_last_commit_is_complete_when_run_again(tmp_path: Path) -> None:
    """Killed (SIGKILL) after the commit that removes the progress rows: the rerun exits 0 and says complete.

    Before: the rerun found a destination holding a store and no progress row, and refused it (exit 2).
    """
    source = _source(tmp_path)
    destination = f"sqlite:///{tmp_path / 'copy.db'}"
    killed = _run(KILL_AFTER_LAST_COMMIT, source, destination)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    rerun = _cli_copy(source, destination)
    assert rerun.returncode == 0, rerun.stderr
    assert "already complete" in rerun.stdout and "nothing copied" in rerun.stdout
    as_json = _cli_copy(source, destination, "--json")
    assert as_json.returncode == 0, as_json.stderr
    report = json.loads(as_json.stdout)
    assert report["complete"] is True and report["resumed"] is False
    assert report["tables"]["entries"] == {"source": 2, "destination": 2, "copied": 0}
    assert report["tables"]["changes"] == {"source": 1, "destination": 1, "copied": 0}
    assert report["tables"]["blobs"] == {"source": 1, "destination": 1, "copied": 0}
    assert _lancet_title(destination) == LANCET_TITLE  # the retracted version, stored last


def test_a_copy_killed_after_its_last_batch_resumes_and_finishes(tmp_path: Path) -> None:
    """Killed after the last batch's commit (progress rows still there): the rerun resumes, exit 0.

    No row is copied twice and the progress rows are gone.
    """
    source = _source(tmp_path)
    destination = f"sqlite:///{tmp_path / 'copy.db'}"
    killed = _run(KILL_AFTER_LAST_BATCH, source, destination)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    rerun = _cli_copy(source, destination, "--json")
    assert rerun.returncode == 0, rerun.stderr
    report = json.loads(rerun.stdout)
    assert report["resumed"] is True and report["complete"] is False
    assert report["tables"]["entries"]["destination"] == 2 and report["tables"]["entries"]["copied"] == 0
    copy = Store.open(destination)
    try:
        with copy.read() as conn:
            names = [
                r[0] for r in conn.execute(SyncState.__table__.select().with_only_columns(SyncState.name))
            ]
        assert not [n for n in names if n.startswith(PROGRESS_PREFIX)]
    finally:
        copy.close()


def test_a_destination_holding_another_store_is_still_refused(tmp_path: Path) -> None:
    """A destination with other rows than the source's (an entry stored since): still refused, exit 2."""
    source = _source(tmp_path)
    destination = f"sqlite:///{tmp_path / 'copy.db'}"
    copy_store(source, destination)
    other = Store.open(destination)
    try:
        other.put_content(EntryContent("crossref_work", "10.5555/later", "not_found", None, None))
    finally:
        other.close()
    rerun = _cli_copy(source, destination)
    assert rerun.returncode == 2
    assert "already holds a store (3 entries" in rerun.stderr


@pytest.mark.parametrize("batch", [1, 500])
def test_copy_store_run_twice_reports_complete(tmp_path: Path, batch: int) -> None:
    """copy_store itself: the second run returns complete=True with the counts, copying nothing."""
    source = _source(tmp_path)
    destination = f"sqlite:///{tmp_path / f'copy{batch}.db'}"
    first = copy_store(source, destination, batch=batch)
    assert not first.complete and first.tables["entries"]["copied"] == 2
    second = copy_store(source, destination, batch=batch)
    assert second.complete and not second.resumed
    assert {name: t["copied"] for name, t in second.tables.items()} == dict.fromkeys(first.tables, 0)
    assert {name: t["destination"] for name, t in second.tables.items()} == {
        name: t["destination"] for name, t in first.tables.items()
    }
