"""Crash safety: SIGKILL a writing process at random points, many times; nothing committed is lost."""

from __future__ import annotations

import json
import os
import random
import select
import signal
import sqlite3
import time
from pathlib import Path

import pytest
from sqlalchemy import text

from syncd.crossref.lookups import work_content
from syncd.store.repo import Store
from tests.conftest import corpus_json

pytestmark = pytest.mark.serial  # real processes

KILLS = 60


def _writer(db_url: str, wfd: int) -> None:  # pragma: no cover - runs in the forked child
    """Store works 10.5555/crash-N forever, one transaction each, reporting each commit on ``wfd``."""
    store = Store.open(db_url)
    with store.read() as conn:
        done = conn.execute(text("SELECT count(*) FROM entries")).scalar_one()
    base = corpus_json("crossref/work/10.1101_598821.json")["message"]
    os.write(wfd, b"ready\n")
    i = int(done)
    while True:
        key = f"10.5555/crash-{i}"
        message = dict(base, DOI=key, title=[f"Crash-safety work {i}"])
        entry, _ = store.put_content(work_content(key, message, json.dumps({"message": message})))
        os.write(wfd, f"{key} {entry.content_hash}\n".encode())
        i += 1


def _read_available(rfd: int, buf: bytearray, until: float, stop: bytes | None = None) -> None:
    while stop is None or stop not in buf:
        left = until - time.monotonic()
        if left <= 0:
            return
        ready, _, _ = select.select([rfd], [], [], left)
        if not ready:
            return
        chunk = os.read(rfd, 65536)
        if not chunk:
            return
        buf.extend(chunk)


def test_sigkill_at_random_points_loses_nothing(tmp_path: Path) -> None:
    """60 SIGKILLs mid-write: integrity_check ok, every committed work intact, each restart resumes."""
    db_url = f"sqlite:///{tmp_path / 'crash.db'}"
    Store.open(db_url).close()
    rng = random.Random(20261129)
    committed: dict[str, str] = {}
    first_keys: list[int] = []
    for _ in range(KILLS):
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            os.close(rfd)
            try:
                _writer(db_url, wfd)
            finally:
                os._exit(1)
        os.close(wfd)
        buf = bytearray()
        _read_available(rfd, buf, time.monotonic() + 60, stop=b"ready\n")
        assert buf.startswith(b"ready\n")
        # let a random number of commits land, then kill at a random instant (often mid-transaction)
        wanted = rng.randint(0, 4)
        deadline = time.monotonic() + 10
        while buf.count(b"\n") < 1 + wanted and time.monotonic() < deadline:
            _read_available(rfd, buf, time.monotonic() + 0.05)
        time.sleep(rng.uniform(0.0, 0.01))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        _read_available(rfd, buf, time.monotonic() + 0.2)
        os.close(rfd)
        lines = [ln.split() for ln in buf.decode().splitlines()[1:] if ln.strip()]
        if lines:
            first_keys.append(int(lines[0][0].rsplit("-", 1)[1]))
        for key, digest in lines:
            committed[key] = digest
        con = sqlite3.connect(tmp_path / "crash.db")
        try:
            assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            stored = dict(con.execute("SELECT key, content_hash FROM entries"))
        finally:
            con.close()
        lost = sorted(k for k in committed if stored.get(k) != committed[k])
        assert not lost, f"committed entries lost: {lost[:5]}"
    print(f"figures: kills={KILLS} committed_checked={len(committed)} lost=0 integrity=ok")
    assert len(committed) >= KILLS // 2  # the children really wrote (some kills land before a commit)
    assert first_keys == sorted(first_keys)  # every restart resumed after what was stored
    con = sqlite3.connect(tmp_path / "crash.db")
    try:
        assert (
            con.execute("SELECT count(*) FROM entries").fetchone()[0]
            == con.execute("SELECT count(*) FROM entries_fts").fetchone()[0]
        )
    finally:
        con.close()
