"""Retraction Watch data as a local source: parsing the export, versions, changes between versions, CLI."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

from syncd.cli import cli
from syncd.config import Settings
from syncd.daemon.alerts import run_pass
from syncd.errors import InvalidInput
from syncd.passes.watches import doi_specs
from syncd.retractions.csvfile import parse_bytes, parse_date, parse_doi
from syncd.retractions.importer import git_head, import_bytes, import_path
from syncd.retractions.storage import latest_dataset, rows_for
from syncd.store.changes import list_changes
from syncd.store.repo import Store
from syncd.store.watches import add_watch
from tests.retraction_helpers import SAMPLE, sample_bytes, store_work

LANCET = "10.1016/s0140-6736(20)31180-6"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store.open(f"sqlite:///{tmp_path / 'store.db'}")
    yield s  # type: ignore[misc]
    s.close()


def test_the_sample_parses_with_its_format_quirks() -> None:
    """Trailing-comma header, CRLF, quoted line break, Latin-1 byte, M/D/YYYY dates, unavailable DOIs."""
    parsed = parse_bytes(sample_bytes())
    assert len(parsed.rows) == 9 and parsed.skipped == 0 and parsed.replaced_bytes == 1
    by_id = {r.record_id: r for r in parsed.rows}
    lancet = by_id["23529"]
    assert lancet.original_doi == LANCET and lancet.notice_doi == "10.1016/s0140-6736(20)31324-6"
    assert lancet.nature == "retraction" and lancet.notice_date == "2020-06-05"
    assert lancet.original_date == "2020-05-22" and lancet.original_pmid is None
    assert lancet.reasons == ("Placeholder Reason A", "Placeholder Reason B")
    assert by_id["23527"].nature == "expression_of_concern" and by_id["23528"].nature == "correction"
    assert by_id["999000002"].nature == "reinstatement"
    pubmed = by_id["999000003"]
    assert pubmed.original_doi is None and pubmed.notice_doi is None
    assert pubmed.original_pmid == "30500001" and pubmed.notice_pmid == "34500001"
    odd = by_id["999000004"]
    assert odd.title == 'Café culture, "quoted" words, a comma, and a\nline break in one title'
    assert odd.original_doi == "10.5555/rw-odd-text-4"  # written 10.5555/RW-Odd-Text-4


@pytest.mark.parametrize(
    ("raw", "iso"),
    [
        ("6/5/2020 0:00", "2020-06-05"),
        ("12/25/2021 0:00", "2021-12-25"),
        ("1/1/2007", "2007-01-01"),
        ("2020-05-22", "2020-05-22"),
        ("", None),
        ("13/1/2020 0:00", None),
        ("soon", None),
    ],
)
def test_dates_read_as_iso(raw: str, iso: str | None) -> None:
    """The export's ``M/D/YYYY 0:00`` dates (and ISO ones) become ISO dates; others None."""
    assert parse_date(raw) == iso


@pytest.mark.parametrize(
    ("raw", "doi"),
    [
        ("unavailable", None),
        ("", None),
        ("0", None),
        ("10.1109/ICETCE.2011.5774727", "10.1109/icetce.2011.5774727"),
        ("https://doi.org/10.5555/X", "10.5555/x"),
    ],
)
def test_doi_cells(raw: str, doi: str | None) -> None:
    """Blank and ``unavailable`` DOIs are None; DOIs are lower-cased, doi.org URLs unwrapped."""
    assert parse_doi(raw) == doi


def test_a_file_that_is_not_the_export_is_refused(store: Store) -> None:
    """A CSV without the export's columns is refused with invalid_parameter; nothing is stored."""
    with pytest.raises(InvalidInput) as err:
        import_bytes(store, b"DOI,Title\r\n10.5555/x,Y\r\n", "other.csv")
    assert err.value.reason == "invalid_parameter" and "Record ID" in err.value.message
    assert latest_dataset(store) is None


