"""The reference index over the mirror: who cites a DOI, ``check --cited``, and the cites_retracted alert.

The recorded work 10.1038/s43586-021-00024-3 ("Parallel nuclear magnetic resonance spectroscopy") cites the
recorded work 10.1126/science.280.5362.421 in its deposited reference list: the one pair of corpus
works where one cites the other.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import Client

from syncd.cli import cli
from syncd.config import Settings
from syncd.crossref.lookups import work_content
from syncd.crossref.views_references import reference_dois
from syncd.daemon.alerts import run_pass
from syncd.passes.watches import doi_specs
from syncd.retractions.citations import cited_by_answer, cited_problems, rebuild_index
from syncd.retractions.importer import import_bytes, import_path
from syncd.road.services import Services
from syncd.store.maintenance import delete_entries
from syncd.store.references import cites_of
from syncd.store.repo import EntryContent, Store
from syncd.store.watches import add_watch
from tests.helpers import mcp_server
from tests.retraction_helpers import SAMPLE, sample_bytes, store_work, work_file

CITING = "10.1038/s43586-021-00024-3"
CITED = "10.1126/science.280.5362.421"
RW_ROW = (
    b"990000099,A cited paper,(PHY) Physics;,(placeholder),Science,AAAS,(placeholder),(placeholder),"
    b"(placeholder),Research Article;,11/5/2026 0:00,10.5555/rw-notice-99,0,4/17/1998 0:00,"
    b"10.1126/SCIENCE.280.5362.421,0,Retraction,+Placeholder Reason A;,No,(placeholder),\r\n"
)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store.open(f"sqlite:///{tmp_path / 'store.db'}")
    yield s  # type: ignore[misc]
    s.close()


def message(doi: str) -> dict:
    return json.loads(work_file(doi).read_text(encoding="utf-8"))["message"]


def test_a_stored_work_is_found_by_the_doi_it_cites(store: Store) -> None:
    """Storing the work indexes its reference list: found citing the Science paper, with coverage."""
    store_work(store, CITING)
    store_work(store, CITED)
    answer = cited_by_answer(store, CITED.upper())
    assert answer.total == 1 and [w.doi for w in answer.works] == [CITING]
    assert answer.works[0].title == "Parallel nuclear magnetic resonance spectroscopy"
    assert (answer.indexed, answer.stored) == (1, 2)  # the 1998 paper deposited no DOI references
    data = answer.as_dict(str)
    assert "no cited-by" in data["coverage"]["note"] and "--rebuild" in data["coverage"]["notice"]


def test_the_index_follows_replacement_and_deletion(store: Store) -> None:
    """A new body without the reference replaces the rows; deleting the entry removes them."""
    store_work(store, CITING)
    m = message(CITING)
    refs = len(m["reference"])
    m["reference"] = [r for r in m["reference"] if r.get("DOI", "").lower() != CITED]
    assert len(m["reference"]) == refs - 1
    entry, changed = store.put_content(work_content(CITING, m, None))
    assert changed and cited_by_answer(store, CITED).total == 0
    with store.read() as conn:
        assert len(cites_of(conn, entry.id)) == len({r["DOI"].lower() for r in m["reference"] if "DOI" in r})
    delete_entries(store, [entry.id])
    with store.read() as conn:
        assert cites_of(conn, entry.id) == []


def test_rebuild_indexes_works_stored_before_the_index(store: Store) -> None:
    """A work stored without its cites (as before migration 0013) is indexed by rebuild_index."""
    content = work_content(CITING, message(CITING), None)
    store.put_content(EntryContent(**{**content.__dict__, "cites": None}))
    assert cited_by_answer(store, CITED).total == 0
    assert rebuild_index(store, now=1_800_000_000.0).works == 1
    answer = cited_by_answer(store, CITED)
    assert answer.total == 1 and answer.rebuilt_at == 1_800_000_000.0


def test_a_bulk_import_indexes_the_references(tmp_path: Path) -> None:
    """``syncd cache import`` of JSON Lines (the bulk path) writes the index too; ``syncd cited-by``."""
    env = {"SYNCD_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}"}
    lines = tmp_path / "works.jsonl"
    lines.write_text(json.dumps(message(CITING)) + "\n" + json.dumps(message(CITED)) + "\n", encoding="utf-8")
    runner = CliRunner()
    done = runner.invoke(cli, ["cache", "import", str(lines), "--json"], env=env)
    assert done.exit_code == 0, done.output
    res = runner.invoke(cli, ["cited-by", CITED, "--json"], env=env)
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["total"] == 1 and data["works"][0]["doi"] == CITING
    assert data["coverage"]["indexedWorks"] == 1
    none = runner.invoke(cli, ["cited-by", "10.5555/nobody-cites-this"], env=env)
    assert none.exit_code == 1 and "among 1 stored works with deposited reference lists" in none.output


def test_check_cited_lists_the_retracted_works_an_entry_cites(store: Store, tmp_path: Path) -> None:
    """A stored work whose reference list holds a DOI Retraction Watch retracts: found by cited_problems."""
    store_work(store, CITING)
    import_bytes(store, sample_bytes() + RW_ROW, "rw.csv")
    problems, indexed = cited_problems(store, [CITING, "10.5555/not-stored"])
    assert indexed == 1
    [problem] = problems[CITING]
    assert problem.cited == CITED and problem.verdict.severity == "retracted"
    assert problem.signals[0]["recordId"] == "990000099"


def test_a_cited_work_becoming_retracted_alerts_the_watched_work(
    store: Store, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Through the daemon's alert pass: the cited work's new Retraction Watch row alerts cites_retracted
    for the watched work citing it (the cited work itself is not watched).
    """
    store_work(store, CITING)
    store_work(store, CITED)
    [spec] = doi_specs([CITING])
    add_watch(store, "doi", spec, "lab")
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'store.db'}")
    import_path(store, SAMPLE)
    assert run_pass(store, settings) == 0  # sets the cursor
    report = import_bytes(store, sample_bytes() + RW_ROW, "rw-next.csv")
    assert report.changes == 1
    with caplog.at_level(logging.WARNING, logger="syncd.alerts"):
        assert run_pass(store, settings) == 1
    [line] = [r.getMessage() for r in caplog.records if "event=alert" in r.getMessage()]
    assert "type=cites_retracted" in line and f"doi={CITING}" in line and f"cited={CITED}" in line
    assert "notice=10.5555/rw-notice-99" in line


