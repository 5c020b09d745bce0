"""What a command pays before it does its job (issue 28 item 1), held without a clock.

Opening a store that is at the shipped schema revision imports no Alembic (the head is read from the
migration files and the stored revision with plain SQL); opening the upstream clients makes no
connection pool (each one loads the CA bundle) until a request goes to that upstream. ``syncd cache
show`` and ``syncd mcp`` (up to its ``initialize`` answer) are run in fresh processes and the modules
they loaded, and the models they built, are pinned; so are those ``syncd daemon`` loaded when it tells
systemd READY=1 (before its endpoint, whose early connections wait). Import-level checks of the
command line are in tests/core/test_architecture.py.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from syncd.config import Settings
from syncd.crossref import lookups as lookups_crossref
from syncd.normalize.doi import parse_doi
from syncd.registry import TOOL_MODULES, open_services
from syncd.store.engine import head_revision, make_engine, shipped_head, upgrade_to_head
from syncd.store.repo import Store
from tests.conftest import _free_port

RAPTOR = "10.1101/598821"


def test_the_head_read_from_the_migration_files_is_alembics() -> None:
    """shipped_head() (the files' revision / down_revision lines, no Alembic) names Alembic's head."""
    head = head_revision()
    assert head is not None and shipped_head() == head


def test_a_store_at_head_opens_without_importing_alembic(tmp_path: Path) -> None:
    """A fresh process opening a store already at head (then reading from it) never imports Alembic; one
    opening an empty database file imports it and migrates the file to head.
    """
    url = f"sqlite:///{tmp_path / 'store.db'}"
    Store.open(url).close()
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    code = (
        "import json, sys\n"
        "from syncd.store.repo import Store\n"
        "s = Store.open(sys.argv[1])\n"
        "s.get('crossref_work', '10.1/none')\n"
        "s.close()\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'alembic')))\n"
    )

    def alembic_modules(db_url: str) -> list[str]:
        argv = [sys.executable, "-c", code, db_url]
        out = subprocess.run(argv, capture_output=True, text=True, check=True)
        loaded: list[str] = json.loads(out.stdout.splitlines()[-1])
        return loaded

    assert alembic_modules(url) == []
    assert "alembic" in alembic_modules(f"sqlite:///{empty}")
    engine = make_engine(f"sqlite:///{empty}")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == head_revision()
    assert upgrade_to_head(engine) == head_revision()
    engine.dispose()


def test_upstream_clients_make_their_connection_pool_on_the_first_request(
    settings: Settings, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Services.open makes no httpx transport (none of the three CA-bundle loads, ~0.1 s each); the first
    crossref_get_work lookup of 10.1101/598821 makes one, for Crossref only, and the work is fetched.
    """
    made: list[Any] = []
    real = httpx.HTTPTransport

    def counting(*args: Any, **kwargs: Any) -> httpx.HTTPTransport:
        transport = real(*args, **kwargs)
        made.append(transport)
        return transport

    monkeypatch.setattr(httpx, "HTTPTransport", counting)
    svc = open_services(settings, store)
    try:
        assert made == []
        lookup = lookups_crossref.get_work(svc, parse_doi(RAPTOR))
        assert lookup.entry.key == RAPTOR and lookup.provenance.source == "upstream"
        assert len(made) == 1
    finally:
        svc.close()


# --------------------------------------------------------------------------------------------------
# what `syncd cache show` and `syncd mcp` load (issue 28 item 1): module sets, never the clock

NEVER_AT_START = (
    "alembic",
    "citeproc",
    "sqlalchemy.dialects.postgresql",
    "syncd.daemon.run",
    "syncd.daemon.httpauth",
)
"""Loaded by neither command on a SQLite store at head: migrations, the citation extra, PostgreSQL's
dialect, the daemon and its HTTP authentication."""

_STATE = (
    "import json, sys\n"
    "from pydantic import BaseModel\n"
    "def state():\n"
    "    contracts = [m for n, m in sys.modules.items() if n.endswith('.contracts') or '.contracts.' in n]\n"
    "    models = [v for m in contracts for v in vars(m).values() if isinstance(v, type)]\n"
    "    built = [v.__qualname__ for v in models if issubclass(v, BaseModel) and v.__pydantic_complete__]\n"
    "    server = sys.modules.get('syncd.server.app')\n"
    "    listed = server.catalogue.cache_info().currsize if server else None\n"
    "    return {'modules': sorted(sys.modules), 'built': built, 'catalogue': listed}\n"
)


def _under(loaded: list[str], families: tuple[str, ...]) -> list[str]:
    return [m for m in loaded if m in families or m.startswith(tuple(f"{f}." for f in families))]


def _cli_env(settings: Settings, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCD_")}
    env.update(
        {
            "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "SYNCD_DATABASE_URL": settings.database_url,
            "SYNCD_CROSSREF__BASE_URL": settings.crossref.base_url,
            "SYNCD_CROSSREF__MAILTO": "ci@example.org",
        }
    )
    return env


STORE_ONLY = (
    "mcp",
    "mcp_types",
    "syncd.tools",
    "httpx",
    "httpcore",
    "tenacity",
    "rich",
    "pygments",
    "psutil",
    "sqlalchemy.orm",
    "lxml",
    "syncd.normalize.text",
    "syncd.normalize.html_text",
    "syncd.walks.walker",
    "syncd.passes.sync",
)
"""What a command that sends no request loads in no case: the MCP SDK and syncd.tools, httpx and its
transport (httpx is loaded by the first upstream request), tenacity's retry loop, rich (only for a
table, a progress bar or ``cache get`` on a terminal), pygments, psutil (only to tell whether a
lease or walk holder still runs), SQLAlchemy's ORM (the store is Core tables), lxml and the text
normalizers that use it, and the watch walkers."""

SLICE_CODE = ("lookups", "contracts", "args", "queries", "tools", "walk", "kinds_hooks")
"""The roles of a slice a store-only command loads no file of (``<role>.py`` or ``<role>_<topic>.py``):
its kinds are data (``kinds.py``, with its names, rules, client and parameter parsers), their hooks
(``kinds_hooks.py``) and everything those run wait for a hook to be asked for."""


def _slice_code(loaded: list[str]) -> list[str]:
    slices = {m.split(".")[1] for mods in TOOL_MODULES.values() for m in mods} | {"doiorg"}
    return [
        m
        for m in loaded
        if m.count(".") == 2
        and m.split(".")[1] in slices
        and (m.split(".")[2] in SLICE_CODE or m.split(".")[2].split("_")[0] in SLICE_CODE[:-1])
    ]


def test_the_slice_code_check_names_the_modules_a_store_only_command_must_not_load() -> None:
    """The check above can fail: it names a slice's lookups, tools, walk and hooks modules (role files
    included) and lets its kinds, names, rules, client and parameter parsers through.
    """
    loaded = [
        "syncd.crossref.kinds",
        "syncd.crossref.rules",
        "syncd.crossref.lookups_records",
        "syncd.zenodo.kinds_hooks",
        "syncd.zenodo.params_id",
        "syncd.datacite.walk_specs",
        "syncd.doiorg.lookups",
        "syncd.server.app",
    ]
    assert _slice_code(loaded) == [
        "syncd.crossref.lookups_records",
        "syncd.zenodo.kinds_hooks",
        "syncd.datacite.walk_specs",
        "syncd.doiorg.lookups",
    ]


@pytest.mark.parametrize(
    ("argv", "printed"),
    [
        (["cache", "show", RAPTOR, "--json"], '"key": "10.1101/598821"'),
        (["cache", "ls", "--json"], '"key": "10.1101/598821"'),
        (["cache", "search", "nocturnal lifestyles", "--json"], '"key": "10.1101/598821"'),
        (["cache", "show", RAPTOR], "10.1101/598821"),
        (["cache", "stats", "--json"], '"kind": "crossref_work"'),
    ],
    ids=["show-json", "ls-json", "search-json", "show-piped", "stats-json"],
)
def test_store_only_commands_load_no_mcp_no_tool_no_httpx_and_build_no_contract_model(
    settings: Settings, store: Store, tmp_path: Path, argv: list[str], printed: str
) -> None:
    """`syncd cache show 10.1101/598821` (stored; as JSON and piped), `cache ls`, `cache search
    "nocturnal lifestyles"` and `cache stats` (upstream checks off) print the work having loaded no MCP
    SDK, no syncd.tools module, no tool module of any slice, no httpx, httpcore, tenacity, rich, pygments
    or psutil (nothing is sent upstream and nothing is drawn on a terminal), no Alembic, citeproc or
    PostgreSQL dialect, no SQLAlchemy ORM, no lxml, no watch walker, and no lookup, contract, argument,
    query, tool, walk or hooks module of any slice (the kinds are data; issue 28 item 1), so no
    contract model is built either.
    """
    svc = open_services(settings, store)
    try:
        lookups_crossref.get_work(svc, parse_doi(RAPTOR))
    finally:
        svc.close()
    code = (
        _STATE + "from syncd.cli import cli\n"
        "try:\n"
        f"    cli({argv!r}, obj={{}})\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "print(json.dumps({'exit': code, **state()}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**_cli_env(settings, tmp_path), "SYNCD_CHECK_UPSTREAMS_AT_START": "false"},
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(out.stdout.splitlines()[-1])
    assert result["exit"] == 0 and printed in out.stdout, out.stderr
    loaded = result["modules"]
    assert {"syncd.cli.cache_commands", "sqlalchemy", "syncd.crossref.kinds", "syncd.zenodo.kinds"} <= set(
        loaded
    )
    tool_modules = {m for mods in TOOL_MODULES.values() for m in mods}
    assert _under(loaded, (*STORE_ONLY, *NEVER_AT_START)) == []
    assert tool_modules.isdisjoint(loaded)
    assert _slice_code(loaded) == []
    assert result["built"] == []


@pytest.mark.parametrize("listed", [False, True], ids=["initialize", "tools-list"])
@pytest.mark.parametrize("slices", [None, ("zenodo", "changes")], ids=["every-slice", "zenodo-only"])
def test_mcp_initialize_loads_no_tool_module_and_the_first_list_only_the_served_ones(
    settings: Settings, store: Store, tmp_path: Path, slices: tuple[str, ...] | None, listed: bool
) -> None:
    """`syncd mcp` answers `initialize` (serverInfo syncd) having loaded no tool module of any slice, built
    neither the `tools/list` catalogue nor a contract model, and loaded no httpx (no request was sent),
    SQLAlchemy ORM, Alembic, citeproc, PostgreSQL dialect, daemon or other command. Its first
    `tools/list` loads the tool modules the registry names (with their tools_<topic> role files) of the
    slices it serves (every slice by default; only Zenodo's under mcp.slices = zenodo, changes) and no
    other slice's, and builds the catalogue once (22 tools; Zenodo's 6 and the feed's 1).
    """
    state_file = tmp_path / "state.json"
    code = (
        _STATE + "import atexit, pathlib\n"
        f"atexit.register(lambda: pathlib.Path({str(state_file)!r}).write_text(json.dumps(state())))\n"
        "from syncd.cli import cli\n"
        "cli(['mcp'], obj={})\n"
    )
    env = _cli_env(settings, tmp_path)
    if slices is not None:
        env["SYNCD_MCP__SLICES"] = json.dumps(list(slices))
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    tools: list[dict[str, Any]] = []
    try:
        proc.stdin.write((json.dumps(initialize) + "\n").encode())
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        if listed:
            for message in (
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            ):
                proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()
            tools = json.loads(proc.stdout.readline())["result"]["tools"]
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    assert answer["result"]["serverInfo"]["name"] == "syncd"
    result = json.loads(state_file.read_text())
    loaded = result["modules"]
    assert "mcp.server.lowlevel" in loaded and "syncd.server.app" in loaded
    served_slices = set(TOOL_MODULES) if slices is None else set(slices) & set(TOOL_MODULES)
    served = {m for name in served_slices for m in TOOL_MODULES[name]}
    tool_like = {
        m
        for m in loaded
        if m.count(".") == 2 and not m.startswith("syncd.tools.") and m.rsplit(".", 1)[-1].startswith("tools")
    }
    commands = {m for m in loaded if m.startswith("syncd.cli.") and m.endswith("_commands")}
    assert commands == {"syncd.cli.mcp_commands"}
    assert _under(loaded, (*NEVER_AT_START, "httpx", "tenacity", "sqlalchemy.orm")) == []
    if not listed:
        assert tool_like == set() and _slice_code(loaded) == []
        assert result["catalogue"] == 0 and result["built"] == []
        return
    assert len(tools) == (22 if slices is None else 7)
    assert served <= tool_like  # each served slice's tools modules, and their role files (tools_<topic>) ...
    assert {m.split(".")[1] for m in tool_like} == served_slices  # ... of the served slices only
    assert result["catalogue"] == 1


BEFORE_READY = (
    "mcp",
    "uvicorn",
    "starlette",
    "apscheduler",
    "httpx",
    "syncd.daemon.run",
    "syncd.tools",
    "alembic",
)
"""What ``syncd daemon`` has not loaded when it tells systemd READY=1 on a store at head: the endpoint
(MCP SDK, uvicorn, Starlette), the scheduler, httpx, the daemon's jobs and tools, and Alembic."""


def _datagrams(sock: socket.socket) -> list[str]:
    """The notifications waiting on ``sock`` now (non-blocking)."""
    got = []
    sock.setblocking(False)
    try:
        while True:
            got.append(sock.recv(4096).decode())
    except BlockingIOError:
        pass
    finally:
        sock.setblocking(True)
    return got


def test_the_daemon_is_ready_before_its_endpoint_loads_and_an_early_connection_waits(
    settings: Settings, store: Store, tmp_path: Path
) -> None:
    """`syncd daemon` sends READY=1 (STATUS=loading) once the store is open and the port bound, having
    loaded no MCP SDK, uvicorn, Starlette, scheduler, httpx, syncd.daemon.run, tool or Alembic module; a
    connection made right then, before the endpoint serves (no STATUS=serving yet), is not refused: its
    GET /healthz is answered (JSON with a status) once the endpoint is up, and STATUS=serving follows.
    """
    state = tmp_path / "at_ready.json"
    code = (
        "import json, sys\n"
        "import syncd.daemon.sdnotify as sd\n"
        "real = sd.notify\n"
        "def spy(*lines):\n"
        "    if 'READY=1' in lines:\n"
        f"        open({str(state)!r}, 'w').write(json.dumps(sorted(sys.modules)))\n"
        "    return real(*lines)\n"
        "sd.notify = spy\n"
        "from syncd.cli import cli\n"
        "cli(['daemon'], obj={})\n"
    )
    port = _free_port()
    notify_path = Path(tempfile.mkdtemp(prefix="sd-")) / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notes:
        notes.bind(str(notify_path))
        notes.settimeout(120)
        env = {
            **_cli_env(settings, tmp_path),
            "NOTIFY_SOCKET": str(notify_path),
            "SYNCD_HTTP__PORT": str(port),
            "SYNCD_CHECK_UPSTREAMS_AT_START": "false",
        }
        proc = subprocess.Popen(
            [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        try:
            ready = ""
            while "READY=1" not in ready.splitlines():
                ready = notes.recv(4096).decode()
            with socket.create_connection(("127.0.0.1", port), timeout=120) as conn:
                early = _datagrams(notes)
                conn.sendall(
                    f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()
                )
                answer = b""
                while chunk := conn.recv(65536):
                    answer += chunk
            later = [notes.recv(4096).decode()]
            while not any(n.startswith("STATUS=serving") for n in (*early, *later)):
                later.append(notes.recv(4096).decode())
        finally:
            proc.send_signal(signal.SIGTERM)
            out, _ = proc.communicate(timeout=60)
            notify_path.unlink(missing_ok=True)
    assert f"STATUS=loading MCP on 127.0.0.1:{port}" in ready.splitlines()
    assert not any("STATUS=serving" in n for n in early)  # connected before the endpoint served
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith((b"HTTP/1.1 200", b"HTTP/1.1 503")), answer[:300]
    assert json.loads(body)["status"] in ("ok", "unhealthy")
    assert proc.returncode == 0, out.decode()[-2000:]
    loaded = json.loads(state.read_text())
    assert "syncd.daemon.ready" in loaded and "sqlalchemy" in loaded
    assert _under(loaded, BEFORE_READY) == []
