"""One refreshing daemon per SQLite file too (issue 12.9): an exclusive lock file beside the database."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from syncd.store.leader import DaemonLock, lock_holder, sqlite_lock_path
from tests.e2e.test_processes import _env, _free_port, _start_daemon
from tests.fakeupstream import FakeUpstream

pytestmark = pytest.mark.serial  # real processes


def test_second_lock_on_the_same_file_is_standby_until_the_first_releases(tmp_path: Path) -> None:
    """Two daemons' locks on one SQLite file: the first holds, the second does not, then takes over."""
    engine = create_engine(f"sqlite:///{tmp_path}/syncd.db")
    first, second = DaemonLock(engine, name="syncd-daemon a 1"), DaemonLock(engine, name="syncd-daemon b 2")
    assert sqlite_lock_path(engine) == tmp_path / "syncd.db.daemon.lock"
    assert first.poll() is True and first.held
    assert second.poll() is False and not second.held
    assert lock_holder(engine) == "syncd-daemon a 1"
    first.release()
    assert lock_holder(engine) is None
    assert second.poll() is True and second.held
    assert first.poll() is False
    second.release()


def test_in_memory_store_is_always_the_holder() -> None:
    """An in-memory SQLite store has no file to share: the daemon is the holder without a lock file."""
    lock = DaemonLock(create_engine("sqlite://"))
    assert lock.held and lock.poll() and sqlite_lock_path(create_engine("sqlite://")) is None


def test_killed_holder_frees_the_lock(tmp_path: Path) -> None:
    """A holder killed with SIGKILL leaves no lock behind: the kernel frees it, the next poll takes it."""
    db = tmp_path / "syncd.db"
    script = (
        "import sys, time\n"
        "from sqlalchemy import create_engine\n"
        "from syncd.store.leader import DaemonLock\n"
        f"lock = DaemonLock(create_engine('sqlite:///{db}'), name='syncd-daemon child')\n"
        "print(lock.poll(), flush=True)\n"
        "time.sleep(60)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "True"
        engine = create_engine(f"sqlite:///{db}")
        mine = DaemonLock(engine, name="syncd-daemon parent")
        assert mine.poll() is False
        assert lock_holder(engine) == "syncd-daemon child"
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        assert mine.poll() is True
        mine.release()
    finally:
        if child.poll() is None:
            child.kill()


def test_two_daemons_on_one_file_one_active_one_standby(fake: FakeUpstream, tmp_path: Path) -> None:
    """Two `syncd daemon` processes on one SQLite file: one logs role=active, the other role=standby."""
    db_url = f"sqlite:///{tmp_path}/shared.db"
    port_a, port_b = _free_port(), _free_port()
    env_a = _env(fake, db_url, tmp_path, SYNCD_HTTP__PORT=str(port_a), SYNCD_LOG_LEVEL="INFO")
    env_b = _env(fake, db_url, tmp_path, SYNCD_HTTP__PORT=str(port_b), SYNCD_LOG_LEVEL="INFO")
    first = _start_daemon(env_a, port_a)
    second = _start_daemon(env_b, port_b)
    outs = []
    for proc in (second, first):
        proc.send_signal(signal.SIGTERM)
        outs.append(proc.communicate(timeout=30)[0])
    logs = "".join(outs)
    assert logs.count("role=active") == 1, logs
    assert logs.count("role=standby") == 1, logs
    assert "role=standby" in outs[0]  # the second to start is the standby
