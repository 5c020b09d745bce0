"""Shared fixtures: a fake upstream on loopback, settings pointing at it, a fresh store per test.

Backends: ``db_url`` is an SQLite file by default. Modules marked ``pytestmark =
pytest.mark.both_backends`` (the store and budget contract tests) run every test that takes ``db_url``
(directly or through ``settings``, ``store``, ``cache``) twice, ``[sqlite]`` and ``[postgresql]``;
``pytest.mark.both_backends(full_only=True)`` (tool modules) adds ``[postgresql]`` only in the full run.

Default and full run: ``SYNCD_TEST_FULL=1`` (``.ci/run`` sets it) is the full run: tests marked
``pytest.mark.full`` (the fault matrix's full cross product, every variant of a fault kind) run only
then, and property tests take their large example budgets (:func:`examples`). The default run covers
every tool x fault kind once and every property with a smaller budget.

Parallel: the suite runs under pytest-xdist (``-n auto --dist loadgroup`` in pyproject's addopts; ``-n 0``
for one process). Every fixture is per worker: the fake upstream binds port 0, SQLite files live in
``tmp_path``, PostgreSQL databases are uniquely named and the migrated template is named per worker.
Tests sharing a module-scoped fixture (a built matrix, a filled store) carry ``pytest.mark.xdist_group``
so one worker runs them all; ``pytest.mark.serial`` marks the tests that start real processes or hold a
machine-wide resource, which run in one group, one at a time. The PostgreSQL server is
``$SYNCD_TEST_PG_URL`` when set (``.ci/run`` starts one; an unreachable server then fails those
tests), else a throwaway cluster this session starts from the local PostgreSQL binaries
(``initdb``/``pg_ctl`` on PATH or in ``/usr/lib/postgresql/*/bin``) on 127.0.0.1 in a temporary
directory, as ``nobody`` when running as root; without binaries or psycopg, or with
``SYNCD_TEST_PG=off``, the ``[postgresql]`` cases skip.
Each PostgreSQL test gets a fresh database cloned from a template migrated to head once per session.
``SYNCD_TEST_BACKEND=postgresql`` runs every other ``db_url`` test on PostgreSQL too (SQLite-only
tests, e.g. WAL or file modes, then fail by design).
"""

from __future__ import annotations

import compileall
import contextlib
import glob
import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import freezegun
import pytest
from jsonschema import Draft202012Validator

from syncd.config import Settings
from syncd.registry import open_services
from syncd.road.services import Services
from syncd.store.repo import Store
from syncd.store.session import StoreSession
from tests.corpus_path import CORPUS
from tests.fakeupstream import FakeUpstream
from tests.schema_check import checking

freezegun.configure(extend_ignore_list=["_pytest.timing"])
"""pytest's own clock stays real under ``freeze_time``: the durations ``.ci/run`` prints (the 20
slowest tests) were the frozen dates for the tests that freeze time (1,797,306,385 s)."""


def time_tool_bodies(server: Any) -> dict[str, float]:
    """Time each tool call's handler on ``server``, on the server side: seconds of its last call, by name.

    The handler validates the arguments and runs the tool's body (store and upstream included) under the
    call's deadline, where the deadline is kept; the MCP client's wall clock (session set-up, schema
    checks, the event loop of other sessions) is never the measure. It is re-registered through the
    low-level ``Server``'s public ``add_request_handler``.
    """
    timings: dict[str, float] = {}
    entry = server.get_request_handler("tools/call")
    inner = entry.handler

    async def timed(ctx: Any, params: Any) -> Any:
        started = time.monotonic()
        try:
            return await inner(ctx, params)
        finally:
            timings[params.name] = time.monotonic() - started

    server.add_request_handler("tools/call", entry.params_type, timed)
    return timings


