"""Secrets: the Zenodo token is sent upstream but never stored in the database or written to logs."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from syncd.registry import open_services
from syncd.store.repo import Store
from syncd.zenodo.lookups import get_record
from syncd.zenodo.params_id import parse_record_ref
from tests.conftest import make_settings
from tests.fakeupstream import FakeUpstream

TOKEN = "zenodo-token-9f8e7d6c5b4a"


def test_token_sent_but_never_stored_or_logged(
    fake: FakeUpstream, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """With DEBUG logging, a lookup sends `Bearer <token>`; the token is in no log line and no DB byte."""
    db = tmp_path / "secret.db"
    settings = make_settings(fake, f"sqlite:///{db}", zenodo={"base_url": fake.zenodo_url, "token": TOKEN})
    assert TOKEN not in repr(settings)  # SecretStr hides it from reprs and tracebacks
    caplog.set_level(logging.DEBUG)
    store = Store.open(settings.database_url)
    cache = open_services(settings, store)
    try:
        lookup = get_record(cache, parse_record_ref("5244404"))
        assert lookup.entry.title == "The Origins of SARS-CoV-2: A Critical Review"
    finally:
        cache.close()
        store.close()
    assert fake.requests[-1].headers.get("authorization") == f"Bearer {TOKEN}"
    assert TOKEN not in caplog.text
    for path in tmp_path.iterdir():
        assert TOKEN.encode() not in path.read_bytes(), path.name