@pytest.mark.anyio
async def test_the_cited_by_tool_answers_from_the_store_with_its_coverage(cache: Services) -> None:
    """``syncd_cited_by`` (schema-checked answer): the citing work, the coverage, no upstream request."""
    store_work(cache.store, CITING)
    async with Client(mcp_server(cache)) as client:
        res = await client.call_tool("syncd_cited_by", {"doi": f"https://doi.org/{CITED}"})
        bad = await client.call_tool("syncd_cited_by", {"doi": "not a doi"})
    sc = res.structured_content
    assert res.is_error is False and sc["total"] == 1 and sc["works"][0]["doi"] == CITING
    assert sc["coverage"]["indexedWorks"] == 1 and sc["cache"]["source"] == "store"
    assert "Crossref's public API has no cited-by" in res.content[0].text
    assert bad.is_error is True and bad.structured_content["error"]["data"]["reason"] == "invalid_parameter"


def test_syncd_check_cited_reports_the_cited_retraction(tmp_path: Path) -> None:
    """``syncd check --cited`` on a list naming the stored citing work: the retracted work it cites is
    listed with its verdict and the coverage; the entry itself is clean (exit 0), all from the store.
    """
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    store = Store.open(url)
    try:
        store_work(store, CITING)
    finally:
        store.close()
    (tmp_path / "rw.csv").write_bytes(sample_bytes() + RW_ROW)
    env = {"SYNCD_DATABASE_URL": url, "SYNCD_CROSSREF__BASE_URL": "http://127.0.0.1:9"}  # never asked
    runner = CliRunner()
    assert runner.invoke(cli, ["retractions", "import", str(tmp_path / "rw.csv")], env=env).exit_code == 0
    refs = tmp_path / "refs.txt"
    refs.write_text(f"{CITING}\n", encoding="utf-8")
    res = runner.invoke(cli, ["check", str(refs), "--cited", "--json"], env=env)
    assert res.exit_code == 0, res.output
    cited = json.loads(res.stdout)["cited"]
    assert cited["entriesHeld"] == cited["entriesWithReferences"] == 1
    [work] = cited["works"]
    assert work["doi"] == CITING and [(c["doi"], c["severity"]) for c in work["cites"]] == [
        (CITED, "retracted")
    ]
    table = runner.invoke(cli, ["check", str(refs), "--cited"], env=env)
    assert f"{CITING} cites {CITED}: retracted" in table.stdout


