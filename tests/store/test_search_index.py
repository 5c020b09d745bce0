"""The search index keyed by kind and status (migration 0006, :mod:`syncd.store.search`), on SQLite.

Kind and ``ok`` status are rowid bands of ``entries_fts``: filtering, counting and ranking never read
``entries``. These tests compare the index's answers with the pre-0006 way of filtering (a join to
``entries`` on every match) over the recorded Crossref works and Zenodo records, and follow the index
through replacements, status changes and the migration of a store made before it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from mcp import Client
from sqlalchemy import Connection, text

from syncd.crossref.lookups import work_content
from syncd.crossref.names import CROSSREF_WORK
from syncd.road.services import Services
from syncd.store import search
from syncd.store.bulk import BulkItem, put_many
from syncd.store.engine import make_engine, upgrade_to_head
from syncd.store.repo import SEARCH_COUNT_CAP, EntryContent, Store
from syncd.store.rules import PLAIN
from syncd.zenodo.lookups_fetch import record_content
from syncd.zenodo.names import ZENODO_RECORD
from tests.corpus_path import CORPUS
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

pytestmark = pytest.mark.xdist_group("search_index")  # the corpus store is built once per module

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


def _corpus_contents() -> list[EntryContent]:
    """Every recorded Crossref work and Zenodo record in its stored form (real titles and texts)."""
    out = []
    for f in sorted((CORPUS / "crossref" / "work").glob("*.json")):
        if f.name.endswith(".headers.json"):
            continue
        body = json.loads(f.read_text(encoding="utf-8"))
        msg = body.get("message") if isinstance(body, dict) else None
        if isinstance(msg, dict) and msg.get("DOI"):
            out.append(work_content(str(msg["DOI"]).lower(), msg, f.read_text(encoding="utf-8")))
    for f in sorted((CORPUS / "zenodo" / "record").glob("*.json")):
        if f.name.endswith(".headers.json"):
            continue
        body = json.loads(f.read_text(encoding="utf-8"))
        if isinstance(body, dict) and body.get("id"):
            try:
                out.append(record_content(body, f.read_text(encoding="utf-8")))
            except (KeyError, TypeError, ValueError):
                continue
    return out


@pytest.fixture(scope="module")
def corpus_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """A store holding every recorded work and record (both kinds in one index)."""
    store = Store.open(f"sqlite:///{tmp_path_factory.mktemp('idx') / 'corpus.db'}")
    with store.batch():
        for content in _corpus_contents():
            store.put_content(content)
    yield store
    store.close()


def _record(recid: int) -> str:
    """A minimal Zenodo record body the hollow-body guard accepts (id and metadata.title)."""
    return json.dumps({"id": recid, "metadata": {"title": f"record {recid}"}})


def _joined(conn: Connection, match: str, kind: str, ok_only: bool) -> list[int]:
    """The pre-0006 answer: every FTS match joined to its ``entries`` row to check kind and status."""
    status = "AND e.status = 'ok' " if ok_only else ""
    sql = text(
        "SELECT e.id FROM entries_fts f JOIN entries e ON e.id = f.rowid % :span "
        f"WHERE entries_fts MATCH :m AND e.kind = :k {status}ORDER BY bm25(entries_fts), f.rowid"
    )
    return [r[0] for r in conn.execute(sql, {"m": match, "k": kind, "span": search.BAND_SPAN})]


def _title_words(store: Store, kind: str) -> list[str]:
    """Distinct words (4+ letters) of the stored titles of ``kind``, in order of first appearance."""
    with store.read() as conn:
        titles = [r[0] for r in conn.execute(text("SELECT title FROM entries WHERE kind = :k"), {"k": kind})]
    words = dict.fromkeys(w.lower() for t in titles if t for w in re.findall(r"[^\W\d_]{4,}", t))
    return list(words)


def test_kind_filtering_from_the_index_gives_the_joined_hits(corpus_store: Store) -> None:
    """For words of real corpus titles, pairs and triples of them: search_page (works) and search
    (records) return exactly the ids, in the same order, that joining every match to ``entries`` gives,
    and the count is the joined count.
    """
    words = _title_words(corpus_store, CROSSREF_WORK)
    assert len(words) > 100
    queries = [[w] for w in words[:60]] + [words[i : i + 3] for i in range(0, 90, 3)]
    checked = 0
    with corpus_store.read() as conn:
        for terms in queries:
            match = " OR ".join(search.terms(" ".join(terms)))
            want = _joined(conn, match, CROSSREF_WORK, ok_only=True)
            page, total = corpus_store.search_page(terms, CROSSREF_WORK, 0, 200)
            assert [e.id for e in page] == want[:200], terms
            assert total == len(want), terms
            checked += bool(want)
    assert checked == len(queries)  # every query has hits: the words come from the stored titles
    record_words = _title_words(corpus_store, ZENODO_RECORD)
    assert len(record_words) > 10
    with corpus_store.read() as conn:
        for word in record_words[:30]:
            want = _joined(conn, " ".join(search.terms(word)), ZENODO_RECORD, ok_only=False)
            got = [e.id for e in corpus_store.search(word, kind=ZENODO_RECORD, limit=100)]
            assert got == want[:100] and want, word
            assert all(e.kind == ZENODO_RECORD for e in corpus_store.search(word, kind=ZENODO_RECORD))


BULK = replace(PLAIN, bulk=True)
"""Plain store rules written by the bulk writer (``syncd cache import``'s path): the index rows of a batch
come from one ``INSERT ... SELECT``, as an import writes them."""


def _put_all(store: Store, contents: list[EntryContent]) -> None:
    """Store ``contents`` (new entries of one kind) with the bulk writer, nothing deferred."""
    result = put_many(store, [BulkItem(c, 0.0) for c in contents], keep=lambda _held, _content: False)
    assert not result.deferred


def test_counts_from_the_index_equal_true_counts_below_the_cap(tmp_path: Path) -> None:
    """1,500 works and 700 records sharing a word: the works' total is exactly 1,500 (records and a
    not-found work with no text are not counted), also on a last partial page and past the end; a word
    in 41 of them gives 41; above the cap the total is the cap. (The 10,011 entries are written with the
    bulk writer, as an import writes them: the index and its counts are the claim, not the write path.)
    """
    store = Store.open(f"sqlite:///{tmp_path / 'count.db'}")
    try:
        _put_all(
            store,
            [
                EntryContent(
                    CROSSREF_WORK,
                    f"10.5555/{i}",
                    "ok",
                    "{}",
                    f"h{i}",
                    title="common" + (" rarer" if i % 37 == 0 else ""),
                    rules=BULK,
                )
                for i in range(1500)
            ],
        )
        _put_all(
            store,
            [
                EntryContent(ZENODO_RECORD, str(i), "ok", _record(i), f"z{i}", title="common", rules=BULK)
                for i in range(700)
            ],
        )
        store.put_content(EntryContent(CROSSREF_WORK, "10.5555/missing", "not_found", None, None))
        assert store.search_page(["common"], CROSSREF_WORK)[1] == 1500
        assert store.search_page(["rarer"], CROSSREF_WORK)[1] == len(range(0, 1500, 37)) == 41
        assert store.search_page(["rarer", "common"], CROSSREF_WORK)[1] == 1500
        tail, total = store.search_page(["common"], CROSSREF_WORK, 1495, 10)
        assert (len(tail), total) == (5, 1500)
        assert store.search_page(["common"], CROSSREF_WORK, 1600, 10) == ([], 1500)
        assert len(store.search("common", kind=ZENODO_RECORD, limit=1000)) == 700
        assert len(store.search("common", limit=5000)) == 2200
        _put_all(
            store,
            [
                EntryContent(CROSSREF_WORK, f"10.5555/{i}", "ok", "{}", f"h{i}", title="common", rules=BULK)
                for i in range(1500, SEARCH_COUNT_CAP + 10)
            ],
        )
        page, total = store.search_page(["common"], CROSSREF_WORK, 0, 5)
        assert total == SEARCH_COUNT_CAP and len(page) == 5
        assert all(e.kind == CROSSREF_WORK for e in page)
    finally:
        store.close()


def test_a_replaced_body_is_found_by_its_new_text_only(tmp_path: Path) -> None:
    """A work whose title changes from "quokka" to "platypus": "quokka" finds nothing, "platypus" finds
    it; a Zenodo record turned ``gone`` (its tombstone keeps the title) leaves search_page's ``ok``
    band but is still found by ``search`` of its kind, with its status.
    """
    store = Store.open(f"sqlite:///{tmp_path / 'replace.db'}")
    try:
        msg = json.loads((CORPUS / "crossref/work/10.1101_598821.json").read_text(encoding="utf-8"))[
            "message"
        ]
        first = work_content("10.1101/598821", {**msg, "title": ["Quokka habitats"]}, None)
        stored, _ = store.put_content(first)
        assert [e.id for e in store.search_page(["quokka"], CROSSREF_WORK)[0]] == [stored.id]
        second = work_content("10.1101/598821", {**msg, "title": ["Platypus habitats"]}, None)
        again, changed = store.put_content(second)
        assert changed and again.id == stored.id
        assert store.search_page(["quokka"], CROSSREF_WORK) == ([], 0)
        assert store.search("quokka") == []
        assert [e.id for e in store.search_page(["platypus"], CROSSREF_WORK)[0]] == [stored.id]

        rec, _ = store.put_content(
            EntryContent(ZENODO_RECORD, "77", "ok", _record(77), "r1", title="wombat burrows")
        )
        tomb = EntryContent(ZENODO_RECORD, "77", "gone", '{"status": 410}', "r2", title="wombat burrows")
        store.put_content(tomb)
        assert store.search_page(["wombat"], ZENODO_RECORD) == ([], 0)
        assert [(e.id, e.status) for e in store.search("wombat", kind=ZENODO_RECORD)] == [(rec.id, "gone")]
        with store.read() as conn:
            rowids = [r[0] for r in conn.execute(text("SELECT rowid FROM entries_fts ORDER BY rowid"))]
            assert rowids == sorted(
                [
                    search.index_rowid(1, "ok", stored.id),
                    search.index_rowid(2, "gone", rec.id),
                ]
            )
            conn.execute(text("INSERT INTO entries_fts(entries_fts, rank) VALUES ('integrity-check', 1)"))
    finally:
        store.close()


def test_the_migration_converts_an_existing_store(tmp_path: Path) -> None:
    """A store made at revision 0005 (index rowid = entry id) with a work, a record and a miss in it:
    after the upgrade every index row carries its band, the integrity check passes, and searches by kind
    find the rows written before the upgrade and after it; downgrading to 0005 restores rowid = id.
    """
    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = make_engine(url)
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0005")
    rows = [
        (1, CROSSREF_WORK, "10.5555/a", "ok", "Echidna spines", "a study"),
        (2, ZENODO_RECORD, "5", "ok", "Echidna data", None),
        (3, CROSSREF_WORK, "10.5555/b", "not_found", None, None),
        (4, "crossref_journal", "1234-5678", "ok", "Journal of echidna", None),
    ]
    with engine.begin() as conn:
        for eid, kind, key, status, title, stext in rows:
            conn.execute(
                text(
                    "INSERT INTO entries (id, kind, key, status, body, content_hash, title, search_text, "
                    "fetched_at, created_at) VALUES (:i, :k, :key, :s, '{}', :h, :t, :x, 1.0, 1.0)"
                ),
                {"i": eid, "k": kind, "key": key, "s": status, "h": f"h{eid}", "t": title, "x": stext},
            )
            conn.execute(
                text(
                    "INSERT INTO validations (entry_id, validated_at, checks, changes) VALUES (:i, 1.0, 1, 1)"
                ),
                {"i": eid},
            )
        old = [r[0] for r in conn.execute(text("SELECT rowid FROM entries_fts ORDER BY rowid"))]
    assert old == [1, 2, 3, 4]
    upgrade_to_head(engine)
    store = Store(engine)
    try:
        with store.read() as conn:
            new = [r[0] for r in conn.execute(text("SELECT rowid FROM entries_fts ORDER BY rowid"))]
            conn.execute(text("INSERT INTO entries_fts(entries_fts, rank) VALUES ('integrity-check', 1)"))
            codes = search.kind_codes(conn)
        # as migration 0006 banded them, and 0012 gave DataCite works the next band
        assert codes == {CROSSREF_WORK: 1, ZENODO_RECORD: 2, "datacite_work": 3}
        assert new == sorted(search.index_rowid(codes.get(k, 0), s, i) for i, k, _, s, _, _ in rows)
        page, total = store.search_page(["echidna"], CROSSREF_WORK)
        assert ([e.key for e in page], total) == (["10.5555/a"], 1)
        assert [e.key for e in store.search("echidna", kind=ZENODO_RECORD)] == ["5"]
        assert [e.key for e in store.search("echidna", kind="crossref_journal")] == ["1234-5678"]
        assert sorted(e.id for e in store.search("echidna")) == [1, 2, 4]
        later, _ = store.put_content(
            EntryContent(CROSSREF_WORK, "10.5555/c", "ok", "{}", "hc", title="Echidna")
        )
        assert store.search_page(["echidna"], CROSSREF_WORK)[1] == 2
        assert later.id in {e.id for e in store.search("echidna", kind=CROSSREF_WORK)}
    finally:
        store.close()
    with engine.begin() as conn:  # and back: the 0001 layout (rowid = entry id), rebuilt and whole
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0005")
    with engine.begin() as conn:
        back = [r[0] for r in conn.execute(text("SELECT rowid FROM entries_fts ORDER BY rowid"))]
        conn.execute(text("INSERT INTO entries_fts(entries_fts, rank) VALUES ('integrity-check', 1)"))
        found = conn.execute(text("SELECT rowid FROM entries_fts WHERE entries_fts MATCH 'echidna'")).all()
    assert back == [1, 2, 3, 4, later.id] and sorted(r[0] for r in found) == [1, 2, 4, later.id]
    engine.dispose()


def test_ranking_above_the_bound_takes_the_newest_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the rank bound at 50 and 120 matches, a bounded top 20 is the full ranking restricted to
    the 50 most recently stored matches: the best-scoring work (the word three times, stored first) is
    left out, while the full ranking puts it first. search_page for "kea moa" (181 matches) puts the
    one work with both words first although 60 newer works push it out of the newest 50, then works
    among the newest 50.
    """
    monkeypatch.setattr(search, "RANK_BOUND", 50)
    store = Store.open(f"sqlite:///{tmp_path / 'bound.db'}")
    try:
        with store.batch():
            store.put_content(
                EntryContent(CROSSREF_WORK, "10.5555/old", "ok", "{}", "h", title="kea kea kea")
            )
            for i in range(119):
                store.put_content(
                    EntryContent(
                        CROSSREF_WORK, f"10.5555/{i}", "ok", "{}", f"h{i}", title=f"kea bird number w{i}"
                    )
                )
        with store.read() as conn:
            match = '"kea"'
            full = search.ranked_ids_sqlite(
                conn, match, search.kind_codes(conn)[CROSSREF_WORK], True, 0, 200, bounded=False
            )
            bounded = search.ranked_ids_sqlite(
                conn, match, search.kind_codes(conn)[CROSSREF_WORK], True, 0, 20, bounded=True
            )
        old = store.get(CROSSREF_WORK, "10.5555/old")
        assert old is not None and full[0] == old.id and len(full) == 120
        newest = set(sorted(full)[-50:])
        assert old.id not in bounded
        assert bounded == [i for i in full if i in newest][:20]
        both, _ = store.put_content(
            EntryContent(CROSSREF_WORK, "10.5555/both", "ok", "{}", "b", title="kea moa")
        )
        with store.batch():  # 60 newer works push "kea moa" out of the newest 50
            for i in range(60):
                store.put_content(
                    EntryContent(CROSSREF_WORK, f"10.5555/n{i}", "ok", "{}", f"n{i}", title=f"kea newer n{i}")
                )
        page, total = store.search_page(["kea", "moa"], CROSSREF_WORK, 0, 20)
        assert total == 181 and len(page) == 20
        assert page[0].id == both.id  # the one work with every term, though older than the newest 50
        newest_now = sorted(e.id for e in store.search("kea", limit=500))[-50:]
        assert {e.id for e in page[1:]} <= set(newest_now)  # then the others, among the newest 50
    finally:
        store.close()


