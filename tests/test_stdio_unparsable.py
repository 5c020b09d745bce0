"""Over stdio, input the SDK's parser rejects is logged, and the session goes on (issue 17 item 7).

``syncd mcp`` runs as a subprocess fed malformed lines (a cut JSON object, an array nested 300 deep,
invalid UTF-8 with a lone surrogate), then a valid ``initialize``. The SDK's stdio transport gives no
public hook to answer such a line with a JSON-RPC parse error, so each one must be logged at WARNING
on stderr (before: logged at DEBUG only, nothing on stderr), and the valid request still answered.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def test_unparsable_stdio_lines_are_logged_and_the_session_goes_on(tmp_path: Path) -> None:
    """Three unparsable lines: three stdio_unparsable_input warnings; initialize still answered (id 2)."""
    lines = [
        b'{"jsonrpc":"2.0","id":1,"method":"ping"',
        b"[" * 300 + b"]" * 300,
        b'{"jsonrpc":"2.0","id":\xed\xa0\x80,"method":"ping"}',
        json.dumps(INITIALIZE).encode(),
    ]
    config = tmp_path / "syncd.toml"
    config.write_text(f'database_url = "sqlite:///{tmp_path / "stdio.db"}"\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCD_")}
    env["SYNCD_CONFIG"] = str(config)
    proc = subprocess.Popen(
        [sys.executable, "-m", "syncd", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    killer = threading.Timer(60, proc.kill)  # a hung server fails the test instead of hanging it
    killer.start()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"\n".join(lines) + b"\n")
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())  # stdin stays open until the answer is read
        _, stderr = proc.communicate(timeout=30)  # closes stdin: the server ends
    finally:
        killer.cancel()
    assert answer["id"] == 2 and "result" in answer
    warnings = [line for line in stderr.decode().splitlines() if "event=stdio_unparsable_input" in line]
    assert len(warnings) == 3, stderr.decode()
    assert all("reply=none" in w for w in warnings)
