"""Over stdio, every hostile frame gets a declared JSON-RPC answer and the session goes on (issue 30 item 8).

Before, ``syncd mcp`` ran the SDK's stdio transport: a line its parser rejected (a lone surrogate,
JSON nested 200+ deep, a 5,000-digit integer, a cut object, a batch, a non-object) was logged and
never answered, so the client waited forever; a 100 KB-1 MB query reached httpx and came back as
``internal_error``. Now each hostile class has its declared answer (table in
:mod:`syncd.server.stdio`): -32700 for text that is not JSON, -32600 for JSON that is no JSON-RPC
request, -32602 ``invalid_arguments`` (with the argument named) for a value syncd refuses, a frame
size limit, and ``invalid_parameter`` for a query too long to send. Proved three ways: the pure
screen, a real ``syncd mcp`` subprocess fed raw frames, and the SDK client over stdio.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from syncd.server.stdio import MAX_DEPTH, MAX_FRAME_BYTES, screen

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def _call(rid: int | str, name: str, arguments: dict[str, Any]) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
    ).encode()


def _raw_call(rid: int, name: str, arguments_json: bytes) -> bytes:
    head = f'{{"jsonrpc":"2.0","id":{rid},"method":"tools/call","params":{{"name":"{name}","arguments":'
    return head.encode() + arguments_json + b"}}"


NESTED_200 = b'{"query":' + b"[" * 200 + b"]" * 200 + b"}"
HUGE_INT = b'{"rows":' + b"9" * 5000 + b"}"

# (frame, expected id of the answer, code, data.reason)
CASES: dict[str, tuple[bytes, Any, int, str]] = {
    "cut object": (b'{"jsonrpc":"2.0","id":1,"method":"ping"', None, -32700, "parse_error"),
    "not UTF-8 (CESU surrogate bytes)": (
        b'{"jsonrpc":"2.0","id":\xed\xa0\x80,"method":"ping"}',
        None,
        -32700,
        "parse_error",
    ),
    "NaN literal": (
        b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":NaN}}',
        None,
        -32700,
        "parse_error",
    ),
    "nested past the parser": (b"[" * 100_000 + b"]" * 100_000, None, -32700, "parse_error"),
    "lone surrogate escape": (
        _raw_call(5, "crossref_search_works", b'{"query":"a\\ud800b"}'),
        5,
        -32602,
        "invalid_arguments",
    ),
    "lone surrogate in a DOI": (
        _raw_call(6, "crossref_get_work", b'{"doi":"10.1/\\udc00x"}'),
        6,
        -32602,
        "invalid_arguments",
    ),
    "nested 200 deep": (_raw_call(7, "crossref_search_works", NESTED_200), 7, -32602, "invalid_arguments"),
    "5,000-digit integer argument": (
        _raw_call(8, "crossref_search_works", HUGE_INT),
        8,
        -32602,
        "invalid_arguments",
    ),
    "5,000-digit integer id": (
        b'{"jsonrpc":"2.0","id":' + b"7" * 5000 + b',"method":"ping"}',
        None,
        -32600,
        "invalid_request",
    ),
    "batch": (b'[{"jsonrpc":"2.0","id":10,"method":"ping"}]', None, -32600, "invalid_request"),
    "not an object": (b"42", None, -32600, "invalid_request"),
    "no jsonrpc member": (b'{"id":12,"method":"ping"}', 12, -32600, "invalid_request"),
    "wrong jsonrpc version": (b'{"jsonrpc":"1.0","id":13,"method":"ping"}', 13, -32600, "invalid_request"),
    "params not an object": (
        b'{"jsonrpc":"2.0","id":14,"method":"ping","params":"x"}',
        14,
        -32600,
        "invalid_request",
    ),
    "id an object": (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', None, -32600, "invalid_request"),
    "method not a string": (b'{"jsonrpc":"2.0","id":16,"method":7}', 16, -32600, "invalid_request"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_screen_gives_each_hostile_class_its_declared_answer(case: str) -> None:
    """The pure screen answers each class with its code, reason and (when readable) the request's id."""
    frame, rid, code, reason = CASES[case]
    found = screen(frame)
    assert found.message is None and found.reply is not None, case
    assert found.reply.id == rid
    assert found.reply.error.code == code
    assert isinstance(found.reply.error.data, dict) and found.reply.error.data["reason"] == reason


def test_screen_names_the_argument_and_the_limit() -> None:
    """A refused argument is named in data.fields and the message gives the limit (64 levels, 40 digits)."""
    deep = screen(_raw_call(7, "crossref_search_works", NESTED_200)).reply
    assert deep is not None and isinstance(deep.error.data, dict)
    assert deep.error.data["fields"] == ["query"]
    assert f"nested deeper than {MAX_DEPTH} levels" in deep.error.message
    huge = screen(_raw_call(8, "crossref_search_works", HUGE_INT)).reply
    assert huge is not None and "an integer of 5000 digits; at most 40" in huge.error.message


def test_screen_passes_good_messages_and_drops_bad_notifications() -> None:
    """A valid request passes unchanged; a notification with a lone surrogate is refused without a reply
    (JSON-RPC never answers a notification); a blank line is nothing.
    """
    ok = screen(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"q":"\\u00e9"}}}'
    )
    assert ok.reply is None and ok.message is not None
    note = screen(b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"x":"\\ud800"}}')
    assert note.message is None and note.reply is None and note.problem is not None
    assert screen(b"   ") == type(ok)()


