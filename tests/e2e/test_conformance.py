"""The official MCP conformance suite for both protocol eras (issue 24 item 2, issue 40 item 1).

``@modelcontextprotocol/conformance`` 0.2.0-alpha.11 (pinned in tests/inspector/package.json, installed
by ``.ci/run`` with the Inspector, run on the Node.js 22 the Inspector brings) runs once per revision
(``--requirements 2025-11-25`` and ``--requirements 2026-07-28``) against the real app of ``syncd daemon``
(:func:`syncd.daemon.run.web_server`, uvicorn on a free loopback port) over the fake upstream; every
check of an applicable scenario (:data:`APPLICABLE`) must end ``SUCCESS`` (``INFO`` lines are the suite's
traces, ``SKIPPED`` its verdict for a SHOULD that does not apply), apart from the checks that call the
suite's fixture tools (:data:`FIXTURE_CHECKS`). :data:`NOT_APPLICABLE` names each scenario that cannot
apply and why: most call the suite's own fixture tools, resources and prompts (``test_simple_text``,
``test://static-text``...), which a real server does not have. The suite's ``server`` command takes only
``--url`` (Streamable HTTP), so ``syncd mcp`` (stdio) is reached through ``supergateway`` (pinned beside
the suite), a transport bridge that relays each JSON-RPC message to the child's stdin and back:
every applicable scenario except those testing the HTTP transport itself (:data:`HTTP_ONLY`, which over
the bridge would test the bridge) runs against real ``syncd mcp`` processes too, and the bridge's log
shows syncd answered (its warning on ``resources-subscribe``). Skipped, saying so, when the suite, the
bridge or a Node.js >= 22 is missing; :func:`test_stdio_serves_the_stateless_era` needs none of them.
The runs over the bridge are ``full`` (``SYNCD_TEST_FULL=1``, as ``.ci/run`` sets): each starts a node
bridge and ``syncd mcp`` children, the slowest cases of the module.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_settings
from tests.e2e.test_processes import ROOT, _env, _free_port
from tests.fakeupstream import FakeUpstream
from tests.helpers import daemon_http

pytestmark = pytest.mark.serial  # node processes against one real server

MODULES = Path(__file__).resolve().parents[1] / "inspector" / "node_modules"
SUITE = MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
NODE = MODULES / ".bin" / "node"  # the npm package `node` (22.x): the suite needs fs.globSync
GATEWAY = MODULES / "supergateway" / "dist" / "index.js"

ERAS = ("2025-11-25", "2026-07-28")
"""The protocol revisions the suite is run for (``--requirements``; passed explicitly, since without it
the suite treats 2026-07-28 as draft: conformance#426)."""

APPLICABLE: dict[str, tuple[str, ...]] = {
    "2025-11-25": (
        "server-initialize",
        "server-session-lifecycle",
        "ping",
        "logging-set-level",
        "tools-list",
        "resources-list",
        "prompts-list",
        "dns-rebinding-protection",
        "server-sse-multiple-streams",
        "resources-subscribe",
        "resources-unsubscribe",
    ),
    "2026-07-28": (
        "server-stateless",
        "tools-list",
        "resources-list",
        "prompts-list",
        "caching",
        "sep-2164-resource-not-found",
        "dns-rebinding-protection",
        "server-sse-multiple-streams",
        "http-header-validation",
        "input-required-result-unsupported-methods",
        "input-required-result-validate-input",
    ),
}
"""Scenarios that hold for any server, per revision: every check must end SUCCESS (or SKIPPED, the
suite's own verdict for a SHOULD that does not apply, e.g. list-changed notices when ``listChanged`` is
false), apart from :data:`FIXTURE_CHECKS`. ``resources-subscribe``/``-unsubscribe`` use the suite's
``test://watched-resource``: a scheme syncd does not serve, so the subscription is accepted and tracked
with a warning that no update will come (:meth:`syncd.server.app` ``subscribe``)."""

HTTP_ONLY = (
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
    "http-header-validation",
    "server-stateless",
)
"""Applicable scenarios that test the Streamable HTTP transport itself: over the stdio bridge they would
test the bridge (its Host checks, HTTP status codes, and for 2026-07-28 a child process spawned per
request). ``syncd mcp``'s own 2026-07-28 stdio answers (``server/discover``, ``subscriptions/listen``,
the removed ``initialize``) are held by :func:`test_stdio_serves_the_stateless_era` instead."""

FIXTURE_CHECKS: dict[str, str] = {
    "sep-2575-server-rejects-undeclared-capability": "needs the suite's tool test_missing_capability",
    "sep-2575-missing-capability-http-400": "needs the suite's tool test_missing_capability",
    "sep-2575-http-server-no-independent-requests-on-stream": "needs the suite's streaming fixture tool",
    "sep-2575-server-no-log-without-loglevel": "needs the suite's tool test_logging_tool",
}
"""Checks inside an applicable scenario that call a fixture tool of the suite's reference server (the
suite itself reports them "Not testable"), with why."""

FIXTURE_TOOL = "calls a fixture tool of the suite's reference server (syncd has only its own tools)"
FIXTURE_RESOURCE = (
    "reads or subscribes to a fixture resource of the suite (test://...), which syncd does not serve"
)
FIXTURE_PROMPT = "gets a fixture prompt of the suite (syncd declares no prompts)"
INPUT_REQUIRED = (
    "calls a fixture tool or prompt of the suite that answers InputRequiredResult (SEP-2322); syncd's "
    "tools never ask the client for input"
)
TASKS = (
    "the tasks extension (io.modelcontextprotocol/tasks, SEP-2663; not scored by the suite): syncd does "
    "not declare it"
)
NOT_APPLICABLE: dict[str, str] = {
    "completion-complete": "asks completion/complete for a fixture prompt argument; syncd declares no "
    "completions capability (no prompt, and its resource templates take identifiers, not choices)",
    "tools-call-simple-text": FIXTURE_TOOL,
    "tools-call-image": FIXTURE_TOOL,
    "tools-call-audio": FIXTURE_TOOL,
    "tools-call-embedded-resource": FIXTURE_TOOL,
    "tools-call-mixed-content": FIXTURE_TOOL,
    "tools-call-with-logging": FIXTURE_TOOL,
    "tools-call-error": FIXTURE_TOOL + " (an unknown tool is -32602 in syncd, SEP-1303)",
    "tools-call-with-progress": FIXTURE_TOOL,
    "tools-call-sampling": FIXTURE_TOOL,
    "tools-call-elicitation": FIXTURE_TOOL,
    "json-schema-2020-12": FIXTURE_TOOL,
    "elicitation-sep1034-defaults": FIXTURE_TOOL,
    "elicitation-sep1330-enums": FIXTURE_TOOL,
    "server-sse-polling": FIXTURE_TOOL,
    "http-custom-header-server-validation": "needs a tool whose input schema carries x-mcp-header "
    "annotations (SEP-2243); syncd's tools declare none (the suite reports it 'Not testable')",
    "resources-read-text": FIXTURE_RESOURCE,
    "resources-read-binary": FIXTURE_RESOURCE,
    "resources-templates-read": FIXTURE_RESOURCE,
    "prompts-get-simple": FIXTURE_PROMPT,
    "prompts-get-with-args": FIXTURE_PROMPT,
    "prompts-get-embedded-resource": FIXTURE_PROMPT,
    "prompts-get-with-image": FIXTURE_PROMPT,
    **{
        f"input-required-result-{name}": INPUT_REQUIRED
        for name in (
            "basic-elicitation",
            "basic-sampling",
            "basic-list-roots",
            "request-state",
            "multiple-input-requests",
            "multi-round",
            "missing-input-response",
            "non-tool-request",
            "result-type",
            "tampered-state",
            "capability-check",
            "ignore-extra-params",
        )
    },
    **{
        f"tasks-{name}": TASKS
        for name in (
            "lifecycle",
            "capability-negotiation",
            "wire-fields",
            "request-state-removal",
            "mrtr-input",
            "request-headers",
            "dispatch-and-envelope",
            "status-notifications",
            "required-task-error",
            "mrtr-composition",
        )
    },
}
"""Scenarios that cannot apply to syncd, with why (in whichever revision the suite runs them)."""


def _suite() -> tuple[str, str]:
    suite = Path(os.environ.get("SYNCD_TEST_CONFORMANCE") or SUITE)
    if not suite.exists() or not NODE.exists():
        pytest.skip(
            "the MCP conformance suite or its Node.js 22 is not installed under tests/inspector/node_modules "
            "(npm ci --prefix tests/inspector; .ci/run installs it)"
        )
    return str(NODE), str(suite)


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``http://127.0.0.1:PORT/mcp`` of the daemon's real HTTP server (empty store, fake upstream)."""
    tmp = tmp_path_factory.mktemp("conformance")
    with (
        FakeUpstream() as fake,
        daemon_http(make_settings(fake, f"sqlite:///{tmp / 'conformance.db'}")) as port,
    ):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="module")
