"""Issue 28 item 1 and issue 24 item 3: how long a command takes to start, and the size of the catalogue.

Start-up is timed from outside, as a user or an MCP client meets it: a fresh process from spawn to
the moment it has done its job (``syncd --help`` and ``syncd cache show DOI``: exit;
``syncd mcp``: the ``initialize`` answer on stdout; ``syncd daemon``: ``READY=1`` on its
``NOTIFY_SOCKET``, as systemd hears it). Each run of a command is paired with a run of
``python -c pass`` (same interpreter, the same editable install), alternating A B A B so that the
ratio holds while the machine's speed drifts; the medians and the median of the pair ratios are
reported, with each command's median CPU seconds and the load average while it ran. The package's
bytecode is compiled first (``compileall``), as ``pip install`` does for an installed syncd: with
``PYTHONDONTWRITEBYTECODE`` set (as on the development machines) an editable install otherwise
recompiles every syncd module on every start. The catalogue is ``tools/list`` for every tool as an
MCP client receives it, measured as ``json.dumps`` text (the measure of issue 24's 169k) and as the
compact JSON-RPC wire form, with the nullable ``type`` arrays the Inspector's portability lint warns
about.
"""

from __future__ import annotations

import asyncio
import compileall
import json
import os
import resource
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp import Client

from benchmarks.harness import ROOT, Context, Row, bench, free_port, median, ms, subprocess_env
from syncd.config import McpSettings, Settings
from syncd.registry import mcp_specs, open_services
from syncd.server.app import build_server
from syncd.store.repo import Store
from tests.corpus_path import CORPUS
from tests.fakeupstream import FakeUpstream

HELP_TARGET_S = 0.3
HELP_TARGET_RATIO = 3.0
SHOW_TARGET_S = 0.5
MCP_TARGET_S = 1.0
DAEMON_TARGET_S = 1.5
TOOLS_LIST_BEFORE = 168_862
"""``tools/list`` before issue 24 item 3 (``json.dumps`` text; 160,364 as compact wire JSON)."""
DOI = "10.1101/598821"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "syncd-bench", "version": "0"},
    },
}


def _syncd() -> list[str]:
    """The ``syncd`` console script beside this interpreter (what a user runs), else ``python -m syncd``."""
    script = Path(sys.executable).with_name("syncd")
    return [str(script)] if script.exists() else [sys.executable, "-m", "syncd"]


