"""A second daemon on a busy port (issue 24 item 6): one ``error: address_in_use:`` line, exit 3.

Before: uvicorn's own ``ERROR: [Errno 98] error while attempting to bind`` line and exit 1, after the
store was opened and the scheduler set up. Now the daemon binds its socket before anything starts
(:func:`syncd.daemon.ready.listen_socket`) and says who holds the port and what to do. Real processes.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from syncd.daemon.ready import listen_socket
from syncd.errors import SyncdError
from tests.e2e.test_processes import ROOT, _env, _free_port, _start_daemon
from tests.fakeupstream import FakeUpstream

pytestmark = pytest.mark.serial  # real processes


def test_a_second_daemon_on_the_port_says_so_in_one_line(fake: FakeUpstream, tmp_path: Path) -> None:
    """With a daemon already listening, `syncd daemon` on the same port exits 3 with one
    `error: address_in_use: 127.0.0.1:PORT is already in use ...` line and no uvicorn line.
    """
    port = _free_port()
    env = _env(fake, f"sqlite:///{tmp_path / 'port.db'}", tmp_path, SYNCD_HTTP__PORT=str(port))
    first = _start_daemon(env, port)
    try:
        second = subprocess.run(
            [sys.executable, "-m", "syncd", "daemon"],
            env=env,
            cwd=str(ROOT),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        first.terminate()
        first.wait(30)
    assert second.returncode == 3, second.stderr[-2000:]
    errors = [line for line in second.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: address_in_use: 127.0.0.1:{port} is already in use (another syncd daemon, or another "
        "server, listens there)"
    ]
    assert "Errno" not in second.stderr and "Traceback" not in second.stderr


def test_listen_socket_refuses_a_busy_port_and_an_address_not_here() -> None:
    """address_in_use for a held port; invalid_config for an address this machine does not have."""
    with socket.create_server(("127.0.0.1", 0)) as held:
        port = held.getsockname()[1]
        with pytest.raises(SyncdError) as busy:
            listen_socket("127.0.0.1", port)
    assert busy.value.reason == "address_in_use"
    with pytest.raises(SyncdError) as foreign:
        listen_socket("203.0.113.77", _free_port())  # TEST-NET-3: never an address of this machine
    assert foreign.value.reason == "invalid_config"
    listen_socket("127.0.0.1", _free_port()).close()