def stdio_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """``http://127.0.0.1:PORT/mcp`` of supergateway relaying to a real ``syncd mcp`` (stdio) child,
    and the file the bridge logs every relayed message to.
    """
    node, _ = _suite()
    if not GATEWAY.exists():
        pytest.skip("supergateway is not installed under tests/inspector/node_modules (.ci/run installs it)")
    tmp = tmp_path_factory.mktemp("conformance-stdio")
    log_path = tmp / "gateway.log"
    with FakeUpstream() as fake:
        env = _env(fake, f"sqlite:///{tmp / 'stdio.db'}", tmp)
        port = _free_port()
        child = f"{shlex.quote(sys.executable)} -m syncd mcp"
        with log_path.open("wb") as log_file:
            bridge = subprocess.Popen(
                [node, str(GATEWAY), "--stdio", child, "--outputTransport", "streamableHttp",
                 "--stateful", "--port", str(port), "--logLevel", "info"],
                env=env, cwd=str(ROOT), stdout=log_file, stderr=subprocess.STDOUT,
            )  # fmt: skip
            try:
                _wait_for_port(port, bridge)
                yield f"http://127.0.0.1:{port}/mcp", log_path
            finally:
                bridge.terminate()
                try:
                    bridge.wait(10)
                except subprocess.TimeoutExpired:
                    bridge.kill()
                    bridge.wait()


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout_s: float = 60.0) -> None:
    """Return once something accepts connections on 127.0.0.1:``port`` (fails if ``proc`` ends first)."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        assert proc.poll() is None, f"the bridge ended with {proc.returncode}"
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.1)
    pytest.fail(f"nothing listened on port {port} within {timeout_s:.0f} s")


def _checks(out: Path, run: subprocess.CompletedProcess[str]) -> dict[str, list[dict[str, Any]]]:
    """Each scenario's checks written under ``out`` (the suite's ``server-<scenario>-<time>/checks.json``)."""
    results: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(out.glob("server-*/checks.json")):
        scenario = re.sub(r"-\d{4}-\d{2}-\d{2}T.*$", "", path.parent.name.removeprefix("server-"))
        results[scenario] = json.loads(path.read_text(encoding="utf-8"))
    assert results, run.stdout[-3000:] + run.stderr[-2000:]
    return results


def _run_era(url: str, era: str, out: Path) -> dict[str, list[dict[str, Any]]]:
    """Run every scenario the suite requires for ``era`` against ``url`` (``--requirements``)."""
    node, suite = _suite()
    args = [node, suite, "server", "--url", url, "--requirements", era, "-o", str(out)]
    run = subprocess.run(args, capture_output=True, text=True, timeout=100, check=False)
    return _checks(out, run)


def _run_scenario(url: str, era: str, scenario: str, out: Path) -> list[dict[str, Any]]:
    """Run one scenario at ``era`` (``--spec-version``; the suite refuses ``--requirements`` with
    ``--scenario``) against ``url``: its checks.
    """
    node, suite = _suite()
    args = [node, suite, "server", "--url", url, "--scenario", scenario, "--spec-version", era]
    args += ["-o", str(out)]
    run = subprocess.run(args, capture_output=True, text=True, timeout=100, check=False)
    return _checks(out, run)[scenario]


def _failures(checks: list[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
    """The checks that did not end SUCCESS/SKIPPED (INFO lines are traces), fixture checks set aside."""
    return [
        (c["id"], c["status"], c.get("errorMessage"))
        for c in checks
        if c["status"] not in ("SUCCESS", "SKIPPED", "INFO") and c["id"] not in FIXTURE_CHECKS
    ]


class _Runs:
    """The suite's results per era against the daemon's /mcp, each era run once per module."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self.factory = factory
        self.done: dict[str, dict[str, list[dict[str, Any]]] | BaseException] = {}

    def of(self, url: str, era: str) -> dict[str, list[dict[str, Any]]]:
        """The checks per scenario of ``era``'s run (a run that failed fails every test of it, once)."""
        if era not in self.done:
            try:
                self.done[era] = _run_era(url, era, self.factory.mktemp(f"http-{era}"))
            except (AssertionError, subprocess.SubprocessError) as exc:
                self.done[era] = exc
        got = self.done[era]
        if isinstance(got, BaseException):
            pytest.fail(f"the suite's {era} run failed: {got}")
        return got


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> _Runs:
    """The suite's runs of this module (each era once)."""
    return _Runs(tmp_path_factory)


