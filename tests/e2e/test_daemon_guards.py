"""The daemon's guards (issue 17 items 5 and 7, issue 30.2): its database file swapped, half-open connections.

The swap is made for real under a real `syncd daemon` (the file copied over or deleted while it
serves; the store-level cases are in tests/store/test_store_file_swap.py); the header timeout is measured
on a real uvicorn server on loopback with a raw socket.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from mcp import Client

from syncd.config import Settings
from syncd.crossref.names import CROSSREF_WORK
from syncd.daemon.jobs import sweep_pass
from syncd.daemon.run import web_config
from syncd.errors import StoreError
from syncd.registry import open_services
from syncd.store.repo import EntryContent, Store
from tests.e2e.test_processes import RAPTOR_TITLE, _env, _free_port, _start_daemon
from tests.fakeupstream import FakeUpstream
from tests.store.test_store_file_swap import _keys_elsewhere, _put

RAPTOR = "10.1101/598821"
ACTAO = "10.1016/j.actao.2019.01.006"
BACKUP = {
    "10.1016/j.apsusc.2007.01.131": "10.1016_j.apsusc.2007.01.131",
    "10.1103/physreva.106.022212": "10.1103_physreva.106.022212",
    "10.1002/jor.1100150407": "10.1002_jor.1100150407",
}


def _store(path: Path) -> Store:
    store = Store.open(f"sqlite:///{path}")
    store.put_content(EntryContent(CROSSREF_WORK, "10.5555/a", "ok", "{}", "h", title="kept"))
    return store


def test_no_new_database_where_one_was_expected(tmp_path: Path) -> None:
    """A missing file whose -wal (or daemon lock) is still there is not recreated empty; first use still is.

    Before: any CLI command created a new empty file in its place while the daemon wrote the old one.
    """
    path = tmp_path / "syncd.db"
    Store.open(f"sqlite:///{path}").close()  # first use creates it
    assert path.exists()
    (tmp_path / "syncd.db-wal").write_bytes(b"")
    path.unlink()
    with pytest.raises(StoreError, match="syncd db upgrade") as err:
        Store.open(f"sqlite:///{path}")
    assert "syncd.db-wal" in err.value.message and not path.exists()
    fresh = tmp_path / "fresh" / "syncd.db"
    Store.open(f"sqlite:///{fresh}").close()
    assert fresh.exists()


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


@pytest.fixture
def server() -> Iterator[tuple[int, float]]:
    """A uvicorn server configured by syncd.daemon.run.web_config (header_timeout_s 0.5) on a free port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = Settings(http={"host": "127.0.0.1", "port": port, "header_timeout_s": 0.5})
    web = uvicorn.Server(web_config(settings, _app))
    thread = threading.Thread(target=web.run, daemon=True)
    thread.start()
    for _ in range(200):
        if web.started:
            break
        time.sleep(0.02)
    yield port, settings.http.header_timeout_s
    web.should_exit = True
    thread.join(timeout=5)


def test_half_a_request_line_is_closed_within_the_header_timeout(server: tuple[int, float]) -> None:
    """A client sending "GET /mc" and nothing more is disconnected by the server (header_timeout_s 0.5 s)
    before the client's own 5.5 s patience runs out (a busy machine only delays the close).

    Before: the connection stayed open (300 half-open connections held); a whole request is answered.
    """
    port, timeout_s = server
    with socket.create_connection(("127.0.0.1", port)) as whole:
        whole.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert whole.recv(100).startswith(b"HTTP/1.1 200")
    with socket.create_connection(("127.0.0.1", port)) as half:
        half.settimeout(timeout_s + 5)
        half.sendall(b"GET /mc")
        assert half.recv(100) == b""  # closed by the server (a timeout here raises instead)


def test_a_sweep_on_an_unwritable_store_stops_without_a_traceback(tmp_path: Path) -> None:
    """A store that cannot be written: the sweep is skipped with the cause named, nothing raised.

    Before: on a full disk every sweep ended in a logged traceback.
    """
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'sweep.db'}")
    store = _store(tmp_path / "sweep.db")
    svc = open_services(settings, store)
    try:
        store.stop_writing("database file deleted")
        report = sweep_pass(svc, 10)
        assert report.stopped == "store:database file deleted" and report.checked == 0
    finally:
        svc.close()
        store.close()


