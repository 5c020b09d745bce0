"""`syncd cache import` at data-file speed (issue 15, target 1): the bulk path stores what fetching stores.

Works of a Crossref data-file shard are parsed with msgspec (in worker processes), hashed from msgspec's
canonical bytes and indexed without the full work view, then written in bulk
(:func:`syncd.store.bulk.put_many`). These tests hold that path to the values of the per-item path
(``work_content`` + ``Store.put_content``) and of a fetch through the fake upstream, and to the store's
write rules (nothing rewritten when nothing changed; a changed body replaced through ``put_content``).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select, text

from syncd.cli import cli
from syncd.config import Settings
from syncd.crossref.lookups import get_work, work_content
from syncd.crossref.lookups_datafile import ENVELOPE
from syncd.errors import InvalidInput
from syncd.normalize.doi import parse_doi
from syncd.registry import data_files, open_services
from syncd.store.bulk import BulkItem
from syncd.store.codec import dictionary_of
from syncd.store.content import ExactDecoder, content_hash, content_hash_exact
from syncd.store.dialect import is_postgresql
from syncd.store.models import Entry, Validation
from syncd.store.repo import Store
from syncd.transfer import import_paths, prepare_line
from tests.conftest import Clock, examples
from tests.corpus_path import CORPUS

ROW = ("key", "status", "content_hash", "title", "doi", "upstream_version", "volatile")


def corpus_works() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``(envelope, message)`` of every recorded Crossref work with a parseable DOI."""
    out = []
    for path in sorted((CORPUS / "crossref" / "work").glob("*.json")):
        if path.name.endswith(".headers.json"):
            continue
        doc = json.loads(path.read_text(encoding="utf-8"))
        message = doc.get("message") if isinstance(doc, dict) else None
        if not isinstance(message, dict) or not isinstance(message.get("DOI"), str):
            continue
        try:
            parse_doi(message["DOI"])
        except ValueError:
            continue
        out.append((doc, message))
    return out


def write_shard(path: Path, lines: list[str]) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for line in lines:
            fh.write(line + "\n")
    return path


def search_text(store: Store, key: str) -> str | None:
    with store.read() as conn:
        return conn.execute(select(Entry.search_text).where(Entry.key == key)).scalar_one()


def dump(store: Store) -> list[tuple[Any, ...]]:
    """Every entry and validation column (and on SQLite the index size): what "nothing written" compares."""
    with store.read() as conn:
        rows = conn.execute(
            select(Entry.__table__, Validation.__table__)
            .join(Validation, Validation.entry_id == Entry.id)
            .order_by(Entry.id)
        ).all()
        fts = (
            0 if is_postgresql(conn) else conn.execute(text("SELECT count(*) FROM entries_fts")).scalar_one()
        )
    return [tuple(r) for r in rows] + [("fts", fts)]


def test_prepared_works_equal_work_content_for_every_corpus_work() -> None:
    """For each of the 92 recorded works, as a bare data-file line and as a /works envelope (UTF-8 and
    ASCII-escaped), the fast path gives work_content's hash, title, search text, version and volatile
    fields, and stores the line itself (bare: inside the compact envelope) as the body.
    """
    works = corpus_works()
    assert len(works) >= 90
    decoder = ExactDecoder()
    titled = 0
    for envelope, message in works:
        key = parse_doi(message["DOI"]).key
        for ascii_only in (False, True):
            bare = json.dumps(message, ensure_ascii=ascii_only)
            wrapped = json.dumps(envelope, ensure_ascii=ascii_only)
            for line, body in ((bare, ENVELOPE + bare + "}"), (wrapped, wrapped)):
                got = prepare_line(line.encode("utf-8") + b"\n", decoder, data_files())
                assert isinstance(got, BulkItem), (key, got)
                want = work_content(key, message, body)
                assert got.content == want, key
                titled += bool(want.title)
    assert titled >= 4 * 85


