"""The daemon's guards (issue 17 items 5 and 7): a database file swapped under it, half-open HTTP connections.

The swap is made for real (the file deleted or replaced while the store is open); the header timeout
is measured on a real uvicorn server on loopback with a raw socket.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from syncd.config import Settings
from syncd.crossref.names import CROSSREF_WORK
from syncd.daemon import FileWatch, _sweep_pass, web_config
from syncd.errors import StoreError
from syncd.services import Services
from syncd.store.repo import EntryContent, Store


def _store(path: Path) -> Store:
    store = Store.open(f"sqlite:///{path}")
    store.put_content(EntryContent(CROSSREF_WORK, "10.5555/a", "ok", "{}", "h", title="kept"))
    return store


def test_a_deleted_database_stops_writes_and_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Deleting the file under an open store: the watch says so once (error), writes are refused.

    Before: the daemon kept writing to the deleted inode and logged nothing.
    """
    path = tmp_path / "syncd.db"
    store = _store(path)
    try:
        watch = FileWatch(store)
        assert watch.check() is True
        path.unlink()
        with caplog.at_level(logging.ERROR, logger="syncd.daemon"):
            assert watch.check() is False
            assert watch.check() is False
        errors = [r.getMessage() for r in caplog.records if "database_swapped" in r.getMessage()]
        assert len(errors) == 1 and "deleted" in errors[0]
        with pytest.raises(StoreError, match="writes stopped"):
            store.mark_error(1, "upstream_unavailable")
        assert store.write_problem() == "database file deleted"
    finally:
        store.close()


def test_a_replaced_database_is_noticed(tmp_path: Path) -> None:
    """A different file moved into place (new inode): the watch reports it replaced."""
    path = tmp_path / "syncd.db"
    store = _store(path)
    try:
        watch = FileWatch(store)
        other = tmp_path / "other.db"
        shutil.copy(path, other)
        os.replace(other, path)
        assert watch.check() is False and watch.problem == "database file replaced"
    finally:
        store.close()


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
    """A uvicorn server configured by syncd.daemon.web_config (header_timeout_s 0.5) on a free port."""
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
    """A client sending "GET /mc" and nothing more is disconnected within header_timeout_s + 1 s.

    Before: the connection stayed open (300 half-open connections held); a whole request is answered.
    """
    port, timeout_s = server
    with socket.create_connection(("127.0.0.1", port)) as whole:
        whole.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert whole.recv(100).startswith(b"HTTP/1.1 200")
    with socket.create_connection(("127.0.0.1", port)) as half:
        half.settimeout(timeout_s + 5)
        half.sendall(b"GET /mc")
        start = time.monotonic()
        assert half.recv(100) == b""  # closed by the server
        assert time.monotonic() - start < timeout_s + 1.0


def test_a_sweep_on_an_unwritable_store_stops_without_a_traceback(tmp_path: Path) -> None:
    """A store that cannot be written: the sweep is skipped with the cause named, nothing raised.

    Before: on a full disk every sweep ended in a logged traceback.
    """
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'sweep.db'}")
    store = _store(tmp_path / "sweep.db")
    svc = Services.open(settings, store)
    try:
        store.stop_writing("database file deleted")
        report = _sweep_pass(svc, 10)
        assert report.stopped == "store:database file deleted" and report.checked == 0
    finally:
        svc.close()
        store.close()


def test_the_daemon_exits_non_zero_when_its_database_is_deleted(tmp_path: Path) -> None:
    """`syncd daemon` whose database file is deleted: logs database_swapped and exits non-zero in < 20 s.

    The file is checked every FILE_CHECK_S (10 s) and before the first sweep (STARTUP_DELAY_S, 5 s).
    Before: it kept serving and writing to the deleted inode; nothing was logged.
    """
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = tmp_path / "syncd.toml"
    db = tmp_path / "d.db"
    config.write_text(f'database_url = "sqlite:///{db}"\n[http]\nport = {port}\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCD_")}
    env["SYNCD_CONFIG"] = str(config)
    proc = subprocess.Popen(
        [sys.executable, "-m", "syncd", "daemon"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        started = time.monotonic()
        lock = tmp_path / "d.db.daemon.lock"  # taken once the store is open and migrated
        while not lock.exists() and time.monotonic() - started < 30:
            time.sleep(0.1)
        db.unlink()
        deleted = time.monotonic()
        code = proc.wait(timeout=30)
        assert time.monotonic() - deleted < 20
    finally:
        if proc.poll() is None:
            proc.kill()
        _, stderr = proc.communicate(timeout=10)
    assert code != 0
    # deleted, or "replaced" when a new connection of the pool recreated an empty file meanwhile
    assert "event=database_swapped what='database file " in stderr.decode()
