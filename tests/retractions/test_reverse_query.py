"""The reverse query ``/works?filter=updates:{doi}``: notices that point at a work its own record does not.

Through the loopback fake upstream (no recording of the ``updates`` filter exists: the fake answers it
from the recorded notice records - /works bodies and work-list items - whose ``update-to`` names the
DOI). PLOS ONE's 10.1371/journal.pone.0090062 is not held by the fake's Crossref, and the recorded
journal page lists its retraction notice 10.1371/journal.pone.0210896: only the reverse query finds it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from mcp import Client

from syncd.cli import cli
from syncd.retractions.facts import CrossrefFacts, ReverseFacts, update_fact
from syncd.retractions.reverse import ask_reverse, notices_in, reverse_params
from syncd.retractions.verdict import needs_reverse, verdict
from syncd.road.services import Services
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.corpus_path import CORPUS
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server
from tests.retraction_helpers import SAMPLE

NOTICE_ONLY = "10.1371/journal.pone.0090062"
NOTICE = "10.1371/journal.pone.0210896"
CLEAN = "10.1038/s41586-020-2649-2"  # Array programming with NumPy: no updated-by, no notice
CLEAN_2 = "10.1371/journal.pone.0000030"
CLEAN_3 = "10.7554/elife.01567"
LANCET = "10.1016/s0140-6736(20)31180-6"
ECOLOGY = "10.1890/0012-9658(2006)87[2832:tiopma]2.0.co;2"  # no updated-by; not filter-safe
PLOS_PAGE = (
    CORPUS / "crossref/work-list/journals-1932-6203-works_rows-30_cursor-star_with-retraction-notices.json"
)


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), obj={})


def check_json(path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    res = run("check", str(path), "--json", *args)
    return res.exit_code, json.loads(res.stdout)


def updates_requests(fake: FakeUpstream) -> list[str]:
    return [
        r.query["filter"]
        for r in fake.requests
        if r.service == "crossref" and r.query.get("filter", "").startswith("updates:")
    ]


def entries(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["doi"].lower(): r for r in report["reported"]}


@pytest.mark.usefixtures("env")
def test_deep_finds_a_retraction_only_its_notice_names(fake: FakeUpstream, tmp_path: Path) -> None:
    """Without --deep the PLOS work (no Crossref record, not in Retraction Watch) is unknown and no
    reverse query is sent; with --deep one updates: request per work nothing else flags (the PLOS work
    and NumPy, not the Lancet paper) finds its retraction notice: retracted, signal
    crossref:updates-query naming 10.1371/journal.pone.0210896, exit 1. Run again, the stored pages
    answer (0 requests); without --deep the stored page still gives the verdict.
    """
    assert run("retractions", "import", str(SAMPLE)).exit_code == 0
    path = tmp_path / "refs.txt"
    path.write_text(f"{NOTICE_ONLY}\n{CLEAN}\n{LANCET}\n", encoding="utf-8")
    code, plain = check_json(path)
    assert code == 1 and updates_requests(fake) == []  # the Lancet paper exits 1 either way
    assert entries(plain)[NOTICE_ONLY]["severity"] == "unknown"
    fake.reset_log()
    code, deep = check_json(path, "--deep")
    assert code == 1
    assert sorted(updates_requests(fake)) == [f"updates:{CLEAN}", f"updates:{NOTICE_ONLY}"]
    row = entries(deep)[NOTICE_ONLY]
    assert row["status"] == row["severity"] == "retracted"
    assert row["signals"] == [
        {
            "source": "crossref:updates-query",
            "type": "retraction",
            "level": "retracted",
            "noticeDoi": NOTICE,
            "date": "2019-01-10",
        }
    ]
    assert row["item"]["retraction"]["restsOn"]["updatesQuery"]["state"] == "asked"
    assert deep["updatesQuery"] == {"works": 2, "answered": 2, "requests": 2, "notices": 1, "failed": []}
    lancet = entries(deep)[LANCET]["item"]["retraction"]
    assert "updatesQuery" not in lancet["restsOn"]  # its updated-by speaks: not asked
    fake.reset_log()
    code, again = check_json(path, "--deep")
    assert updates_requests(fake) == [] and again["updatesQuery"]["requests"] == 0
    assert entries(again)[NOTICE_ONLY]["severity"] == "retracted"
    _, stored = check_json(path)
    held = entries(stored)[NOTICE_ONLY]
    assert held["severity"] == "retracted" and held["item"]["retraction"]["restsOn"]["updatesQuery"][
        "state"
    ] == ("stored")


@pytest.mark.usefixtures("env")
def test_deep_stays_inside_the_budget(
    fake: FakeUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With two list tokens: the doi: list request and one reverse query spend them; the second work's
    reverse query is refused by the budget and the third is not tried: their verdicts stay none_found
    (the records were seen, ok) and the report names the budget's reason.
    """
    monkeypatch.setenv("SYNCD_BUDGET__CROSSREF_LIST__BURST", "2")
    monkeypatch.setenv("SYNCD_BUDGET__CROSSREF_LIST__PER_S", "0.0001")
    path = tmp_path / "refs.txt"
    path.write_text(f"{CLEAN}\n{CLEAN_2}\n{CLEAN_3}\n", encoding="utf-8")
    code, report = check_json(path, "--deep")
    assert code == 0, report
    assert len(updates_requests(fake)) == 1
    deep = report["updatesQuery"]
    assert (deep["works"], deep["answered"], deep["requests"]) == (3, 1, 1)
    assert deep["failed"] == ["rate_limited"]  # the budget's refusal, no request sent for it
    assert report["counts"]["ok"] == 3


