"""Every failure of the HTTP layer is declared (issue 27.5): each exception httpx can raise maps to a
contract reason (``request_timeout``, ``malformed_response`` for a body that cannot be decoded,
``upstream_unavailable`` for everything else, a redirect loop included); a stored entry is answered
stale with that reason; a sweep meeting them finishes the rest and says so at warning level.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from syncd.budget.buckets import Budget
from syncd.config import Settings
from syncd.crossref import lookups as crossref
from syncd.crossref.names import CROSSREF_WORK
from syncd.errors import SyncdError
from syncd.normalize.doi import parse_doi
from syncd.passes.refresh import sweep
from syncd.registry import POOLS, open_services
from syncd.road.services import Services
from syncd.store.repo import Store
from syncd.upstream.http import MAX_ATTEMPTS, MAX_REDIRECTS, Deadline, UpstreamHTTP
from syncd.zenodo import lookups as zenodo
from syncd.zenodo.names import ZENODO_RECORD
from syncd.zenodo.params_id import parse_record_ref
from tests.conftest import make_settings
from tests.fakeupstream import FakeUpstream

POOL = "crossref_single"
RAPTOR = "10.1101/598821"
ELIFE = "10.7554/elife.01567"
ROOMY = {"per_s": 1000.0, "burst": 1000.0, "in_flight": 32}
HTTPX_EXCEPTIONS = sorted(
    (c for c in vars(httpx).values() if isinstance(c, type) and issubclass(c, Exception)),
    key=lambda c: c.__name__,
)
"""Every exception class httpx exports (28 in httpx 0.28)."""
DECLARED = {"request_timeout", "malformed_response", "upstream_unavailable"}


def _instance(cls: type[Exception], request: httpx.Request) -> Exception:
    """An instance of any httpx exception class, whatever its constructor wants."""
    for attempt in (
        lambda: cls("boom", request=request),  # type: ignore[call-arg]
        lambda: cls("boom", request=request, response=httpx.Response(500, request=request)),  # type: ignore[call-arg]
        lambda: cls("boom"),  # type: ignore[call-arg]
        lambda: cls(),
    ):
        try:
            return attempt()
        except TypeError:
            continue
    raise AssertionError(f"cannot build {cls.__name__}")


def _expected(cls: type[Exception]) -> str:
    if issubclass(cls, httpx.TimeoutException):
        return "request_timeout"
    if issubclass(cls, httpx.DecodingError):
        return "malformed_response"
    return "upstream_unavailable"


@pytest.fixture
def budget(tmp_path: Path) -> Iterator[Budget]:
    store = Store.open(f"sqlite:///{tmp_path / 'h.db'}")
    yield Budget(
        store,
        Settings(database_url=str(store.engine.url), budget={POOL: ROOMY, "crossref_in_flight": 32}),
        pools=POOLS,
    )
    store.close()


def test_httpx_exports_the_exceptions_this_suite_drives() -> None:
    """The list driven below is httpx's whole family (a new httpx exception class shows up here)."""
    names = {c.__name__ for c in HTTPX_EXCEPTIONS}
    assert len(HTTPX_EXCEPTIONS) >= 28
    assert {"DecodingError", "TooManyRedirects", "StreamConsumed", "InvalidURL", "CookieConflict"} <= names


