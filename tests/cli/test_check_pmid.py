"""``syncd check`` reads PubMed ids (BibTeX ``pmid``/``eprint``, RIS ``PM``/``AN``, CSL-JSON ``PMID``) and
matches them to the Retraction Watch rows' ``OriginalPaperPubMedID``.

The sample's row 999000003 has no DOI and PubMed id 30500001 (a retraction, notice PubMed id 34500001).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from syncd.bibliography import parse_pmid, parse_text
from syncd.cli import cli
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.fakeupstream import FakeUpstream
from tests.retraction_helpers import SAMPLE

PMID = "30500001"
RECORD = "999000003"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), obj={})


def check_json(path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    res = run("check", str(path), "--json", *args)
    return res.exit_code, json.loads(res.stdout)


def test_parsers_read_pubmed_ids_from_each_format() -> None:
    """BibTeX pmid and biblatex eprint/eprinttype=pubmed; RIS PM, and AN only when labelled PMID or from
    a PubMed/MEDLINE database (a CINAHL accession number is not a PMID); CSL-JSON PMID.
    """
    bib = parse_text(
        f"@article{{a, title={{A}}, pmid={{{PMID}}}}}\n"
        f"@article{{b, title={{B}}, eprint={{{PMID}}}, eprinttype={{pubmed}}}}\n"
        f"@article{{c, title={{C}}, eprint={{2101.00001}}, eprinttype={{arxiv}}}}\n"
        "@article{d, title={D}, pmid={PMC1234567}}\n",
        "bibtex",
    )
    assert [r.pmid for r in bib.references] == [PMID, PMID, None, None]
    ris = parse_text(
        f"TY  - JOUR\nTI  - A\nPM  - {PMID}\nER  - \n\n"
        f"TY  - JOUR\nTI  - B\nAN  - {PMID}\nDB  - PubMed\nER  - \n\n"
        f"TY  - JOUR\nTI  - C\nAN  - PMID: {PMID}\nER  - \n\n"
        "TY  - JOUR\nTI  - D\nAN  - 104567890\nDB  - CINAHL\nER  - \n\n"
        f"TY  - JOUR\nTI  - E\nAN  - {PMID}\nDP  - Ovid MEDLINE(R)\nER  - \n",
        "ris",
    )
    assert [r.pmid for r in ris.references] == [PMID, PMID, PMID, None, PMID]
    csl = parse_text(
        json.dumps([{"id": "a", "PMID": PMID}, {"id": "b", "PMID": 30500001}, {"id": "c"}]), "csl-json"
    )
    assert [r.pmid for r in csl.references] == [PMID, PMID, None]
    assert [parse_pmid(v) for v in ("PMID: 123", "0", "12a", "")] == ["123", None, None, None]


@pytest.mark.usefixtures("env")
@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("refs.bib", f"@article{{rw, title={{Known by its PubMed id}}, pmid={{{PMID}}}}}\n"),
        ("refs.ris", f"TY  - JOUR\nTI  - Known by its PubMed id\nAN  - {PMID}\nDB  - PubMed\nER  - \n"),
        ("refs.json", json.dumps([{"id": "rw", "type": "article-journal", "PMID": PMID}])),
    ],
)
def test_an_entry_known_only_by_pubmed_id_gets_its_verdict(
    fake: FakeUpstream, tmp_path: Path, name: str, text: str
) -> None:
    """An entry with a PubMed id and no DOI is retracted by the Retraction Watch row of that PubMed id
    (record 999000003), exit 1, without any upstream request.
    """
    assert run("retractions", "import", str(SAMPLE)).exit_code == 0
    fake.reset_log()
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    code, report = check_json(path)
    assert code == 1, report
    assert (report["withDoi"], report["withPmid"], report["pmidOnly"], report["skipped"]) == (0, 1, 1, 0)
    [row] = report["reported"]
    assert (row["status"], row["severity"], row["pmid"], row["doi"]) == ("retracted", "retracted", PMID, None)
    [signal] = row["signals"]
    assert (signal["source"], signal["recordId"], signal["date"]) == (
        "retraction-watch-data",
        RECORD,
        "2021-12-25",
    )
    assert row["item"]["retraction"]["restsOn"]["crossref"] == "not_asked"
    assert fake.count() == 0


@pytest.mark.usefixtures("env")
def test_a_pubmed_id_rescues_a_doi_crossref_does_not_hold(fake: FakeUpstream, tmp_path: Path) -> None:
    """A DOI Crossref leaves out, written with the PubMed id Retraction Watch knows: retracted by the
    PubMed id's row; a PubMed id Retraction Watch does not know stays unknown with the reason, and an
    entry with neither identifier is listed as skipped (exit 3 without a flagged entry comes from the
    PubMed id's entry: a file holding only the book exits 0, nothing could be asked).
    """
    assert run("retractions", "import", str(SAMPLE)).exit_code == 0
    path = tmp_path / "refs.bib"
    path.write_text(
        f"@article{{a, title={{A}}, doi={{10.1371/journal.pone.9999999}}, pmid={{{PMID}}}}}\n",
        encoding="utf-8",
    )
    code, report = check_json(path)
    [row] = report["reported"]
    assert code == 1 and row["status"] == "retracted" and row["signals"][0]["recordId"] == RECORD
    other = tmp_path / "other.bib"
    other.write_text("@article{b, title={B}, pmid={12345678}}\n@book{c, title={C}}\n", encoding="utf-8")
    code, report = check_json(other)
    assert code == 3
    assert [(r["status"], r["severity"], r["reason"]) for r in report["reported"]] == [
        ("no_doi", "unknown", "no DOI to ask Crossref and PubMed id 12345678 not in Retraction Watch"),
        ("no_doi", "skipped", "the entry names no DOI and no PubMed id: nothing to look up"),
    ]
    assert run("check", str(other), "--allow-unknown").exit_code == 0
    book = tmp_path / "book.bib"
    book.write_text("@book{c, title={C}}\n", encoding="utf-8")
    code, report = check_json(book)
    assert code == 0
    assert [(r["status"], r["severity"]) for r in report["reported"]] == [("no_doi", "skipped")]