def test_a_float_in_the_hashed_part_takes_the_exact_hash() -> None:
    """A float msgspec would write unlike json.dumps (1e-05) in the hashed fields still gives content_hash's
    value; a float only in the volatile `score` keeps the fast hash, with the same value.
    """
    _, message = corpus_works()[0]
    decoder = ExactDecoder()
    for extra in ({"x-weight": 1e-05}, {"x-big": 1e16, "x-int": 2**70}, {"score": 3.25}):
        work = {**message, **extra}
        line = json.dumps(work)
        got = prepare_line(line.encode(), decoder, data_files())
        assert isinstance(got, BulkItem)
        assert got.content.content_hash == work_content(work["DOI"].lower(), work, None).content_hash


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=("Cs",))),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=examples(100, 300), deadline=None)
@given(json_values)
def test_content_hash_exact_is_content_hash(value: Any) -> None:
    """For any JSON value (big integers, floats of every magnitude, any non-surrogate text), decoding with
    ExactDecoder gives json.loads's value and content_hash_exact gives content_hash's digest.
    """
    data = json.dumps(value, ensure_ascii=False)
    decoder = ExactDecoder()
    decoded = decoder.decode(data.encode("utf-8"))
    assert decoded == json.loads(data)
    assert content_hash_exact(decoded, floats=decoder.floats > 0) == content_hash(json.loads(data))


def test_imported_shard_equals_what_fetching_stores(settings: Settings, store: Store, tmp_path: Path) -> None:
    """A shard of every corpus work imported (in-process and with 2 workers) yields, per work, the row
    fetching that DOI from the (fake) upstream stores: hash, title, DOI, indexed stamp, volatile fields,
    and the same search text. (Each work is fetched once; both imports are compared with it.)
    """
    works = corpus_works()
    shard = write_shard(tmp_path / "0.jsonl.gz", [json.dumps(m, ensure_ascii=False) for _, m in works])
    clock = Clock()  # the budget's waits between the 92 fetches move this clock, not the test's time
    cache = open_services(settings, store, clock=clock, sleep=clock.sleep)
    try:
        fetched = {}
        for _, message in works:
            key = parse_doi(message["DOI"]).key
            entry = get_work(cache, parse_doi(message["DOI"])).entry
            fetched[key] = ([getattr(entry, f) for f in ROW], search_text(store, key))
    finally:
        cache.close()
    for workers in (1, 2):
        imported = Store.open(f"sqlite:///{tmp_path / f'imported-{workers}.db'}")
        try:
            report = import_paths(imported, [shard], data_files=data_files(), workers=workers, batch=4)
            assert (report.read, report.new, report.invalid) == (len(works), len(works), 0), (workers, report)
            for _, message in works:
                key = parse_doi(message["DOI"]).key
                got = imported.get("crossref_work", key)
                assert got is not None, (workers, key)
                row = ([getattr(got, f) for f in ROW], search_text(imported, key))
                assert row == fetched[key], (workers, key)
                assert json.loads(got.body or "")["message"] == message
            assert imported.search("nocturnal lifestyles")[0].key == "10.1101/598821"
        finally:
            imported.close()


@pytest.mark.both_backends
def test_reimporting_the_same_shard_writes_nothing(store: Store, tmp_path: Path) -> None:
    """Importing a shard a second time reads every work, keeps them all (store as new) and changes no
    row: entries, validations (checks, changes, validated_at) and the index are as after the first.
    """
    works = corpus_works()
    shard = write_shard(tmp_path / "0.jsonl.gz", [json.dumps(m) for _, m in works])
    first = import_paths(store, [shard], data_files=data_files(), workers=2, batch=4)
    assert first.new == len(works)
    before = dump(store)
    second = import_paths(store, [shard], data_files=data_files(), workers=2, batch=4)
    assert (second.read, second.new, second.changed, second.unchanged, second.skipped_older) == (
        len(works),
        0,
        0,
        0,
        len(works),
    )
    assert dump(store) == before
    with store.read() as conn:
        counters = conn.execute(select(Validation.checks, Validation.changes).distinct()).all()
    assert [tuple(c) for c in counters] == [(1, 1)]


def _reindexed(message: dict[str, Any], stamp: str, ms: int) -> dict[str, Any]:
    return {**message, "indexed": {**message["indexed"], "date-time": stamp, "timestamp": ms}}


