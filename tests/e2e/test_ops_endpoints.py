"""Operator visibility (issue 24 item 5): ``/healthz``, ``/metrics`` and ``/status`` of the daemon's HTTP app.

The real app of ``syncd daemon`` (:func:`syncd.daemon.run.web_app`) over a store filled through the real
tools and sweep against the fake upstream (the recorded Raptor genomes work, the Lancet retraction
of the corpus). ``/metrics`` is read back with ``prometheus_client``'s own parser; the counts are
the requests the fake received.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp import Client
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr

from syncd.daemon.ops.activity import Activity
from syncd.daemon.run import web_app
from syncd.errors import StoreError
from syncd.passes.refresh import sweep
from syncd.road.services import Services
from syncd.store.repo import Store
from syncd.store.watches import add_watch, save_sync_state
from tests.conftest import Clock
from tests.fakeupstream import CrossrefRules, FakeUpstream
from tests.helpers import mcp_server
from tests.store.test_changes import LANCET, TITLE, lancet_bodies, store_work

pytestmark = pytest.mark.anyio

RAPTOR_DOI = "10.1101/598821"
RAPTOR_TITLE = "Raptor genomes reveal evolutionary signatures of predatory and nocturnal lifestyles"
DAY = 86_400.0
TOKEN = "ops-token-0123456789"


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus text page: (name, sorted labels) -> value."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(page: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return page[(name, tuple(sorted(labels.items())))]


async def get(
    app: Any, path: str, headers: dict[str, str] | None = None, host: str = "127.0.0.1:8765"
) -> Any:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=f"http://{host}") as client:
        return await client.get(path, headers=headers or {})


@pytest.fixture
def activity(injected_clock: Clock) -> Activity:
    """A daemon's activity whose scheduler runs and has just beaten (on the injected clock)."""
    act = Activity(clock=injected_clock)
    act.scheduler_running = lambda: True
    act.beat()
    return act


@pytest.fixture
def served(cache: Services, fake: FakeUpstream, activity: Activity) -> Iterator[Services]:
    """The store after real traffic: a fetch, a store hit, a sweep, a 429 (Crossref 2026 rules announced)."""
    fake.crossref_rules = CrossrefRules()
    yield cache


async def traffic(svc: Services, fake: FakeUpstream, activity: Activity) -> None:
    server = mcp_server(svc)
    server.middleware.append(activity.answers_middleware)
    async with Client(server) as client:
        first = await client.call_tool("crossref_get_work", {"doi": RAPTOR_DOI})
        assert first.structured_content["cache"]["source"] == "upstream"
        second = await client.call_tool("crossref_get_work", {"doi": RAPTOR_DOI})
        assert second.structured_content["cache"]["source"] == "store"
        report = sweep(svc, 10, now=time.time() + 8 * DAY)  # the work is past its 7-day lifetime
        assert (report.checked, report.unchanged) == (1, 1)
        activity.record_sweep(report)
        fake.fault("rate_limit", retry_after=300, times=1, service="crossref")
        refused = await client.call_tool("crossref_get_work", {"doi": "10.1038/s41586-020-2649-2"})
        assert refused.is_error is True
        assert refused.structured_content["error"]["data"]["reason"] == "rate_limited"


async def test_metrics_parse_with_the_real_counts(
    served: Services, fake: FakeUpstream, activity: Activity
) -> None:
    """/metrics parses with prometheus_client and says what happened: 1 work stored, 3 Crossref
    requests sent (the fake saw 3), 1 of them a 429, the limits Crossref announced (10/s, 5 in
    flight), one sweep with one entry unchanged, and answers by source (1 upstream, 1 store, 1 error).
    """
    await traffic(served, fake, activity)
    resp = await get(web_app(served.settings, served, activity), "/metrics")
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/plain; version=")
    page = samples(resp.text)
    assert value(page, "syncd_store_up") == 1
    assert value(page, "syncd_entries", kind="crossref_work", status="ok") == 1
    assert value(page, "syncd_entries_stale", kind="crossref_work", status="ok") == 0
    assert fake.count(service="crossref") == 3
    assert value(page, "syncd_budget_requests_total", pool="crossref_single") == 3
    assert value(page, "syncd_budget_rate_limited_total", pool="crossref_single") == 1
    assert value(page, "syncd_budget_requests_total", pool="zenodo_general") == 0
    assert value(page, "syncd_budget_announced_limit", pool="crossref_single") == 10
    assert value(page, "syncd_budget_announced_interval_seconds", pool="crossref_single") == 1
    assert value(page, "syncd_budget_announced_in_flight", pool="crossref_single") == 5
    assert value(page, "syncd_budget_blocked_seconds", pool="crossref_single") > 200  # the 429's 300 s
    assert value(page, "syncd_sweeps_total", outcome="ok") == 1
    assert value(page, "syncd_sweep_entries_total", result="unchanged") == 1
    assert value(page, "syncd_sweep_duration_seconds_count") == 1
    assert value(page, "syncd_answers_total", source="upstream") == 1
    assert value(page, "syncd_answers_total", source="store") == 1
    assert value(page, "syncd_answers_total", source="error") == 1
    assert value(page, "syncd_change_feed_last_id") == 0