def test_every_server_scenario_is_classified() -> None:
    """The pinned suite's server scenarios are exactly the applicable ones (of either revision) plus
    the listed exceptions, and no scenario is both (a suite update that adds one fails here until it
    is classified).
    """
    node, suite = _suite()
    out = subprocess.run(
        [node, suite, "list", "--server"], capture_output=True, text=True, timeout=120, check=True
    )
    listed = {
        line.strip()[2:].split(" ", 1)[0] for line in out.stdout.splitlines() if line.strip().startswith("- ")
    }
    applicable = {s for era in ERAS for s in APPLICABLE[era]}
    assert listed == applicable | set(NOT_APPLICABLE)
    assert not applicable & set(NOT_APPLICABLE)


CASES = [(era, scenario) for era in ERAS for scenario in APPLICABLE[era]]


@pytest.mark.parametrize(("era", "scenario"), CASES)
def test_scenario_passes_on_streamable_http(endpoint: str, runs: _Runs, era: str, scenario: str) -> None:
    """Every check of the scenario ends SUCCESS against the daemon's /mcp under ``--requirements era``
    (fixture checks aside); the run covers only classified scenarios.
    """
    results = runs.of(endpoint, era)
    assert set(results) <= set(APPLICABLE[era]) | set(NOT_APPLICABLE), sorted(results)
    assert scenario in results, sorted(results)
    assert not _failures(results[scenario])