def test_junk_reference_dois_are_counted_and_skipped_and_doi_org_urls_unwrapped(store: Store) -> None:
    """The Nature Reviews work's reference list with junk added, as deposits carry it: a "DOI" with a
    space, one with a NUL, one of 600 characters and a number are skipped and counted by the rebuild; a
    doi.org URL and a ``doi:`` form are unwrapped, so cited-by finds the Science paper through them.
    """
    m = message(CITING)
    m["reference"] = [r for r in m["reference"] if r.get("DOI", "").lower() != CITED]
    m["reference"] += [
        {"key": "junk-space", "DOI": "10.1000/not a doi"},
        {"key": "junk-nul", "DOI": "10.1000/cut\x00here"},
        {"key": "junk-long", "DOI": "10.1000/" + "x" * 600},
        {"key": "junk-number", "DOI": 42},
        {"key": "url", "DOI": "https://doi.org/10.1126/SCIENCE.280.5362.421"},
        {"key": "prefixed", "DOI": "doi:10.1126/science.280.5362.421"},
    ]
    dois, junk = reference_dois(m)
    assert junk == 4 and dois.count(CITED) == 1
    assert not [d for d in dois if " " in d or "\x00" in d or len(d) > 300]
    store.put_content(work_content(CITING, m, None))
    assert [w.doi for w in cited_by_answer(store, CITED).works] == [CITING]
    assert rebuild_index(store, now=1_800_000_000.0) == rebuild_index(store, now=1_800_000_000.0)
    rebuilt = rebuild_index(store, now=1_800_000_000.0)
    assert (rebuilt.works, rebuilt.junk) == (1, 4)


def test_a_self_citation_is_flagged_in_cited_by(store: Store) -> None:
    """A work whose reference list holds its own DOI is listed as citing itself, flagged selfCitation,
    beside the real citing work (unflagged).
    """
    store_work(store, CITING)
    m = message(CITED)
    m["reference"] = [{"key": "self", "DOI": CITED.upper()}]
    store.put_content(work_content(CITED, m, None))
    data = cited_by_answer(store, CITED).as_dict(str)
    flags = {w["doi"].lower(): w.get("selfCitation", False) for w in data["works"]}
    assert flags == {CITING: False, CITED: True}


async def test_get_works_counts_a_retraction_only_retraction_watch_knows(cache: Services) -> None:
    """crossref_get_works on the Science paper (no update deposited at Crossref) with a Retraction Watch
    row retracting it: the item's verdict is retracted and the header counts it (retracted 1), as the
    item says; its Crossref flags stay empty.
    """
    import_bytes(cache.store, sample_bytes() + RW_ROW, "rw.csv")
    store_work(cache.store, CITED)
    async with Client(mcp_server(cache)) as client:
        result = await client.call_tool("crossref_get_works", {"dois": [CITED]})
    data = result.structured_content
    assert data is not None
    [item] = data["items"]
    assert item["retraction"]["severity"] == "retracted" and not item.get("flags")
    assert data["counts"]["retracted"] == 1
    text = result.content[0].text  # type: ignore[union-attr]
    assert "retracted 1" in text
