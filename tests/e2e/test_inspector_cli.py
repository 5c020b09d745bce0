"""The official MCP Inspector CLI reads syncd's answers: a success, an error and a miss (issue 12 item 1),
a crossref_get_works batch, the change feed (syncd_list_changes) and the syncd://changes resource.

The Inspector (``@modelcontextprotocol/inspector`` 2.12.0, on the TypeScript SDK) validates every
``structuredContent`` it receives, errors included, against the tool's ``outputSchema`` with Ajv; when
an answer does not fit it prints only the validator's text (``data must have required property
'doi', data must NOT have additional properties``) on stderr, exits 1 and shows nothing of the
answer. These tests drive ``python -m syncd mcp`` over stdio with the Inspector's ``--cli`` mode, as a
user would, against the loopback fake upstream and a fresh SQLite file, and parse its
``--format json`` output.

Install the Inspector (and the Node.js it declares, >= 22.19, from the npm package ``node``) with
``npm install --prefix tests/inspector`` (versions pinned by ``tests/inspector/package-lock.json``).
Without it these tests skip; ``SYNCD_TEST_INSPECTOR`` (set by ``.ci/run``) names the Inspector's
``mcp-inspector`` binary and turns a missing or broken install into a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

from syncd.retractions.importer import import_path
from syncd.store.repo import Store
from tests.conftest import CORPUS
from tests.e2e.test_faults_all_tools import LANCET, SEEDED_CHANGE_TYPES, seed_change
from tests.fakeupstream import FakeUpstream
from tests.helpers import every_tool
from tests.retraction_helpers import SAMPLE, store_work
from tests.schema_check import schema_errors

pytestmark = pytest.mark.xdist_group("inspector")  # module-scoped Inspector and servers

ROOT = Path(__file__).resolve().parents[2]
INSPECTOR_ENV = "SYNCD_TEST_INSPECTOR"
DEFAULT_INSPECTOR = ROOT / "tests" / "inspector" / "node_modules" / ".bin" / "mcp-inspector"
INSPECTOR_VERSION = "2.12.0"
CALL_TIMEOUT_S = 90
TOOL_COUNT = len(every_tool())
EXPECTED_TOOL_COUNT = 22
"""13 original tools, crossref_get_works and syncd_list_changes (issue 16), syncd_cited_by (issue 23),
DataCite's six (issue 26)."""
HIGGS_TITLE = (
    "Observation of a new particle in the search for the Standard Model Higgs boson with the ATLAS detector "
    "at the LHC"
)
RAPTOR_TITLE = "Raptor genomes reveal evolutionary signatures of predatory and nocturnal lifestyles"
ORIGINS_TITLE = "The Origins of SARS-CoV-2: A Critical Review"
RECORD_ID = "5244404"
# The Inspector's exit code when the tool answered ``isError: true`` (EXIT_CODES.TOOL_ERROR in 2.12.0).
EXIT_TOOL_ERROR = 5


@dataclass(frozen=True)
class Inspector:
    """How to run the Inspector CLI: the Node.js binary and the ``mcp-inspector`` launcher script."""

    node: str
    launcher: Path


@dataclass(frozen=True)
class InspectorRun:
    """One finished ``mcp-inspector --cli`` process: exit code, stdout (the JSON result) and stderr."""

    returncode: int
    stdout: str
    stderr: str

    def envelopes(self) -> list[dict[str, Any]]:
        """The Inspector's own error envelopes: the stderr lines that are JSON objects with ``error``."""
        found: list[dict[str, Any]] = []
        for line in self.stderr.splitlines():
            try:
                parsed = json.loads(line)
            except ValueError:
                continue
            if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
                found.append(parsed["error"])
        return found

    def result(self) -> dict[str, Any]:
        """The MCP result the Inspector printed (``{"result": ...}`` on stdout); fails with its stderr."""
        if not self.stdout.strip():
            pytest.fail(
                f"the Inspector showed no result (exit {self.returncode}); its errors: {self.envelopes()}; "
                f"stderr tail: {self.stderr[-1500:]}"
            )
        result: dict[str, Any] = json.loads(self.stdout)["result"]
        return result


def _fail_or_skip(reason: str) -> NoReturn:
    """Fail when ``SYNCD_TEST_INSPECTOR`` asks for the Inspector (CI), else skip with ``reason``."""
    if os.environ.get(INSPECTOR_ENV):
        pytest.fail(f"{INSPECTOR_ENV}={os.environ[INSPECTOR_ENV]}: {reason}")
    pytest.skip(f"{reason}; install it with `npm install --prefix tests/inspector`")