@pytest.mark.both_backends
def test_a_newer_shard_bumps_unchanged_works_and_replaces_a_changed_one_through_put_content(
    store: Store, tmp_path: Path
) -> None:
    """A later shard (newer `indexed` stamps): a work with the same content only gets its validation
    bumped (body and fetch time untouched, checks 2, changes 1); a work whose title changed is replaced
    as put_content replaces (previous body kept, title and index updated, changes 2).
    """
    works = [m for _, m in corpus_works()[:10]]
    import_paths(
        store, [write_shard(tmp_path / "0.jsonl.gz", [json.dumps(m) for m in works])], data_files=data_files()
    )
    keys = [parse_doi(m["DOI"]).key for m in works]
    old = {k: store.get("crossref_work", k) for k in keys}
    later = [_reindexed(m, "2026-11-30T00:00:00Z", 1_795_996_800_000) for m in works]
    later[5] = {**later[5], "title": ["Quasicrystal lattices of nocturnal raptors"]}
    later_shard = write_shard(tmp_path / "1.jsonl.gz", [json.dumps(m) for m in later])
    report = import_paths(
        store, [later_shard], data_files=data_files(), workers=2, batch=3
    )  # the changed work: in a worker's batch
    assert (report.new, report.changed, report.unchanged, report.skipped_older) == (0, 1, 9, 0)
    for k in keys[:5] + keys[6:]:
        now, was = store.get("crossref_work", k), old[k]
        assert now is not None and was is not None
        same = ("body", "fetched_at", "content_hash")
        assert [getattr(now, f) for f in same] == [getattr(was, f) for f in same]
        assert (now.checks, now.changes, now.upstream_version) == (2, 1, "2026-11-30T00:00:00Z")
        assert now.validated_at == 1_795_996_800.0
    changed = store.get("crossref_work", keys[5])
    assert changed is not None and changed.title == "Quasicrystal lattices of nocturnal raptors"
    assert changed.changes == 2
    assert json.loads(changed.body or "{}")["message"] == later[5]  # the new line, whole
    kept = store.previous_bodies(changed.id)
    assert [(p["role"], p["body"]) for p in kept] == [("previous", old[keys[5]].body)]  # type: ignore[union-attr]
    assert [e.key for e in store.search("quasicrystal")] == [keys[5]]


POISON = [
    "{not json",
    '{"title": ["A work without a DOI"], "type": "journal-article"}',
    '{"DOI": "10.1234/lone", "type": "journal-article", "title": ["half a pair \\ud800 here"]}',
    '{"DOI": "10.1234/authors", "type": "journal-article", "title": ["x"], "author": 5}',
    '{"DOI": "10.1234/hollow", "title": ["x"]}',
    '{"DOI": "not a doi", "type": "journal-article", "title": ["x"]}',
    "[1, 2]",
]


@pytest.mark.both_backends
@pytest.mark.parametrize("workers", [1, 2])
def test_poison_lines_are_skipped_and_counted(store: Store, tmp_path: Path, workers: int) -> None:
    """Unreadable lines among good works (invalid JSON, no DOI, a lone surrogate, a non-list author list,
    a body without a type, a malformed DOI, not an object) are each counted invalid with a reason; blank
    lines are not items; every good work is stored.
    """
    works = [m for _, m in corpus_works()[:6]]
    lines = [json.dumps(works[0]), *POISON[:4], "", json.dumps(works[1]), *POISON[4:]]
    lines += [json.dumps(m) for m in works[2:]]
    report = import_paths(
        store,
        [write_shard(tmp_path / "0.jsonl.gz", lines)],
        data_files=data_files(),
        workers=workers,
        batch=4,
    )
    assert (report.read, report.new, report.invalid) == (
        len(works) + len(POISON),
        len(works),
        len(POISON),
    )
    assert report.errors[0] == "item 2: not JSON: {not json"
    assert "neither a syncd export line nor a Crossref work" in report.errors[1]
    assert "surrogate" in report.errors[2]
    assert len(report.errors) == 5
    assert store.get("crossref_work", "10.1234/lone") is None
    assert store.get("crossref_work", "10.1234/hollow") is None
    assert all(store.get("crossref_work", parse_doi(m["DOI"]).key) for m in works)


