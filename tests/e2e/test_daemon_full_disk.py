"""The daemon on a full disk, a read-only filesystem, a directory it cannot write (issue 30.7).

The daemon writes two kinds of file at start: the database (its ``-wal``/``-shm`` and migrations) and
the SQLite daemon lock file ``<database>.daemon.lock``. The lock's failures are simulated where they
happen (``os.open`` / ``os.pwrite`` raising the OS error); the full disk is also made for real: a 2 MB
tmpfs mounted in a private mount namespace (``unshare -rm``, skipped where the kernel refuses it),
filled to the last byte, and a real ``syncd daemon`` started on it, answering a real MCP client.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp import Client
from sqlalchemy import create_engine

from syncd.store import leader
from syncd.store.leader import DaemonLock, lock_holder
from tests.conftest import CORPUS
from tests.e2e.test_processes import RAPTOR_TITLE, ROOT, _env, _free_port
from tests.fakeupstream import FakeUpstream

RAPTOR = "10.1101/598821"


def _enospc(*_args: object, **_kwargs: object) -> int:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_lock_whose_name_cannot_be_written_is_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """ENOSPC writing the holder's name: the lock is taken anyway (one warning), the holder reads as unknown.

    Before: the OSError escaped DaemonLock.poll and `syncd daemon` died with a traceback at start.
    """
    engine = create_engine(f"sqlite:///{tmp_path}/syncd.db")
    lock = DaemonLock(engine, name="syncd-daemon a 1")
    monkeypatch.setattr(leader.os, "pwrite", _enospc)
    with caplog.at_level(logging.WARNING, logger="syncd.leader"):
        assert lock.poll() is True and lock.held
        assert lock.poll() is True
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "event=leader_lock_unnamed cause=disk_full" in warnings[0]
    assert lock_holder(engine) == ""  # held, name unknown
    second = DaemonLock(engine, name="syncd-daemon b 2")
    assert second.poll() is False  # still exclusive
    lock.release()
    assert lock_holder(engine) is None


@pytest.mark.parametrize(
    ("code", "cause"),
    [(errno.ENOSPC, "disk_full"), (errno.EROFS, "read_only"), (errno.EACCES, "permission_denied")],
)
def test_a_lock_file_that_cannot_be_created_leaves_the_daemon_standby(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, code: int, cause: str
) -> None:
    """The lock file cannot be opened: poll answers False (serve only), one warning naming the cause."""
    engine = create_engine(f"sqlite:///{tmp_path}/syncd.db")
    lock = DaemonLock(engine, name="syncd-daemon a 1")
    real_open = os.open

    def refuse(path: str | os.PathLike[str], flags: int, *args: object) -> int:
        if str(path).endswith(".daemon.lock"):
            raise OSError(code, os.strerror(code), str(path))
        return real_open(path, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(leader.os, "open", refuse)
    with caplog.at_level(logging.WARNING, logger="syncd.leader"):
        for _ in range(3):  # polled every POLL_S: warned once
            assert lock.poll() is False and not lock.held
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1, warnings
    assert f"event=leader_lock_unavailable cause={cause}" in warnings[0] and "standby" in warnings[0]
    monkeypatch.setattr(leader.os, "open", real_open)
    assert lock.poll() is True  # taken at the first poll once the file can be created
    lock.release()


# --- a real full disk -----------------------------------------------------------------------------


def _can_mount_tmpfs(tmp_path: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = tmp_path / "probe"
    probe.mkdir()
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {probe}"],
        capture_output=True,
        timeout=30,
    )
    return done.returncode == 0


PREPARE = """
import json, sys
from syncd.crossref.lookups import work_content
from syncd.store.repo import Store
url, body_file, doi = sys.argv[1:4]
body = json.loads(open(body_file, encoding="utf-8").read())
store = Store.open(url)
store.put_content(work_content(doi, body["message"], json.dumps(body)))
store.close()
"""

HOLD = """
import os, sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1])
conn.execute("SELECT count(*) FROM entries").fetchall()
parent = os.getppid()  # the shell, then the daemon it becomes: held as long as it runs
while os.getppid() == parent:
    time.sleep(0.2)
