"""Issue 12 item 5, second half: each base URL is checked once (daemon start, `syncd cache stats`).

One cheap request per service (Crossref ``/works?rows=0``, Zenodo ``/records?size=1``, doi.org
``/ra/10.1000``, DataCite ``/dois?page[size]=1``) through the budget; the answer must have the
service's own shape, else the check fails with the hint that the base URL may be wrong. The fake
upstream answers the four requests.
"""

from __future__ import annotations

import json
import logging
import signal
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from syncd.cli import cli
from syncd.config import Settings
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.e2e.test_processes import _env, _free_port, _start_daemon
from tests.fakeupstream import FakeUpstream

WORK_LIST = {
    "status": "ok",
    "message-type": "work-list",
    "message": {"items": [], "total-results": 175_000_000},
}
ZENODO_HITS = {"hits": {"hits": [], "total": 4_000_000}, "aggregations": {}}


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), obj={})


def _serve_checks(fake: FakeUpstream) -> None:
    fake.set_body("crossref", "/works?rows=0", WORK_LIST)
    fake.set_body("zenodo", "/records?size=1", ZENODO_HITS)


def test_cache_stats_checks_each_base_url_once(
    env: Settings,  # noqa: F811
    fake: FakeUpstream,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`cache stats --json` lists one passed check per service, one request each, and logs
    `event=upstream_check service=... ok=true status=200 ms=...`.
    """
    _serve_checks(fake)
    with caplog.at_level(logging.INFO, logger="syncd.upstream"):
        res = run("cache", "stats", "--json")
    assert res.exit_code == 0, res.output
    checks = json.loads(res.stdout)["upstreams"]
    assert [(c["service"], c["ok"], c["status"]) for c in checks] == [
        ("crossref", True, 200),
        ("zenodo", True, 200),
        ("doi", True, 200),
        ("datacite", True, 200),
    ]
    assert all(isinstance(c["ms"], float) for c in checks)
    counts = [fake.count(p, s) for p, s in (("/works", "crossref"), ("/records", "zenodo"), ("/ra", "doi"))]
    assert [*counts, fake.count("/dois", "datacite")] == [1, 1, 1, 1]
    lines = [r.getMessage() for r in caplog.records if "event=upstream_check" in r.getMessage()]
    assert [line.split(" ms=")[0] for line in lines] == [
        f"event=upstream_check service={s} ok=true status=200"
        for s in ("crossref", "zenodo", "doi", "datacite")
    ]


def test_the_replay_fake_passes_the_checks_unaided(env: Settings, fake: FakeUpstream) -> None:  # noqa: F811
    """The README's offline route (the fake replaying the corpus, nothing set by a test) passes all four
    checks: before, `cache stats` printed "Upstream crossref: FAILED (unexpected_answer, HTTP 404)".
    """
    res = run("cache", "stats", "--json")
    assert res.exit_code == 0, res.output
    checks = json.loads(res.stdout)["upstreams"]
    assert [(c["service"], c["ok"], c["status"]) for c in checks] == [
        ("crossref", True, 200),
        ("zenodo", True, 200),
        ("doi", True, 200),
        ("datacite", True, 200),
    ]


def test_an_unreachable_upstream_reads_no_http_answer(env: Settings, fake: FakeUpstream) -> None:  # noqa: F811
    """With the fake stopped, `cache stats` says each failed check had no HTTP answer (it printed
    "HTTP None" before) and still lists the store.
    """
    fake.stop()
    res = run("cache", "stats")
    assert "HTTP None" not in res.stdout
    assert "Upstream crossref: FAILED (upstream_unavailable, no HTTP answer)" in res.stdout, res.stdout


def test_a_wrong_base_url_fails_its_check_with_the_hint(
    env: Settings,  # noqa: F811
    fake: FakeUpstream,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """crossref.base_url pointing at the wrong mount (Crossref's own 404), zenodo.base_url at Crossref
    (a 200 that is not a Zenodo answer) and datacite.base_url at Zenodo (Zenodo's search answer, not
    DataCite's JSON:API): the three checks fail naming the setting; doi passes.
    """
    _serve_checks(fake)
    monkeypatch.setenv("SYNCD_CROSSREF__BASE_URL", fake.crossref_url + "/v1")
    monkeypatch.setenv("SYNCD_ZENODO__BASE_URL", fake.crossref_url)
    monkeypatch.setenv("SYNCD_DATACITE__BASE_URL", fake.zenodo_url)
    fake.set_body("crossref", "/records?size=1", WORK_LIST)
    fake.set_body("zenodo", "/dois", ZENODO_HITS)
    with caplog.at_level(logging.WARNING, logger="syncd.upstream"):
        res = run("cache", "stats", "--json")
    assert res.exit_code == 0, res.output
    crossref, zenodo, doi, datacite = json.loads(res.stdout)["upstreams"]
    assert (crossref["ok"], crossref["status"], crossref["reason"]) == (False, 404, "unexpected_answer")
    assert crossref["hint"].startswith("crossref.base_url may be wrong")
    assert (zenodo["ok"], zenodo["status"], zenodo["reason"]) == (False, 200, "unexpected_answer")
    assert zenodo["hint"].startswith("zenodo.base_url may be wrong")
    assert doi["ok"] is True
    assert (datacite["ok"], datacite["status"], datacite["reason"]) == (False, 200, "unexpected_answer")
    assert datacite["hint"].startswith("datacite.base_url may be wrong")
    failed = [r.getMessage() for r in caplog.records if "ok=false" in r.getMessage()]
    assert len(failed) == 3 and "service=crossref" in failed[0] and "base_url may be wrong" in failed[0]
    human = run("cache", "stats")
    assert "Upstream crossref: FAILED" in human.stdout


def test_a_ca_bundle_that_is_not_one_fails_every_check_naming_the_setting(
    env: Settings,  # noqa: F811
    fake: FakeUpstream,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """network.ca_bundle naming a file that holds no certificate: every check fails with invalid_config
    and the hint names the setting and the file (logged at WARNING), no request is sent; before the
    fix the checks said only "not checked (invalid_config)" and the daemon logged it at INFO.
    """
    bad = tmp_path / "not-a-ca.pem"
    bad.write_text("not a certificate\n")
    monkeypatch.setenv("SYNCD_NETWORK__CA_BUNDLE", str(bad))
    with caplog.at_level(logging.WARNING, logger="syncd.upstream"):
        res = run("cache", "stats", "--json")
    assert res.exit_code == 0, res.output
    checks = json.loads(res.stdout)["upstreams"]
    assert [(c["service"], c["ok"], c["reason"]) for c in checks] == [
        (s, False, "invalid_config") for s in ("crossref", "zenodo", "doi", "datacite")
    ]
    assert all(c["hint"].startswith(f"network.ca_bundle {bad} cannot be used") for c in checks), checks
    assert fake.count() == 0
    failed = [r.getMessage() for r in caplog.records if "ok=false" in r.getMessage()]
    assert len(failed) == 4 and "network.ca_bundle" in failed[0]
    human = run("cache", "stats")
    expected = f"Upstream crossref: FAILED (invalid_config, no HTTP answer): network.ca_bundle {bad}"
    assert expected in human.stdout


def test_the_check_can_be_turned_off(
    env: Settings,  # noqa: F811
    fake: FakeUpstream,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """check_upstreams_at_start = false: `cache stats` sends no request and lists no check."""
    monkeypatch.setenv("SYNCD_CHECK_UPSTREAMS_AT_START", "false")
    res = run("cache", "stats", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["upstreams"] == []
    assert fake.count() == 0


@pytest.mark.serial  # a real process
def test_the_daemon_checks_each_base_url_at_start(fake: FakeUpstream, db_url: str, tmp_path: Path) -> None:
    """`syncd daemon` logs one event=upstream_check line per service after it starts."""
    _serve_checks(fake)
    port = _free_port()
    daemon_env = _env(fake, db_url, tmp_path, SYNCD_HTTP__PORT=str(port), SYNCD_LOG_LEVEL="INFO")
    proc = _start_daemon(daemon_env, port)
    try:
        for _ in range(200):
            if fake.count("/dois", "datacite") >= 1:
                break
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    for service in ("crossref", "zenodo", "doi", "datacite"):
        assert f"event=upstream_check service={service} ok=true status=200" in out, out
