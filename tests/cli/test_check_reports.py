"""``syncd check --output markdown|junit``: a report for a pull-request comment and one a CI system reads.

The bibliography holds the recorded IEEE paper retracted in place (10.1109/ICETCE.2011.5774727), the
Raptor preprint (10.1101/598821, clean) and Knuth's book (no identifier): one failure, one pass, one
skipped case.
"""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree

from click.testing import CliRunner

from syncd.cli import cli
from syncd.config import Settings
from tests.cli.test_check_exit_codes import BIB
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.fakeupstream import FakeUpstream
from tests.retraction_helpers import SAMPLE

RETRACTED = """
@inproceedings{zhang2011,
  title = {Notice of Retraction: World-class city under globalization},
  doi = {10.1109/ICETCE.2011.5774727},
  year = {2011}
}
"""


def _bib(tmp_path: Path) -> Path:
    path = tmp_path / "thesis.bib"
    path.write_text(BIB + RETRACTED, encoding="utf-8")
    return path


def test_junit_has_one_case_per_reference_and_the_retraction_fails(env: Settings, tmp_path: Path) -> None:  # noqa: F811
    """JUnit XML: 3 test cases; the retracted paper is a failure naming its severity, the book is
    skipped, the Raptor preprint passes; the exit code is still check's (1: an entry is retracted).
    """
    done = CliRunner().invoke(cli, ["check", str(_bib(tmp_path)), "--output", "junit"], obj={})
    assert done.exit_code == 1, done.output
    suite = ElementTree.fromstring(done.stdout.encode("utf-8"))
    assert suite.tag == "testsuite" and suite.get("name") == "syncd check thesis.bib"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == (
        "3",
        "1",
        "0",
        "1",
    )
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    failure = cases["zhang2011 10.1109/icetce.2011.5774727"].find("failure")
    assert failure is not None and failure.get("type") == "retracted"
    assert cases["knuth1968art"].find("skipped") is not None
    assert list(cases["cho2019raptor 10.1101/598821"]) == []


def test_markdown_lists_the_retraction_in_a_table(env: Settings, tmp_path: Path) -> None:  # noqa: F811
    """Markdown: a heading naming the file, the summary (3 entries, 1 skipped, retracted 1), a table
    whose rows are the retracted paper and the skipped book.
    """
    done = CliRunner().invoke(cli, ["check", str(_bib(tmp_path)), "--output", "markdown"], obj={})
    assert done.exit_code == 1, done.output
    text = done.stdout
    assert text.startswith("### Bibliography check: `thesis.bib`")
    assert "3 entries (bibtex): 2 with a DOI, 1 skipped" in text and "retracted 1" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[0] == "| position | label | status | severity | doi | title | detail |"
    assert rows[1].startswith("| 3 | zhang2011 | retracted | retracted | 10.1109/icetce.2011.5774727 |")
    assert rows[2].startswith("| 2 | knuth1968art | no_doi | skipped |")


def test_a_retraction_known_with_crossref_down_says_the_record_was_not_read(
    env: Settings,  # noqa: F811
    fake: FakeUpstream,
    tmp_path: Path,
) -> None:
    """Crossref answering 503: the Lancet paper is still retracted from the imported Retraction Watch
    rows, and its detail (text, CSV) says Crossref's record was not read and why, as ``--json`` does.
    """
    assert CliRunner().invoke(cli, ["retractions", "import", str(SAMPLE)], obj={}).exit_code == 0
    fake.fault("status", service="crossref", status=503)
    refs = tmp_path / "refs.txt"
    refs.write_text("10.1016/S0140-6736(20)31180-6\n", encoding="utf-8")
    try:
        done = CliRunner().invoke(cli, ["check", str(refs), "--output", "csv"], obj={})
    finally:
        fake.clear_faults()
    assert done.exit_code == 1, done.output
    [row] = [line for line in done.stdout.splitlines() if "31180-6" in line]
    assert "retracted" in row and "(retraction-watch-data)" in row
    assert "Crossref's record not read (upstream_unavailable)" in row
