"""Bibliographies as labs have them: dblp's TeX-escaped DOIs, a RIS file without its last ``ER``, AN.

The files are shaped as dblp's BibTeX export and a reference manager's RIS export write them; the DOIs
are the recorded corpus works (the Raptor preprint, the retracted Applied Surface Science paper, the IEEE
notice retracted in place), written escaped.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from syncd.bibliography import parse_text, read_bibliography, tex_decoded
from syncd.cli import cli
from syncd.config import Settings
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)

DBLP = r"""@inproceedings{DBLP:conf/icetce/Zhang11,
  author    = {Zhang},
  title     = {{World-class city under globalization}},
  booktitle = {{ICETCE}},
  year      = {2011},
  doi       = {10.1109/ICETCE.2011.5774727},
  biburl    = {https://dblp.org/rec/conf/icetce/Zhang11.bib}
}

@article{DBLP:journals/x/Escaped,
  title     = {Relative performances of effective medium formulations},
  doi       = {10.1016/j.apsusc.2007.01.131},
  url       = {https://doi.org/10.1016/j.apsusc.2007.01.131}
}

@misc{DBLP:journals/corr/raptor,
  title     = {Raptor genomes},
  doi       = {{10.1101/598821}}
}

@article{underscored,
  title     = {An underscore as dblp escapes it},
  doi       = {10.5555/rw\_only\_1}
}

@article{braced,
  title     = {An underscore in braces},
  doi       = {10.5555/rw{\_}reinstated{\_}1}
}
"""

RIS_WITHOUT_FINAL_ER = (
    "TY  - JOUR\n"
    "TI  - Raptor genomes reveal evolutionary signatures of predatory and nocturnal lifestyles\n"
    "DO  - 10.1101/598821\n"
    "ER  - \n"
    "\n"
    "TY  - JOUR\n"
    "TI  - A paper known by its PubMed id\n"
    "AN  - 30500001\n"
)
"""Two records as a reference manager exports them, the last one cut before its ``ER  -``."""


def test_tex_escapes_in_doi_fields_are_decoded() -> None:
    r"""``\_``, ``{\_}``, doubled braces and ``\textunderscore{}`` decode to the DOI a reader sees."""
    assert tex_decoded(r"10.1145/3290605.3300\_233") == "10.1145/3290605.3300_233"
    assert tex_decoded(r"10.5555/rw{\_}only{\_}1") == "10.5555/rw_only_1"
    assert tex_decoded("{{10.1109/ICETCE.2011.5774727}}") == "10.1109/ICETCE.2011.5774727"
    assert tex_decoded(r"10.1000/a\textunderscore{}b\%2F") == "10.1000/a_b%2F"
    assert tex_decoded(None) is None and tex_decoded("{}") is None


def test_a_dblp_file_reads_every_doi_unescaped() -> None:
    r"""Each DOI of the dblp-shaped file is read unescaped (bare, braced, ``\_``, ``{\_}``)."""
    bib = parse_text(DBLP, "bibtex")
    assert [r.doi for r in bib.references] == [
        "10.1109/ICETCE.2011.5774727",
        "10.1016/j.apsusc.2007.01.131",
        "10.1101/598821",
        "10.5555/rw_only_1",
        "10.5555/rw_reinstated_1",
    ]
    assert bib.unparsed == 0


def test_a_ris_record_without_its_final_er_is_read(tmp_path: Path) -> None:
    """The last record of a RIS file that ends without ``ER  -`` is read, its bare-digit AN a PMID."""
    path = tmp_path / "export.ris"
    path.write_text(RIS_WITHOUT_FINAL_ER, encoding="utf-8")
    bib = read_bibliography(path)
    assert [(r.doi, r.pmid) for r in bib.references] == [("10.1101/598821", None), (None, "30500001")]
    assert bib.unparsed == 0


def test_an_accession_number_of_another_database_is_no_pmid() -> None:
    """AN is a PubMed id only as PubMed writes it: labelled, from PubMed/MEDLINE, or bare with no
    database named; a Web of Science accession (DB named) is not one.
    """
    records = (
        "TY  - JOUR\nTI  - A\nAN  - PMID: 30500001\nER  - \n"
        "TY  - JOUR\nTI  - B\nAN  - 30500002\nDB  - MEDLINE\nER  - \n"
        "TY  - JOUR\nTI  - C\nAN  - 30500003\nDB  - Web of Science\nER  - \n"
    )
    assert [r.pmid for r in parse_text(records, "ris").references] == ["30500001", "30500002", None]


def test_check_reads_the_escaped_dblp_dois_and_flags_the_retracted(env: Settings, tmp_path: Path) -> None:  # noqa: F811
    """``syncd check`` on the dblp file: the escaped DOIs are looked up unescaped, the two retracted
    corpus works are flagged (exit 1), the Raptor preprint is ok; none is reported not found for its
    escapes.
    """
    path = tmp_path / "dblp.bib"
    path.write_text(DBLP, encoding="utf-8")
    done = CliRunner().invoke(cli, ["check", str(path), "--output", "json"], obj={})
    assert done.exit_code == 1, done.output
    report = json.loads(done.stdout)
    by_doi = {r["doi"].lower(): r["status"] for r in report["reported"]}
    assert by_doi["10.1109/icetce.2011.5774727"] == "retracted"
    assert by_doi["10.1016/j.apsusc.2007.01.131"] == "retracted"
    assert report["counts"]["invalid_doi"] == 0 and report["withDoi"] == 5
