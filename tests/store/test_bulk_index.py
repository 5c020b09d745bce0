"""The search index of a bulk write: one ``INSERT ... SELECT`` per batch, the same rows as the trigger's.

A bulk import (:func:`syncd.store.bulk.put_many`) pauses the index's insert trigger inside its own
transaction (``entries_fts_paused``, migration 0014) and indexes the batch's rows with one statement.
These tests hold the index it leaves to the one the trigger writes: the same rowids (kind band, status),
the same matches, nothing left paused; and a store whose trigger cannot pause is indexed by the trigger.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from syncd.crossref.lookups import work_content
from syncd.store import search
from syncd.store.bulk import BulkItem, put_many
from syncd.store.repo import Store
from tests.corpus_path import CORPUS


def _items() -> list[BulkItem]:
    out = []
    for path in sorted((CORPUS / "crossref" / "work").glob("*.json")):
        if path.name.endswith(".headers.json"):
            continue
        raw = path.read_text(encoding="utf-8")
        message = json.loads(raw).get("message")
        if isinstance(message, dict) and isinstance(message.get("DOI"), str):
            out.append(BulkItem(work_content(message["DOI"].lower(), message, raw), time.time()))
    return out


def _index(store: Store) -> tuple[list[int], list[str], int]:
    """The index's rowids, the keys matching "genome", and the rows left in the pause table."""
    with store.read() as conn:
        rowids = [r[0] for r in conn.exec_driver_sql("SELECT rowid FROM entries_fts_docsize ORDER BY rowid")]
        paused = conn.exec_driver_sql(f"SELECT count(*) FROM {search.PAUSE_TABLE}").scalar_one()
    keys = sorted(e.key for e in store.search("genome", kind="crossref_work", limit=100))
    return rowids, keys, int(paused)


def test_a_bulk_batch_is_indexed_like_the_trigger_indexes_it(tmp_path: Path) -> None:
    """The recorded works put in bulk (batches of 7) and one by one give the same index rows (band 1
    rowids of every entry id), the same "genome" matches (the Raptor genomes paper among them), and the
    pause table is empty afterwards.
    """
    items = _items()
    assert len(items) > 80
    bulk = Store.open(f"sqlite:///{tmp_path / 'bulk.db'}")
    one = Store.open(f"sqlite:///{tmp_path / 'one.db'}")
    try:
        with bulk.read() as conn:
            assert search.can_pause(conn)
        for i in range(0, len(items), 7):
            result = put_many(bulk, items[i : i + 7], lambda held, content: False)
            assert result.deferred == []
        for item in items:
            one.put_content(item.content, now=item.when)
        got, want = _index(bulk), _index(one)
        assert got == want
        rowids, keys, paused = got
        assert len(rowids) == len(items) and paused == 0
        assert rowids[0] == search.index_rowid(1, "ok", 1)  # crossref_work: code 1, status ok
        assert "10.1101/598821" in keys
    finally:
        bulk.close()
        one.close()


def test_a_store_whose_trigger_cannot_pause_is_indexed_by_the_trigger(tmp_path: Path) -> None:
    """With the insert trigger as migration 0006 made it (no pause clause), a bulk batch is indexed by
    the trigger: every row once, a work found by its title.
    """
    items = _items()[:20]
    store = Store.open(f"sqlite:///{tmp_path / 'old.db'}")
    try:
        with store.write() as conn:
            sql = conn.exec_driver_sql(
                "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'entries_fts_ai'"
            ).scalar_one()
            conn.exec_driver_sql("DROP TRIGGER entries_fts_ai")
            conn.exec_driver_sql(sql.replace(f" WHEN NOT EXISTS (SELECT 1 FROM {search.PAUSE_TABLE})", ""))
        with store.read() as conn:
            assert not search.can_pause(conn)
        put_many(store, items, lambda held, content: False)
        rowids, _, paused = _index(store)
        assert len(rowids) == len(set(rowids)) == 20 and paused == 0
        first = items[0].content
        assert first.title
        assert first.key in [e.key for e in store.search(first.title, kind="crossref_work")]
    finally:
        store.close()