def test_importing_the_sample_then_again_reads_nothing_new(store: Store) -> None:
    """First import: 9 rows and their version (SHA-256, rows, source); the same file again is unchanged."""
    first = import_path(store, SAMPLE, now=1_800_000_000.0)
    d = first.dataset
    assert not first.unchanged and d.rows == 9 and d.added == 9 and d.changed == d.removed == 0
    assert d.sha256 == "7a8cef32a5b5619156481b8ad098face8fe202e5655d058595183e65e6254566"
    assert d.source == str(SAMPLE.resolve()) and d.imported_at == 1_800_000_000.0
    again = import_path(store, SAMPLE, now=1_800_086_400.0)
    assert again.unchanged and again.dataset.id == d.id and again.changes == 0
    assert latest_dataset(store) == d
    assert [r.row.record_id for r in rows_for(store, [LANCET.upper()])] == ["23528", "23527", "23529"]
    assert [r.row.record_id for r in rows_for(store, pmids=["30500001"])] == ["999000003"]


def test_one_row_changed_records_one_change(store: Store, tmp_path: Path) -> None:
    """A second version with one row changed: one changed row, one change-feed row for the stored work."""
    store_work(store, LANCET)
    import_path(store, SAMPLE, now=1_800_000_000.0)
    assert list_changes(store) == []  # the first version is the baseline
    text = sample_bytes().replace(b"+Error in Data;", b"+Error in Results;")
    second = tmp_path / "retraction_watch.csv"
    second.write_bytes(text)
    report = import_path(store, tmp_path, now=1_800_086_400.0)
    d = report.dataset
    assert (d.id, d.rows, d.added, d.changed, d.removed) == (2, 9, 0, 1, 0)
    assert report.changes == 1
    [change] = list_changes(store)
    assert change.doi == LANCET and change.types == ("retraction_watch_updated",)
    [item] = change.summary["items"]
    assert item["record_id"] == "23528" and item["nature"] == "correction" and item["fields"] == ["reasons"]
    assert change.summary["title"].startswith("RETRACTED: Hydroxychloroquine")


def test_a_new_retraction_of_a_stored_work_is_a_retraction_change(store: Store, tmp_path: Path) -> None:
    """A row added in the next version for a stored work is a ``retraction`` change naming its notice."""
    store_work(store, "10.1016/j.apsusc.2007.01.131")
    lines = sample_bytes().split(b"\r\n")
    without = b"\r\n".join(line for line in lines if not line.startswith(b"11459,"))
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "retraction_watch.csv").write_bytes(without)
    import_path(store, tmp_path / "a")
    report = import_path(store, SAMPLE)
    assert (report.dataset.added, report.dataset.changed, report.changes) == (1, 0, 1)
    [change] = list_changes(store)
    assert change.types == ("retraction",) and change.doi == "10.1016/j.apsusc.2007.01.131"
    assert change.summary["items"][0]["doi"] == "10.1016/j.apsusc.2017.07.145"
    assert change.summary["items"][0]["updated"] == "2017-07-24"


def test_a_removed_row_is_gone_from_the_lookups(store: Store, tmp_path: Path) -> None:
    """Rows dropped by the next version are removed (counted), the rest kept (1 of 9: accept_shrink)."""
    import_path(store, SAMPLE)
    lines = sample_bytes().split(b"\r\n")
    (tmp_path / "retraction_watch.csv").write_bytes(
        b"\r\n".join(x for x in lines if not x.startswith(b"25991,"))
    )
    d = import_path(store, tmp_path, accept_shrink=True).dataset
    assert (d.rows, d.removed) == (8, 1)
    assert rows_for(store, ["10.1109/icetce.2011.5774727"]) == []


def test_a_git_checkout_records_its_commit(tmp_path: Path) -> None:
    """A directory that is a git checkout: the commit HEAD names (loose or packed ref) is read from .git."""
    git = tmp_path / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "packed-refs").write_text("# pack-refs\n" + "ab" * 20 + " refs/heads/main\n")
    assert git_head(tmp_path) == "ab" * 20
    (git / "refs" / "heads" / "main").write_text("cd" * 20 + "\n")
    assert git_head(tmp_path) == "cd" * 20


