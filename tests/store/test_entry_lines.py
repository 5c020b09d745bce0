"""The list lines in a table of their own (``entry_lines``, migration 0015), in step with every write.

A stored work's line is written with its body by ``put_content`` and the bulk writer, replaced with the
body, dropped when the body goes (a tombstone, a delete, a replacement that has none) and kept when a
``not_found`` leaves the body in place. Migration 0015 moves the lines 0014 kept in ``entries.summary``
and builds again from the body the ones a reader would need ``issued`` for.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

from syncd.crossref.lookups import work_content
from syncd.crossref.views_lines import list_line
from syncd.store.bulk import BulkItem, put_many
from syncd.store.engine import current_revision, head_revision
from syncd.store.maintenance import delete_entries
from syncd.store.repo import EntryContent, Store
from tests.corpus_path import CORPUS

SAMPLES = Path(__file__).resolve().parents[1] / "sample_data"
RAPTOR = "10.1101/598821"
JOR = "10.1002/jor.1100150407"


def _work(doi: str) -> tuple[str, dict[str, Any]]:
    raw = (CORPUS / "crossref" / "work" / f"{doi.replace('/', '_')}.json").read_text(encoding="utf-8")
    return raw, json.loads(raw)["message"]


def _lines(store: Store) -> dict[str, str]:
    """The stored lines by entry key, read raw from the table."""
    with store.read() as conn:
        rows = conn.exec_driver_sql(
            "SELECT e.key, l.line FROM entry_lines l JOIN entries e ON e.id = l.entry_id"
        ).all()
    return {k: v for k, v in rows}


def test_put_content_writes_replaces_and_drops_the_line_with_the_body(store: Store) -> None:
    """A new work gets its line; a changed body its new line; a not_found over it keeps both; a body
    replaced by a tombstone (no line) loses it; a deleted entry takes its line along.
    """
    raw, message = _work(RAPTOR)
    entry, _ = store.put_content(work_content(RAPTOR, message, raw))
    assert _lines(store) == {RAPTOR: list_line(message)}
    retitled = {**message, "title": ["Raptor genomes, revised"]}
    store.put_content(work_content(RAPTOR, retitled, None))
    assert json.loads(_lines(store)[RAPTOR])["title"] == ["Raptor genomes, revised"]
    store.put_content(EntryContent("crossref_work", RAPTOR, "not_found", None, None))
    assert json.loads(_lines(store)[RAPTOR])["title"] == ["Raptor genomes, revised"]
    gone = EntryContent("crossref_work", RAPTOR, "gone", '{"status": 410}', "tombstone")
    store.put_content(gone)
    assert _lines(store) == {}
    store.put_content(work_content(RAPTOR, message, raw))
    assert RAPTOR in _lines(store)
    assert delete_entries(store, [entry.id]) == 1
    assert _lines(store) == {}


def test_a_bulk_batch_writes_each_new_works_line(store: Store) -> None:
    """put_many of two recorded works inserts each work's line beside its row (one statement)."""
    items = []
    for doi in (RAPTOR, JOR):
        raw, message = _work(doi)
        items.append(BulkItem(work_content(doi, message, raw), time.time()))
    assert put_many(store, items, lambda held, content: False).new == 2
    assert _lines(store) == {i.content.key: i.content.summary for i in items}


def test_lines_of_held_entries_are_read_in_one_call(store: Store) -> None:
    """with_lines hands the entries back in order, each with its line; one without a line as it was."""
    raw, message = _work(RAPTOR)
    work, _ = store.put_content(work_content(RAPTOR, message, raw))
    record, _ = store.put_content(EntryContent("zenodo_record", "5244404", "ok", "{}", "h"))
    assert work.summary is None
    lined = store.with_lines([record, work])
    assert [e.key for e in lined] == ["5244404", RAPTOR]
    assert lined[0] == record and lined[1].summary == list_line(message)


def test_migration_0015_moves_the_lines_and_rebuilds_the_undated_ones(tmp_path: Path) -> None:
    """The 0014 sample upgraded: the line of 10.1002/jor.1100150407 (published 1997-07) is moved as 0014
    wrote it; the bioRxiv preprint 10.1101/598821, dated by ``issued`` alone (2019-04-05), gets its line
    built again from the body, with ``issued``.
    """
    copy = tmp_path / "syncd.db"
    shutil.copy(SAMPLES / "store-0014.db", copy)
    with sqlite3.connect(copy) as db:
        old = dict(db.execute("SELECT key, summary FROM entries WHERE kind = 'crossref_work'").fetchall())
    assert '"issued"' not in old[JOR] and '"issued"' not in old[RAPTOR]
    store = Store.open(f"sqlite:///{copy}")
    try:
        assert current_revision(store.engine) == head_revision() == "0016"
        lines = _lines(store)
        assert lines[JOR] == old[JOR]
        _, preprint = _work(RAPTOR)
        assert lines[RAPTOR] == list_line(preprint)
        assert json.loads(lines[RAPTOR])["issued"]["date-parts"] == [[2019, 4, 5]]
    finally:
        store.close()