def corpus_json(rel: str) -> Any:
    """A recorded body from the corpus (``tests/corpus/``, :data:`tests.corpus_path.CORPUS`), parsed."""
    return json.loads((CORPUS / rel).read_text(encoding="utf-8"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def schema_checked_once() -> Iterator[None]:
    """The MCP client's check of a tool's ``outputSchema`` against the metaschema, once per schema.

    The SDK client checks each listed ``outputSchema`` (``check_schema``, ~0.3 s for syncd's 15 tools)
    in every new session, and tests open thousands of sessions on the same schemas; a schema that passed
    once is not checked again (a failing one still raises every time). Validation of every answer is
    untouched.
    """
    passed: set[str] = set()
    original = Draft202012Validator.check_schema

    def check_schema(schema: Any, *args: Any, **kwargs: Any) -> None:
        key = json.dumps(schema, sort_keys=True)
        if key not in passed:
            original(schema, *args, **kwargs)
            passed.add(key)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Draft202012Validator, "check_schema", staticmethod(check_schema))
        yield


def _new_sqlite_file(database_url: str) -> Path | None:
    """The path of a file-backed SQLite URL whose file does not exist yet (nor any companion file that
    says one was expected there), in an existing directory; None for anything else.
    """
    if not database_url.startswith("sqlite:///") or "?" in database_url:
        return None
    path = Path(database_url[len("sqlite:///") :]).expanduser()
    if str(path) in ("", ":memory:") or path.exists() or not path.parent.is_dir():
        return None
    if any(path.with_name(path.name + s).exists() for s in ("-wal", "-shm", ".daemon.lock")):
        return None
    return path


@pytest.fixture(scope="session", autouse=True)
def sqlite_stores_start_at_head(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A new SQLite store in a test starts as a copy of one database migrated to head (per worker).

    Replaying the 13 migrations for each of the suite's ~1,500 fresh SQLite stores cost about 0.1 s of
    CPU each; here ``Store.open`` of a file that does not exist yet (first use) copies a database
    migrated once, so it opens at head as any existing store does. Only in-process opens with
    ``upgrade=True`` are served so; a copy that cannot be written (a full or read-only disk under
    test) falls back to the real first open. The migrations themselves are tested where they are
    the claim (tests/store/test_migrations*.py open old stores from kept samples or with
    ``upgrade=False``; processes such as ``syncd db upgrade`` subprocesses are untouched). Tests
    marked ``pytest.mark.real_first_open`` get the real first open.
    """
    template = tmp_path_factory.mktemp("head-template") / "head.db"
    Store.open(f"sqlite:///{template}").close()
    original = StoreSession.open.__func__  # type: ignore[attr-defined]

    def open_at_head(cls: type[Any], database_url: str, *, upgrade: bool = True, **limits: Any) -> Any:
        path = _new_sqlite_file(database_url) if upgrade and not _REAL_FIRST_OPEN else None
        if path is not None:
            try:
                shutil.copyfile(template, path)
                path.chmod(0o660)  # as the first open leaves it (owner and group)
            except OSError:
                with contextlib.suppress(OSError):
                    path.unlink()
        return original(cls, database_url, upgrade=upgrade, **limits)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(StoreSession, "open", classmethod(open_at_head))
        yield


_REAL_FIRST_OPEN: list[bool] = []
"""Non-empty while a test marked ``real_first_open`` runs."""


@pytest.fixture(autouse=True)
def _real_first_open(request: pytest.FixtureRequest) -> Iterator[None]:
    """``pytest.mark.real_first_open``: new SQLite stores of this test replay the migrations."""
    if request.node.get_closest_marker("real_first_open") is None:
        yield
        return
    _REAL_FIRST_OPEN.append(True)
    try:
        yield
    finally:
        _REAL_FIRST_OPEN.pop()


@pytest.fixture(autouse=True)
def answers_fit_output_schema(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every tool answer in every test is checked against its tool's outputSchema (tests/schema_check.py)."""
    with checking(monkeypatch):
        yield


@pytest.fixture
def fake() -> Iterator[FakeUpstream]:
    with FakeUpstream(CORPUS) as server:
        yield server


FULL_ENV = "SYNCD_TEST_FULL"
FULL = os.environ.get(FULL_ENV, "") == "1"
"""The full run (``SYNCD_TEST_FULL=1``, set by ``.ci/run``): ``full`` tests and large property budgets."""


def examples(default: int, full: int) -> int:
    """A property test's ``max_examples``: ``full`` in the full run, else ``default``."""
    return full if FULL else default


def keep_bytecode() -> None:
    """Let this process and every process it starts write bytecode, even under ``PYTHONDONTWRITEBYTECODE``.

    The suite starts about 150 Python processes (the xdist workers, and the real ``syncd`` commands,
    daemons and MCP servers of the process tests). Where the environment forbids writing bytecode (as
    many container images do), each of them compiled syncd and the test modules from source again:
    collecting the suite cost 14.7 s of CPU per worker instead of 5.3 s, and each ``syncd`` command
    0.2-0.5 s more. Bytecode goes where Python puts it by default (``__pycache__``, ignored by git).
    Called from :func:`pytest_configure`, before xdist starts its workers, which inherit the environment.
    """
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # the controller, before the workers start
        # compiled once here instead of by every worker at once on a fresh clone; the test modules are
        # left to pytest, which compiles its own rewritten form of them
        root = Path(__file__).resolve().parents[1]
        skip = re.compile(r"(^|/)(test_[^/]*|conftest)\.py$")
        for tree in ("syncd", "tests"):
            compileall.compile_dir(root / tree, quiet=1, rx=skip, workers=1)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (pyproject's addopts): one xdist worker per usable core, plus one.

    The suite's tests wait about a third of their time (real ``syncd`` processes starting, held locks,
    the fake upstream's latency): with one worker per core those waits left a core idle. A third worker
    on 2 cores took the README's ``pytest`` from 5 min 27 s to 4 min 46 s (idle, 2026-12-01).
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still overrides it, as in xdist.
    """
    given = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    if given:
        return int(given)
    return len(os.sched_getaffinity(0)) + 1


def pytest_configure(config: pytest.Config) -> None:
    keep_bytecode()
    config.addinivalue_line(
        "markers",
        "both_backends(full_only=False): run the module's db_url tests on SQLite and on PostgreSQL "
        "(with full_only=True, PostgreSQL only in the full run)",
    )
    config.addinivalue_line(
        "markers", f"full: part of the full cross product, run only when {FULL_ENV}=1 (.ci/run sets it)"
    )
    config.addinivalue_line(
        "markers",
        "real_first_open: new SQLite stores replay the migrations (not a copy of a migrated template)",
    )
    config.addinivalue_line(
        "markers",
        "serial: starts real processes or holds a machine-wide resource (one xdist group, one at a time)",
    )


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``full`` tests skip outside the full run; ``serial`` tests share one xdist group."""
    skip_full = pytest.mark.skip(reason=f"full run only ({FULL_ENV}=1)")
    for item in items:
        if not FULL and item.get_closest_marker("full"):
            item.add_marker(skip_full)
        if item.get_closest_marker("serial") and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group("serial"))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("both_backends")
    if "db_backend" in metafunc.fixturenames and marker is not None:
        pg = FULL or not marker.kwargs.get("full_only", False)
        metafunc.parametrize("db_backend", ["sqlite", "postgresql"] if pg else ["sqlite"], indirect=True)


PG_ENV = "SYNCD_TEST_PG_URL"
PG_TEMPLATE = f"syncd_test_template_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
"""The migrated template database, one per xdist worker (each worker creates and drops its own)."""


def _pg_tool(name: str) -> str | None:
    """Path of a PostgreSQL server binary (newest major version first), or None."""
    for directory in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.access(os.path.join(directory, name), os.X_OK):
            return os.path.join(directory, name)
    return shutil.which(name)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PgCluster:
    """A throwaway PostgreSQL cluster on 127.0.0.1 in a temp dir (trust auth, no fsync), for tests."""

    def __init__(self, initdb: str, pg_ctl: str) -> None:
        self.initdb, self.pg_ctl = initdb, pg_ctl
        self.root = Path(tempfile.mkdtemp(prefix="syncd-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.as_user: list[str] = []
        if os.geteuid() == 0:  # postgres refuses to run as root
            shutil.chown(self.root, "nobody")
            self.as_user = ["runuser", "-u", "nobody", "--"]

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://syncd@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        run = [*self.as_user]
        subprocess.run(
            [
                *run,
                self.initdb,
                "-D",
                str(self.data),
                "-U",
                "syncd",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-locale",
            ],
            check=True,
            capture_output=True,
        )
        opts = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        subprocess.run(
            [
                *run,
                self.pg_ctl,
                "-D",
                str(self.data),
                "-l",
                str(self.root / "log"),
                "-w",
                "-o",
                opts,
                "start",
            ],
            check=True,
            capture_output=True,
        )

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            subprocess.run(
                [*self.as_user, self.pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "stop"],
                check=False,
                capture_output=True,
                timeout=30,
            )
        shutil.rmtree(self.root, ignore_errors=True)


def _admin(url: str, sql: str) -> None:
    """Run one statement outside a transaction (CREATE/DROP DATABASE) on the server of ``url``."""
    import psycopg
    from sqlalchemy.engine import make_url

    u = make_url(url)
    with psycopg.connect(
        host=u.host,
        port=u.port,
        user=u.username,
        password=u.password,
        dbname=u.database or "postgres",
        autocommit=True,
    ) as conn:
        conn.execute(sql)  # type: ignore[arg-type]


def _with_db(url: str, name: str) -> str:
    from sqlalchemy.engine import make_url

    return (
        make_url(url)
        .set(drivername="postgresql+psycopg", database=name)
        .render_as_string(hide_password=False)
    )


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str | None]:
    """URL of a PostgreSQL server whose role may create databases (None when none is available).

    A template database migrated to head is created once; see :func:`db_url`.
    """
    from syncd.store.repo import Store

    cluster: PgCluster | None = None
    url = os.environ.get(PG_ENV)
    if not url:
        initdb, pg_ctl = _pg_tool("initdb"), _pg_tool("pg_ctl")
        usable = initdb and pg_ctl and (os.geteuid() != 0 or shutil.which("runuser"))
        usable = usable and importlib.util.find_spec("psycopg") is not None
        if os.environ.get("SYNCD_TEST_PG") == "off" or not usable:
            yield None
            return
        cluster = PgCluster(initdb, pg_ctl)  # type: ignore[arg-type]
        try:
            cluster.start()
        except (OSError, subprocess.CalledProcessError) as exc:
            warnings.warn(f"could not start a PostgreSQL cluster: {exc}", stacklevel=1)
            cluster.stop()
            yield None
            return
        url = cluster.url
    try:
        _admin(url, f"DROP DATABASE IF EXISTS {PG_TEMPLATE} WITH (FORCE)")
        _admin(url, f"CREATE DATABASE {PG_TEMPLATE}")
        Store.open(_with_db(url, PG_TEMPLATE)).close()
        yield url
        _admin(url, f"DROP DATABASE IF EXISTS {PG_TEMPLATE} WITH (FORCE)")
    finally:
        if cluster is not None:
            cluster.stop()


@pytest.fixture
def db_backend(request: pytest.FixtureRequest) -> str:
    """``sqlite`` (default; ``$SYNCD_TEST_BACKEND`` overrides) or both in modules marked ``both_backends``."""
    return str(getattr(request, "param", os.environ.get("SYNCD_TEST_BACKEND", "sqlite")))


@pytest.fixture
def pg_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh PostgreSQL database at head (cloned from the session template), dropped afterwards."""
    server = request.getfixturevalue("pg_server_url")
    if server is None:
        pytest.skip(f"no PostgreSQL: set {PG_ENV} or install the server binaries (initdb, pg_ctl)")
    name = f"syncd_t_{uuid.uuid4().hex[:12]}"
    _admin(server, f"CREATE DATABASE {name} TEMPLATE {PG_TEMPLATE}")
    yield _with_db(server, name)
    _admin(server, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def db_url(tmp_path: Path, db_backend: str, request: pytest.FixtureRequest) -> str:
    """The store URL of one test: an SQLite file in ``tmp_path``, or a fresh PostgreSQL database."""
    if db_backend == "postgresql":
        return str(request.getfixturevalue("pg_url"))
    return f"sqlite:///{tmp_path / 'syncd.db'}"


def make_settings(fake: FakeUpstream, db_url: str, **overrides: Any) -> Settings:
    """Settings pointing every upstream at the fake, with a short deadline for tests."""
    values: dict[str, Any] = {
        "database_url": db_url,
        "crossref": {"base_url": fake.crossref_url, "mailto": "ci@example.org"},
        "zenodo": {"base_url": fake.zenodo_url},
        "doi": {"base_url": fake.doi_url},
        "datacite": {"base_url": fake.datacite_url},
        "deadline_s": 3.0,
    }
    values.update(overrides)
    return Settings(**values)


@pytest.fixture
def settings(fake: FakeUpstream, db_url: str) -> Settings:
    return make_settings(fake, db_url)


class Clock:
    """An injected wall clock: ``time.time()`` plus an offset the test moves forward (epoch seconds).

    Given to :meth:`Services.open` (``clock=``), it is the budget's clock and the runner's "now", so
    ``clock.advance(s)`` ages every stored entry by ``s`` seconds (and refills the buckets) at once:
    no sleep. Rows the store writes keep the real time.
    """

    def __init__(self) -> None:
        self.offset = 0.0
        self.slept: list[float] = []
        """Every wait asked of :meth:`sleep` (seconds), in order."""

    def __call__(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward."""
        self.offset += seconds

    def sleep(self, seconds: float) -> None:
        """A wait that moves the clock instead of waiting (``open_services(sleep=clock.sleep)``); recorded."""
        self.slept.append(seconds)
        self.advance(max(0.0, seconds))


@pytest.fixture
def injected_clock() -> Clock:
    """The injected clock of the ``cache`` fixture's services (:class:`Clock`).

    Not named ``clock``: modules have fixtures of that name of their own (a freezegun factory).
    """
    return Clock()


@pytest.fixture
def store(settings: Settings) -> Iterator[Store]:
    s = Store.open(settings.database_url)
    yield s
    s.close()


@pytest.fixture
def cache(settings: Settings, store: Store, injected_clock: Clock) -> Iterator[Services]:
    c = open_services(settings, store, clock=injected_clock)
    yield c
    c.close()


@pytest.fixture
def corpus_message() -> dict[str, Any]:
    """The `message` of the recorded Crossref work 10.1101/598821 (24 authors)."""
    return corpus_json("crossref/work/10.1101_598821.json")["message"]