def _daemon_env(fake: FakeUpstream, db: Path, tmp_path: Path) -> tuple[dict[str, str], int]:
    port = _free_port()
    env = _env(fake, f"sqlite:///{db}", tmp_path, SYNCD_HTTP__PORT=str(port), SYNCD_LOG_LEVEL="INFO")
    return env, port


def _wait_for(condition: Any, what: str, timeout_s: float = 30.0) -> None:
    """Poll ``condition()`` (a look from another process) until true; the daemon acts on its timer."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    pytest.fail(f"not seen within {timeout_s:g} s: {what}")


def _stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    return out


@pytest.mark.anyio
@pytest.mark.serial  # a real process
async def test_the_daemon_keeps_serving_a_backup_copied_over_its_database(
    fake: FakeUpstream, tmp_path: Path
) -> None:
    """`cp backup.db syncd.db` under a running `syncd daemon`: it serves and keeps the backup's works.

    The daemon fetched Raptor (in its WAL) after the backup was taken. Within its 2 s timer it takes
    the copied file; another process then finds exactly the backup's three works; a new call fetches
    Raptor again and stores it into the restored file; after SIGTERM the file holds all four.
    Before: the old WAL was applied to the copy (0/3 of a backup's own works survived) and, since
    issue 17, the daemon exited.
    """
    backup, db = tmp_path / "backup.db", tmp_path / "syncd.db"
    store = Store.open(f"sqlite:///{backup}")
    _put(store, BACKUP)
    store.close()
    shutil.copyfile(backup, db)
    env, port = _daemon_env(fake, db, tmp_path)
    proc = _start_daemon(env, port)
    try:
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            first = await client.call_tool("crossref_get_work", {"doi": RAPTOR})
            assert first.structured_content is not None and first.structured_content["title"] == RAPTOR_TITLE
            _wait_for(lambda: RAPTOR in _keys_elsewhere(db), "Raptor stored")
            shutil.copyfile(backup, db)
            _wait_for(lambda: _keys_elsewhere(db) == sorted(BACKUP), "the backup's works, only")
            again = await client.call_tool("crossref_get_work", {"doi": RAPTOR})
            assert again.structured_content is not None and again.structured_content["title"] == RAPTOR_TITLE
    finally:
        out = _stop(proc)
    assert proc.returncode == 0, out
    assert "event=store_replaced how=overwritten" in out and "Traceback" not in out, out
    assert _keys_elsewhere(db) == sorted([*BACKUP, RAPTOR])


@pytest.mark.anyio
@pytest.mark.serial  # a real process
async def test_the_daemon_keeps_serving_when_its_database_is_deleted(
    fake: FakeUpstream, tmp_path: Path
) -> None:
    """The database file deleted under `syncd daemon`: rehomed with every work; later fetches stored in it.

    Before: it kept writing into the deleted inode (lost at the next start), then (issue 17) exited.
    """
    db = tmp_path / "syncd.db"
    store = Store.open(f"sqlite:///{db}")
    _put(store, BACKUP)
    store.close()
    env, port = _daemon_env(fake, db, tmp_path)
    proc = _start_daemon(env, port)
    try:
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            await client.call_tool("crossref_get_work", {"doi": RAPTOR})
            _wait_for(lambda: RAPTOR in _keys_elsewhere(db), "Raptor stored")
            db.unlink()
            _wait_for(lambda: db.exists() and _keys_elsewhere(db) == sorted([*BACKUP, RAPTOR]), "rehomed")
            later = await client.call_tool("crossref_get_work", {"doi": ACTAO})
            assert later.structured_content is not None and later.structured_content["doi"] == ACTAO
    finally:
        out = _stop(proc)
    assert proc.returncode == 0, out
    assert "event=store_deleted action=rehomed" in out and "Traceback" not in out, out
    assert _keys_elsewhere(db) == sorted([*BACKUP, RAPTOR, ACTAO])
