"""`syncd cache export --format parquet DIR` (issue 44 item 2): the store as Parquet, read back with DuckDB.

The store holds what the recorded upstream answered through the CLI (the Crossref works RAPTOR, the NMR
review and the 1998 Science paper it cites, Zenodo record 5244404, DataCite's Dryad package), the
Retraction Watch sample plus a row retracting the cited Science paper, a DOI watch on the review and one
change (a retitled work): every table of the export is checked against the store, value for value.
"""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner, Result
from sqlalchemy import func, select

from syncd.cli import cli
from syncd.config import Settings
from syncd.crossref.lookups import work_content
from syncd.store.models import Change, RetractionRow, WorkReference
from syncd.store.repo import Store
from syncd.transfer import parquet
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.retraction_helpers import sample_bytes, work_file
from tests.retractions.test_reference_index import CITED, CITING, RW_ROW

RAPTOR = "10.1101/598821"
RAPTOR_TITLE = "Raptor genomes reveal evolutionary signatures of predatory and nocturnal lifestyles"
ZENODO = "10.5281/zenodo.5244404"
DRYAD = "10.5061/dryad.8515"
pytestmark = pytest.mark.both_backends(full_only=True)  # the export on PostgreSQL too, in the full run

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), obj={})


def _fill(settings: Settings, tmp_path: Path) -> None:
    """The store of the module docstring, through the CLI and the store's own writes."""
    for args in ((RAPTOR,), (ZENODO,), (CITING,), (CITED,), ("--kind", "datacite", DRYAD)):
        got = run("cache", "get", *args)
        assert got.exit_code == 0, got.output
    rw = tmp_path / "retraction_watch.csv"
    rw.write_bytes(sample_bytes() + RW_ROW)
    assert run("retractions", "import", str(rw)).exit_code == 0
    assert run("watch", "add", "doi", CITING).exit_code == 0
    store = Store.open(settings.database_url)
    try:
        message = json.loads(work_file(RAPTOR).read_text(encoding="utf-8"))["message"]
        message["title"] = ["Raptor genomes, retitled"]
        pretty = json.dumps({"status": "ok", "message-type": "work", "message": message}, indent=1)
        _, changed = store.put_content(work_content(RAPTOR, message, pretty))  # a body over many lines
        assert changed
    finally:
        store.close()


def _sql(con: duckdb.DuckDBPyConnection, query: str) -> list[tuple[Any, ...]]:
    return con.execute(query).fetchall()


