"""The `syncd cache ...` maintenance commands and `syncd watch ...`: output, exit codes, stderr lines."""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path
from urllib.parse import urlencode

import pytest
from click.testing import CliRunner, Result

from syncd.cli import cli
from syncd.cli.common import parse_duration, parse_size
from syncd.config import Settings
from syncd.registry import POOLS, open_services
from syncd.walks.cursor import SORT
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.conftest import corpus_json
from tests.fakeupstream import FakeUpstream

RAPTOR = "10.1101/598821"
RAPTOR_TITLE = "Raptor genomes reveal evolutionary signatures of predatory and nocturnal lifestyles"
ZENODO = "10.5281/zenodo.5244404"
PRC = "crossref/work-list/works_filter-from-created-date-2019-06-01-container-title-Physical-Review-C"
PRC_FILTER = "from-created-date:2019-06-01,container-title:Physical Review C"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), obj={})


def run_json(*args: str) -> object:
    res = run(*args, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _seed() -> None:
    assert run("cache", "get", RAPTOR).exit_code == 0
    assert run("cache", "get", ZENODO).exit_code == 0


def _db_path(settings: Settings) -> str:
    return settings.database_url.removeprefix("sqlite:///")


def test_ls_filters_sorts_and_search(env: Settings) -> None:  # noqa: F811
    """`cache ls` lists both entries, filters by kind/text/staleness; `cache search` uses the FTS index."""
    _seed()
    rows = run_json("cache", "ls")
    assert [r["kind"] for r in rows] == ["crossref_work", "zenodo_record"]  # oldest validation first
    assert [r["key"] for r in run_json("cache", "ls", "--kind", "zenodo")] == ["5244404"]
    assert [r["key"] for r in run_json("cache", "ls", "--query", "raptor")] == [RAPTOR]
    assert run_json("cache", "ls", "--stale") == []
    assert run_json("cache", "ls", "--sort", "validated", "--desc")[0]["kind"] == "zenodo_record"  # type: ignore[index]
    hits = run_json("cache", "search", "nocturnal lifestyles")
    assert [(h["key"], h["title"]) for h in hits] == [(RAPTOR, RAPTOR_TITLE)]
    assert run_json("cache", "search", "SARS-CoV-2 origins", "--kind", "zenodo")[0]["key"] == "5244404"
    assert run_json("cache", "search", "quasicrystal") == []
    table = run("cache", "ls")
    assert table.exit_code == 0 and "crossref_work" in table.stdout
    empty = run("cache", "search", "  ")
    assert empty.exit_code == 2 and empty.stderr.startswith("error: invalid_parameter:")


def test_refresh_ids_stale_all_and_exit_codes(env: Settings, fake: FakeUpstream) -> None:  # noqa: F811
    """`cache refresh ID` revalidates one entry (unchanged), fetches an unknown one, exits 1 for a DOI
    Crossref lacks, 2 without a selection, 3 when upstream is down; `--all` covers every entry.
    """
    _seed()
    fake.reset_log()
    one = run_json("cache", "refresh", RAPTOR)
    assert (one["checked"], one["unchanged"], one["requests"]) == (1, 1, 1)
    assert fake.count("/works/10.1101", service="crossref") == 1
    everything = run_json("cache", "refresh", "--all")
    assert (everything["checked"], everything["unchanged"], everything["failed"]) == (2, 2, 0)
    assert run_json("cache", "refresh", "--stale")["checked"] == 0
    fetched = run_json("cache", "refresh", "10.1002/jor.1100150407")
    assert fetched["fetched"] == 1
    missing = run("cache", "refresh", "10.1234/nothing-here")
    assert missing.exit_code == 1
    assert missing.stderr.strip() == "error: not_found: not found upstream: 10.1234/nothing-here"
    usage = run("cache", "refresh")
    assert usage.exit_code == 2 and usage.stderr.startswith("error: invalid_parameter:")
    fake.stop()
    down = run("cache", "refresh", RAPTOR)
    assert down.exit_code == 3
    assert down.stderr == "error: upstream_unavailable: 1 of 1 revalidations failed\n"


def test_evict_and_prune(env: Settings) -> None:  # noqa: F811
    """`cache evict` deletes an entry (then show exits 1, evicting again exits 1); `cache prune`
    deletes by age (dry run first), keeps watched DOIs, and refuses to run without a criterion.
    """
    _seed()
    assert run_json("cache", "evict", ZENODO) == {"evicted": 1, "not_cached": []}
    assert run("cache", "show", ZENODO).exit_code == 1
    again = run("cache", "evict", ZENODO)
    assert again.exit_code == 1 and again.stderr.startswith("error: not_cached:")
    assert run("cache", "get", "10.1002/jor.1100150407").exit_code == 0
    assert run("watch", "add", "doi", RAPTOR).exit_code == 0
    dry = run_json("cache", "prune", "--older-than", "0s", "--dry-run")
    assert dry["entries"] == 1 and dry["keys"] == ["crossref_work:10.1002/jor.1100150407"] and dry["dry_run"]
    assert len(run_json("cache", "ls")) == 2
    done = run_json("cache", "prune", "--older-than", "0s")
    assert done["entries"] == 1
    assert [r["key"] for r in run_json("cache", "ls")] == [RAPTOR]  # watched: kept
    assert run("cache", "prune").exit_code == 2
    assert run("cache", "prune", "--older-than", "soon").exit_code == 2
    assert run_json("cache", "verify")["ok"] is True


def test_prune_by_size_removes_longest_unconfirmed_first(env: Settings) -> None:  # noqa: F811
    """`--max-size` removes the entries upstream confirmed longest ago until the bodies fit."""
    _seed()
    with sqlite3.connect(env.database_url.removeprefix("sqlite:///")) as con:  # stored (compressed) bytes
        sizes = dict(con.execute("SELECT key, length(body) FROM entries"))
    cap = sizes["5244404"] + 10
    res = run_json("cache", "prune", "--max-size", str(cap))
    assert res["keys"] == [f"crossref_work:{RAPTOR}"]
    assert [r["key"] for r in run_json("cache", "ls")] == ["5244404"]


def test_export_import_roundtrip_and_crossref_data_file(
    env: Settings,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`cache export` writes raw bodies as JSON Lines; `cache import` into an empty store restores them
    (importing twice changes nothing), and reads a Crossref public data file (.jsonl.gz and .json.gz)
    keeping each work's age, so imported works count as stale.
    """
    _seed()
    out = tmp_path / "dump.jsonl.gz"
    res = run("cache", "export", "--output", str(out))
    assert res.exit_code == 0 and "exported 2 entries" in res.stderr
    with gzip.open(out, "rt") as fh:
        lines = [json.loads(x) for x in fh]
    assert [(x["kind"], x["key"]) for x in lines] == [("crossref_work", RAPTOR), ("zenodo_record", "5244404")]
    assert lines[0]["body"]["message"]["title"] == [RAPTOR_TITLE]
    stdout = run("cache", "export", "--kind", "crossref")
    assert [json.loads(x)["key"] for x in stdout.stdout.splitlines()] == [RAPTOR]

    monkeypatch.setenv("SYNCD_DATABASE_URL", f"sqlite:///{tmp_path / 'other.db'}")
    first = run_json("cache", "import", str(out))
    assert (first["read"], first["new"], first["invalid"]) == (2, 2, 0)
    assert run_json("cache", "show", RAPTOR)["title"] == RAPTOR_TITLE
    assert run_json("cache", "search", "nocturnal")[0]["key"] == RAPTOR
    second = run_json("cache", "import", str(out))
    assert (second["unchanged"], second["new"], second["skipped_older"]) == (2, 0, 0)

    star = corpus_json(f"{PRC}_cursor-star.json")["message"]["items"]
    page2 = corpus_json(f"{PRC}_cursor-page2.json")["message"]["items"]
    data = tmp_path / "crossref-snapshot"
    data.mkdir()
    with gzip.open(data / "0.jsonl.gz", "wt") as fh:
        for item in star:
            fh.write(json.dumps(item) + "\n")
        fh.write("{not json\n")
    with gzip.open(data / "1.json.gz", "wt") as fh:
        json.dump({"items": page2}, fh)
    snap = run_json("cache", "import", str(data))
    assert (snap["read"], snap["new"], snap["invalid"]) == (31, 30, 1)
    shown = run_json("cache", "show", star[0]["DOI"])
    assert shown["validated_at"] == star[0]["indexed"]["date-time"]
    assert shown["stale"] is True
    assert len(run_json("cache", "ls", "--stale", "--limit", "0")) == 30
    assert run_json("cache", "verify")["ok"] is True

    bad = tmp_path / "bad.jsonl"
    bad.write_text("[1, 2]\n")
    refused = run("cache", "import", str(bad))
    assert refused.exit_code == 2 and refused.stderr.startswith("error: invalid_parameter: no readable item")
    assert run("cache", "import", str(tmp_path / "absent.jsonl")).exit_code == 2


def test_export_import_keeps_every_kind(
    env: Settings,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Entries of other kinds (a doi.org agency lookup) survive export -> import: none is invalid."""
    from syncd.store.content import content_hash
    from syncd.store.repo import EntryContent, Store

    body = '[{"DOI": "10.5281", "RA": "DataCite"}]'
    store = Store.open(env.database_url)
    store.put_content(EntryContent("doi_ra", "10.5281", "ok", body, content_hash(body)))
    store.close()
    out = tmp_path / "ra.jsonl"
    assert run("cache", "export", "--output", str(out)).exit_code == 0
    monkeypatch.setenv("SYNCD_DATABASE_URL", f"sqlite:///{tmp_path / 'ra.db'}")
    report = run_json("cache", "import", str(out))
    assert (report["new"], report["invalid"]) == (1, 0), report
    assert run_json("cache", "ls", "--limit", "0")[0]["kind"] == "doi_ra"


def test_verify_detects_and_repairs_a_broken_index(env: Settings) -> None:  # noqa: F811
    """`cache verify` is clean after lookups; a missing FTS row exits 3 with one stderr line; `--repair`
    rebuilds the index and exits 0; `cache vacuum` reports sizes.
    """
    _seed()
    clean = run_json("cache", "verify")
    assert clean == {
        "ok": True,
        "integrity": "ok",
        "entries": 2,
        "fts_rows": 2,
        "problems": [],
        "repaired": [],
        "bad_bodies": [],
        "bad_hashes": [],
    }
    con = sqlite3.connect(_db_path(env))
    row = con.execute("SELECT id, title, search_text FROM entries WHERE key = ?", (RAPTOR,)).fetchone()
    con.execute(
        "INSERT INTO entries_fts(entries_fts, rowid, title, search_text) VALUES ('delete', ?, ?, ?)", row
    )
    con.commit()
    con.close()
    broken = run("cache", "verify")
    assert broken.exit_code == 3
    assert broken.stderr.startswith("error: store_inconsistent: fts:") and broken.stderr.count("\n") == 1
    fixed = run_json("cache", "verify", "--repair")
    assert fixed["ok"] is True and fixed["repaired"] == ["rebuilt the FTS index"]
    assert run_json("cache", "search", "raptor")[0]["key"] == RAPTOR
    vac = run_json("cache", "vacuum")
    assert vac["size_after_bytes"] > 0 and vac["size_before_bytes"] >= vac["size_after_bytes"]


def test_verify_hashes_names_a_work_whose_hash_does_not_match(env: Settings) -> None:  # noqa: F811
    """`cache verify --hashes` recomputes content hashes: clean after lookups; a stored hash changed behind
    the store's back passes plain `verify` (the body decodes) but `--hashes` exits 3 naming the work.
    """
    _seed()
    assert run_json("cache", "verify", "--hashes")["bad_hashes"] == []
    con = sqlite3.connect(_db_path(env))
    con.execute("UPDATE entries SET content_hash = ? WHERE key = ?", ("0" * 64, RAPTOR))
    con.commit()
    con.close()
    assert run_json("cache", "verify")["ok"] is True
    bad = run("cache", "verify", "--hashes", "--json")
    assert bad.exit_code == 3
    assert f"crossref_work:{RAPTOR}" in bad.stdout


def test_budget_shows_pools_and_blocks(env: Settings) -> None:  # noqa: F811
    """`cache budget` lists the five pools with their polite limits and a 429 block's end."""
    from syncd.budget.buckets import Budget
    from syncd.store.repo import Store

    store = Store.open(env.database_url)
    try:
        Budget(store, env, pools=POOLS).block("crossref_list", 120)
    finally:
        store.close()
    pools = {p["pool"]: p for p in run_json("cache", "budget")}
    assert list(pools) == [
        "crossref_single",
        "crossref_list",
        "zenodo_general",
        "zenodo_search",
        "doi",
        "datacite",
    ]
    assert (pools["crossref_single"]["per_s"], pools["crossref_single"]["in_flight_limit"]) == (10, 5)
    assert pools["crossref_single"]["daemon_floor"] == 3.0
    assert (
        pools["crossref_list"]["blocked_until"] is not None and pools["crossref_list"]["blocked_for_s"] > 100
    )
    assert pools["doi"]["blocked_until"] is None
    assert "crossref_list" in run("cache", "budget").stdout


def test_watch_add_ls_sync_rm(env: Settings, fake: FakeUpstream, tmp_path: Path) -> None:  # noqa: F811
    """`watch add` (DOIs from a file, a Crossref filter query), `watch ls` with sync progress,
    `watch sync` walks them (30 works), `watch rm` removes one; bad input exits 2, unknown ids 1.
    """
    dois = tmp_path / "dois.txt"
    dois.write_text(f"{RAPTOR}\n# comment\n\n")
    added = run_json("watch", "add", "doi", "--file", str(dois))
    assert [(a["kind"], a["watch"], a["created"]) for a in added] == [("doi", RAPTOR, True)]
    assert run_json("watch", "add", "doi", RAPTOR)[0]["created"] is False
    query = run_json(
        "watch", "add", "crossref", "--filter", "from-created-date:2019-06-01",
        "--filter", "container-title:Physical Review C", "--rows", "20", "--label", "PRC",
    )  # fmt: skip
    assert query[0]["watch"] == f"/works filter={PRC_FILTER}"
    star = corpus_json(f"{PRC}_cursor-star.json")
    fake.set_body(
        "crossref", "/works?" + urlencode({"filter": PRC_FILTER, "rows": "20", **SORT, "cursor": "*"}), star
    )
    listed = run_json("watch", "ls")
    assert [(w["kind"], w["status"]) for w in listed] == [("doi", "never"), ("crossref_query", "never")]

    synced = run_json("watch", "sync")
    assert [(r["kind"], r["stored"]) for r in synced] == [("doi", 1), ("crossref_query", 30)]
    listed = run_json("watch", "ls")
    assert [w["status"] for w in listed] == ["ok", "ok"]
    assert listed[1]["checkpoint"]["index_date"] and listed[1]["label"] == "PRC"
    assert len(run_json("cache", "ls", "--kind", "crossref", "--limit", "0")) == 31

    removed = run("watch", "rm", str(listed[1]["id"]))
    assert removed.exit_code == 0 and "removed 1 watches" in removed.stdout
    assert [w["kind"] for w in run_json("watch", "ls")] == ["doi"]
    gone = run("watch", "rm", "999")
    assert gone.exit_code == 1 and gone.stderr.startswith("error: not_found: no watch with id 999")
    assert run("watch", "add", "crossref").exit_code == 2  # a watch of all of Crossref is refused
    assert run("watch", "add", "doi", "not a doi").exit_code == 2
    assert run("watch", "add", "zenodo-community", "bad id!").exit_code == 2


def test_watch_sync_failure_exits_3(env: Settings, fake: FakeUpstream) -> None:  # noqa: F811
    """A walk that upstream breaks (HTTP 500 on the list route) exits 3 and records failed:<reason>."""
    assert run("watch", "add", "zenodo-query", "title:test").exit_code == 0
    fake.fault("status", path_prefix="/records", service="zenodo", status=500)
    res = run("watch", "sync")
    assert res.exit_code == 3 and res.stderr.startswith("error: upstream_unavailable: 1 of 1 walks failed")
    assert run_json("watch", "ls")[0]["status"] == "failed:upstream_unavailable"


def test_duration_and_size_parsing() -> None:
    """Durations and sizes accept the documented suffixes."""
    assert [parse_duration(v) for v in ("90d", "12h", "30m", "45", "2w")] == [
        7_776_000,
        43_200,
        1800,
        45,
        1_209_600,
    ]
    assert [parse_size(v) for v in ("500M", "2G", "100k", "123")] == [
        524_288_000,
        2_147_483_648,
        102_400,
        123,
    ]


def test_importing_a_data_file_shard_gives_the_rows_fetching_gives(
    env: Settings,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Crossref data-file shard of 12 corpus works, imported offline, yields the same rows (key, status,
    content hash, title, DOI, indexed stamp) as fetching those DOIs from the (fake) upstream.
    """
    from syncd.crossref.lookups import get_work
    from syncd.normalize.doi import parse_doi
    from syncd.store.repo import Store
    from tests.conftest import CORPUS

    messages = []
    for path in sorted((CORPUS / "crossref" / "work").glob("*.json")):
        if path.name.endswith(".headers.json"):
            continue
        message = json.loads(path.read_text())["message"]
        try:
            parse_doi(message["DOI"])
        except Exception:
            continue
        messages.append(message)
        if len(messages) == 12:
            break
    shard = tmp_path / "0.jsonl.gz"
    with gzip.open(shard, "wt") as fh:
        for m in messages:
            fh.write(json.dumps(m) + "\n")
    monkeypatch.setenv("SYNCD_DATABASE_URL", f"sqlite:///{tmp_path / 'imported.db'}")
    report = run_json("cache", "import", str(shard))
    assert (report["new"], report["invalid"]) == (12, 0)

    fetched_store = Store.open(env.database_url)
    cache = open_services(env, fetched_store)
    imported_store = Store.open(f"sqlite:///{tmp_path / 'imported.db'}")
    try:
        for m in messages:
            key = parse_doi(m["DOI"]).key
            fetched = get_work(cache, parse_doi(m["DOI"])).entry
            imported = imported_store.get("crossref_work", key)
            assert imported is not None
            row = ("key", "status", "content_hash", "title", "doi", "upstream_version")
            assert [getattr(imported, f) for f in row] == [getattr(fetched, f) for f in row], key
        assert fetched.title  # a real title compared, not two Nones
    finally:
        cache.close()
        fetched_store.close()
        imported_store.close()