@pytest.fixture(scope="module")
def inspector() -> Inspector:
    """The installed Inspector CLI, checked to run and to be version 2.12.0 (skip when not installed).

    The Node.js binary is the one the npm package ``node`` put beside the launcher (``.bin/node``),
    else ``node`` on PATH.
    """
    launcher = Path(os.environ.get(INSPECTOR_ENV) or DEFAULT_INSPECTOR)
    if not launcher.is_file():
        _fail_or_skip(f"MCP Inspector CLI not installed ({launcher} missing)")
    bundled = launcher.parent / "node"
    node = str(bundled) if bundled.is_file() else shutil.which("node")
    if node is None:
        _fail_or_skip("no Node.js to run the MCP Inspector with")
    try:
        probe = subprocess.run(
            [node, str(launcher), "--cli", "--version"],
            capture_output=True,
            text=True,
            timeout=CALL_TIMEOUT_S,
            check=False,
        )
    except OSError as exc:
        _fail_or_skip(f"the MCP Inspector does not start ({exc})")
    if probe.returncode != 0 or INSPECTOR_VERSION not in probe.stdout:
        _fail_or_skip(
            f"the MCP Inspector at {launcher} (node {node}) is not version {INSPECTOR_VERSION} or does "
            f"not run: exit {probe.returncode}, {probe.stdout.strip()!r} {probe.stderr[-500:]!r}"
        )
    return Inspector(node=node, launcher=launcher)


@pytest.fixture(scope="module")
def upstream() -> Iterator[FakeUpstream]:
    """One fake upstream (the recorded corpus on loopback) for the module's Inspector sessions."""
    with FakeUpstream(CORPUS) as server:
        yield server


@dataclass(frozen=True)
class Session:
    """Runs the Inspector CLI against ``python -m syncd mcp`` with the fake upstream and a temp store."""

    inspector: Inspector
    server_env: dict[str, str]
    home: Path

    def run(self, *args: str) -> InspectorRun:
        """``mcp-inspector --cli <syncd mcp> --format json ARGS``; the server gets only ``server_env``."""
        env_args = [part for key, value in self.server_env.items() for part in ("-e", f"{key}={value}")]
        command = [
            self.inspector.node,
            str(self.inspector.launcher),
            "--cli",
            sys.executable,
            "-m",
            "syncd",
            "mcp",
            *env_args,
            "--cwd",
            str(ROOT),
            "--format",
            "json",
            *args,
        ]
        env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCD_")}
        env["HOME"] = str(self.home)  # the Inspector's own state (~/.mcp-inspector) stays in the temp dir
        proc = subprocess.run(
            command,
            env=env,
            cwd=str(ROOT),
            capture_output=True,
            text=True,
            timeout=CALL_TIMEOUT_S,
            check=False,
        )
        return InspectorRun(proc.returncode, proc.stdout, proc.stderr)

    def call(self, tool: str, *tool_args: str) -> InspectorRun:
        """``--method tools/call --tool-name TOOL --tool-arg k=v ...`` (the Inspector's key=value form)."""
        return self.run("--method", "tools/call", "--tool-name", tool, "--tool-arg", *tool_args)


@pytest.fixture(scope="module")
def session(
    inspector: Inspector, upstream: FakeUpstream, tmp_path_factory: pytest.TempPathFactory
) -> Session:
    """The Inspector, pointed at syncd with the base URLs at the fake and a fresh SQLite store."""
    root = tmp_path_factory.mktemp("inspector")
    (root / "home").mkdir()
    server_env = {
        "PYTHONPATH": str(ROOT),
        "XDG_CONFIG_HOME": str(root / "config"),
        "XDG_DATA_HOME": str(root / "data"),
        "SYNCD_DATABASE_URL": f"sqlite:///{root / 'syncd.db'}",
        "SYNCD_CROSSREF__BASE_URL": upstream.crossref_url,
        "SYNCD_CROSSREF__MAILTO": "ci@example.org",
        "SYNCD_ZENODO__BASE_URL": upstream.zenodo_url,
        "SYNCD_DOI__BASE_URL": upstream.doi_url,
        "SYNCD_DATACITE__BASE_URL": upstream.datacite_url,
    }
    return Session(inspector=inspector, server_env=server_env, home=root / "home")


@pytest.fixture(scope="module")
def tools_list(session: Session) -> InspectorRun:
    """The Inspector's ``tools/list --strict`` run (its schema-portability lint on stderr)."""
    listed = session.run("--method", "tools/list", "--strict")
    assert listed.returncode == 0, f"tools/list --strict exit {listed.returncode}: {listed.stderr[-1500:]}"
    return listed


