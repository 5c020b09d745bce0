"""One staleness rule (issue 21 item 2): the road, `cache ls`/`cache stats` rows and the store SQL agree.

Real corpus works are stored validated at chosen moments around their lifetime (``ttl.crossref_work``)
and around "now" (a clock that ran ahead, issue 27): the policy's :meth:`EntryFacts.fresh`, the CLI's
:func:`entry_dict`, :meth:`Store.stale`, :meth:`Store.counts` and ``list_entries(stale=...)`` must
call the same ones stale.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from syncd.cli.common import entry_dict
from syncd.config import Settings
from syncd.crossref import lookups as lookups_crossref
from syncd.registry import KINDS
from syncd.road import policy
from syncd.road.local_first import facts_of
from syncd.store.maintenance import list_entries
from syncd.store.repo import Store
from tests.conftest import corpus_json

NOW = 1_800_000_000.0
DAY = 86_400.0
WORKS = {
    # DOI -> seconds between "validated" and NOW (negative: validated in the future)
    "10.1101/598821": 3600.0,  # fresh: an hour old
    "10.1002/jor.1100150407": 7 * DAY,  # exactly its lifetime: stale (age < ttl is fresh)
    "10.1007/978-3-319-53923-2": 7 * DAY - 1,  # one second inside its lifetime: fresh
    "10.1007/s00120-007-1345-2": 30 * DAY,  # long past: stale
    "10.1016/j.actao.2019.01.006": -2.0,  # 2 s ahead: ordinary skew, fresh
    "10.1007/978-3-662-46370-3_13": -100.0,  # 100 s ahead: a clock that ran ahead, stale now
}
STALE = {
    "10.1002/jor.1100150407",
    "10.1007/s00120-007-1345-2",
    "10.1007/978-3-662-46370-3_13",
}


def _message(doi: str) -> dict[str, object]:
    return corpus_json(f"crossref/work/{doi.replace('/', '_')}.json")["message"]  # type: ignore[no-any-return]


@pytest.fixture
def filled(tmp_path: Path) -> Iterator[tuple[Store, Settings]]:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'syncd.db'}")
    store = Store.open(settings.database_url)
    for doi, age in WORKS.items():
        store.put_content(lookups_crossref.work_content(doi.lower(), _message(doi), None), now=NOW - age)
    yield store, settings
    store.close()


def test_every_staleness_reader_applies_the_policys_rule(filled: tuple[Store, Settings]) -> None:
    """Policy, CLI rows, ``Store.stale``, ``Store.counts`` and ``list_entries`` call the same works stale."""
    store, settings = filled
    ttls = policy.ttls(settings.ttl, KINDS.values())
    bounds = policy.staleness(ttls, NOW)
    entries = {e.key: e for e in list_entries(store, limit=None)}
    assert set(entries) == set(WORKS)
    assert (
        entries["10.1101/598821"].title
        == "Raptor genomes reveal evolutionary signatures of predatory and nocturnal lifestyles"
    )

    by_policy = {
        k
        for k, e in entries.items()
        if not facts_of(e, policy.ttl_s(settings.ttl, KINDS[e.kind], e.status)).fresh(NOW)
    }
    by_cli = {k for k, e in entries.items() if entry_dict(e, settings, NOW)["stale"]}
    by_sql = {e.key for e in store.stale(bounds, 100)}
    by_list = {e.key for e in list_entries(store, stale=bounds, limit=None)}
    counted = {(c["kind"], c["status"]): c["stale"] for c in store.counts(bounds)}

    assert by_policy == by_cli == by_sql == by_list == STALE
    assert counted == {("crossref_work", "ok"): len(STALE)}


def test_entries_validated_in_the_future_come_last_and_their_age_is_never_negative(
    filled: tuple[Store, Settings],
) -> None:
    """The sweep takes the oldest first; a work validated 100 s "ahead" is stale with age 0 in its row."""
    store, settings = filled
    order = [
        e.key for e in store.stale(policy.staleness(policy.ttls(settings.ttl, KINDS.values()), NOW), 100)
    ]
    assert order == ["10.1007/s00120-007-1345-2", "10.1002/jor.1100150407", "10.1007/978-3-662-46370-3_13"]
    ahead = store.get("crossref_work", "10.1007/978-3-662-46370-3_13")
    assert ahead is not None
    row = entry_dict(ahead, settings, NOW)
    assert (row["age_s"], row["stale"], row["title"]) == (
        0.0,
        True,
        "Clinical Symptoms and Physical Examinations",
    )


def test_the_bounds_are_the_policys_fresh_window() -> None:
    """``staleness`` hands the store ``fresh_bounds``: lifetime start per pair, one skew bound for all."""
    bounds = policy.staleness({("crossref_work", "ok"): 7 * DAY, ("crossref_work", "not_found"): 3600.0}, NOW)
    assert bounds.before == {
        ("crossref_work", "ok"): NOW - 7 * DAY,
        ("crossref_work", "not_found"): NOW - 3600,
    }
    assert bounds.after == NOW + policy.CLOCK_SKEW_S
    assert policy.fresh_bounds(0.0, NOW) == (NOW + policy.CLOCK_SKEW_S, NOW + policy.CLOCK_SKEW_S)
    assert policy.EntryFacts(NOW, 0.0).fresh(NOW) is False  # a lifetime of 0 is never fresh
