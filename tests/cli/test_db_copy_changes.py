"""`db copy` carries the change feed, so a copied store lists the same changes and alerts resume right.

Found by a newcomer: the ``changes`` table was not copied while the alerts cursor (``sync_state``
``alerts``) was, so the copy's feed was empty and its first alerts were skipped.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from syncd.store.changes import latest_change_id, list_changes
from syncd.store.repo import Store
from syncd.transfer.dbcopy import copy_store
from tests.store.test_changes import DAY, LANCET, lancet_bodies, store_work

pytestmark = pytest.mark.both_backends


def test_the_change_feed_is_copied_with_its_ids(db_url: str, tmp_path: Path) -> None:
    """The Lancet paper stored before its retraction and again after: the source's one change row
    (retraction + title) is in the copy with the same id, types and key, and the copy's next change
    gets the next id (sequence reset on PostgreSQL).
    """
    source_url = f"sqlite:///{tmp_path / 'source.db'}"
    before, after = lancet_bodies()
    source = Store.open(source_url)
    try:
        store_work(source, before, 1_700_000_000.0)
        store_work(source, after, 1_700_000_000.0 + DAY)
        want = [(c.id, c.key, c.types) for c in list_changes(source)]
    finally:
        source.close()
    assert len(want) == 1 and want[0][1] == LANCET and "retraction" in want[0][2]
    report = copy_store(source_url, db_url, batch=7)
    assert report.tables["changes"]["destination"] == 1
    copy = Store.open(db_url)
    try:
        assert [(c.id, c.key, c.types) for c in list_changes(copy)] == want
        store_work(copy, before, 1_700_000_000.0 + 2 * DAY)  # the retraction removed: a new change
        assert latest_change_id(copy) == want[0][0] + 1
    finally:
        copy.close()