@pytest.fixture(scope="module")
def output_schemas(tools_list: InspectorRun) -> dict[str, dict[str, Any]]:
    """Each tool's ``outputSchema`` as the Inspector listed it (``tools/list --strict``)."""
    return {tool["name"]: tool.get("outputSchema") for tool in tools_list.result()["tools"]}


def _fits(schemas: dict[str, dict[str, Any]], tool: str, result: dict[str, Any]) -> None:
    """The answer's structuredContent fits the listed outputSchema by ``jsonschema`` too."""
    errors = schema_errors(schemas[tool], result["structuredContent"])
    assert not errors, f"{tool} answer breaks its outputSchema: {errors}"


def test_tools_list_shows_every_tool_with_a_portable_output_schema(
    tools_list: InspectorRun, output_schemas: dict[str, dict[str, Any]]
) -> None:
    """``tools/list`` through the Inspector: 22 tools, each with an object outputSchema, and the
    Inspector's ``--strict`` schema-portability lint finds no error (exit 0, not 6) and no warning
    (issue 24 item 3: it warned 364 times of nullable ``type`` arrays).
    """
    findings = [line for line in tools_list.stderr.splitlines() if line.startswith(("Warning:", "Error:"))]
    assert findings == [], f"{len(findings)} portability findings, first: {tools_list.stderr[:800]}"
    assert len(output_schemas) == TOOL_COUNT == EXPECTED_TOOL_COUNT
    assert {"crossref_get_work", "zenodo_get_record", "crossref_get_works", "syncd_list_changes"} <= (
        output_schemas.keys()
    )
    for name, schema in output_schemas.items():
        assert schema is not None and schema.get("type") == "object", name


def test_success_is_shown(session: Session, output_schemas: dict[str, dict[str, Any]]) -> None:
    """``crossref_get_work doi=10.1101/598821``: the Inspector exits 0 and shows the work's title in
    structuredContent and in the text.
    """
    run = session.call("crossref_get_work", "doi=10.1101/598821")
    result = run.result()
    assert run.returncode == 0, run.stderr[-1500:]
    assert result["isError"] is False
    assert result["structuredContent"]["title"] == RAPTOR_TITLE
    assert result["structuredContent"]["doi"] == "10.1101/598821"
    assert RAPTOR_TITLE in result["content"][0]["text"]
    _fits(output_schemas, "crossref_get_work", result)


def test_error_reason_is_shown_not_a_schema_failure(
    session: Session, output_schemas: dict[str, dict[str, Any]]
) -> None:
    """``crossref_get_work doi=10.9999/nope``: the Inspector shows syncd's error answer (reason
    ``doi_not_found`` with its recovery hint) and reports only that the tool returned isError (exit 5),
    not an outputSchema validation failure (``data must ...``, exit 1).
    """
    run = session.call("crossref_get_work", "doi=10.9999/nope")
    result = run.result()
    assert result["isError"] is True
    error = result["structuredContent"]["error"]
    assert error["data"]["reason"] == "doi_not_found"
    assert error["data"]["recovery"]["hint"]
    assert "doi_not_found" in result["content"][0]["text"]
    assert run.returncode == EXIT_TOOL_ERROR
    assert [e["code"] for e in run.envelopes()] == ["tool_is_error"]
    assert "data must" not in run.stderr
    _fits(output_schemas, "crossref_get_work", result)


def test_numeric_record_id_is_answered(session: Session, output_schemas: dict[str, dict[str, Any]]) -> None:
    """``zenodo_get_record id=5244404``: the Inspector sends the id as a JSON number (its key=value
    arguments are JSON-parsed) and syncd answers the record (issue 12 item 2), exit 0.
    """
    run = session.call("zenodo_get_record", "id=5244404")
    result = run.result()
    assert run.returncode == 0, run.stderr[-1500:]
    assert result["isError"] is False
    content = result["structuredContent"]
    assert content["found"] is True
    assert content["input_kind"] == "record_id"
    assert content["record"]["recid"] == RECORD_ID
    assert content["record"]["title"] == ORIGINS_TITLE
    assert content["record"]["doi"] == "10.5281/zenodo.5244404"
    _fits(output_schemas, "zenodo_get_record", result)


def test_miss_is_shown(session: Session, output_schemas: dict[str, dict[str, Any]]) -> None:
    """``zenodo_get_record id=999999999999`` (Zenodo's recorded 404): the Inspector shows the miss
    (``found: false``, ``miss_kind: not_found``, the guidance) as a normal answer, exit 0.
    """
    run = session.call("zenodo_get_record", "id=999999999999")
    result = run.result()
    assert run.returncode == 0, run.stderr[-1500:]
    assert result["isError"] is False
    content = result["structuredContent"]
    assert content["found"] is False
    assert content["miss_kind"] == "not_found"
    assert "999999999999" in content["guidance"]
    _fits(output_schemas, "zenodo_get_record", result)