def test_the_export_holds_every_table_of_the_store_as_duckdb_reads_it(
    env: Settings,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Each kind table holds the store's entries of that kind (counts, titles, journal, ISSN, watched,
    fetch times, the body as JSON, a multi-line body too); references, Retraction Watch rows and the
    change feed (partitioned by kind) hold the store's rows; schema.json names every column.
    """
    _fill(env, tmp_path)
    out = tmp_path / "export"
    res = run("cache", "export", "--format", "parquet", str(out))
    assert res.exit_code == 0, res.output
    assert f"exported to {out}" in res.stderr and "crossref_works 3" in res.stderr

    store = Store.open(env.database_url)
    try:
        raptor = store.get("crossref_work", RAPTOR)
        with store.read() as conn:
            n_refs = conn.execute(select(func.count()).select_from(WorkReference)).scalar_one()
            n_rw = conn.execute(select(func.count()).select_from(RetractionRow)).scalar_one()
            n_changes = conn.execute(select(func.count()).select_from(Change)).scalar_one()
    finally:
        store.close()
    assert raptor is not None and n_refs > 100 and n_rw == 10 and n_changes == 1

    con = duckdb.connect()
    works = f"read_parquet('{out}/crossref_works/*.parquet')"
    assert _sql(con, f"SELECT count(*) FROM {works}") == [(3,)]
    row = _sql(
        con,
        f"SELECT title, status, container_title, issn, type, published_year, watched, epoch(fetched_at), "
        f"body->>'$.message.title[0]', body->>'$.message.DOI' FROM {works} WHERE key = '{RAPTOR}'",
    )[0]
    assert row[:7] == ("Raptor genomes, retitled", "ok", None, [], "posted-content", 2019, False)
    assert row[7] == pytest.approx(raptor.fetched_at, abs=1e-3)
    assert row[8:] == ("Raptor genomes, retitled", RAPTOR)
    review = _sql(
        con, f"SELECT container_title, issn, watched, published FROM {works} WHERE key = '{CITING}'"
    )
    assert review == [("Nature Reviews Methods Primers", ["2662-8449"], True, "2021-04-08")]
    science = _sql(
        con, f"SELECT container_title, published_year, references_count FROM {works} WHERE key = '{CITED}'"
    )
    assert science == [("Science", 1998, 0)]

    records = f"read_parquet('{out}/zenodo_records/*.parquet')"
    assert _sql(con, f"SELECT key, doi, concept_recid, resource_type, body->>'$.id' FROM {records}") == [
        ("5244404", ZENODO, "5075887", "publication-article", "5244404")
    ]
    dc = f"read_parquet('{out}/datacite_works/*.parquet')"
    assert _sql(con, f"SELECT key, publisher, publication_year, resource_type_general FROM {dc}") == [
        (DRYAD, "Dryad", 2011, "Dataset")
    ]

    refs = f"read_parquet('{out}/references/*.parquet')"
    assert _sql(con, f"SELECT count(*) FROM {refs}") == [(n_refs,)]
    assert _sql(con, f"SELECT citing_kind, citing_doi FROM {refs} WHERE cited_doi = '{CITED}'") == [
        ("crossref_work", CITING)
    ]
    rw = f"read_parquet('{out}/retraction_rows/*.parquet')"
    assert _sql(con, f"SELECT count(*) FROM {rw}") == [(n_rw,)]
    notice = f"SELECT nature, original_doi, notice_date, fields->>'journal' FROM {rw} WHERE record_id = "
    notice += "'990000099'"
    assert _sql(con, notice) == [("retraction", CITED, datetime.date(2026, 11, 5), "Science")]

    changes = f"read_parquet('{out}/changes/**/*.parquet', hive_partitioning = true)"
    assert _sql(con, f"SELECT kind, key, types FROM {changes}") == [("crossref_work", RAPTOR, ["title"])]
    assert (out / "changes" / "kind=crossref_work").is_dir()

    schema = json.loads((out / "schema.json").read_text(encoding="utf-8"))
    assert set(schema["tables"]) == {
        "crossref_works",
        "zenodo_records",
        "datacite_works",
        "references",
        "retraction_rows",
        "changes",
    }
    described = [c["name"] for c in schema["tables"]["crossref_works"]["columns"]]
    assert [d[0] for d in con.execute(f"SELECT * FROM {works} LIMIT 0").description] == described
    assert schema["tables"]["references"]["rows"] == n_refs


def _readme_query() -> str:
    """The DuckDB query of the README's Parquet section (its ```sql block)."""
    section = README[README.index("### Exporting to Parquet") :]
    return re.search(r"```sql\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]


def test_the_readme_query_finds_the_retracted_paper_the_watched_review_cites(
    env: Settings,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The README's DuckDB query, run over an export in its own folder name, answers the retracted works
    the watched works cite per journal: the 1998 Science paper the watched NMR review cites.
    """
    _fill(env, tmp_path)
    monkeypatch.chdir(tmp_path)
    assert run("cache", "export", "--format", "parquet", "syncd-export").exit_code == 0
    rows = duckdb.connect().execute(_readme_query()).fetchall()
    assert rows == [("Science", 1, 1)]


def test_bad_destinations_and_options_are_refused_with_a_reason(
    env: Settings,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A directory that holds files, no DIR, --kind or --output with parquet, and a missing DuckDB each
    exit 2 with one `error: invalid_parameter:` line; nothing is left half-written beside DIR.
    """
    assert run("cache", "get", RAPTOR).exit_code == 0
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    for args in (
        ("--format", "parquet", str(full)),
        ("--format", "parquet"),
        ("--format", "parquet", "--kind", "crossref", str(tmp_path / "a")),
        ("--format", "parquet", "--output", "x.jsonl", str(tmp_path / "b")),
    ):
        res = run("cache", "export", *args)
        assert res.exit_code == 2, (args, res.output)
        assert res.stderr.startswith("error: invalid_parameter:") and res.stderr.count("\n") == 1
    assert (full / "keep.txt").read_text() == "mine"

    def no_duckdb(importer: str, module: str) -> Any:
        raise ImportError(module)

    monkeypatch.setattr(parquet, "load", no_duckdb)
    res = run("cache", "export", "--format", "parquet", str(tmp_path / "c"))
    assert res.exit_code == 2
    needs = "the Parquet export needs DuckDB: pip install 'syncd[parquet]'"
    assert res.stderr == f"error: invalid_parameter: {needs}\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith((".", "a", "b", "c"))) == []


def test_jsonl_export_takes_its_file_as_the_argument_too(env: Settings, tmp_path: Path) -> None:  # noqa: F811
    """`cache export FILE` writes the JSON Lines export to FILE (as --output does); both at once exit 2."""
    assert run("cache", "get", RAPTOR).exit_code == 0
    out = tmp_path / "dump.jsonl"
    assert run("cache", "export", str(out)).exit_code == 0
    assert json.loads(out.read_text().splitlines()[0])["body"]["message"]["title"] == [RAPTOR_TITLE]
    assert run("cache", "export", "-o", str(out), str(tmp_path / "other.jsonl")).exit_code == 2
