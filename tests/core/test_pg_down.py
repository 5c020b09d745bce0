"""The PostgreSQL lab cache down while upstream is healthy (issue 30 item 6).

Before: with ``database_url`` = ``postgresql://...`` and the server unreachable, every tool failed
with ``store_unavailable``, each call waiting the connect timeout (10 s) first. Now the answer comes
from upstream, flagged (``cache.stored: false``, ``store_error: store_unreachable``, a notice), nothing
is stored, the budget is this workstation's local share, and when the database answers again the
answers are stored again, by themselves.

No real PostgreSQL is needed for the outage: the URL names a loopback port nothing listens on (a
socket bound, then closed: connection refused). The return of the database uses the session's
throwaway PostgreSQL server (skipped without one, like tests/store/test_pg_store.py) behind a loopback
gate that refuses connections while closed. The 30 s window is moved by an injected monotonic clock;
the claim "the second call does not wait again" is counted in connection attempts, never timed.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from sqlalchemy import func, select
from sqlalchemy.engine import make_url

from syncd.budget.fallback import FALLBACK_FILE, LabBudget
from syncd.crossref.kinds import WORK
from syncd.crossref.tools import get_work, search_works
from syncd.errors import StoreError, StoreUnreachable
from syncd.registry import open_services
from syncd.road.local_first import local_first
from syncd.road.services import Services
from syncd.store.models import BudgetSend
from syncd.store.reach import UNREACHABLE_RECHECK_S, Reach, network_failure, reach_of
from syncd.store.repo import Store
from syncd.upstream.http import Deadline
from syncd.zenodo.tools_records import get_record
from tests.conftest import make_settings
from tests.e2e.test_processes import RAPTOR_TITLE, ROOT, _env, _free_port
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

RAPTOR = "10.1101/598821"
RAPTOR_AUTHORS = 24
ZENODO_ID = "5244404"
ZENODO_TITLE = "The Origins of SARS-CoV-2: A Critical Review"


def _closed_port() -> int:
    """A loopback port nothing listens on: bound, then closed (a connection there is refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Monotonic:
    """An injected monotonic clock (seconds) the test moves forward, from the real one at its start.

    (The store's open tries the server before the clock is injected: its window is on the real clock.)
    """

    def __init__(self) -> None:
        self.now = time.monotonic()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The state directory of this machine, where the fallback budget file goes."""
    monkeypatch.delenv("STATE_DIRECTORY", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "data" / "syncd"


@pytest.fixture
def down_url() -> str:
    return f"postgresql+psycopg://syncd:secret@127.0.0.1:{_closed_port()}/lab"


@pytest.fixture
def monotonic() -> Monotonic:
    return Monotonic()


def _open(fake: FakeUpstream, url: str, monotonic: Monotonic) -> tuple[Store, Services, Reach]:
    store = Store.open(url)
    reach = reach_of(store.engine)
    assert reach is not None
    reach.monotonic = monotonic
    # the claims are what is stored and said, not how fast: a call on a busy machine (load 10) took more
    # than the tests' usual 3 s deadline and answered request_timeout instead
    return store, open_services(make_settings(fake, url, deadline_s=30.0), store), reach


@pytest.fixture
def down(
    fake: FakeUpstream, down_url: str, monotonic: Monotonic, state_dir: Path
) -> Iterator[tuple[Services, Reach]]:
    """Services over a lab database that cannot be reached (the store opened anyway)."""
    store, svc, reach = _open(fake, down_url, monotonic)
    yield svc, reach
    svc.close()
    store.close()


def _sends(budget: LabBudget, pool: str) -> int:
    with budget.local.store.read() as conn:
        return int(conn.execute(select(func.count()).where(BudgetSend.pool == pool)).scalar_one())


async def _call(svc: Services, name: str, args: dict[str, Any]) -> Any:
    """One call of tool ``name`` through the MCP server (its answer envelope included)."""
    async with Client(mcp_server(svc)) as client:
        return await client.call_tool(name, args)


@pytest.mark.anyio
async def test_crossref_get_work_answers_from_upstream_unstored(down: tuple[Services, Reach]) -> None:
    """crossref_get_work with the lab database down: the recorded work (title, 24 authors) from
    Crossref, its cache block ``source: upstream, stored: false, store_error: store_unreachable``, a
    notice naming the unreachable lab cache (also in the text block).
    """
    svc, _ = down
    result = await _call(svc, "crossref_get_work", {"doi": RAPTOR})
    assert not result.is_error, result.structured_content
    data = result.structured_content
    assert data is not None
    assert data["title"] == RAPTOR_TITLE and data["authorCount"] == RAPTOR_AUTHORS
    cache = data["cache"]
    flags = (cache["source"], cache["stored"], cache["store_error"])
    assert flags == ("upstream", False, "store_unreachable")
    assert "lab cache (PostgreSQL) cannot be reached" in data["notice"]
    assert "Notice: " in result.content[0].text and "not stored" in result.content[0].text


@pytest.mark.anyio
async def test_zenodo_get_record_answers_from_upstream_unstored(down: tuple[Services, Reach]) -> None:
    """zenodo_get_record with the lab database down: record 5244404 (its title, 21 creators) from
    Zenodo, flagged ``stored: false`` with the notice.
    """
    svc, _ = down
    result = await _call(svc, "zenodo_get_record", {"id": ZENODO_ID})
    assert not result.is_error, result.structured_content
    data = result.structured_content
    assert data is not None
    assert data["found"] is True
    assert data["record"]["title"] == ZENODO_TITLE and len(data["record"]["creators"]) == 21
    assert data["cache"]["stored"] is False and data["cache"]["store_error"] == "store_unreachable"
    assert "lab cache (PostgreSQL) cannot be reached" in data["notice"]


@pytest.mark.anyio
async def test_every_tool_says_an_answer_was_not_stored(down: tuple[Services, Reach]) -> None:
    """The unstored notice is the server's, once for every tool: crossref_search_works (query=ecology,
    rows=2), whose body adds none, answers its recorded page (total 586628) with the notice, in its
    text block too; the tool body's own answer carries the flags but no notice.
    """
    svc, _ = down
    body = search_works(svc, {"query": "ecology", "rows": 2}).structured_content
    assert body is not None and body["cache"]["stored"] is False and "notice" not in body
    result = await _call(svc, "crossref_search_works", {"query": "ecology", "rows": 2})
    data = result.structured_content
    assert data["totalResults"] == 586628 and data["cache"]["store_error"] == "store_unreachable"
    assert data["notice"].startswith("The lab cache (PostgreSQL) cannot be reached")
    assert "cannot be reached" in result.content[0].text


def test_calls_within_the_window_make_no_connection_attempt(
    down: tuple[Services, Reach], fake: FakeUpstream, monotonic: Monotonic, caplog: pytest.LogCaptureFixture
) -> None:
    """One connection attempt (the store's open) marks the database unreachable: the next calls in
    the 30 s window make none (so none waits the connect timeout), each still asks upstream (nothing was
    stored), and the first call after the window tries the server once again (recovery needs nobody).
    The outage is logged once.
    """
    svc, reach = down
    assert reach.attempts == 1 and svc.store.unreachable() is not None
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            assert get_work(svc, RAPTOR).structured_content["cache"]["stored"] is False  # type: ignore[index]
        assert get_record(svc, ZENODO_ID).structured_content["cache"]["stored"] is False  # type: ignore[index]
        assert reach.attempts == 1
        assert fake.count("/works/", service="crossref") == 3
        monotonic.now += UNREACHABLE_RECHECK_S + 1
        assert svc.store.unreachable() is None  # the window is over: the next connection tries
        assert get_work(svc, RAPTOR).structured_content["cache"]["stored"] is False  # type: ignore[index]
        assert reach.attempts == 2
        assert get_work(svc, RAPTOR).structured_content["cache"]["stored"] is False  # type: ignore[index]
        assert reach.attempts == 2
    messages = [r.getMessage() for r in caplog.records]
    assert sum("event=lab_db_unreachable" in m for m in messages) == 0  # logged at open, before capture
    assert sum("event=budget_fallback" in m for m in messages) == 1


def test_requests_are_counted_in_this_machines_fallback_budget(
    down: tuple[Services, Reach], fake: FakeUpstream, down_url: str, monotonic: Monotonic, state_dir: Path
) -> None:
    """The budget falls back to an SQLite file in the local state directory, shared by this machine's
    processes (a second Services over its own store counts into the same file), under the configured
    limits times budget.fallback_share (0.5: polite Crossref single 10/s becomes 5/s, 5 in flight 2).
    """
    svc, _ = down
    assert isinstance(svc.budget, LabBudget)
    get_work(svc, RAPTOR)
    assert (state_dir / FALLBACK_FILE).is_file()
    assert _sends(svc.budget, "crossref_single") == 1
    other_store, other, _ = _open(fake, down_url, monotonic)  # another process of this machine
    try:
        assert get_record(other, ZENODO_ID).structured_content["cache"]["stored"] is False  # type: ignore[index]
        get_work(other, "10.1038/srep16696")
        assert isinstance(other.budget, LabBudget)
        assert other.budget.local.store.engine.url.database == svc.budget.local.store.engine.url.database
    finally:
        other.close()
        other_store.close()
    assert _sends(svc.budget, "crossref_single") == 2
    assert _sends(svc.budget, "zenodo_general") == 1
    state = svc.budget.state("crossref_single")
    assert state.configured.per_s == pytest.approx(5.0) and state.configured.in_flight == 2


def test_a_search_page_is_answered_unstored_and_never_as_another_entry(down: tuple[Services, Reach]) -> None:
    """crossref_search_works (query=ecology, rows=2): the recorded page (total 586628, 'Communicating
    Ecology' first) flagged stored:false; the works it lists are not written either. The road answers
    unstored only the entry it was asked for: a fetch whose failed write carried another entry's content
    (a side write, e.g. a work of a search page) fails as store_unavailable, never answers that entry.
    """
    svc, _ = down
    page = search_works(svc, {"query": "ecology", "rows": 2}).structured_content
    assert page is not None and page["totalResults"] == 586628
    assert page["works"][0]["title"] == "Communicating Ecology" and page["cache"]["stored"] is False

    def fetch_with_side_write() -> Any:
        other = WORK.content("10.1/other", "not_found", None, None, doi="10.1/other")
        raise StoreUnreachable("not stored", content=other)

    with pytest.raises(StoreUnreachable) as caught:
        local_first(svc.runner, WORK, "10.1/asked", fetch_with_side_write, deadline=Deadline(3.0))
    assert caught.value.reason == "store_unavailable"


def test_a_network_failure_is_told_from_a_configuration_error() -> None:
    """Refused / closed / shutting down count as unreachable; a wrong password or database name does
    not (it is raised as it is, never remembered).
    """
    psycopg = pytest.importorskip("psycopg")
    errors = psycopg.errors
    assert network_failure(psycopg.OperationalError("connection refused"))
    assert network_failure(errors.AdminShutdown("terminating connection due to administrator command"))
    assert network_failure(errors.CannotConnectNow("the database system is starting up"))
    assert not network_failure(errors.InvalidPassword("password authentication failed"))
    assert not network_failure(errors.InvalidCatalogName('database "lab" does not exist'))
    assert not network_failure(ValueError("not a database error"))


def test_a_write_of_upstream_content_carries_it(down: tuple[Services, Reach]) -> None:
    """put_content on the unreachable database raises StoreUnreachable holding the content; reads say
    nothing stored; other reads (a local search) still fail as StoreError.
    """
    svc, _ = down
    content = WORK.content("10.1/x", "not_found", None, None, doi="10.1/x")
    with pytest.raises(StoreUnreachable) as caught:
        svc.store.put_content(content)
    assert caught.value.content is content and caught.value.reason == "store_unavailable"
    assert svc.store.get("crossref_work", "10.1/x") is None
    assert svc.store.write_problem() == "unreachable"
    with pytest.raises(StoreError):
        svc.store.search("raptor genomes")


class Gate:
    """A loopback TCP forwarder to a server: open, it forwards; closed, nothing listens (refused)."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.port = _free_port()
        self._listener: socket.socket | None = None
        self._socks: list[socket.socket] = []

    def open(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(16)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            self._socks += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while chunk := src.recv(65536):
                dst.sendall(chunk)
        except OSError:
            pass
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        """Stop listening and cut every forwarded connection (the server is gone)."""
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        for s in self._socks:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()
        self._socks.clear()


def test_answers_are_stored_again_when_the_database_is_back(
    fake: FakeUpstream, pg_url: str, monotonic: Monotonic, state_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A real PostgreSQL behind a closed gate: unstored answers, the fallback budget; gate opened and
    the 30 s over: the next call stores the work (no ``stored: false``), the one after is answered from
    the store, the lab budget is used again; the return is logged once (store and budget).
    """
    real = make_url(pg_url)
    gate = Gate(real.host or "127.0.0.1", real.port or 5432)
    url = real.set(host="127.0.0.1", port=gate.port).render_as_string(hide_password=False)
    store, svc, reach = _open(fake, url, monotonic)
    try:
        assert svc.store.unreachable() is not None
        first = get_work(svc, RAPTOR).structured_content
        assert first is not None and first["cache"]["stored"] is False
        assert isinstance(svc.budget, LabBudget) and svc.budget.falling_back
        gate.open()
        monotonic.now += UNREACHABLE_RECHECK_S + 1
        with caplog.at_level(logging.WARNING):
            back = get_work(svc, RAPTOR).structured_content
            assert back is not None and back["title"] == RAPTOR_TITLE
            assert back["cache"]["source"] == "upstream" and "stored" not in back["cache"]
            assert "notice" not in back or "lab cache" not in back["notice"]
            again = get_work(svc, RAPTOR).structured_content
            assert again is not None and again["cache"]["source"] == "store"
        assert not svc.budget.falling_back
        assert svc.store.get("crossref_work", RAPTOR) is not None
        messages = [r.getMessage() for r in caplog.records]
        assert sum("event=lab_db_back" in m for m in messages) == 1
        assert sum("event=budget_lab_back" in m for m in messages) == 1
        assert reach.attempts >= 2
    finally:
        svc.close()
        store.close()
        gate.close()


@pytest.mark.anyio
@pytest.mark.serial  # a real process
async def test_the_daemon_serves_with_the_lab_database_down(
    fake: FakeUpstream, down_url: str, tmp_path: Path
) -> None:
    """`syncd daemon` over an unreachable lab database starts, answers crossref_get_work from upstream
    unstored over MCP, and stops with 0 on SIGTERM; never a traceback (the job plan read no watch).
    """
    port = _free_port()
    env = _env(fake, down_url, tmp_path, SYNCD_HTTP__PORT=str(port), SYNCD_LOG_LEVEL="INFO")
    env["SYNCD_CHECK_UPSTREAMS_AT_START"] = "false"
    proc = subprocess.Popen(
        [sys.executable, "-m", "syncd", "daemon"],
        env=env,
        cwd=str(ROOT),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _wait_listening(proc, port)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            res = await client.call_tool("crossref_get_work", {"doi": RAPTOR})
        data: dict[str, Any] = res.structured_content or {}
        assert data.get("title") == RAPTOR_TITLE and data["cache"]["stored"] is False, data
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    assert "Traceback" not in out
    assert "event=lab_db_unreachable" in out and "event=ready" in out
    assert "event=plan_unread" in out


def _wait_listening(proc: subprocess.Popen[str], port: int) -> None:
    """Wait (at most 60 s, polling: a busy machine) until ``proc`` listens on ``port``."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    proc.kill()
    out, _ = proc.communicate(timeout=10)
    pytest.fail(f"daemon did not listen: {out}")


@pytest.mark.anyio
async def test_crossref_get_works_answers_from_upstream_unstored(down: tuple[Services, Reach]) -> None:
    """crossref_get_works with the lab database down answers the DOIs from Crossref, as crossref_get_work
    does: the Raptor work (its title, 24 authors) and 10.1038/srep16696 found, each item flagged
    ``stored: false, store_error: store_unreachable``, one notice naming the unreachable lab cache and
    the verdicts it could not read (never store_unavailable for the whole call).
    """
    svc, _ = down
    result = await _call(svc, "crossref_get_works", {"dois": [RAPTOR, "10.1038/srep16696"]})
    assert not result.is_error, result.structured_content
    data = result.structured_content
    assert data["counts"]["found"] == 2 and [i["found"] for i in data["items"]] == [True, True]
    raptor = data["items"][0]
    assert raptor["title"] == RAPTOR_TITLE and raptor["authorCount"] == RAPTOR_AUTHORS
    for item in data["items"]:
        assert (item["cache"]["stored"], item["cache"]["store_error"]) == (False, "store_unreachable")
        assert "retraction" not in item
    assert data["notice"].startswith("The lab cache (PostgreSQL) cannot be reached")
    assert "No retraction verdicts this time" in data["notice"]
