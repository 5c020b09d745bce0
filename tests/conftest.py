"""Shared fixtures: a fake upstream on loopback, settings pointing at it, a fresh store per test."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from syncd.cache import Cache
from syncd.config import Settings
from syncd.store.repo import Store
from tests.fakeupstream import FakeUpstream

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "upstream-corpus"


def corpus_json(rel: str) -> Any:
    """A recorded body from ../shared/upstream-corpus, parsed."""
    return json.loads((CORPUS / rel).read_text(encoding="utf-8"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def fake() -> Iterator[FakeUpstream]:
    with FakeUpstream(CORPUS) as server:
        yield server


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'syncd.db'}"


def make_settings(fake: FakeUpstream, db_url: str, **overrides: Any) -> Settings:
    """Settings pointing every upstream at the fake, with a short deadline for tests."""
    values: dict[str, Any] = {
        "database_url": db_url,
        "crossref": {"base_url": fake.crossref_url, "mailto": "ci@example.org"},
        "zenodo": {"base_url": fake.zenodo_url},
        "doi": {"base_url": fake.doi_url},
        "deadline_s": 3.0,
    }
    values.update(overrides)
    return Settings(**values)


@pytest.fixture
def settings(fake: FakeUpstream, db_url: str) -> Settings:
    return make_settings(fake, db_url)


@pytest.fixture
def store(settings: Settings) -> Iterator[Store]:
    s = Store.open(settings.database_url)
    yield s
    s.close()


@pytest.fixture
def cache(settings: Settings, store: Store) -> Iterator[Cache]:
    c = Cache(settings, store)
    yield c
    c.close()


@pytest.fixture
def corpus_message() -> dict[str, Any]:
    """The `message` of the recorded Crossref work 10.1101/598821 (24 authors)."""
    return corpus_json("crossref/work/10.1101_598821.json")["message"]
