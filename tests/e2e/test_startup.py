"""What a command pays before it does its job (issue 28 item 1), held without a clock.

Opening a store that is at the shipped schema revision imports no Alembic (the head is read from the
migration files and the stored revision with plain SQL); opening the upstream clients makes no
connection pool (each one loads the CA bundle) until a request goes to that upstream. Import-level
checks of the command line are in tests/core/test_architecture.py.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from syncd.config import Settings
from syncd.crossref import lookups as lookups_crossref
from syncd.normalize.doi import parse_doi
from syncd.registry import open_services
from syncd.store.engine import head_revision, make_engine, shipped_head, upgrade_to_head
from syncd.store.repo import Store

RAPTOR = "10.1101/598821"


def test_the_head_read_from_the_migration_files_is_alembics() -> None:
    """shipped_head() (the files' revision / down_revision lines, no Alembic) names Alembic's head."""
    head = head_revision()
    assert head is not None and shipped_head() == head


def test_a_store_at_head_opens_without_importing_alembic(tmp_path: Path) -> None:
    """A fresh process opening a store already at head (then reading from it) never imports Alembic; one
    opening an empty database file imports it and migrates the file to head.
    """
    url = f"sqlite:///{tmp_path / 'store.db'}"
    Store.open(url).close()
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    code = (
        "import json, sys\n"
        "from syncd.store.repo import Store\n"
        "s = Store.open(sys.argv[1])\n"
        "s.get('crossref_work', '10.1/none')\n"
        "s.close()\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'alembic')))\n"
    )

    def alembic_modules(db_url: str) -> list[str]:
        argv = [sys.executable, "-c", code, db_url]
        out = subprocess.run(argv, capture_output=True, text=True, check=True)
        loaded: list[str] = json.loads(out.stdout.splitlines()[-1])
        return loaded

    assert alembic_modules(url) == []
    assert "alembic" in alembic_modules(f"sqlite:///{empty}")
    engine = make_engine(f"sqlite:///{empty}")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == head_revision()
    assert upgrade_to_head(engine) == head_revision()
    engine.dispose()


def test_upstream_clients_make_their_connection_pool_on_the_first_request(
    settings: Settings, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Services.open makes no httpx transport (none of the three CA-bundle loads, ~0.1 s each); the first
    crossref_get_work lookup of 10.1101/598821 makes one, for Crossref only, and the work is fetched.
    """
    made: list[Any] = []
    real = httpx.HTTPTransport

    def counting(*args: Any, **kwargs: Any) -> httpx.HTTPTransport:
        transport = real(*args, **kwargs)
        made.append(transport)
        return transport

    monkeypatch.setattr(httpx, "HTTPTransport", counting)
    svc = open_services(settings, store)
    try:
        assert made == []
        lookup = lookups_crossref.get_work(svc, parse_doi(RAPTOR))
        assert lookup.entry.key == RAPTOR and lookup.provenance.source == "upstream"
        assert len(made) == 1
    finally:
        svc.close()
