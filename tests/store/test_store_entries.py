"""The generic entry methods that replaced the Zenodo slice's own SQL (issue 21 item 3).

``newest``, ``series_ids``, ``overlay_volatile`` and ``keep_body`` name no kind: each test drives them
with real corpus records of one Zenodo concept (record 5244404's history and the versions of concept
5075887 are stored as a lookup stores them).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from syncd.store.content import document
from syncd.store.repo import Store
from syncd.zenodo.lookups_fetch import record_content
from tests.conftest import corpus_json

HISTORY = "zenodo/record-history/records-5244404__{}.json"
TITLE = "The Origins of SARS-CoV-2: A Critical Review"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(f"sqlite:///{tmp_path / 'syncd.db'}")
    yield s
    s.close()


def _record(name: str) -> tuple[dict[str, object], str]:
    body = corpus_json(HISTORY.format(name))
    return body, json.dumps(body)


def test_newest_lists_ok_entries_of_one_kind_most_recently_stored_first(store: Store) -> None:
    """``newest``: the ``ok`` entries of the kind asked, by ``fetched_at`` descending, ``limit`` at most."""
    for i, name in enumerate(("2024-01-14", "2026-07-23")):
        body, raw = _record(name)
        content = record_content(body, raw)
        store.put_content(
            content.__class__(**{**content.__dict__, "key": f"{content.key}-{i}"}), now=1000.0 + i
        )
    assert [e.key for e in store.newest("zenodo_record", 10)] == ["5244404-1", "5244404-0"]
    assert [e.key for e in store.newest("zenodo_record", 1)] == ["5244404-1"]
    assert store.newest("crossref_work", 10) == []
    assert store.newest("zenodo_record", 10)[0].title == TITLE


def test_series_ids_name_the_other_members_of_a_concept(store: Store) -> None:
    """``series_ids`` gives the ids sharing a ``concept_key`` except the key named."""
    body, raw = _record("2024-01-14")
    content = record_content(body, raw)
    held, _ = store.put_content(content, now=1000.0)
    other, _ = store.put_content(replace(content, key="5244405"), now=1001.0)
    assert held.concept_key == "5075887"
    assert store.series_ids("zenodo_record", "5075887", besides="5244404") == [other.id]
    assert sorted(store.series_ids("zenodo_record", "5075887", besides="nothing")) == sorted(
        [held.id, other.id]
    )
    assert store.series_ids("zenodo_record", "0", besides="5244404") == []


def test_overlay_volatile_lays_keys_over_the_body_and_drops_the_etag(store: Store) -> None:
    """The body and hash stay as Zenodo sent them; the overlay is read over them; the ETag goes."""
    body, raw = _record("2024-01-14")
    held, _ = store.put_content(record_content(body, raw, etag='W/"4"'), now=1000.0)
    assert held.etag == 'W/"4"'
    store.overlay_volatile(held.id, json.dumps({"versions": {"is_latest": False}}))
    after = store.get("zenodo_record", "5244404")
    assert after is not None
    assert (after.body, after.content_hash, after.etag) == (held.body, held.content_hash, None)
    assert document(after)["versions"]["is_latest"] is False


def test_keep_body_sets_the_body_aside_under_a_role_replacing_the_earlier_one(store: Store) -> None:
    """``keep_body`` keeps one body per role beside the entry (encoded like every body, read back as text)."""
    body, raw = _record("2024-01-14")
    held, _ = store.put_content(record_content(body, raw), now=1000.0)
    store.keep_body(held, "last_known", "gone", now=2000.0)
    store.keep_body(held, "last_known", "gone", now=3000.0)
    kept = store.previous_bodies(held.id)
    assert [(b["role"], b["reason"], b["kept_at"]) for b in kept] == [("last_known", "gone", 3000.0)]
    assert kept[0]["body"] == held.body and json.loads(kept[0]["body"])["metadata"]["title"] == TITLE
    store.prune_previous(now=10**12)  # a caller-kept role is never pruned with the replaced bodies
    assert len(store.previous_bodies(held.id)) == 1