async def test_metrics_count_changes_walks_and_watches(
    store: Store, cache: Services, activity: Activity
) -> None:
    """The change feed (a retraction and its title change), the watch's last success and the alerts
    waiting for the alert pass appear in /metrics.
    """
    add_watch(store, "doi", {"doi": LANCET})
    save_sync_state(store, "alerts", checkpoint={"change_id": 0})
    save_sync_state(store, "watch:1", status="ok", last_success_at=1_700_000_000.0)
    before, now = lancet_bodies()
    store_work(store, before, time.time() - 2 * DAY)
    store_work(store, now, time.time() - DAY)
    page = samples((await get(web_app(cache.settings, cache, activity), "/metrics")).text)
    assert value(page, "syncd_change_feed_last_id") == 1
    assert value(page, "syncd_change_feed_changes", type="retraction") == 1
    assert value(page, "syncd_change_feed_changes", type="title") == 1
    assert value(page, "syncd_alerts_pending") == 1
    assert value(page, "syncd_watches", kind="doi") == 1
    assert value(page, "syncd_watch_last_success_timestamp_seconds", watch="1", kind="doi") == 1_700_000_000.0


async def test_healthz_fields_and_status_codes(
    cache: Services, activity: Activity, injected_clock: Clock
) -> None:
    """/healthz: 200 with every check true on a fresh daemon; the last sweep's age in seconds; 503 when
    the scheduler stopped, when no sweep ran for two intervals, and when the store cannot be written.
    """
    app = web_app(cache.settings, cache, activity)
    fresh = await get(app, "/healthz")
    assert fresh.status_code == 200
    body = fresh.json()
    assert body["status"] == "ok" and body["role"] == "active"
    assert (body["store_readable"], body["store_writable"], body["scheduler_alive"]) == (True, True, True)
    assert (body["last_sweep_age_s"], body["sweep_overdue"], body["write_problem"]) == (None, False, None)

    activity.record_sweep(sweep(cache, 10))
    injected_clock.advance(12)
    activity.beat()
    body = (await get(app, "/healthz")).json()
    assert body["last_sweep_age_s"] == 12.0 and body["last_sweep_outcome"] == "ok"

    activity.scheduler_running = lambda: False
    stopped = await get(app, "/healthz")
    assert stopped.status_code == 503 and stopped.json()["scheduler_alive"] is False
    assert stopped.json()["status"] == "unhealthy"
    activity.scheduler_running = lambda: True

    injected_clock.advance(2 * cache.settings.revalidate_interval_s + 60)
    activity.beat()
    overdue = await get(app, "/healthz")
    assert overdue.status_code == 503 and overdue.json()["sweep_overdue"] is True
    activity.record_sweep(sweep(cache, 10))

    cache.store.stop_writing("file_replaced")
    unwritable = await get(app, "/healthz")
    assert unwritable.status_code == 503
    assert (unwritable.json()["store_writable"], unwritable.json()["write_problem"]) == (
        False,
        "file_replaced",
    )
    assert unwritable.json()["store_readable"] is True


async def test_status_page_shows_the_facts_watches_changes_and_alerts(
    served: Services, fake: FakeUpstream, activity: Activity
) -> None:
    """/status is one HTML page without script: health, the stored work counts, the pool's 3 requests
    and 1 429, the last sweep, the watch with its last success, the Lancet retraction among the changes
    and the alerts.
    """
    await traffic(served, fake, activity)
    store = served.store
    add_watch(store, "doi", {"doi": LANCET}, None)
    save_sync_state(store, "watch:1", status="ok", last_success_at=1_700_000_000.0)
    before, now = lancet_bodies()
    store_work(store, before, time.time() - 2 * DAY)
    store_work(store, now, time.time() - DAY)
    resp = await get(web_app(served.settings, served, activity), "/status")
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/html")
    html = resp.text
    assert "<script" not in html
    assert 'syncd 0.1.0: <span class="ok">healthy</span>' in html
    assert '<td>crossref_work</td><td>ok</td><td class="n">2</td>' in html  # Raptor and Lancet
    assert '<td>crossref_single</td><td class="n">3</td><td class="n">1</td>' in html
    assert "10 per 1 s, 5 in flight (polite-single)" in html
    assert "<td>doi</td><td>10.1016/s0140-6736(20)31180-6</td>" in html
    assert "2023-11-14T22:13:20Z" in html  # the watch's last success
    assert html.count("RETRACTED: " + TITLE[:60]) == 2  # in the last changes and in the alerts
    assert "retraction, title" in html
    assert "Not yet alerted: n/a" in html  # no alert pass yet on this store


