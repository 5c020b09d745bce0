"""``syncd check`` and ``crossref_get_works`` speak the retraction verdict: severity, signals, --fail-on.

Bibliographies are lists of DOIs from the recorded corpus (tests/corpus/crossref/work/) and the
Retraction Watch sample (tests/corpus/retraction-watch/); the fake upstream answers Crossref from the
corpus and leaves out the sample's synthetic 10.5555 DOIs, as Crossref leaves out DOIs it does not hold.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from mcp import Client

from syncd.cli import cli
from syncd.cli.check_commands import exit_code
from syncd.retractions.importer import import_path
from syncd.road.services import Services
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server
from tests.retraction_helpers import SAMPLE

pytestmark = pytest.mark.usefixtures("env")

LANCET = "10.1016/s0140-6736(20)31180-6"
CORRECTED = "10.1371/journal.pone.0033693"
RW_ONLY = "10.5555/rw-only-1"
REINSTATED = "10.5555/rw-reinstated-1"
CONCERN_ONLY = "10.5555/rw-odd-text-4"  # an expression of concern known only to Retraction Watch
IEEE = "10.1109/icetce.2011.5774727"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), obj={})


def dois_file(tmp_path: Path, *dois: str) -> str:
    path = tmp_path / f"refs-{abs(hash(dois))}.txt"
    path.write_text("\n".join(dois) + "\n", encoding="utf-8")
    return str(path)


def check_json(*args: str) -> tuple[int, dict[str, Any]]:
    res = run("check", *args, "--json")
    return res.exit_code, json.loads(res.stdout)


def by_doi(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["doi"].lower(): r for r in report["reported"]}


def test_check_names_severity_signals_and_the_version(fake: FakeUpstream, tmp_path: Path) -> None:
    """With the sample imported: the Lancet paper retracted by its three signals, the IEEE paper replaced,
    the Retraction-Watch-only DOI retracted without a Crossref record, the reinstated one reinstated; the
    report names the Retraction Watch version and the oldest record relied on.
    """
    assert run("retractions", "import", str(SAMPLE)).exit_code == 0
    code, report = check_json(dois_file(tmp_path, LANCET, IEEE, RW_ONLY, REINSTATED))
    assert code == 1
    rows = by_doi(report)
    lancet = rows[LANCET]
    assert lancet["status"] == lancet["severity"] == "retracted"
    sources = {s["source"] for s in lancet["signals"] if s["level"] == "retracted"}
    assert sources == {"crossref:retraction-watch", "retraction-watch-data", "title"}
    assert {"expression_of_concern", "corrected"} <= {s["level"] for s in lancet["signals"]}
    assert rows[IEEE]["item"]["retraction"]["replaced"] is True
    only = rows[RW_ONLY]
    assert only["status"] == "retracted" and only["item"]["found"] is False
    assert only["signals"] == [
        {
            "source": "retraction-watch-data",
            "type": "retraction",
            "level": "retracted",
            "noticeDoi": "10.5555/rw-notice-1",
            "date": "2026-03-09",
            "recordId": "999000001",
        }
    ]
    assert rows[REINSTATED]["status"] == "reinstated"
    rw = report["basis"]["retractionWatch"]
    assert rw["sha256"].startswith("7a8cef32a5b5") and rw["rows"] == 9
    assert report["basis"]["oldestRecord"]["doi"] in (LANCET, IEEE)
    table = run("check", dois_file(tmp_path, LANCET, IEEE, RW_ONLY, REINSTATED))
    assert "Retraction Watch version 7a8cef32a5b5 (9 rows" in table.stdout


@pytest.mark.parametrize(
    ("doi", "codes"),
    [
        (LANCET, {"retracted": 1, "concern": 1, "corrected": 1, "never": 0}),
        (CONCERN_ONLY, {"retracted": 0, "concern": 1, "corrected": 1, "never": 0}),
        (CORRECTED, {"retracted": 0, "concern": 0, "corrected": 1, "never": 0}),
        (REINSTATED, {"retracted": 0, "concern": 0, "corrected": 0, "never": 0}),
    ],
)
def test_fail_on_levels_set_the_exit_code(
    fake: FakeUpstream,
    tmp_path: Path,
    doi: str,
    codes: dict[str, int],
) -> None:
    """--fail-on retracted|concern|corrected|never: exit 1 at or above the level, else 0 (per level)."""
    assert run("retractions", "import", str(SAMPLE)).exit_code == 0
    path = dois_file(tmp_path, doi)
    assert {level: run("check", path, "--fail-on", level).exit_code for level in codes} == codes


def test_upstream_down_and_nothing_stored_is_unknown_exit_3(fake: FakeUpstream, tmp_path: Path) -> None:
    """Crossref answers 503 and nothing is stored: the entry's verdict is unknown with the reason, exit 3
    (0 with --allow-unknown), never ok; with no Retraction Watch data the report says so.
    """
    fake.fault("status", status=503, service="crossref")
    path = dois_file(tmp_path, CORRECTED)
    code, report = check_json(path)
    assert code == 3
    [row] = report["reported"]
    assert row["status"] == "unchecked" and row["severity"] == "unknown"
    assert "upstream_unavailable" in row["reason"] and report["counts"]["ok"] == 0
    assert report["basis"]["retractionWatch"] is None
    assert run("check", path, "--allow-unknown").exit_code == 0
    assert "could not be checked (verdict unknown)" in run("check", path).stdout


def test_not_at_crossref_and_not_in_retraction_watch_is_unknown(fake: FakeUpstream, tmp_path: Path) -> None:
    """A DOI Crossref leaves out and Retraction Watch does not name: not_found, verdict unknown, exit 3."""
    assert run("retractions", "import", str(SAMPLE)).exit_code == 0
    code, report = check_json(dois_file(tmp_path, "10.1371/journal.pone.9999999"))
    [row] = report["reported"]
    assert code == 3 and row["status"] == "not_found" and row["severity"] == "unknown"
    assert row["reason"] == "not at Crossref and not in Retraction Watch"


@pytest.mark.parametrize("fail_on", ["retracted", "concern", "corrected", "never"])
def test_exit_code_rule(fail_on: str) -> None:
    """The exit rule: the --fail-on level first (1), then unknown (3 unless allowed), else 0."""
    expected = {"retracted": 1, "concern": 1, "corrected": 1, "never": 3}[fail_on]
    assert exit_code(["retracted", "unknown"], fail_on, False) == expected
    assert exit_code(["none_found", None], fail_on, False) == 0
    assert exit_code(["unknown"], fail_on, True) == 0
    assert exit_code(["unknown"], fail_on, False) == 3


@pytest.mark.anyio
async def test_crossref_get_works_items_carry_the_verdict(cache: Services, fake: FakeUpstream) -> None:
    """Each crossref_get_works item carries the same verdict (schema-checked answer); the answer names
    the Retraction Watch version; a DOI known only to Retraction Watch is retracted, not clean.
    """
    import_path(cache.store, SAMPLE)
    server = mcp_server(cache)
    async with Client(server) as client:
        res = await client.call_tool("crossref_get_works", {"dois": [LANCET, RW_ONLY, CORRECTED, "10.1016"]})
    sc = res.structured_content
    lancet, only, corrected, invalid = sc["items"]
    assert lancet["retraction"]["severity"] == "retracted" and lancet["flags"][0] == "retracted"
    assert only["found"] is False and only["retraction"]["severity"] == "retracted"
    assert only["retraction"]["restsOn"]["crossref"] == "not_found"
    assert corrected["retraction"]["severity"] == "corrected"
    assert corrected["retraction"]["restsOn"]["crossrefValidatedAt"].endswith("Z")
    assert "retraction" not in invalid
    assert sc["retractionWatch"]["rows"] == 9
    text = res.content[0].text
    assert (
        "Retraction Watch version 7a8cef32a5b5" in text
        and "verdict: retracted (retraction-watch-data)" in text
    )