def _run(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from spawn to exit of ``argv`` (output discarded)."""
    t = time.perf_counter()
    subprocess.run(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t


def _mcp_initialize(env: dict[str, str], timeout_s: float = 60) -> float:
    """Seconds from spawning ``syncd mcp`` to its ``initialize`` answer on stdout."""
    t = time.perf_counter()
    proc = subprocess.Popen(
        [*_syncd(), "mcp"],
        env=env,
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        proc.stdin.flush()
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            if not sel.select(timeout_s):
                raise RuntimeError("syncd mcp did not answer initialize")
            line = proc.stdout.readline()
        elapsed = time.perf_counter() - t
        if b'"result"' not in line:
            raise RuntimeError(f"syncd mcp answered initialize with {line[:200]!r}")
        return elapsed
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _daemon_ready(env: dict[str, str], workdir: Path, timeout_s: float = 60) -> float:
    """Seconds from spawning ``syncd daemon`` to ``READY=1`` on its ``NOTIFY_SOCKET``."""
    path = workdir / f"notify-{os.getpid()}-{time.monotonic_ns()}.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        sock.settimeout(timeout_s)
        t = time.perf_counter()
        proc = subprocess.Popen(
            [*_syncd(), "daemon"],
            env={**env, "NOTIFY_SOCKET": str(path), "SYNCD_HTTP__PORT": str(free_port())},
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            while True:
                message = sock.recv(4096).decode()
                if "READY=1" in message.splitlines():
                    return time.perf_counter() - t
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            path.unlink(missing_ok=True)


def _children_cpu() -> float:
    """User + system CPU seconds of every reaped child so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _paired(
    run: Callable[[], float], floor: Callable[[], float], reps: int
) -> tuple[float, float, float, float]:
    """(median of ``run``, median of ``floor``, median of the pair ratios, median CPU seconds of ``run``),
    A B A B after one warm-up each. The CPU time (the child's own user + system) moves far less than
    the wall time when other work shares the cores."""
    run()
    floor()
    a, b, ratios, cpu = [], [], [], []
    for _ in range(reps):
        before = _children_cpu()
        x = run()
        cpu.append(_children_cpu() - before)
        y = floor()
        a.append(x)
        b.append(y)
        ratios.append(x / y)
    return median(a), median(b), median(ratios), median(cpu)


@bench(
    28.1,
    "28.1",
    "startup",
    ("`syncd --help`", "`syncd cache show DOI`", "`syncd mcp` initialize", "daemon ready"),
)
def startup(ctx: Context) -> list[Row]:
    """Start-up of four commands beside ``python -c pass``."""
    reps = 3 if ctx.quick else 10
    compileall.compile_dir(ROOT / "syncd", quiet=1)
    db = ctx.workdir / "startup.db"
    floor_argv = [sys.executable, "-c", "pass"]
    with FakeUpstream(CORPUS) as fake:
        env = subprocess_env(fake, f"sqlite:///{db}", ctx.workdir)
        subprocess.run([*_syncd(), "cache", "get", DOI], env=env, cwd=ROOT, check=True, capture_output=True)

        def floor() -> float:
            return _run(floor_argv, env)

        runs: dict[str, tuple[Callable[[], float], int]] = {
            "help": (lambda: _run([*_syncd(), "--help"], env), reps),
            "show": (lambda: _run([*_syncd(), "cache", "show", DOI], env), reps),
            "mcp": (lambda: _mcp_initialize(env), reps),
            "daemon": (lambda: _daemon_ready(env, ctx.workdir), max(3, reps // 2)),
        }
        measured = {}
        loads = {}
        for key, (run, n) in runs.items():
            before = os.getloadavg()[0]
            measured[key] = _paired(run, floor, n)
            loads[key] = (before, os.getloadavg()[0])
    rows = []
    specs: dict[str, tuple[str, str, Callable[[float, float], bool]]] = {
        "help": (
            "`syncd --help`, spawn to exit",
            f"≤ {ms(HELP_TARGET_S)} and ≤ {HELP_TARGET_RATIO:g}x `python -c pass`",
            lambda s, r: s <= HELP_TARGET_S and r <= HELP_TARGET_RATIO,
        ),
        "show": (
            f"`syncd cache show {DOI}`, spawn to exit",
            f"≤ {ms(SHOW_TARGET_S)}",
            lambda s, r: s <= SHOW_TARGET_S,
        ),
        "mcp": (
            "`syncd mcp`, spawn to the `initialize` answer",
            f"≤ {ms(MCP_TARGET_S)}",
            lambda s, r: s <= MCP_TARGET_S,
        ),
        "daemon": (
            "`syncd daemon`, spawn to READY=1 on NOTIFY_SOCKET",
            f"≤ {ms(DAEMON_TARGET_S)}",
            lambda s, r: s <= DAEMON_TARGET_S,
        ),
    }
    for key, (figure, target, met) in specs.items():
        s, floor_s, ratio, cpu = measured[key]
        rows.append(
            Row(
                "28.1",
                figure,
                ms(s),
                target,
                met(s, ratio),
                note=(
                    f"median of {runs[key][1]}; CPU {cpu:.2f} s; "
                    f"load {loads[key][0]:.2f} before, {loads[key][1]:.2f} after"
                ),
                comparison=f"`python -c pass` {ms(floor_s)}",
                ratio=f"{ratio:.1f}x",
            )
        )
    sqlite_utils = shutil.which("sqlite-utils")
    if sqlite_utils:
        before = os.getloadavg()[0]
        s, floor_s, ratio, cpu = _paired(
            lambda: _run([sqlite_utils, "--help"], os.environ.copy()), floor, reps
        )
        rows.append(
            Row(
                "28.1",
                f"`sqlite-utils --help` (a click CLI of the same kind, for comparison; CPU {cpu:.2f} s; "
                f"load {before:.2f} before, {os.getloadavg()[0]:.2f} after)",
                ms(s),
                comparison=f"`python -c pass` {ms(floor_s)}",
                ratio=f"{ratio:.1f}x",
            )
        )
    return rows


def _nullable_type_arrays(node: Any) -> int:
    if isinstance(node, dict):
        own = isinstance(node.get("type"), list) and "null" in node["type"]
        return int(own) + sum(_nullable_type_arrays(v) for v in node.values())
    if isinstance(node, list):
        return sum(_nullable_type_arrays(v) for v in node)
    return 0


SLICE_SETS: tuple[tuple[str, ...], ...] = (
    ("crossref", "zenodo", "changes"),
    ("datacite",),
    ("crossref", "datacite", "changes"),
)
"""The ``mcp.slices`` sets measured besides the default (every slice): the catalogue before DataCite,
DataCite's six tools alone, and a lab that reads Crossref and DataCite (issue 26 item 5)."""


def _listed(settings: Settings, store: Store) -> list[dict[str, Any]]:
    """``tools/list`` of a server of ``settings`` (its ``mcp.slices``) over ``store``, as a client sees it."""
    svc = open_services(settings, store)

    async def listed() -> list[dict[str, Any]]:
        async with Client(build_server(svc, *mcp_specs(svc.settings))) as client:
            tools = (await client.list_tools()).tools
        return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]

    try:
        return asyncio.run(listed())
    finally:
        svc.close()


@bench(24.3, "24.3", "catalogue", ("`tools/list` size", "nullable type arrays"))
def catalogue(ctx: Context) -> list[Row]:
    """``tools/list`` size and its nullable ``type`` arrays, as an MCP client receives the list; the
    size with each :data:`SLICE_SETS` ``mcp.slices`` set too."""
    settings = Settings(database_url=f"sqlite:///{ctx.workdir / 'catalogue.db'}")
    store = Store.open(settings.database_url)
    try:
        tools = _listed(settings, store)
        subsets = {
            names: _listed(settings.model_copy(update={"mcp": McpSettings(slices=list(names))}), store)
            for names in SLICE_SETS
        }
    finally:
        store.close()
    text = len(json.dumps({"tools": tools}))
    wire = len(json.dumps({"tools": tools}, separators=(",", ":"), ensure_ascii=False))
    outputs = sum(len(json.dumps(t.get("outputSchema"))) for t in tools)
    nullable = _nullable_type_arrays(tools)
    return [
        Row(
            "24.3",
            f"`tools/list`, {len(tools)} tools (json.dumps text; output schemas {outputs:,})",
            f"{text:,} characters",
            f"≤ {TOOLS_LIST_BEFORE // 2:,} (half of {TOOLS_LIST_BEFORE:,})",
            text <= TOOLS_LIST_BEFORE // 2,
            comparison=f"before {TOOLS_LIST_BEFORE:,}",
            ratio=f"{text / TOOLS_LIST_BEFORE:.2f}x",
        ),
        Row(
            "24.3",
            "`tools/list` as compact JSON (the wire form)",
            f"{wire:,} characters",
            comparison="before 160,364",
            ratio=f"{wire / 160_364:.2f}x",
        ),
        *(
            Row(
                "24.3",
                f"`tools/list` with `mcp.slices` = {', '.join(names)}: {len(listed)} tools (json.dumps text)",
                f"{len(json.dumps({'tools': listed})):,} characters",
                comparison=f"default (every slice) {text:,}",
                ratio=f"{len(json.dumps({'tools': listed})) / text:.2f}x",
            )
            for names, listed in subsets.items()
        ),
        Row(
            "24.3",
            "nullable `type` arrays in the catalogue",
            str(nullable),
            "0",
            nullable == 0,
            comparison="before 364",
        ),
    ]