def test_the_items_form_of_older_snapshots_imports_the_same(tmp_path: Path) -> None:
    """A `.json.gz` file holding {"items": [...]} (one item with a float `score`) stores the same hashes,
    titles and search texts as the per-item path, each item's body as in the file; a `message.items`
    file holding NaN (which only json reads) is imported whole through the exact path.
    """
    works = [m for _, m in corpus_works()[:8]]
    works[3] = {**works[3], "score": 12.5}
    path = tmp_path / "1.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        json.dump({"items": works}, fh)
    store = Store.open(f"sqlite:///{tmp_path / 'db.sqlite'}")
    try:
        report = import_paths(store, [path], data_files=data_files(), workers=2, batch=4)
        assert (report.read, report.new, report.invalid) == (8, 8, 0)
        for m in works:
            key = parse_doi(m["DOI"]).key
            want = work_content(key, m, None)
            got = store.get("crossref_work", key)
            assert got is not None
            assert (got.content_hash, got.title, got.volatile) == (
                want.content_hash,
                want.title,
                want.volatile,
            )
            assert search_text(store, key) == want.search_text
            assert json.loads(got.body or "")["message"] == m  # the item as in the file
        odd = tmp_path / "2.json.gz"  # NaN: only json reads it, so every item takes the exact path
        odd_works = [
            {**m, "DOI": f"10.5555/odd.{i}", "x-ratio": float("nan")} for i, m in enumerate(works[:3])
        ]
        with gzip.open(odd, "wt", encoding="utf-8") as fh:
            json.dump({"message": {"items": odd_works}}, fh)
        again = import_paths(store, [odd], data_files=data_files(), workers=2, batch=2)
        assert (again.read, again.new, again.invalid) == (3, 3, 0)
        odd_hash = work_content("10.5555/odd.2", odd_works[2], None).content_hash
        assert getattr(store.get("crossref_work", "10.5555/odd.2"), "content_hash", None) == odd_hash
    finally:
        store.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_damaged_gzip_file_is_refused_after_what_was_read(tmp_path: Path, workers: int) -> None:
    """A shard whose gzip stream is cut short raises InvalidInput naming the file (the CLI's exit 2),
    also when the file is read by the reading thread beside the workers; the works before the cut that
    were stored stay stored.
    """
    works = [m for _, m in corpus_works()[:12]]
    whole = write_shard(tmp_path / "whole.jsonl.gz", [json.dumps(m) for m in works]).read_bytes()
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) * 3 // 4])
    store = Store.open(f"sqlite:///{tmp_path / 'db.sqlite'}")
    try:
        with pytest.raises(InvalidInput, match=r"cut\.jsonl\.gz: not JSON / JSON Lines"):
            import_paths(store, [cut], data_files=data_files(), workers=workers, batch=2)
        assert store.get("crossref_work", parse_doi(works[0]["DOI"]).key) is not None
    finally:
        store.close()


def test_cli_import_of_a_shard_past_one_batch_trains_the_dictionary_before_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`syncd cache import --workers 2` of 1,500 works (corpus works under new DOIs): the first 1,000 are
    stored in-process and the store trains its body dictionary on them, so the bodies the workers
    compress name that dictionary; every work is stored, reads back whole, and `cache verify` is clean.
    """
    works = [m for _, m in corpus_works()]
    lines = []
    for i in range(1500):
        work = {**works[i % len(works)], "DOI": f"10.5555/bulk.{i}"}
        lines.append(json.dumps(work))
    shard = write_shard(tmp_path / "big.jsonl.gz", lines)
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setenv("SYNCD_DATABASE_URL", url)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    res = CliRunner().invoke(cli, ["cache", "import", "--workers", "2", "--json", str(shard)], obj={})
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert (report["read"], report["new"], report["invalid"]) == (1500, 1500, 0)
    store = Store.open(url)
    try:
        with store.read() as conn:
            first, last = (
                conn.execute(select(Entry.body).where(Entry.key == f"10.5555/bulk.{i}")).scalar_one()
                for i in (0, 1499)
            )
        assert dictionary_of(first) == 0 and dictionary_of(last) == store.codec.current() != 0
        got = store.get("crossref_work", "10.5555/bulk.1499")
        assert got is not None and json.loads(got.body or "")["message"]["DOI"] == "10.5555/bulk.1499"
    finally:
        store.close()
    verify = CliRunner().invoke(cli, ["cache", "verify", "--json"], obj={})
    assert verify.exit_code == 0 and json.loads(verify.stdout)["ok"] is True
