"""Fault matrix: every injected upstream fault x both lookup tools x (stored-stale, missing).

A stored entry is always answered (flagged stale with the upstream_error reason) within the per-call
deadline and its body is never replaced; a missing entry gets the tool's declared reason; nothing hangs.

Timing: "within the deadline" is the tool body's own time on the server side
(:func:`tests.conftest.time_tool_bodies`), under ``settings.deadline_s + MARGIN_S``: well below the
30 s the hang fault lasts and the 70 s and more the slow fault needs for a recorded body, so a call that
waits a fault out still fails; the MCP client's wall clock is not measured. "At once" (the open breaker)
is proved by the request count, not the clock. Entries are made stale with the injected clock
(:class:`tests.conftest.Clock`), not a sleep.

Default and full run: the default run takes the first fault of each kind (11 of 16); the other 429 and
5xx variants (each with its own expected reason) are ``pytest.mark.full`` (``SYNCD_TEST_FULL=1``).
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from syncd.config import Settings
from syncd.registry import open_services
from syncd.road.services import Services
from syncd.store.repo import Store
from tests.conftest import Clock, make_settings, time_tool_bodies
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

pytestmark = pytest.mark.anyio

DEADLINE_S = 1.5
MARGIN_S = 10.0  # queueing room on a loaded machine, added to settings.deadline_s (never a bound alone)
# (fault kind, params, crossref reason when nothing is stored, zenodo reason when nothing is stored)
FAULTS: list[tuple[str, dict[str, Any], str, str]] = [
    ("refuse", {}, "upstream_unavailable", "record_unavailable"),
    ("reset", {}, "upstream_unavailable", "record_unavailable"),
    ("hang", {"max_s": 30}, "request_timeout", "record_unavailable"),
    ("slow", {"delay_s": 0.5, "chunk_size": 64}, "request_timeout", "record_unavailable"),
    ("rate_limit", {"retry_after": 30}, "rate_limited", "rate_limited"),
    ("rate_limit", {"retry_after": None, "html": True}, "rate_limited", "rate_limited"),
    ("rate_limit", {"retry_after": "DATE+30"}, "rate_limited", "rate_limited"),
    ("status", {"status": 500}, "upstream_unavailable", "record_unavailable"),
    ("status", {"status": 502, "html": True}, "upstream_unavailable", "record_unavailable"),
    ("status", {"status": 503}, "upstream_unavailable", "record_unavailable"),
    ("status", {"status": 504, "html": True}, "request_timeout", "record_unavailable"),
    ("html", {}, "upstream_unavailable", "record_unavailable"),
    ("text", {}, "malformed_response", "record_unavailable"),
    ("empty", {}, "upstream_unavailable", "record_unavailable"),
    ("truncated", {}, "malformed_response", "record_unavailable"),
    ("wrong_shape", {}, "malformed_response", "record_unavailable"),
]
IDS = [f"{k}-{i}" for i, (k, *_rest) in enumerate(FAULTS)]
FIRST_OF_KIND = {next(i for i, f in enumerate(FAULTS) if f[0] == kind) for kind in {f[0] for f in FAULTS}}
CASES = [
    pytest.param(*fault, id=IDS[i], marks=[] if i in FIRST_OF_KIND else [pytest.mark.full])
    for i, fault in enumerate(FAULTS)
]
"""Every fault; beyond the first of its kind, in the full run only."""
TOOLS = {
    "crossref_get_work": ("crossref", {"doi": "10.1101/598821"}, ("crossref_work", "10.1101/598821")),
    "zenodo_get_record": ("zenodo", {"id": "5244404"}, ("zenodo_record", "5244404")),
}


@pytest.fixture
def quick(
    fake: FakeUpstream, db_url: str, injected_clock: Clock
) -> Iterator[tuple[Settings, Store, Services]]:
    settings = make_settings(fake, db_url, deadline_s=DEADLINE_S)
    store = Store.open(db_url)
    cache = open_services(
        settings, store, clock=injected_clock, sleep=injected_clock.sleep
    )  # retries' backoff: no real wait
    yield settings, store, cache
    cache.close()
    store.close()


def _inject(fake: FakeUpstream, service: str, kind: str, params: dict[str, Any]) -> None:
    params = dict(params)
    if params.get("retry_after") == "DATE+30":
        params["retry_after"] = email.utils.formatdate(time.time() + 30, usegmt=True)
    fake.fault(kind, service=service, **params)


SETUP_DEADLINE_S = 30.0
"""The deadline of a first call with no fault injected (room for a busy machine)."""


async def _call(
    cache: Services, tool: str, args: dict[str, Any], *, setup: bool = False
) -> tuple[Any, float]:
    """The tool's answer and its body's time in seconds, measured on the server side.

    ``setup``: a call that sets the stage (no fault injected) under :data:`SETUP_DEADLINE_S`.
    """
    deadline_s = cache.settings.deadline_s
    if setup:
        cache.settings.deadline_s = SETUP_DEADLINE_S
    try:
        server = mcp_server(cache)  # the server keeps the deadline it was built with
    finally:
        cache.settings.deadline_s = deadline_s
    body_s = time_tool_bodies(server)
    async with Client(server) as client:
        res = await client.call_tool(tool, args)
    return res, body_s[tool]


@pytest.mark.parametrize("tool", sorted(TOOLS))
@pytest.mark.parametrize(("kind", "params", "crossref_reason", "zenodo_reason"), CASES)
async def test_stored_entry_survives_fault(
    quick: tuple[Settings, Store, Services],
    fake: FakeUpstream,
    injected_clock: Clock,
    tool: str,
    kind: str,
    params: dict[str, Any],
    crossref_reason: str,
    zenodo_reason: str,
) -> None:
    """A stale stored entry is answered within the deadline, flagged, and its body is untouched."""
    settings, store, cache = quick
    service, args, (entry_kind, key) = TOOLS[tool]
    first, _ = await _call(cache, tool, args, setup=True)
    assert first.is_error is False
    before = store.get(entry_kind, key)
    injected_clock.advance(8 * 86_400.0)  # past both lifetimes (7 days, 1 day): stale
    _inject(fake, service, kind, params)
    res, body_s = await _call(cache, tool, args)
    assert res.is_error is False, res.content[0].text
    data = res.structured_content
    assert data["cache"]["source"] == "store-stale"
    assert data["cache"]["stale"] is True
    assert data["cache"]["upstream_error"] in {crossref_reason, zenodo_reason, "upstream_unavailable"}
    assert body_s < settings.deadline_s + MARGIN_S
    after = store.get(entry_kind, key)
    assert (after.body, after.content_hash, after.fetched_at) == (
        before.body,
        before.content_hash,
        before.fetched_at,
    )
    title = data.get("title") or data["record"]["title"]
    assert title in (
        "Raptor genomes reveal evolutionary signatures of predatory and nocturnal lifestyles",
        "The Origins of SARS-CoV-2: A Critical Review",
    )


@pytest.mark.parametrize("tool", sorted(TOOLS))
@pytest.mark.parametrize(("kind", "params", "crossref_reason", "zenodo_reason"), CASES)
async def test_missing_entry_gets_declared_reason(
    quick: tuple[Settings, Store, Services],
    fake: FakeUpstream,
    tool: str,
    kind: str,
    params: dict[str, Any],
    crossref_reason: str,
    zenodo_reason: str,
) -> None:
    """Nothing stored: the fault becomes the tool's declared reason within the deadline; nothing is stored."""
    settings, store, cache = quick
    service, args, (entry_kind, key) = TOOLS[tool]
    _inject(fake, service, kind, params)
    res, body_s = await _call(cache, tool, args)
    assert res.is_error is True
    reason = res.structured_content["error"]["data"]["reason"]
    assert reason == (crossref_reason if service == "crossref" else zenodo_reason)
    if reason == "rate_limited":
        assert res.structured_content["error"]["data"]["retry_after_s"] > 0
    assert body_s < settings.deadline_s + MARGIN_S
    assert store.get(entry_kind, key) is None


async def test_breaker_opens_after_repeated_failures_and_answers_at_once(
    quick: tuple[Settings, Store, Services], fake: FakeUpstream, injected_clock: Clock
) -> None:
    """After repeated connection failures the pool is offline: the stale answer comes without a request
    (neither upstream nor a budget wait is tried; counted on the fake, not timed).
    """
    _settings, _store, cache = quick
    await _call(cache, "crossref_get_work", {"doi": "10.1101/598821"}, setup=True)
    injected_clock.advance(8 * 86_400.0)
    fake.fault("refuse", service="crossref")
    for _ in range(3):
        await _call(cache, "crossref_get_work", {"doi": "10.1101/598821"})
    assert cache.budget.offline("crossref_single")
    fake.reset_log()
    fake.clear_faults()  # were a request sent now, it would succeed and be counted
    res, _body_s = await _call(cache, "crossref_get_work", {"doi": "10.1101/598821"})
    assert res.structured_content["cache"]["source"] == "store-stale"
    assert res.structured_content["cache"]["upstream_error"] == "upstream_unavailable"
    assert fake.count(service="crossref") == 0
    assert cache.budget.offline("crossref_single")