@pytest.mark.usefixtures("env")
def test_a_doi_a_filter_cannot_hold_is_not_asked(fake: FakeUpstream, tmp_path: Path) -> None:
    """The Ecology paper's DOI holds ``[`` and ``:`` (Crossref's filter parser splits on ``:``): no
    updates: request for it, its verdict names the reason; NumPy beside it is asked.
    """
    path = tmp_path / "refs.txt"
    path.write_text(f"{ECOLOGY}\n{CLEAN}\n", encoding="utf-8")
    code, report = check_json(path, "--deep", "--allow-unknown")
    assert code == 0
    assert updates_requests(fake) == [f"updates:{CLEAN}"]
    assert report["updatesQuery"]["failed"] == ["not_filter_safe"]
    assert report["updatesQuery"]["requests"] == 1


def test_a_correction_notice_found_by_the_reverse_query_is_corrected() -> None:
    """From the recorded PLOS ONE page: the notice 10.1371/journal.pone.0117653 names
    10.1371/journal.pone.0109449 as a correction; a seen record without updated-by gets verdict
    corrected (never retracted), resting on the reverse query.
    """
    message = json.loads(PLOS_PAGE.read_text(encoding="utf-8"))["message"]
    work = "10.1371/journal.pone.0109449"
    notices = notices_in(work, message, 1_800_000_000.0)
    assert [(n.notice_doi, n.update.type) for n in notices] == [
        ("10.1371/journal.pone.0117653", "correction")
    ]
    facts = CrossrefFacts(doi=work, title="Absence of GILT Is Associated with Poor Disease-Free Survival")
    assert needs_reverse(facts, [])
    v = verdict(doi=work, crossref=facts, reverse=ReverseFacts("asked", tuple(notices), 1, 1_800_000_000.0))
    assert v.severity == "corrected"
    assert [(s.source, s.notice_doi) for s in v.signals] == [
        ("crossref:updates-query", "10.1371/journal.pone.0117653")
    ]
    assert v.as_dict()["restsOn"]["updatesQuery"] == {
        "state": "asked",
        "notices": 1,
        "total": 1,
        "validatedAt": 1_800_000_000.0,
    }
    assert reverse_params(work.upper()) == {"filter": f"updates:{work}", "rows": "50"}


def test_a_work_whose_own_record_speaks_is_not_asked() -> None:
    """needs_reverse: an updated-by with a level or a Retraction Watch row means no reverse query; a
    title prefix alone (no notice named) does not.
    """
    lancet = json.loads((CORPUS / "crossref/work/10.1016_s0140-6736_20_31180-6.json").read_text())["message"]
    facts = CrossrefFacts(
        doi=LANCET,
        title=lancet["title"][0],
        updated_by=tuple(f for f in map(update_fact, lancet["updated-by"]) if f is not None),
    )
    assert not needs_reverse(facts, [])
    assert needs_reverse(CrossrefFacts(doi=LANCET, title=lancet["title"][0]), [])


@pytest.mark.anyio
async def test_crossref_get_works_reads_the_stored_reverse_page(cache: Services, fake: FakeUpstream) -> None:
    """ask_reverse stores the page (one updates: request); crossref_get_works then gives the PLOS work
    retracted from that stored page without asking it again (schema-checked answer).
    """
    asked = ask_reverse(cache, [NOTICE_ONLY.upper()])
    assert asked[NOTICE_ONLY].state == "asked" and asked[NOTICE_ONLY].requested
    assert [n.notice_doi for n in asked[NOTICE_ONLY].notices] == [NOTICE]
    assert updates_requests(fake) == [f"updates:{NOTICE_ONLY}"]
    fake.reset_log()
    async with Client(mcp_server(cache)) as client:
        res = await client.call_tool("crossref_get_works", {"dois": [NOTICE_ONLY]})
    [item] = res.structured_content["items"]
    assert item["found"] is False and item["retraction"]["severity"] == "retracted"
    assert item["retraction"]["restsOn"]["updatesQuery"]["state"] == "stored"
    assert item["retraction"]["signals"][0]["source"] == "crossref:updates-query"
    assert updates_requests(fake) == []
