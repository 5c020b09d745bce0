"""A revalidation sweep reads its stale entries a page at a time (bounded memory whatever the store).

The daemon's sweep (:func:`syncd.passes.refresh.sweep`) asks the store for ``SWEEP_PAGE`` stale entries at a
time (keyset pages of ``Store.stale``), revalidates them, then reads the next page: it never holds
more than one page of entries, and every stale entry up to the sweep's limit is checked once,
oldest first.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from syncd.crossref.kinds import ENTITY_KINDS
from syncd.crossref.names import CROSSREF_FUNDER
from syncd.passes import refresh
from syncd.passes.refresh import SWEEP_PAGE, sweep
from syncd.road.outcomes import UNCHANGED, Outcome
from syncd.road.services import Services
from syncd.store.repo import StoredEntry
from tests.core.test_sync import daemon_cache  # noqa: F401  (fixture: the daemon's Services over the fake)

FUNDER = ENTITY_KINDS[CROSSREF_FUNDER]


def test_a_sweep_reads_its_stale_entries_a_page_at_a_time(
    daemon_cache: Services,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """250 stale funder entries, a sweep of limit 230: the store is read 100, 100 and 30 entries at a
    time, each page after the last one's (validated_at, id); the 230 oldest are checked once each, in
    order, the 20 newest are left for the next sweep.
    """
    store = daemon_cache.store
    start = time.time() - 400 * 86_400
    for i in range(250):
        body = f'{{"status":"ok","message-type":"funder","message":{{"id":"{100000 + i}","name":"F{i}"}}}}'
        store.put_content(FUNDER.content(str(100000 + i), "ok", body, f"h{i}", title=f"F{i}"), now=start + i)
    reads: list[tuple[int, Any]] = []
    stale = store.stale

    def spy(staleness: Any, limit: int, after: Any = None, **kw: Any) -> list[StoredEntry]:
        page = stale(staleness, limit, after, **kw)
        reads.append((len(page), after))
        return page

    checked: list[str] = []

    def unchanged(svc: Services, entry: StoredEntry, deadline: Any = None) -> Outcome:
        checked.append(entry.key)
        svc.store.mark_validated(entry.id, now=time.time())  # what an unchanged revalidation records
        return UNCHANGED

    monkeypatch.setattr(store, "stale", spy)
    monkeypatch.setattr(refresh, "revalidate", unchanged)
    report = sweep(daemon_cache, 230)
    assert SWEEP_PAGE == 100
    assert [n for n, _ in reads] == [100, 100, 30]
    assert reads[0][1] is None and reads[1][1] == (start + 99, reads[1][1][1])
    assert checked == [str(100000 + i) for i in range(230)]
    assert (report.checked, report.unchanged) == (230, 230)
    reads.clear()
    checked.clear()
    assert sweep(daemon_cache, 230).checked == 20
    assert checked == [str(100000 + i) for i in range(230, 250)]