def test_get_works_batch_is_shown(session: Session, output_schemas: dict[str, dict[str, Any]]) -> None:
    """``crossref_get_works dois=[two corpus DOIs]`` (a JSON array argument): exit 0, both works found
    in the order given with their recorded titles and their own cache blocks, no top-level cache,
    fitting the listed outputSchema.
    """
    dois = ["10.1101/598821", "10.1016/j.physletb.2012.08.020"]
    run = session.call("crossref_get_works", f"dois={json.dumps(dois)}")
    result = run.result()
    assert run.returncode == 0, run.stderr[-1500:]
    assert result["isError"] is False
    content = result["structuredContent"]
    assert [(i["doi"], i["found"], i["title"]) for i in content["items"]] == [
        (dois[0], True, RAPTOR_TITLE),
        (dois[1], True, HIGGS_TITLE),
    ]
    assert all(i["cache"]["source"] in ("store", "upstream") for i in content["items"])
    assert "cache" not in content
    assert (content["requested"], content["counts"]["found"]) == (2, 2)
    assert HIGGS_TITLE in result["content"][0]["text"]
    _fits(output_schemas, "crossref_get_works", result)


def test_change_feed_is_shown(session: Session, output_schemas: dict[str, dict[str, Any]]) -> None:
    """With one change recorded in the session's store (the Lancet paper's retraction, seeded directly),
    ``syncd_list_changes since=30d limit=5``: exit 0, from the store (source store), that change with
    its retraction items, fitting the outputSchema; the Inspector lists the ``syncd://changes`` resource
    and reads it as JSON holding the same change.
    """
    store = Store.open(session.server_env["SYNCD_DATABASE_URL"])
    try:
        seed_change(store)
    finally:
        store.close()
    run = session.call("syncd_list_changes", "since=30d", "limit=5")
    result = run.result()
    assert run.returncode == 0, run.stderr[-1500:]
    assert result["isError"] is False
    content = result["structuredContent"]
    assert content["cache"]["source"] == "store"
    assert [(c["key"], c["types"]) for c in content["changes"]] == [(LANCET, SEEDED_CHANGE_TYPES)]
    assert [i["doi"] for i in content["changes"][0]["items"] if i["type"] == "retraction"] == [
        "10.1016/s0140-6736(20)31324-6",
        "10.1016/s0140-6736(20)31174-0",
    ]
    _fits(output_schemas, "syncd_list_changes", result)
    listed = session.run("--method", "resources/list")
    assert listed.returncode == 0, listed.stderr[-1500:]
    assert "syncd://changes" in [r["uri"] for r in listed.result()["resources"]]
    read = session.run("--method", "resources/read", "--uri", "syncd://changes")
    assert read.returncode == 0, read.stderr[-1500:]
    (contents,) = read.result()["contents"]
    assert contents["mimeType"] == "application/json"
    assert [(c["key"], c["types"]) for c in json.loads(contents["text"])["changes"]] == [
        (LANCET, SEEDED_CHANGE_TYPES)
    ]


def test_works_carry_the_retraction_verdict_and_cited_by_answers(
    session: Session, output_schemas: dict[str, dict[str, Any]]
) -> None:
    """With the Retraction Watch sample imported and two corpus works stored: ``crossref_get_works``
    items carry the verdict (the Lancet paper retracted, with the version named) and ``syncd_cited_by``
    answers from the store with its coverage; both fit their outputSchemas in the Inspector.
    """
    store = Store.open(session.server_env["SYNCD_DATABASE_URL"])
    try:
        import_path(store, SAMPLE)
        store_work(store, "10.1038/s43586-021-00024-3")
    finally:
        store.close()
    run = session.call("crossref_get_works", f"dois={json.dumps([LANCET, '10.5555/rw-only-1'])}")
    result = run.result()
    assert run.returncode == 0, run.stderr[-1500:]
    lancet, only = result["structuredContent"]["items"]
    assert lancet["retraction"]["severity"] == only["retraction"]["severity"] == "retracted"
    assert result["structuredContent"]["retractionWatch"]["rows"] == 9
    _fits(output_schemas, "crossref_get_works", result)
    run = session.call("syncd_cited_by", "doi=10.1126/science.280.5362.421")
    result = run.result()
    assert run.returncode == 0, run.stderr[-1500:]
    content = result["structuredContent"]
    assert content["total"] == 1 and content["coverage"]["indexedWorks"] >= 1  # the session store
    _fits(output_schemas, "syncd_cited_by", result)