@pytest.mark.anyio
async def test_the_offline_tool_declares_a_bounded_ranking(
    cache: Services, store: Store, fake: FakeUpstream
) -> None:
    """Crossref down: "kiwi" (2,100 stored works, above the 2,000 rank bound) is answered with
    totalResults 2100 and a notice naming the bound; "takahe" (3 works) with "3 local matches, best
    first" and its three works.
    """
    msg = json.loads((CORPUS / "crossref/work/10.1101_598821.json").read_text(encoding="utf-8"))["message"]
    # the real work without its abstract and reference list: the ranking and its notice are the claim,
    # and 2,100 normalized abstracts and cited-by rows were most of the test's time
    msg = {k: v for k, v in msg.items() if k not in ("abstract", "reference")}
    contents = []
    for i in range(2100):
        title = f"Kiwi survey {i}" + (" takahe" if i in (5, 500, 2050) else "")
        contents.append(
            work_content(f"10.5555/k{i}", {**msg, "DOI": f"10.5555/k{i}", "title": [title]}, None)
        )
    result = put_many(store, [BulkItem(c, 0.0) for c in contents], keep=lambda _held, _content: False)
    assert not result.deferred
    fake.stop()
    async with Client(mcp_server(cache)) as client:
        many = (await client.call_tool("crossref_search_works", {"query": "kiwi"})).structured_content
        few = (
            await client.call_tool("crossref_search_works", {"query": "takahe", "rows": 5})
        ).structured_content
    assert search.RANK_BOUND == 2000
    assert many["totalResults"] == 2100 and many["returned"] == 20
    assert (
        "2100 local matches; ranked among the 2,000 most recently stored, works with every term first"
        in (many["notice"])
    )
    assert few["totalResults"] == 3 and "(3 local matches, best first)" in few["notice"]
    assert sorted(w["doi"] for w in few["works"]) == ["10.5555/k2050", "10.5555/k5", "10.5555/k500"]
