"""``syncd check FILE``: a bibliography's retracted, corrected and unresolvable references.

Bibliographies are built in the tests from the recorded Crossref works (tests/corpus/crossref/work/):
the real retracted works are 10.1016/j.apsusc.2007.01.131, 10.1016/s0140-6736(20)31180-6 (the Lancet
hydroxychloroquine paper, also corrected and under an expression of concern) and
10.1109/icetce.2011.5774727 (retracted in place, Retraction Watch); 10.1016/s0140-6736(20)31324-6 is the
Lancet's retraction notice (not itself retracted). The other works are the corpus works with no update
recorded. Bad DOIs: ``10.1371/journal.pone.9999999`` (well-formed, not in the corpus, so absent from the
fake's ``filter=doi:`` list answer, as Crossref leaves out a DOI it does not hold) and ``10.1016``
(malformed). The fake answers ``/works?filter=doi:...`` from the recorded single-work bodies.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from syncd.bibliography import parse_text, read_bibliography
from syncd.cli import cli
from syncd.config import Settings
from syncd.crossref.params_filter import filter_safe
from syncd.store.repo import Store
from syncd.store.watches import list_watches
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.corpus_path import CORPUS
from tests.fakeupstream import FakeUpstream

RETRACTED = {
    "10.1016/j.apsusc.2007.01.131": "RETRACTED: Relative performances of effective medium formulations",
    "10.1016/s0140-6736(20)31180-6": "RETRACTED: Hydroxychloroquine or chloroquine with or without",
    "10.1109/icetce.2011.5774727": "Notice of Retraction: World-class city under globalization",
}
NOTICE = "10.1016/s0140-6736(20)31324-6"
MISSING = "10.1371/journal.pone.9999999"
MALFORMED = "10.1016"
CORRECTED = "10.1371/journal.pone.0033693"  # correction recorded (Methylphenidate Exposure ...)


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), obj={})


def corpus_works() -> dict[str, dict[str, Any]]:
    """DOI (lowercase) -> recorded message, for every corpus work."""
    works = {}
    for path in sorted((CORPUS / "crossref" / "work").glob("*.json")):
        if not path.name.endswith(".headers.json"):
            message = json.loads(path.read_text(encoding="utf-8"))["message"]
            works[message["DOI"].lower()] = message
    return works


def clean_dois() -> list[str]:
    """Corpus works with no updated-by/update-to and a DOI a list filter can carry, in file order."""
    return [
        d
        for d, m in corpus_works().items()
        if not m.get("updated-by") and not m.get("update-to") and filter_safe(d)
    ]


def bibtex_entry(n: int, title: str, field: str | None = None, value: str | None = None) -> str:
    """One @article with ``field = {value}`` (the DOI as a doi field in any form, or a url), or none."""
    line = f"  {field} = {{{value}}},\n" if field else ""
    return f"@article{{ref{n},\n  title = {{{title}}},\n{line}  year = {{2020}}\n}}\n"


def sixty_entry_bib(tmp_path: Path) -> tuple[Path, list[str]]:
    """60 entries: 3 retracted works, the Lancet notice, 52 clean works, 2 bad DOIs, 2 without a DOI.

    DOIs are written as found in real files: bare, upper case, as doi.org URLs, with ``doi:``, and as a
    ``url`` field. Returns the file and the 56 real DOIs in file order.
    """
    works = corpus_works()
    real = [*RETRACTED, NOTICE, *clean_dois()[:52]]
    entries = []
    for n, doi in enumerate(real):
        title = works[doi]["title"][0].replace("{", "").replace("}", "")
        if n % 7 == 6:
            entries.append(bibtex_entry(n, title, "url", f"https://doi.org/{doi}"))
        else:
            entries.append(
                bibtex_entry(
                    n, title, "doi", (doi, doi.upper(), f"https://doi.org/{doi}", f"doi:{doi}")[n % 4]
                )
            )
    entries.append(bibtex_entry(56, "A paper that was never registered", "doi", MISSING))
    entries.append(bibtex_entry(57, "A DOI cut short", "doi", MALFORMED))
    entries.append(bibtex_entry(58, "A book with no DOI"))
    entries.append(bibtex_entry(59, "A thesis with no DOI", "url", "https://example.org/thesis"))
    path = tmp_path / "thesis.bib"
    path.write_text("\n".join(entries), encoding="utf-8")
    return path, real


def test_sixty_entry_bibtex_reports_exactly_the_retracted_and_bad(
    env: Settings,  # noqa: F811
    fake: FakeUpstream,
    tmp_path: Path,
) -> None:
    """The 60-entry file with 8 of its works already stored: the report lists exactly the 3 retracted
    works (recorded titles, retracted first) and the 2 bad DOIs (not_found, invalid_doi); the notice and
    the 52 clean works are ok; the 2 entries without a DOI or PubMed id are no_doi, verdict unknown.
    The 50 unstored DOIs (48 works and the 2 bad ones) cost 2 upstream requests: one filter=doi: list
    request for the 49 well-formed ones and one doi.org request naming the missing DOI's agency. Exit
    1; the table run after it sends no request.
    """
    path, real = sixty_entry_bib(tmp_path)
    stored = real[-8:]
    listed = path.with_suffix(".txt")
    listed.write_text("\n".join(stored) + "\n", encoding="utf-8")
    assert run("check", str(listed)).exit_code == 0  # 8 works stored beforehand, none flagged
    fake.reset_log()
    res = run("check", str(path), "--json")
    assert res.exit_code == 1, res.output
    report = json.loads(res.stdout)
    assert (report["entries"], report["withDoi"], report["skipped"], report["format"]) == (
        60,
        58,
        2,
        "bibtex",
    )
    rows = [(r["status"], r["doi"]) for r in report["reported"]]
    assert rows == [
        ("retracted", "10.1016/j.apsusc.2007.01.131"),
        ("retracted", "10.1016/s0140-6736(20)31180-6"),
        ("retracted", "10.1109/icetce.2011.5774727"),
        ("not_found", MISSING),
        ("invalid_doi", MALFORMED),
        ("no_doi", None),
        ("no_doi", None),
    ]
    unidentified = report["reported"][-2:]
    assert [r["title"] for r in unidentified] == ["A book with no DOI", "A thesis with no DOI"]
    assert {(r["severity"], r["reason"]) for r in unidentified} == {
        ("skipped", "the entry names no DOI and no PubMed id: nothing to look up")
    }
    for row in report["reported"][:3]:
        assert row["title"].startswith(RETRACTED[row["doi"]]) and "retraction" in row["detail"]
    assert report["counts"] == {
        "retracted": 3,
        "expression_of_concern": 0,
        "corrected": 0,
        "reinstated": 0,
        "not_found": 1,
        "invalid_doi": 1,
        "unchecked": 0,
        "no_doi": 2,
        "other_agency": 0,
        "ok": 53,
    }
    # the DOI the list left out is confirmed missing by its own /works/{doi} before it is reported
    assert report["requests"] == {"listRequests": 1, "singleFetches": 1}
    assert fake.count() == 3 and fake.count(f"/works/{MISSING}", service="crossref") == 1
    assert fake.count("/ra/10.1371", service="doi") == 1
    (query,) = [r.query for r in fake.requests if r.service == "crossref" and r.query]
    assert query["rows"] == "49" and len(query["filter"].split(",")) == 49 and "select" not in query
    table = run("check", str(path))
    assert table.exit_code == 1 and "ok 53, retracted 3," in table.stdout  # the table run: from the store
    assert "upstream: 0 list requests, 0 single lookups" in table.stdout and fake.count() == 3


def test_watch_adds_the_found_dois(env: Settings, fake: FakeUpstream, tmp_path: Path) -> None:  # noqa: F811
    """--watch adds each DOI Crossref holds once (a DOI written twice, in two forms, is one watch), labelled
    with the file; the missing and malformed DOIs are not watched. A second run adds nothing new.
    """
    path = tmp_path / "refs.txt"
    retracted = next(iter(RETRACTED))
    path.write_text(
        f"# lab list\n{retracted}\nhttps://doi.org/{retracted.upper()}\n{NOTICE}\n{MISSING}\n{MALFORMED}\n"
    )
    first = json.loads(run("check", str(path), "--watch", "--json").stdout)
    assert (first["format"], first["watched"], first["watchedNew"]) == ("dois", 2, 2)
    again = json.loads(run("check", str(path), "--watch", "--json").stdout)
    assert (again["watched"], again["watchedNew"]) == (2, 0)
    store = Store.open(env.database_url)
    try:
        watches = list_watches(store, "doi")
    finally:
        store.close()
    assert sorted(w.spec["doi"] for w in watches) == sorted([retracted, NOTICE])
    assert {w.label for w in watches} == {"check:refs.txt"}


def test_ris_and_csl_json_are_read(env: Settings, fake: FakeUpstream, tmp_path: Path) -> None:  # noqa: F811
    """A RIS file (DO tag, a UR doi.org URL, an entry with neither) and a CSL-JSON export (DOI, URL, none)
    name the same works: the retracted Lancet paper (retracted, its expression of concern and correction
    named in detail), the corrected PLOS ONE paper, a Zenodo DOI registered with DataCite (resolved at
    DataCite: ok, counted, not reported); one entry without an identifier each (no_doi, verdict unknown).
    """
    lancet, zenodo = "10.1016/s0140-6736(20)31180-6", "10.5281/zenodo.48440"
    ris = (
        f"TY  - JOUR\nTI  - Hydroxychloroquine\nDO  - {lancet}\nER  - \n\n"
        f"TY  - JOUR\nTI  - Methylphenidate\nUR  - https://doi.org/{CORRECTED}\nER  - \n\n"
        f"TY  - DATA\nTI  - A dataset\nDO  - {zenodo}\nER  - \n\n"
        "TY  - BOOK\nTI  - No identifier\nER  - \n"
    )
    csl = [
        {"id": "a", "type": "article-journal", "title": "Hydroxychloroquine", "DOI": lancet.upper()},
        {
            "id": "b",
            "type": "article-journal",
            "title": "Methylphenidate",
            "URL": f"https://doi.org/{CORRECTED}",
        },
        {"id": "c", "type": "dataset", "title": "A dataset", "DOI": zenodo},
        {"id": "d", "type": "book", "title": "No identifier"},
    ]
    (tmp_path / "refs.ris").write_text(ris, encoding="utf-8")
    (tmp_path / "refs.json").write_text(json.dumps(csl), encoding="utf-8")
    for name, fmt in (("refs.ris", "ris"), ("refs.json", "csl-json")):
        res = run("check", str(tmp_path / name), "--json")
        assert res.exit_code == 1, res.output
        report = json.loads(res.stdout)
        assert (report["format"], report["entries"], report["skipped"]) == (fmt, 4, 1)
        assert [(r["status"], r["doi"]) for r in report["reported"]] == [
            ("retracted", lancet),
            ("corrected", CORRECTED),
            ("no_doi", None),
        ]
        detail = report["reported"][0]["detail"]
        assert "expression_of_concern 10.1016/s0140-6736(20)31290-3" in detail
        assert "correction 10.1016/s0140-6736(20)31249-6" in detail
        assert report["reported"][1]["title"].startswith(
            "Methylphenidate Exposure Induces Dopamine Neuron Loss"
        )
        assert report["otherAgency"] == [] and report["counts"]["ok"] == 1


def test_parsers_take_dois_from_each_format(tmp_path: Path) -> None:
    """bibtexparser, rispy and json give each entry its label, title and DOI text as written (doi field
    before a doi.org url; a non-doi.org url is not a DOI); a broken BibTeX block is counted, not fatal;
    the format is told by suffix, else by content.
    """
    bib = parse_text(
        "@article{k1, title={The {Raptor} genomes}, DOI={10.1101/598821}, url={https://example.org/x}}\n"
        "@misc{k2, title={Web}, url={https://example.org/page}}\n"
        "@article{broken, title={x}\n"
        "@book{k3, title={Via URL}, url={https://dx.doi.org/10.1002/jor.1100150407}}\n",
        "bibtex",
    )
    assert [(r.label, r.title, r.doi) for r in bib.references] == [
        ("k1", "The Raptor genomes", "10.1101/598821"),
        ("k2", "Web", None),
        ("k3", "Via URL", "https://dx.doi.org/10.1002/jor.1100150407"),
    ]
    assert bib.unparsed == 1
    plain = tmp_path / "list"
    plain.write_text("# mine\n10.1101/598821  raptor paper\n\n@not-bibtex\n")
    assert [r.doi for r in read_bibliography(plain).references] == ["10.1101/598821", "@not-bibtex"]
    sniffed = tmp_path / "export"
    sniffed.write_text("TY  - JOUR\nDO  - 10.1101/598821\nER  - \n")
    assert read_bibliography(sniffed).format == "ris"


def test_unreadable_files_exit_2(env: Settings, tmp_path: Path) -> None:  # noqa: F811
    """A CSL-JSON file that is not JSON exits 2 with one `error: invalid_parameter:` line."""
    bad = tmp_path / "refs.json"
    bad.write_text("{not json")
    res = run("check", str(bad))
    assert res.exit_code == 2 and res.stderr.startswith("error: invalid_parameter: not CSL-JSON")


def test_a_file_read_as_the_wrong_format_exits_2(env: Settings, tmp_path: Path) -> None:  # noqa: F811
    """A CSL-JSON file given `--format ris` reads no reference: exit 2 naming the formats, not "0 entries"
    and exit 0 (newcomer finding); an empty file is still 0 entries.
    """
    refs = tmp_path / "refs.json"
    refs.write_text(json.dumps([{"id": "raptor", "DOI": "10.1101/598821", "type": "article"}]))
    res = run("check", str(refs), "--format", "ris")
    assert res.exit_code == 2
    assert res.stderr.startswith("error: invalid_parameter: ")
    assert "not one reference could be read as ris" in res.stderr
    empty = tmp_path / "empty.bib"
    empty.write_text("\n")
    assert run("check", str(empty), "--json").exit_code == 0