async def test_operator_routes_need_the_token_on_a_lan_bind(cache: Services, activity: Activity) -> None:
    """Bound to 0.0.0.0 with a token, /healthz, /metrics and /status answer 401 without it or with a
    wrong one, and 200 with it; a Host this endpoint does not serve is 421 even with the token.
    """
    http = cache.settings.http.model_copy(update={"host": "0.0.0.0", "token": SecretStr(TOKEN)})
    settings = cache.settings.model_copy(update={"http": http})
    app = web_app(settings, cache, activity)
    for path in ("/healthz", "/metrics", "/status"):
        assert (await get(app, path)).status_code == 401, path
        assert (await get(app, path, {"Authorization": "Bearer wrong"})).status_code == 401, path
        ok = await get(app, path, {"Authorization": f"Bearer {TOKEN}"})
        assert ok.status_code == 200, path
        rebound = await get(app, path, {"Authorization": f"Bearer {TOKEN}"}, host="evil.example:8765")
        assert rebound.status_code == 421, path


async def test_loopback_answers_without_a_token(cache: Services, activity: Activity) -> None:
    """On the default loopback bind the operator routes answer without a token (as /mcp does)."""
    app = web_app(cache.settings, cache, activity)
    assert (await get(app, "/healthz")).status_code == 200
    assert (await get(app, "/status")).status_code == 200
    assert (await get(app, "/metrics", host="evil.example:8765")).status_code == 421


async def test_metrics_of_an_unreadable_store_say_store_up_0(
    cache: Services, activity: Activity, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store that cannot be read answers /metrics 200 with syncd_store_up 0 and the daemon's own
    families (never a failed scrape); /healthz says store_readable false, 503.
    """

    def unreadable(*_args: Any, **_kwargs: Any) -> Any:
        raise StoreError("store read failed: OperationalError: disk I/O error")

    monkeypatch.setattr(cache.store, "read", unreadable)
    app = web_app(cache.settings, cache, activity)
    resp = await get(app, "/metrics")
    assert resp.status_code == 200
    page = samples(resp.text)
    assert value(page, "syncd_store_up") == 0
    assert ("syncd_entries", (("kind", "crossref_work"), ("status", "ok"))) not in page
    assert value(page, "syncd_start_time_seconds") == activity.started_at
    health = await get(app, "/healthz")
    assert health.status_code == 503
    assert (health.json()["store_readable"], health.json()["read_error"]) == (False, "store_unavailable")


async def test_healthz_and_status_say_the_retraction_data_is_held_back(
    cache: Services, activity: Activity, tmp_path: Any
) -> None:
    """A Retraction Watch file the daemon's read refused: /healthz names the refusal (still 200, the
    daemon does its job) and /status says the data is held back and why; a good file clears both.
    """
    from syncd.retractions.fetch import fetch_when_due
    from tests.retraction_helpers import sample_bytes

    folder = tmp_path / "rw"
    folder.mkdir()
    (folder / "retraction_watch.csv").write_bytes(sample_bytes())
    settings = cache.settings.model_copy(
        update={"retractions": cache.settings.retractions.model_copy(update={"source": str(folder)})}
    )
    fetch_when_due(cache.store, settings, 1_800_000_000.0)
    header = sample_bytes().split(b"\r\n", 1)[0] + b"\r\n"
    (folder / "retraction_watch.csv").write_bytes(header)
    assert fetch_when_due(cache.store, settings, 1_800_000_000.0 + DAY) == "held_back:empty"
    app = web_app(cache.settings, cache, activity)
    health = await get(app, "/healthz")
    assert health.status_code == 200
    held = health.json()["retractions_held_back"]
    assert (
        held["refusal"] == "empty"
        and held["detail"] == "the Retraction Watch file holds a header and no rows"
    )
    page = (await get(app, "/status")).text
    assert '<span class="bad">held back</span>: the last file read was refused (empty: the Retraction' in page
    (folder / "retraction_watch.csv").write_bytes(sample_bytes())
    fetch_when_due(cache.store, settings, 1_800_000_000.0 + 2 * DAY)
    assert (await get(app, "/healthz")).json()["retractions_held_back"] is None
