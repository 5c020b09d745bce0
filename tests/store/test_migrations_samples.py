"""Upgrades over kept sample databases: a store of every past schema revision opens at head, nothing lost.

``tests/sample_data/store-<revision>.db`` (built by ``tests/sample_data/make_samples.py`` with SQL of
that revision's schema, as requests-cache keeps ``tests/sample_data/``) holds two recorded Crossref
works, a Zenodo record with its concept, and from 0004/0007 on a kept previous body and a change-feed
row. Each test upgrades a copy to head through :meth:`Store.open` (what every syncd start does) and
checks the entries, their bodies and content hashes, their validators and counters, and the history.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from syncd.store.changes import changes_of_entry
from syncd.store.codec import decode_body
from syncd.store.engine import current_revision, head_revision
from syncd.store.maintenance import verify
from syncd.store.repo import Store
from tests.sample_data.make_samples import revisions

SAMPLES = Path(__file__).resolve().parents[1] / "sample_data"
CORPUS = Path(__file__).resolve().parents[1] / "corpus"
RAPTOR = "Raptor genomes reveal evolutionary signatures of predatory and nocturnal lifestyles"
ORIGINS = "The Origins of SARS-CoV-2: A Critical Review"


def _sample(
    revision: str, tmp_path: Path
) -> tuple[str, dict[tuple[str, str], tuple[str | None, str | None]]]:
    """A copy of the sample of ``revision`` and its ``(kind, key) -> (content hash, body)`` read raw."""
    copy = tmp_path / "syncd.db"
    shutil.copy(SAMPLES / f"store-{revision}.db", copy)
    with sqlite3.connect(copy) as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [(revision,)]
        raw = {
            (k, key): (h, decode_body(b))
            for k, key, h, b in db.execute("SELECT kind, key, content_hash, body FROM entries")
        }
    return f"sqlite:///{copy}", raw


def test_every_revision_has_a_kept_sample() -> None:
    """A new migration comes with its sample (run ``python -m tests.sample_data.make_samples``)."""
    kept = {p.stem.removeprefix("store-") for p in SAMPLES.glob("store-*.db")}
    assert kept == set(revisions())
    assert head_revision() in kept and "0001" in kept


@pytest.mark.parametrize("revision", revisions())
def test_a_sample_upgraded_to_head_keeps_entries_bodies_and_hashes(revision: str, tmp_path: Path) -> None:
    """Every old entry reads back at head: same body text, content hash, title, DOI, validators, index;
    a work's list line is there (filled by 0014 for older stores), so a search page reads no body.
    """
    url, before = _sample(revision, tmp_path)
    store = Store.open(url)
    try:
        assert current_revision(store.engine) == head_revision()
        work = store.get("crossref_work", "10.1101/598821")
        assert work is not None
        assert (work.title, work.doi, work.status) == (RAPTOR, "10.1101/598821", "ok")
        assert work.body == (CORPUS / "crossref/work/10.1101_598821.json").read_text(encoding="utf-8")
        assert json.loads(work.body)["message"]["title"] == [RAPTOR]
        record = store.get("zenodo_record", "5244404")
        assert record is not None
        assert (record.title, record.doi, record.concept_key) == (
            ORIGINS,
            "10.5281/zenodo.5244404",
            "5075887",
        )
        assert (record.etag, record.checks, record.changes, record.last_error) == (
            'W/"4"',
            5,
            2,
            "rate_limited",
        )
        assert store.concept_latest("5075887") == ("5244404", record.validated_at)
        after = {
            (e.kind, e.key): (e.content_hash, e.body)
            for e in (store.get(kind, key) for kind, key in before)
            if e is not None
        }
        assert after == before and len(after) == 3
        assert [e.key for e in store.search("Raptor genomes")] == ["10.1101/598821"]
        assert [e.key for e in store.search_page(["SARS"], "zenodo_record")[0]] == ["5244404"]
        lines = store.search_page(["Raptor"], "crossref_work", lines=True)[0]
        assert [(e.key, e.body) for e in lines] == [("10.1101/598821", None)]  # its list line, no body read
        assert lines[0].summary is not None and json.loads(lines[0].summary)["title"] == [RAPTOR]
        assert verify(store).problems == []
    finally:
        store.close()


@pytest.mark.parametrize("revision", revisions())
def test_a_sample_upgraded_to_head_keeps_its_history(revision: str, tmp_path: Path) -> None:
    """The kept previous body (from 0004) and the change-feed row (from 0007) survive; the store writes on."""
    url, _ = _sample(revision, tmp_path)
    store = Store.open(url)
    try:
        record = store.get("zenodo_record", "5244404")
        assert record is not None
        kept = store.previous_bodies(record.id)
        changes = changes_of_entry(store, record.id)
        if revision >= "0004":
            assert [(b["role"], b["status"]) for b in kept] == [("previous", "ok")]
            legacy = json.loads(kept[0]["body"])
            assert (legacy["metadata"]["title"], legacy["doi"]) == (ORIGINS, "10.5281/zenodo.5244404")
            assert kept[0]["content_hash"] != record.content_hash
        else:
            assert kept == []
        if revision >= "0007":
            assert [(c.key, c.doi, c.series, c.types) for c in changes] == [
                ("5244404", "10.5281/zenodo.5244404", "5075887", ("metadata",))
            ]
            assert "related_identifiers" in changes[0].summary["items"][0]["fields"]
        else:
            assert changes == []
        store.mark_validated(record.id, now=record.validated_at + 60)
        again = store.get("zenodo_record", "5244404")
        assert again is not None and (again.checks, again.last_error) == (6, None)
    finally:
        store.close()
