"""Issue 14 case 1: one poison DOI never stalls batch revalidation (CLI and the daemon's sweep)."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import pytest
from click.testing import CliRunner, Result

from syncd.cli import cli
from syncd.config import Settings
from syncd.crossref.lookups import get_work
from syncd.crossref.params_filter import filter_safe
from syncd.normalize.doi import parse_doi
from syncd.passes.refresh import sweep
from syncd.road.services import Services
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.conftest import corpus_json
from tests.core.test_sync import daemon_cache  # noqa: F401  (fixture: the daemon's Services over the fake)
from tests.fakeupstream import FakeUpstream

POISON = "10.1001/jama.251.19.2504,2509"
GOOD = ("10.1101/598821", "10.1002/jor.1100150407")
REJECTED = {
    "status": "failed",
    "message-type": "validation-failure",
    "message": [{"type": "filter-value-invalid", "value": "doi", "message": "Filter doi value is invalid"}],
}


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), obj={})


def _poison_work() -> dict[str, Any]:
    body = corpus_json("crossref/work/10.1002_jor.1100150407.json")
    body["message"]["DOI"] = POISON
    body["message"]["title"] = ["Poison DOI work with a comma"]
    return body


def _store_three_stale(fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> None:
    fake.set_body("crossref", f"/works/{POISON}", _poison_work())
    for doi in (*GOOD, POISON):
        got = run("cache", "get", doi, "--json")
        assert got.exit_code == 0, got.output
    monkeypatch.setenv("SYNCD_TTL__CROSSREF_WORK", "0.001")  # every stored work is now stale


@pytest.mark.parametrize("status", [400, 500])
def test_rejected_batch_is_split_and_every_work_is_revalidated(
    env: Settings,  # noqa: F811
    fake: FakeUpstream,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    status: int,
) -> None:
    """With the comma DOI stored beside 2 works and Crossref answering every `filter=doi:` list request
    400 (validation-failure) or 500, `cache refresh --stale` checks all 3 works: the comma DOI never goes
    into a filter (looked up alone), the rejected pair is split into single lookups, none fails, exit 0;
    a second run does the same (no stall), and `cache verify` is clean.
    """
    _store_three_stale(fake, monkeypatch)
    fake.set_body("crossref", "/works", REJECTED if status == 400 else {"status": "error"}, status=status)
    fake.reset_log()
    with caplog.at_level(logging.INFO, logger="syncd"):
        res = run("cache", "refresh", "--stale", "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert (data["checked"], data["unchanged"], data["failed"], data["stopped"]) == (3, 3, 0, None)
    # the pair's list request (a 500 is retried by the client: 3 attempts, each counted, issue 24 item 6),
    # then halves of one are single lookups; the count is what the fake received
    assert data["requests"] == (4 if status == 400 else 6) == fake.count(service="crossref")
    filters = {r.query.get("filter", "") for r in fake.requests if r.service_path == "/works"}
    assert filters == {"doi:10.1101/598821,doi:10.1002/jor.1100150407"}  # 5xx retried by the client
    assert fake.count(f"/works/{POISON}", service="crossref") == 1
    assert fake.count("/works/10.", service="crossref") == 3
    assert "event=batch_single doi=10.1001/jama.251.19.2504,2509 reason=filter_unsafe" in caplog.text
    assert "event=batch_split size=2" in caplog.text
    again = json.loads(run("cache", "refresh", "--stale", "--json").stdout)
    assert (again["checked"], again["unchanged"]) == (3, 3)
    assert json.loads(run("cache", "verify", "--json").stdout)["ok"] is True


def test_a_work_that_fails_alone_is_counted_and_exits_3(
    env: Settings,  # noqa: F811
    fake: FakeUpstream,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When the comma DOI's own lookup fails too (500), the 2 good works are still confirmed and the
    bad one is counted failed with its reason: `--json` says checked 3, failed 1, exit code 3.
    """
    _store_three_stale(fake, monkeypatch)
    fake.set_body("crossref", "/works", REJECTED, status=400)
    fake.set_body("crossref", f"/works/{POISON}", {"status": "error"}, status=500)
    res = run("cache", "refresh", "--stale", "--json")
    assert res.exit_code == 3, res.output
    data = json.loads(res.stdout)
    assert (data["checked"], data["unchanged"], data["failed"]) == (3, 2, 1)
    assert data["failures"] == {"upstream_unavailable": 1}
    shown = json.loads(run("cache", "show", POISON, "--json").stdout)
    assert shown["title"] == "Poison DOI work with a comma"  # the stored body is kept


@pytest.mark.parametrize(
    ("doi", "safe"),
    [
        ("10.1101/598821", True),
        ("10.1002/(sici)1097-4636(199708)36:2<165::aid-jbm4>3.0.co;2-h", False),  # ':' and '<>'
        (POISON, False),
        ("10.1000/a b", False),
        ("10.1000/a&b", False),
        ("10.1000/abc#frag", False),
        ("10.1000/café", False),
        ("10.1007/978-3-319-53923-2", True),
    ],
)
def test_filter_safe(doi: str, safe: bool) -> None:
    """Only DOIs made of the suffix characters Crossref recommends go into a `doi:` list filter."""
    assert filter_safe(doi) is safe


def test_daemon_sweep_makes_progress_past_the_poison_doi(
    daemon_cache: Services,  # noqa: F811
    fake: FakeUpstream,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The daemon's sweep (non-interactive Services) over the same 3 stale works with every list request
    answered 400: all 3 checked and unchanged, one list request, and its `event=sweep` line says so.
    """
    fake.set_body("crossref", f"/works/{POISON}", _poison_work())
    for doi in (*GOOD, POISON):
        get_work(daemon_cache, parse_doi(doi))
    fake.set_body("crossref", "/works", REJECTED, status=400)
    with caplog.at_level(logging.INFO, logger="syncd"):
        report = sweep(daemon_cache, 100, now=time.time() + 30 * 86_400)
    assert (report.checked, report.unchanged, report.failed, report.requests) == (3, 3, 0, 4)
    line = "event=sweep checked=3 unchanged=3 changed=0 failed=0 failures=- requests=4 stopped=-"
    assert line in caplog.text