@pytest.mark.parametrize("cls", HTTPX_EXCEPTIONS, ids=lambda c: c.__name__)
def test_every_httpx_exception_is_a_declared_reason(budget: Budget, cls: type[Exception]) -> None:
    """The transport raising any httpx exception gives a syncd error with its declared reason (timeouts
    request_timeout, a decoding failure malformed_response, all else upstream_unavailable), never
    internal_error or the raw exception; no slot is left held except a timed-out one (upstream may
    still be working on it).
    """
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        raise _instance(cls, request)

    http = UpstreamHTTP(
        "crossref", "https://api.crossref.test", budget, transport=httpx.MockTransport(handler)
    )
    try:
        with mock.patch("time.sleep"), pytest.raises(SyncdError) as err:
            http.get(POOL, "/works/10.1101/598821", deadline=Deadline(2.0))
    finally:
        http.close()
    assert err.value.reason == _expected(cls), (cls.__name__, err.value.message)
    assert err.value.message.startswith("crossref: ")
    assert 1 <= len(sent) <= MAX_ATTEMPTS
    held = budget.state(POOL).in_flight
    assert held == (len(sent) if err.value.reason == "request_timeout" else 0)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    script=st.lists(
        st.one_of(
            st.sampled_from(HTTPX_EXCEPTIONS),
            st.sampled_from([200, 304, 404, 429, 500, 503]),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_any_sequence_of_failures_and_answers_is_an_answer_or_a_declared_error(
    budget: Budget, script: list[Any]
) -> None:
    """Property: whatever mix of httpx exceptions and statuses upstream produces across the attempts of
    one GET, the client returns an accepted answer or raises a syncd error with a contract reason
    (never another exception), sends at most MAX_ATTEMPTS requests, and leaves no slot held but those
    of timed-out requests.
    """
    budget.reset()
    with budget.store.write() as conn:
        conn.exec_driver_sql("DELETE FROM budget_leases")
    steps = iter(script)
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        step = next(steps, 200)
        if isinstance(step, int):
            body = {"status": "ok", "message-type": "work", "message": {"DOI": RAPTOR}}
            return httpx.Response(step, json=body if step == 200 else {"status": "error"})
        raise _instance(step, request)

    http = UpstreamHTTP(
        "crossref", "https://api.crossref.test", budget, transport=httpx.MockTransport(handler)
    )
    timeouts = 0
    try:
        with mock.patch("time.sleep"):
            try:
                resp = http.get(POOL, "/works/x", deadline=Deadline(2.0), accept=(200, 304, 404))
                assert resp.status in (200, 304, 404)
            except SyncdError as exc:
                assert exc.reason in DECLARED | {"rate_limited", "invalid_parameter"}, exc.reason
    finally:
        http.close()
    assert 1 <= len(sent) <= MAX_ATTEMPTS
    timeouts = sum(
        1 for s in script[: len(sent)] if isinstance(s, type) and issubclass(s, httpx.TimeoutException)
    )
    assert budget.state(POOL).in_flight <= timeouts


# --- through the fake: wrong Content-Encoding, redirect loop ------------------------------------------


@pytest.fixture
def svc(fake: FakeUpstream, tmp_path: Path) -> Iterator[Services]:
    settings = make_settings(fake, f"sqlite:///{tmp_path / 's.db'}", budget={POOL: ROOMY})
    store = Store.open(settings.database_url)
    services = open_services(settings, store)
    yield services
    services.close()
    store.close()


def test_a_wrong_content_encoding_is_malformed_response_and_the_stored_work_is_answered(
    svc: Services, fake: FakeUpstream
) -> None:
    """Crossref labels a plain body ``Content-Encoding: gzip``: with the work stored (stale) the lookup
    answers the stored work flagged store-stale / malformed_response (before: internal_error, no
    fallback); with nothing stored it is a malformed_response error naming the encoding.
    """
    first = crossref.get_work(svc, parse_doi(RAPTOR))
    assert first.provenance.source == "upstream"
    svc.settings.ttl.crossref_work = 0.001
    time.sleep(0.01)
    fake.fault("bad_encoding", service="crossref")
    held = crossref.get_work(svc, parse_doi(RAPTOR))
    assert (held.provenance.source, held.provenance.stale) == ("store-stale", True)
    assert held.provenance.upstream_error == "malformed_response"
    assert held.entry.title is not None and held.entry.title.startswith("Raptor genomes reveal")
    with pytest.raises(SyncdError) as err:
        crossref.get_work(svc, parse_doi(ELIFE))
    assert err.value.reason == "malformed_response" and "Content-Encoding: 'gzip'" in err.value.message


def test_a_redirect_loop_is_upstream_unavailable_after_a_bounded_number_of_hops(
    svc: Services, fake: FakeUpstream
) -> None:
    """A route redirecting to itself: upstream_unavailable naming the loop, MAX_REDIRECTS + 1 requests
    in all (one attempt: a retry cannot end a loop; before: httpx's 20 hops x 3 attempts, unbudgeted).
    """
    fake.fault("redirect_loop", service="crossref")
    with pytest.raises(SyncdError) as err:
        crossref.get_work(svc, parse_doi(RAPTOR))
    assert err.value.reason == "upstream_unavailable" and err.value.data["cause"] == "redirect_loop"
    assert "redirect loop" in err.value.message
    assert fake.count(service="crossref") == MAX_REDIRECTS + 1


def test_a_sweep_meeting_them_finishes_the_rest_and_warns(
    fake: FakeUpstream, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Three stored entries gone stale: one work's route answers a wrong Content-Encoding, the Zenodo
    record's a redirect loop, the other work is fine: the sweep checks all 3 (1 unchanged, 2 failed
    with malformed_response and upstream_unavailable), ends normally, and its event=sweep line is a
    WARNING naming both reasons (``journalctl -p warning`` shows it); the bodies are kept.
    """
    settings = make_settings(
        fake,
        f"sqlite:///{tmp_path / 'sweep.db'}",
        budget={p: ROOMY for p in ("crossref_single", "crossref_list", "zenodo_general")},
    )
    store = Store.open(settings.database_url)
    svc = open_services(settings, store)
    try:
        crossref.get_work(svc, parse_doi(RAPTOR))
        crossref.get_work(svc, parse_doi(ELIFE))
        zenodo.get_record(svc, parse_record_ref("5244404"))
        before = {e.key: e.body for e in (store.get(CROSSREF_WORK, RAPTOR), store.get(CROSSREF_WORK, ELIFE))}
        fake.fault("bad_encoding", service="crossref", path_prefix=f"/works/{ELIFE}")
        fake.fault("redirect_loop", service="zenodo", path_prefix="/records/5244404")
        daemon = open_services(settings, store, interactive=False)
        try:
            with caplog.at_level(logging.INFO, logger="syncd.refresh"):
                report = sweep(daemon, 10, now=time.time() + 30 * 86_400)
        finally:
            daemon.close()
    finally:
        svc.close()
    try:
        assert (report.checked, report.unchanged, report.failed, report.stopped) == (3, 1, 2, None)
        assert report.failures == {"malformed_response": 1, "upstream_unavailable": 1}
        line = next(r for r in caplog.records if r.getMessage().startswith("event=sweep "))
        assert line.levelno == logging.WARNING
        assert "failures=malformed_response:1,upstream_unavailable:1" in line.getMessage()
        for key, body in before.items():
            stored = store.get(CROSSREF_WORK, key)
            assert stored is not None and stored.body == body
        assert store.get(ZENODO_RECORD, "5244404") is not None
    finally:
        store.close()


def test_a_clean_sweep_logs_at_info(
    fake: FakeUpstream, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A sweep where every entry revalidates logs event=sweep at INFO (warnings stay for failures)."""
    settings = make_settings(fake, f"sqlite:///{tmp_path / 'ok.db'}")
    store = Store.open(settings.database_url)
    svc = open_services(settings, store)
    try:
        crossref.get_work(svc, parse_doi(RAPTOR))
        with caplog.at_level(logging.INFO, logger="syncd.refresh"):
            report = sweep(svc, 10, now=time.time() + 30 * 86_400)
    finally:
        svc.close()
        store.close()
    assert (report.checked, report.failed) == (1, 0)
    line = next(r for r in caplog.records if r.getMessage().startswith("event=sweep "))
    assert line.levelno == logging.INFO and "failures=-" in line.getMessage()