@pytest.mark.full  # a node bridge and syncd mcp children per scenario: in .ci/run's full run
@pytest.mark.parametrize(("era", "scenario"), [c for c in CASES if c[1] not in HTTP_ONLY])
def test_scenario_passes_over_stdio(
    stdio_endpoint: tuple[str, Path], era: str, scenario: str, tmp_path: Path
) -> None:
    """Every check of the scenario ends SUCCESS against ``syncd mcp`` over stdio (through the bridge,
    one scenario per run: for 2026-07-28 the bridge starts a ``syncd mcp`` child per request); after the
    2025-11-25 ``resources-subscribe`` the bridge's log shows syncd's own warning relayed from the child
    (the subscription reached ``syncd mcp``, not the bridge).
    """
    url, log_path = stdio_endpoint
    assert not _failures(_run_scenario(url, era, scenario, tmp_path))
    if scenario == "resources-subscribe":
        relayed = log_path.read_text(errors="replace")
        assert "subscribed to test://watched-resource, which syncd does not serve" in relayed


def test_stdio_serves_the_stateless_era(tmp_path: Path) -> None:
    """``syncd mcp`` over plain stdio serves a 2026-07-28 client without a handshake: ``server/discover``
    declares ``listChanged`` false (the lists are fixed) and ``resources.subscribe``,
    ``subscriptions/listen`` is acknowledged on its own stream tagged with the request's id, and an
    ``initialize`` after that is refused with the SDK's -32022 (the connection serves the stateless era).
    """
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "conformance-test", "version": "1"},
    }
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "subscriptions/listen",
            "params": {"_meta": meta, "notifications": {"resourceSubscriptions": ["syncd://changes"]}},
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "initialize",
            "params": {
                "_meta": meta,
                "protocolVersion": "2026-07-28",
                "capabilities": {},
                "clientInfo": {"name": "conformance-test", "version": "1"},
            },
        },
    ]
    with FakeUpstream() as fake:
        child = subprocess.Popen(
            [sys.executable, "-m", "syncd", "mcp"],
            env=_env(fake, f"sqlite:///{tmp_path / 'stdio.db'}", tmp_path),
            cwd=str(ROOT),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write("".join(json.dumps(f) + "\n" for f in frames).encode())
            child.stdin.flush()
            got: list[dict[str, Any]] = []
            while not any(m.get("id") == 3 for m in got):
                line = child.stdout.readline()
                assert line, f"syncd mcp ended ({child.poll()}) after {got}"
                got.append(json.loads(line))
        finally:
            child.kill()
            child.wait()
    discover = next(m for m in got if m.get("id") == 1)["result"]["capabilities"]
    assert discover["tools"]["listChanged"] is False and discover["prompts"]["listChanged"] is False
    assert discover["resources"] == {"listChanged": False, "subscribe": True}
    ack = next(m for m in got if m.get("method") == "notifications/subscriptions/acknowledged")
    assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 2
    assert ack["params"]["notifications"] == {"resourceSubscriptions": ["syncd://changes"]}
    refused = next(m for m in got if m.get("id") == 3)["error"]
    assert refused["code"] == -32022 and refused["data"]["supported"] == ["2026-07-28"]
