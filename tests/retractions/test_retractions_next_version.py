"""The next Retraction Watch version: rows whose raw cells are unchanged are not parsed again.

The stored ``row_hash`` is the SHA-256 of the row's raw cells (:func:`cells_hash`); a row whose cells
differ but parse to the same fields (a DOI written in another case) is not a change, only re-hashed;
hashes of the parsed fields (how rows were stored before) are read as "compare the fields" once.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from sqlalchemy import update

from syncd.retractions.csvfile import cells_hash, decode, parse_bytes
from syncd.retractions.importer import import_bytes, import_path
from syncd.retractions.storage import apply_version, latest_dataset, rows_for, stored_hashes
from syncd.store.changes import list_changes
from syncd.store.models import RetractionRow
from syncd.store.repo import Store
from tests.retraction_helpers import SAMPLE, sample_bytes, store_work

LANCET = "10.1016/s0140-6736(20)31180-6"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store.open(f"sqlite:///{tmp_path / 'store.db'}")
    yield s  # type: ignore[misc]
    s.close()


def sample_cells() -> dict[str, list[str]]:
    """The sample's rows as csv.reader gives their cells, by record id."""
    text, _ = decode(sample_bytes())
    rows = list(csv.reader(io.StringIO(text, newline="")))[1:]
    return {r[0]: r for r in rows if r}


def test_only_changed_rows_are_parsed(store: Store) -> None:
    """After the sample is stored, the next version with one reason changed parses that row alone; the
    8 others are listed unchanged by their cells' hash, and the stored hash is that of the cells.
    """
    import_path(store, SAMPLE)
    based_on, known = stored_hashes(store)
    assert based_on == 1 and known["23529"] == cells_hash(sample_cells()["23529"])
    parsed = parse_bytes(sample_bytes().replace(b"+Error in Data;", b"+Error in Results;"), known)
    assert [r.record_id for r in parsed.rows] == ["23528"] and parsed.total == 9
    assert sorted(parsed.unchanged) == sorted(set(known) - {"23528"})


def test_cells_that_parse_the_same_are_not_a_change(store: Store, tmp_path: Path) -> None:
    """The IEEE row's DOIs written in lower case (parsed DOIs are lower-cased anyway): no change, no
    feed row, the stored hash becomes the new cells' hash.
    """
    store_work(store, "10.1109/icetce.2011.5774727")
    import_path(store, SAMPLE)
    text = sample_bytes().replace(b"10.1109/ICETCE.2011.5774727", b"10.1109/icetce.2011.5774727")
    assert text != sample_bytes()
    report = import_bytes(store, text, "lower.csv")
    assert (report.dataset.changed, report.dataset.added, report.changes) == (0, 0, 0)
    assert list_changes(store) == []
    [row] = [c for c in csv.reader(io.StringIO(decode(text)[0], newline="")) if c and c[0] == "25991"]
    assert stored_hashes(store)[1]["25991"] == cells_hash(row)


def test_hashes_of_the_parsed_fields_compare_by_fields(store: Store) -> None:
    """Rows stored with the former hash (of the parsed fields): the next version with one row changed
    records exactly that change for the stored Lancet paper; the other rows are re-hashed, unchanged.
    """
    store_work(store, LANCET)
    import_path(store, SAMPLE)
    former = {s.row.record_id: s.row.row_hash() for s in rows_for(store, [LANCET])}
    with store.write() as conn:
        for record_id, digest in former.items():
            conn.execute(
                update(RetractionRow).where(RetractionRow.record_id == record_id).values(row_hash=digest)
            )
    text = sample_bytes().replace(b"+Error in Data;", b"+Error in Results;")
    report = import_bytes(store, text, "next.csv")
    d = report.dataset
    assert (d.added, d.changed, d.removed, report.changes) == (0, 1, 0, 1)
    [change] = list_changes(store)
    assert change.types == ("retraction_watch_updated",)
    assert change.summary["items"][0]["record_id"] == "23528"
    cells = sample_cells()
    assert stored_hashes(store)[1]["23529"] == cells_hash(cells["23529"])


def test_a_version_stored_meanwhile_makes_the_write_retry(store: Store) -> None:
    """apply_version on hashes read before another import stored a version writes nothing (None)."""
    based_on, known = stored_hashes(store)
    parsed = parse_bytes(sample_bytes(), known)
    import_path(store, SAMPLE)
    stale = apply_version(
        store, parsed, based_on=based_on, known=known, sha256="0" * 64, source="x", commit=None, now=0.0
    )
    assert stale is None and latest_dataset(store).sha256 != "0" * 64  # type: ignore[union-attr]