def _config(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "syncd.toml"
    config.write_text(
        f'database_url = "sqlite:///{tmp_path / "stdio.db"}"\n'
        '[crossref]\nbase_url = "http://127.0.0.1:9"\n[zenodo]\nbase_url = "http://127.0.0.1:9"\n'
        '[doi]\nbase_url = "http://127.0.0.1:9"\n',
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCD_")}
    env["SYNCD_CONFIG"] = str(config)
    return env


@pytest.mark.serial  # a real process
def test_real_syncd_mcp_answers_every_hostile_frame(tmp_path: Path) -> None:
    """A ``syncd mcp`` subprocess fed every hostile class (and a 5 MiB frame) answers each with its
    declared error, then still answers a ping and a tool call; no traceback on stderr.
    """
    frames = [json.dumps(INITIALIZE).encode(), b'{"jsonrpc":"2.0","method":"notifications/initialized"}']
    frames += [frame for frame, *_ in CASES.values()]
    frames.append(
        b'{"jsonrpc":"2.0","id":"big","method":"ping","params":{"x":"'
        + b"y" * (MAX_FRAME_BYTES + 10)
        + b'"}}'
    )
    frames.append(_call("query", "crossref_search_works", {"query": "x" * 500_000}))
    frames.append(_call("cursor", "syncd_list_changes", {"cursor": "y" * 200_000}))
    frames.append(_call("changes", "syncd_list_changes", {}))
    frames.append(b'{"jsonrpc":"2.0","id":"last","method":"ping"}')
    proc = subprocess.Popen(
        [sys.executable, "-m", "syncd", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_config(tmp_path),
    )
    killer = threading.Timer(120, proc.kill)  # a hung server fails the test instead of hanging it
    killer.start()
    answers: list[dict[str, Any]] = []
    try:
        assert proc.stdin is not None and proc.stdout is not None
        threading.Thread(
            target=lambda: (proc.stdin.write(b"\n".join(frames) + b"\n"), proc.stdin.flush()), daemon=True
        ).start()  # type: ignore[union-attr]
        wanted = {"init", "query", "cursor", "changes", "last"} | {
            c[1] for c in CASES.values() if c[1] is not None
        }
        while not wanted <= {a.get("id") for a in answers}:  # tool calls may be answered after the pings
            line = proc.stdout.readline()
            assert line, "syncd mcp closed stdout before answering every frame"
            answers.append(json.loads(line))
        _, stderr = proc.communicate(timeout=60)
    finally:
        killer.cancel()
    by_id = {a["id"]: a for a in answers if a.get("id") is not None}
    nulls = [a["error"]["code"] for a in answers if a.get("id") is None]
    assert "result" in by_id["init"]
    expected_nulls = [code for _f, rid, code, _r in CASES.values() if rid is None] + [
        -32600
    ]  # + the 5 MiB frame
    assert nulls == expected_nulls
    for case, (_frame, rid, code, reason) in CASES.items():
        if rid is not None:
            assert by_id[rid]["error"]["code"] == code, case
            assert by_id[rid]["error"]["data"]["reason"] == reason, case
    big = next(
        a for a in answers if a.get("id") is None and a["error"]["data"]["reason"] == "frame_too_large"
    )
    assert big["error"]["data"]["limit_bytes"] == MAX_FRAME_BYTES
    query = by_id["query"]["result"]
    assert query["isError"] and query["structuredContent"]["error"]["data"]["reason"] == "invalid_parameter"
    assert "at most 8192" in query["structuredContent"]["error"]["message"]
    cursor = by_id["cursor"]["result"]
    assert cursor["isError"] and cursor["structuredContent"]["error"]["data"]["reason"] == "invalid_arguments"
    assert by_id["changes"]["result"]["structuredContent"]["count"] == 0
    assert by_id["last"]["result"] == {}
    assert b"Traceback" not in stderr and b"internal_error" not in stderr
    assert stderr.count(b"event=stdio_refused") == len(CASES) + 1


@pytest.mark.anyio
async def test_sdk_client_over_stdio_gets_declared_errors(tmp_path: Path) -> None:
    """Through the SDK client over stdio: a 1 MB query is invalid_parameter (not internal_error), a
    200 KB cursor is a tool error invalid_arguments (SEP-1303), arguments nested 200 deep (a frame the
    stdio screen refuses before any tool) are -32602 invalid_arguments, and the session goes on.
    """
    env = _config(tmp_path)
    params = StdioServerParameters(command=sys.executable, args=["-m", "syncd", "mcp"], env=env)
    nested: Any = []
    for _ in range(200):
        nested = [nested]
    async with Client(params, mode="legacy") as client:
        res = await client.call_tool("crossref_search_works", {"query": "q" * 1_000_000})
        assert res.is_error and res.structured_content is not None
        assert res.structured_content["error"]["data"]["reason"] == "invalid_parameter"
        cursor = await client.call_tool("syncd_list_changes", {"cursor": "c" * 200_000})
        assert cursor.is_error and cursor.structured_content is not None
        assert cursor.structured_content["error"]["data"]["reason"] == "invalid_arguments"
        with pytest.raises(MCPError) as deep:
            await client.call_tool("crossref_search_works", {"query": nested})
        assert deep.value.error.code == -32602
        assert (
            isinstance(deep.value.error.data, dict) and deep.value.error.data["reason"] == "invalid_arguments"
        )
        assert deep.value.error.data["fields"] == ["query"]
        ok = await client.call_tool("syncd_list_changes", {})
        assert not ok.is_error and ok.structured_content is not None and ok.structured_content["count"] == 0
