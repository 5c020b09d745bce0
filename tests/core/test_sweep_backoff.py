"""Backoff for a broken record (issue 42 item 3): an entry whose revalidation keeps failing for the
same declared reason is asked less and less often by the daemon's sweeps (bounded), a manual refresh
or a success resets it, and ``cache stats`` lists the entries backing off.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from click.testing import CliRunner
from freezegun import freeze_time

from syncd.cli import cli
from syncd.config import Settings
from syncd.crossref.lookups import get_work
from syncd.crossref.names import CROSSREF_WORK
from syncd.normalize.doi import parse_doi
from syncd.passes.refresh import sweep
from syncd.registry import open_services
from syncd.road.services import Services
from syncd.store.entries import BACKOFF_MAX_S, backoff_s
from syncd.store.repo import Store
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.conftest import corpus_json, make_settings
from tests.core.test_sync import FAST
from tests.fakeupstream import FakeUpstream

RAPTOR = "10.1101/598821"
MALFORMED = b'{"status": "ok", "message-type": "work", "message": "Resource temporarily'
"""A 200 whose JSON body is cut short: what a broken upstream record answers."""
SWEEP_EVERY_S = 300.0
"""The daemon's default sweep interval (``revalidate_interval_s``)."""


@pytest.fixture
def sweeper(fake: FakeUpstream, db_url: str, env: Settings) -> Iterator[Services]:  # noqa: F811
    """The daemon's services over the fake, Crossref works stale 1 s after they were validated."""
    settings = make_settings(fake, db_url, budget=FAST, ttl={"crossref_work": 1})
    store = Store.open(settings.database_url)
    svc = open_services(settings, store, interactive=False)
    yield svc
    svc.close()
    store.close()


def test_backoff_doubles_and_is_bounded() -> None:
    """600 s after the first failure, 1,200 s after the second, 2,400 s after the third; at most a day."""
    assert [backoff_s(n) for n in (1, 2, 3)] == [600.0, 1200.0, 2400.0]
    assert backoff_s(40) == BACKOFF_MAX_S == 86_400.0


def test_a_record_answered_malformed_is_asked_at_most_3_times_in_10_sweeps(
    sweeper: Services, fake: FakeUpstream
) -> None:
    """The Raptor work stored, then Crossref answering its /works/ route with a cut-short JSON body every
    time: 10 daemon sweeps 300 s apart (frozen clock moved forward) ask it 3 times (sweeps 1, 3 and 7),
    each failing malformed_response; `cache stats --json` lists it backing off (3 failures, reason
    malformed_response); a manual refresh asks it at once (a 4th request), and once Crossref answers
    the work again a refresh succeeds and nothing is backing off any more.
    """
    path = f"/works/{RAPTOR}"
    with freeze_time("2026-12-01 12:00:00") as clock:
        get_work(sweeper, parse_doi(RAPTOR))
        fake.set_body("crossref", path, MALFORMED)
        fake.reset_log()
        asked_in: list[int] = []
        for n in range(1, 11):
            clock.tick(SWEEP_EVERY_S)
            before = fake.count(path, service="crossref")
            report = sweep(sweeper, 200)
            if fake.count(path, service="crossref") > before:
                asked_in.append(n)
                assert report.failures == {"malformed_response": 1}
        assert asked_in == [1, 3, 7]
        assert fake.count(path, service="crossref") == 3

        stats = CliRunner().invoke(cli, ["cache", "stats", "--json"], obj={})
        assert stats.exit_code == 0, stats.output
        backing = json.loads(stats.stdout)["backing_off"]
        assert backing["count"] == 1
        listed = backing["entries"][0]
        assert (listed["kind"], listed["key"], listed["last_error"], listed["failures"]) == (
            CROSSREF_WORK,
            RAPTOR,
            "malformed_response",
            3,
        )
        text = CliRunner().invoke(cli, ["cache", "stats"], obj={})
        assert f"{CROSSREF_WORK}\t{RAPTOR}\tmalformed_response\t3\t" in text.stdout  # piped: TSV rows

        entry = sweeper.store.get(CROSSREF_WORK, RAPTOR)
        assert entry is not None
        sweep(sweeper, 1, entries=[entry])  # a manual refresh: asked now, whatever the backoff
        assert fake.count(path, service="crossref") == 4
        fake.set_body("crossref", path, corpus_json("crossref/work/10.1101_598821.json"))
        report = sweep(sweeper, 1, entries=[entry])
        assert report.failed == 0
        assert sweeper.store.backing_off()[0] == 0
