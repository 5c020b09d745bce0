"""Fixtures of the DataCite slice tests: services over a fresh store and the recorded upstream."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from syncd.config import Settings
from syncd.registry import open_services
from syncd.road.services import Services
from syncd.store.repo import Store
from tests.conftest import Clock
from tests.datacite.upstream import DATACITE, DOI_ORG, Recorded


@pytest.fixture
def upstream() -> Recorded:
    """The recorded DataCite and doi.org upstream (routes added per test)."""
    return Recorded()


@pytest.fixture
def dc_clock() -> Clock:
    """The services' injected clock (ages entries without sleeping)."""
    return Clock()


@pytest.fixture
def dc(tmp_path: Path, upstream: Recorded, dc_clock: Clock) -> Iterator[Services]:
    """Services over a fresh SQLite store, every client talking to :class:`Recorded` (a mailto set)."""
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'dc.db'}",
        datacite={"base_url": DATACITE, "mailto": "lab@example.org"},
        doi={"base_url": DOI_ORG},
        deadline_s=5.0,
    )
    store = Store.open(settings.database_url)
    services = open_services(
        settings, store, transport=upstream.transport(), clock=dc_clock, sleep=dc_clock.sleep
    )
    yield services
    services.close()
    store.close()