def test_cli_import_and_status(tmp_path: Path) -> None:
    """``syncd retractions import`` then ``status --json`` name the version; status exits 1 before."""
    env = {"SYNCD_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}"}
    runner = CliRunner()
    before = runner.invoke(cli, ["retractions", "status"], env=env)
    assert before.exit_code == 1 and "no Retraction Watch data" in before.output
    done = runner.invoke(cli, ["retractions", "import", str(SAMPLE), "--json"], env=env)
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["dataset"]["rows"] == 9
    again = runner.invoke(cli, ["retractions", "import", str(SAMPLE)], env=env)
    assert again.exit_code == 0 and again.output.startswith("unchanged:")
    status = runner.invoke(cli, ["retractions", "status", "--json"], env=env)
    current = json.loads(status.output)["current"]
    assert current["sha256"].startswith("7a8cef32a5b5") and current["rows"] == 9
    bad = runner.invoke(cli, ["retractions", "import", str(tmp_path)], env=env)
    assert bad.exit_code == 2 and "no Retraction Watch file" in bad.output


def test_a_new_retraction_of_a_watched_work_is_alerted(
    store: Store, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Through the daemon's alert pass: a Retraction Watch row added for a watched work raises
    ``event=alert type=retraction`` naming the notice DOI; an unwatched stored work's change does not.
    """
    store_work(store, "10.1016/j.apsusc.2007.01.131")
    store_work(store, LANCET)
    [spec] = doi_specs(["10.1016/j.apsusc.2007.01.131"])
    add_watch(store, "doi", spec, "lab")
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'store.db'}")
    assert run_pass(store, settings) == 0  # the first pass sets the cursor
    lines = sample_bytes().split(b"\r\n")
    (tmp_path / "old").mkdir()
    dropped = (b"11459,", b"23529,")
    (tmp_path / "old" / "retraction_watch.csv").write_bytes(
        b"\r\n".join(x for x in lines if not x.startswith(dropped))
    )
    import_path(store, tmp_path / "old")
    assert import_path(store, SAMPLE).changes == 2  # both stored works, one watched
    with caplog.at_level(logging.WARNING, logger="syncd.alerts"):
        assert run_pass(store, settings) == 1
    [line] = [r.getMessage() for r in caplog.records if "event=alert" in r.getMessage()]
    assert "type=retraction" in line and "doi=10.1016/j.apsusc.2007.01.131" in line
    assert "notice=10.1016/j.apsusc.2017.07.145" in line


def test_a_retraction_withdrawn_from_the_data_is_a_change_and_an_alert(
    store: Store, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A next version without the Applied Surface Science retraction (record 11459; imported with
    accept_shrink, 1 of 9 rows): a ``retraction_watch_removed`` change on the stored work names the row
    as it was (its nature, notice DOI and date), and the alert pass raises it for the watched work.
    """
    work = "10.1016/j.apsusc.2007.01.131"
    store_work(store, work)
    [spec] = doi_specs([work])
    add_watch(store, "doi", spec, "lab")
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'store.db'}")
    import_path(store, SAMPLE)
    assert run_pass(store, settings) == 0  # the first pass sets the cursor
    lines = sample_bytes().split(b"\r\n")
    (tmp_path / "next").mkdir()
    (tmp_path / "next" / "retraction_watch.csv").write_bytes(
        b"\r\n".join(x for x in lines if not x.startswith(b"11459,"))
    )
    report = import_path(store, tmp_path / "next", accept_shrink=True)
    assert (report.dataset.removed, report.changes) == (1, 1)
    [change] = list_changes(store)
    assert change.types == ("retraction_watch_removed",) and change.doi == work
    [item] = change.summary["items"]
    assert (item["nature"], item["record_id"], item["doi"]) == (
        "retraction",
        "11459",
        "10.1016/j.apsusc.2017.07.145",
    )
    with caplog.at_level(logging.WARNING, logger="syncd.alerts"):
        assert run_pass(store, settings) == 1
    [line] = [r.getMessage() for r in caplog.records if "event=alert" in r.getMessage()]
    assert "type=retraction_watch_removed" in line and f"doi={work}" in line