"""


def _full_disk_daemon(
    tmp_path: Path, env: dict[str, str], db: Path, hold: bool, read_only: bool = False
) -> subprocess.Popen[str]:
    """In a private mount namespace: a 2 MB tmpfs at db's directory, the Raptor work stored, the disk filled.

    ``hold``: another process keeps the database open (its -wal/-shm exist), as an MCP server would.
    ``read_only``: the filesystem is remounted read-only instead of filled. Then ``syncd daemon`` is
    exec'd there; its output is the process's stdout.
    """
    mount = db.parent
    body = CORPUS / "crossref/work/10.1101_598821.json"
    script = "\n".join(
        [
            "set -e",
            f"mount -t tmpfs -o size=2m tmpfs {mount}",
            f"{sys.executable} -c '{PREPARE}' sqlite:///{db} {body} {RAPTOR}",
            (f"{sys.executable} -c '{HOLD}' {db} > {tmp_path}/held 2>&1 & sleep 2" if hold else "true"),
            (
                f"mount -o remount,ro {mount}"
                if read_only
                else f"dd if=/dev/zero of={mount}/fill bs=4k 2>/dev/null || true"
            ),
            f"df -k {mount}",
            f"exec {sys.executable} -m syncd daemon",
        ]
    )
    return subprocess.Popen(
        ["unshare", "-rm", "sh", "-c", script],
        env=env,
        cwd=str(ROOT),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _wait_ready(proc: subprocess.Popen[str], port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    proc.kill()
    out, _ = proc.communicate(timeout=10)
    pytest.fail(f"daemon did not listen: {out}")


@pytest.mark.anyio
async def _serves_raptor_and_stops(proc: subprocess.Popen[str], port: int) -> str:
    """Once the daemon on ``port`` is ready, its /mcp answers Raptor's stored work (the recorded title);
    then SIGTERM: it exits 0 without a traceback. Returns its output.
    """
    try:
        _wait_ready(proc, port)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            res = await client.call_tool("crossref_get_work", {"doi": RAPTOR})
        assert res.structured_content is not None
        assert res.structured_content["title"] == RAPTOR_TITLE
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    assert "Traceback" not in out
    return out


@pytest.mark.parametrize("hold", [True, False], ids=["database-held-open", "database-closed"])
async def test_the_daemon_starts_and_serves_on_a_full_disk(
    fake: FakeUpstream, tmp_path: Path, hold: bool
) -> None:
    """`syncd daemon` on a disk with 0 bytes free starts, answers the stored work over MCP, stops with 0.

    Held open (-wal/-shm there): the lock's name cannot be written (leader_lock_unnamed cause=disk_full),
    the store opens writable and its writes fail as disk_full. Closed (no -wal/-shm, which cannot be
    created): the store opens read-only (store_degraded cause=disk_full). Never a traceback.
    Before: `OSError: [Errno 28] No space left on device` from the lock file, or `disk I/O error`.
    """
    if not _can_mount_tmpfs(tmp_path):
        pytest.skip("unshare -rm with a tmpfs mount is not permitted here")
    mount = tmp_path / "disk"
    mount.mkdir()
    db = mount / "syncd.db"
    port = _free_port()
    env = _env(fake, f"sqlite:///{db}", tmp_path, SYNCD_HTTP__PORT=str(port), SYNCD_LOG_LEVEL="INFO")
    proc = _full_disk_daemon(tmp_path, env, db, hold)
    out = await _serves_raptor_and_stops(proc, port)
    assert "event=ready" in out
    if hold:
        assert "event=leader_lock_unnamed cause=disk_full" in out, out
        assert "event=leader role=active" in out
    else:
        assert "event=store_degraded cause=disk_full" in out, out


@pytest.mark.anyio
async def test_the_daemon_serves_from_a_read_only_filesystem(fake: FakeUpstream, tmp_path: Path) -> None:
    """EROFS: the store opens read-only, the lock file cannot be created (standby), the stored work is served.

    The daemon exits 0 on SIGTERM, never a traceback.
    """
    if not _can_mount_tmpfs(tmp_path):
        pytest.skip("unshare -rm with a tmpfs mount is not permitted here")
    mount = tmp_path / "disk"
    mount.mkdir()
    db = mount / "syncd.db"
    port = _free_port()
    env = _env(fake, f"sqlite:///{db}", tmp_path, SYNCD_HTTP__PORT=str(port), SYNCD_LOG_LEVEL="INFO")
    proc = _full_disk_daemon(tmp_path, env, db, hold=False, read_only=True)
    out = await _serves_raptor_and_stops(proc, port)
    assert "event=store_read_only" in out, out
    assert "event=leader_lock_unavailable cause=read_only" in out, out
    assert "role=standby" in out


def test_a_database_that_cannot_be_created_on_a_full_disk_is_a_declared_error(
    fake: FakeUpstream, tmp_path: Path
) -> None:
    """No database yet and 0 bytes free: exit 3 with one `error: store_unavailable: ... is full` line."""
    if not _can_mount_tmpfs(tmp_path):
        pytest.skip("unshare -rm with a tmpfs mount is not permitted here")
    mount = tmp_path / "disk"
    mount.mkdir()
    db = mount / "syncd.db"
    env = _env(fake, f"sqlite:///{db}", tmp_path, SYNCD_HTTP__PORT=str(_free_port()))
    script = "\n".join(
        [
            "set -e",
            f"mount -t tmpfs -o size=64k tmpfs {mount}",
            f"dd if=/dev/zero of={mount}/fill bs=4k 2>/dev/null || true",
            f"exec {sys.executable} -m syncd daemon",
        ]
    )
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script],
        env=env,
        cwd=str(ROOT),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and lines[0].startswith("error: store_unavailable: the disk holding the database")
    assert "is full (0 bytes free)" in lines[0]
