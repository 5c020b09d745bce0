"""The official MCP conformance suite against the daemon's Streamable HTTP endpoint (issue 24 item 2).

``@modelcontextprotocol/conformance`` (pinned in tests/inspector/package.json, installed by ``.ci/run``
with the Inspector, run on the Node.js 22 the Inspector brings) runs each server scenario that applies
to syncd against the real app of ``syncd daemon`` (:func:`syncd.daemon.run.web_server`, uvicorn on a free
loopback port) over the fake upstream; every check must end ``SUCCESS`` (``INFO`` lines are the
suite's traces). :data:`NOT_APPLICABLE` names each scenario that cannot apply and why: most call the
suite's own fixture tools, resources and prompts (``test_simple_text``, ``test://static-text``...),
which a real server does not have. The suite's ``server`` command takes only ``--url``
(Streamable HTTP), so ``syncd mcp`` (stdio) is reached through ``supergateway`` (pinned beside the
suite), a transport bridge that relays each JSON-RPC message to the child's stdin and back unchanged:
every applicable scenario except the two that test the HTTP transport itself (:data:`HTTP_ONLY`,
which over the bridge would test the bridge) runs against the real ``syncd mcp`` process too, and the
bridge's log shows syncd answered (its warning on ``resources-subscribe``). Skipped, saying so, when
the suite, the bridge or a Node.js >= 22 is missing.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

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

APPLICABLE = (
    "server-initialize",
    "ping",
    "logging-set-level",
    "tools-list",
    "resources-list",
    "prompts-list",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
    "resources-subscribe",
    "resources-unsubscribe",
)
"""Scenarios that hold for any server: each must pass. ``resources-subscribe``/``-unsubscribe`` use the
suite's ``test://watched-resource``: a scheme syncd does not serve, so the subscription is accepted and
tracked with a warning that no update will come (:meth:`syncd.server.app` ``subscribe``)."""
HTTP_ONLY = ("dns-rebinding-protection", "server-sse-multiple-streams")
"""Applicable scenarios that test the Streamable HTTP transport itself (not run over the stdio bridge)."""

FIXTURE_TOOL = "calls a fixture tool of the suite's reference server (syncd has only its own tools)"
FIXTURE_RESOURCE = (
    "reads or subscribes to a fixture resource of the suite (test://...), which syncd does not serve"
)
FIXTURE_PROMPT = "gets a fixture prompt of the suite (syncd declares no prompts)"
NOT_APPLICABLE: dict[str, str] = {
    "completion-complete": "asks completion/complete for a fixture prompt argument; syncd declares no "
    "completions capability (no prompt, and its resource templates take identifiers, not choices)",
    "tools-call-simple-text": FIXTURE_TOOL
    + "; its check accepts syncd's 'Unknown tool' text, so a pass proves nothing",
    "tools-call-image": FIXTURE_TOOL,
    "tools-call-audio": FIXTURE_TOOL,
    "tools-call-embedded-resource": FIXTURE_TOOL,
    "tools-call-mixed-content": FIXTURE_TOOL,
    "tools-call-with-logging": FIXTURE_TOOL,
    "tools-call-error": FIXTURE_TOOL + "; syncd's 'Unknown tool' error passes it, which proves nothing",
    "tools-call-with-progress": FIXTURE_TOOL,
    "tools-call-sampling": FIXTURE_TOOL,
    "tools-call-elicitation": FIXTURE_TOOL,
    "json-schema-2020-12": FIXTURE_TOOL,
    "elicitation-sep1034-defaults": FIXTURE_TOOL,
    "elicitation-sep1330-enums": FIXTURE_TOOL,
    "server-sse-polling": FIXTURE_TOOL,
    "resources-read-text": FIXTURE_RESOURCE,
    "resources-read-binary": FIXTURE_RESOURCE,
    "resources-templates-read": FIXTURE_RESOURCE,
    "prompts-get-simple": FIXTURE_PROMPT,
    "prompts-get-with-args": FIXTURE_PROMPT,
    "prompts-get-embedded-resource": FIXTURE_PROMPT,
    "prompts-get-with-image": FIXTURE_PROMPT,
}
"""Scenarios that cannot apply to syncd, with why."""


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


def _run_scenario(url: str, scenario: str, out: Path) -> None:
    """Run one scenario of the suite against ``url``; every check must end SUCCESS."""
    node, suite = _suite()
    run = subprocess.run(
        [node, suite, "server", "--url", url, "--scenario", scenario, "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    files = sorted(out.rglob("checks.json"))
    assert files, run.stdout[-3000:] + run.stderr[-2000:]
    checks = json.loads(files[-1].read_text(encoding="utf-8"))
    verdicts = [(c["id"], c["status"], c.get("errorMessage")) for c in checks if c["status"] != "INFO"]
    assert verdicts and all(status == "SUCCESS" for _, status, _ in verdicts), verdicts
    assert run.returncode == 0, run.stdout[-3000:]


def test_every_server_scenario_is_classified() -> None:
    """The pinned suite's server scenarios are exactly the applicable ones plus the listed exceptions
    (a suite update that adds one fails here until it is classified).
    """
    node, suite = _suite()
    out = subprocess.run(
        [node, suite, "list", "--server"], capture_output=True, text=True, timeout=120, check=True
    )
    listed = {
        line.strip()[2:].split(" ", 1)[0] for line in out.stdout.splitlines() if line.strip().startswith("- ")
    }
    assert listed == set(APPLICABLE) | set(NOT_APPLICABLE)
    assert not set(APPLICABLE) & set(NOT_APPLICABLE)


@pytest.mark.parametrize("scenario", APPLICABLE)
def test_scenario_passes_on_streamable_http(endpoint: str, scenario: str, tmp_path: Path) -> None:
    """Every check of the scenario ends SUCCESS against the daemon's /mcp."""
    _run_scenario(endpoint, scenario, tmp_path)


@pytest.mark.parametrize("scenario", [s for s in APPLICABLE if s not in HTTP_ONLY])
def test_scenario_passes_over_stdio(stdio_endpoint: tuple[str, Path], scenario: str, tmp_path: Path) -> None:
    """Every check of the scenario ends SUCCESS against ``syncd mcp`` over stdio (through the bridge);
    after ``resources-subscribe`` the bridge's log shows syncd's own warning relayed from the child
    (the subscription reached ``syncd mcp``, not the bridge).
    """
    url, log_path = stdio_endpoint
    _run_scenario(url, scenario, tmp_path)
    if scenario == "resources-subscribe":
        relayed = log_path.read_text(errors="replace")
        assert "subscribed to test://watched-resource, which syncd does not serve" in relayed
