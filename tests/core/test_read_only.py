"""Issue 12 item 7: a user who can read but not write the database gets answers from the store.

The tests run as root, where file modes do not bite, so the read-only user is simulated twice: by
``?mode=ro`` in the database URL (the same read-only connections a non-root user gets) and by
``os.access`` reporting the file not writable (the detection a non-root user goes through). The copy
of the populated store sits in a 0555 directory as a 0444 file, as a lab would install it.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from mcp import Client, StdioServerParameters

from syncd.cli import cli
from syncd.config import Settings
from syncd.errors import StoreError
from syncd.registry import open_services
from syncd.road.services import READ_ONLY_REASON, Services
from syncd.server.changes import CHANGES_URI
from syncd.store import engine as engine_mod
from syncd.store.engine import is_read_only
from syncd.store.repo import Store
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.conftest import make_settings
from tests.e2e.test_faults_all_tools import (
    BATCH,
    INDEX_ONLY,
    LANCET,
    SEEDED_CHANGE_TYPES,
    STORE_ONLY,
    TOOLS,
    seed_change,
)
from tests.e2e.test_faults_all_tools import _setup as corpus_overrides
from tests.e2e.test_processes import ROOT
from tests.e2e.test_processes import _env as process_env
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

RAPTOR = "10.1101/598821"
RAPTOR_TITLE = "Raptor genomes reveal evolutionary signatures of predatory and nocturnal lifestyles"
ZENODO = "10.5281/zenodo.5244404"
UNSTORED = "10.1234/nothing-here"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), obj={})


def _read_only_copy(src_db: Path, dest_dir: Path) -> Path:
    """A consistent copy of ``src_db`` (WAL included) as a 0444 file in a 0555 directory."""
    dest_dir.mkdir()
    dest = dest_dir / "syncd.db"
    with sqlite3.connect(src_db) as conn:
        conn.execute(f"VACUUM INTO '{dest}'")
    conn.close()
    dest.chmod(0o444)
    dest_dir.chmod(0o555)
    return dest


@pytest.fixture
def ro_cli(env: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:  # noqa: F811
    """A populated store (the Raptor work, Zenodo 5244404) copied read-only; the CLI pointed at it."""
    assert run("cache", "get", RAPTOR).exit_code == 0
    assert run("cache", "get", ZENODO).exit_code == 0
    copy = _read_only_copy(Path(env.database_url.removeprefix("sqlite:///")), tmp_path / "ro")
    monkeypatch.setenv("SYNCD_DATABASE_URL", f"sqlite:///{copy}?mode=ro")
    return copy


def test_cli_read_commands_answer_from_a_read_only_store(
    ro_cli: Path, fake: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    """stats/show/ls/search/get answer from the read-only copy with no request and nothing written;
    `cache get` of a stored work says source=store; the warning naming the fix is logged once.
    """
    fake.reset_log()
    before = ro_cli.read_bytes()
    with caplog.at_level(logging.WARNING, logger="syncd.store"):
        stats = run("cache", "stats", "--json")
    assert stats.exit_code == 0, stats.output
    data = json.loads(stats.stdout)
    assert data["read_only"] is True
    assert sum(row["entries"] for row in data["entries"]) == 2
    warnings = [r.getMessage() for r in caplog.records if "event=store_read_only" in r.getMessage()]
    assert len(warnings) == 1 and "usermod -aG syncd" in warnings[0]
    shown = run("cache", "show", RAPTOR, "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["title"] == RAPTOR_TITLE
    listed = run("cache", "ls", "--json")
    assert [r["key"] for r in json.loads(listed.stdout)] == [RAPTOR, "5244404"]
    hits = run("cache", "search", "nocturnal lifestyles", "--json")
    assert [h["key"] for h in json.loads(hits.stdout)] == [RAPTOR]
    got = run("cache", "get", RAPTOR, "--json")
    assert got.exit_code == 0, got.output
    assert json.loads(got.stdout)["cache"]["source"] == "store"
    assert fake.count() == 0
    assert ro_cli.read_bytes() == before


def test_cli_get_of_an_unstored_or_stale_entry_on_a_read_only_store(
    ro_cli: Path, fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unstored DOI exits 3 with upstream_unavailable naming the read-only store (no request);
    a stale stored work is answered store-stale with upstream_error store_read_only.
    """
    fake.reset_log()
    missing = run("cache", "get", UNSTORED)
    assert missing.exit_code == 3
    assert "error: upstream_unavailable:" in missing.stderr and "read-only" in missing.stderr
    monkeypatch.setenv("SYNCD_TTL__CROSSREF_WORK", "0.001")
    stale = run("cache", "get", RAPTOR, "--json")
    assert stale.exit_code == 0, stale.output
    cache_block = json.loads(stale.stdout)["cache"]
    assert (cache_block["source"], cache_block["stale"], cache_block["upstream_error"]) == (
        "store-stale",
        True,
        READ_ONLY_REASON,
    )
    assert fake.count() == 0


def test_an_unwritable_file_is_opened_read_only(
    ro_cli: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A plain sqlite URL whose file this user cannot write (os.access W_OK False) opens read-only."""
    real_access = os.access
    monkeypatch.setattr(
        engine_mod.os, "access", lambda p, mode: False if mode == os.W_OK else real_access(p, mode)
    )
    with caplog.at_level(logging.WARNING, logger="syncd.store"):
        store = Store.open(f"sqlite:///{ro_cli}")
    try:
        assert is_read_only(store.engine)
        assert store.get("crossref_work", RAPTOR) is not None
        with pytest.raises(StoreError, match="readonly"), store.write() as conn:
            conn.exec_driver_sql("DELETE FROM entries")
    finally:
        store.close()
    assert [r.message.count("event=store_read_only") for r in caplog.records] == [1]


def test_a_read_only_store_behind_head_is_refused(ro_cli: Path) -> None:
    """Migrations are skipped at head; a read-only store at an older revision is refused with the fix."""
    ro_cli.parent.chmod(0o755)
    ro_cli.chmod(0o644)
    with sqlite3.connect(ro_cli) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0002'")
    conn.close()
    with pytest.raises(StoreError, match="syncd db upgrade"):
        Store.open(f"sqlite:///{ro_cli}?mode=ro")


@pytest.fixture
def ro_services(cache: Services, fake: FakeUpstream, tmp_path: Path, fake_calls: None) -> Iterator[Services]:
    """A read-only Services over a copy of a store every tool has answered into once."""
    copy = _read_only_copy(Path(cache.settings.database_url.removeprefix("sqlite:///")), tmp_path / "ro")
    settings = make_settings(fake, f"sqlite:///{copy}?mode=ro")
    store = Store.open(settings.database_url)
    svc = open_services(settings, store)
    yield svc
    svc.close()
    store.close()


async def _call(svc: Services, name: str, args: dict[str, Any]) -> Any:
    async with Client(mcp_server(svc)) as client:
        return await client.call_tool(name, args)


@pytest.fixture
async def fake_calls(cache: Services, fake: FakeUpstream) -> None:
    """Every tool called once against the fake (the store then holds each answer), and one change
    recorded (the Lancet paper's retraction, :func:`tests.e2e.test_faults_all_tools.seed_change`).
    """
    corpus_overrides(fake)
    for name, args in TOOLS.items():
        res = await _call(cache, name, args)
        assert res.is_error is False, (name, res.structured_content)
    seed_change(cache.store)


def cache_blocks(name: str, answer: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``cache`` blocks an answer of tool ``name`` carries: one per DOI item for a batch tool (which
    has no top-level block; an input that is not a DOI has none), else the answer's own.
    """
    if name in BATCH:
        return [item.get("cache") or {} for item in answer["items"] if "doi" in item]
    return [answer["cache"]]


@pytest.mark.anyio
async def test_every_mcp_tool_answers_from_a_read_only_store(
    ro_services: Services, fake: FakeUpstream
) -> None:
    """Every tool answers from the read-only store: fresh answers come from the store, stale ones
    are flagged store-stale with upstream_error store_read_only (crossref_get_works: each DOI item's own
    cache block); syncd_list_changes answers source store both times (the feed is never stale) and
    lists the recorded change, as does syncd://changes; no request reaches upstream.
    """
    assert ro_services.read_only
    fake.reset_log()
    for name, args in TOOLS.items():
        res = await _call(ro_services, name, args)
        assert res.is_error is False, (name, res.structured_content)
        blocks = cache_blocks(name, res.structured_content)
        assert blocks and [b.get("source") for b in blocks] == ["store"] * len(blocks), (name, blocks)
    for ttl in ("crossref_work", "zenodo_record", "search", "entity"):
        setattr(ro_services.settings.ttl, ttl, 0.001)
    for name, args in TOOLS.items():
        res = await _call(ro_services, name, args)
        assert res.is_error is False, (name, res.structured_content)
        blocks = cache_blocks(name, res.structured_content)
        expected = ("store", None) if name in STORE_ONLY | INDEX_ONLY else ("store-stale", READ_ONLY_REASON)
        assert blocks and [(b["source"], b.get("upstream_error")) for b in blocks] == [expected] * len(
            blocks
        ), (name, blocks)
    feed = await _call(ro_services, "syncd_list_changes", {"types": ["retraction"]})
    assert [(c["key"], c["types"]) for c in feed.structured_content["changes"]] == [
        (LANCET, SEEDED_CHANGE_TYPES)
    ]
    async with Client(mcp_server(ro_services)) as client:
        read = await client.read_resource(CHANGES_URI)
    assert (LANCET, SEEDED_CHANGE_TYPES) in [
        (c["key"], c["types"])
        for c in json.loads(read.contents[0].text)["changes"]  # type: ignore[union-attr]
    ]
    missing = await _call(ro_services, "crossref_get_work", {"doi": UNSTORED})
    assert missing.is_error is True
    assert missing.structured_content["error"]["data"]["reason"] == "upstream_unavailable"
    assert "read-only" in missing.structured_content["error"]["message"]
    assert fake.count() == 0


@pytest.mark.anyio
async def test_get_works_on_a_read_only_store_answers_items(
    ro_services: Services, fake: FakeUpstream
) -> None:
    """crossref_get_works on the read-only store with a stored DOI and an unstored one: the call answers
    (no error), the stored work from the store, the unstored DOI as an item with reason
    upstream_unavailable naming the read-only store (counts.failed 1); no list request is sent.
    """
    fake.reset_log()
    res = await _call(ro_services, "crossref_get_works", {"dois": ["10.1038/srep16696", UNSTORED]})
    assert res.is_error is False, res.structured_content
    stored, unstored = res.structured_content["items"]
    assert (stored["doi"], stored["found"], stored["cache"]["source"]) == ("10.1038/srep16696", True, "store")
    assert stored["title"].startswith("Single-molecule FRET studies on alpha-synuclein oligomerization")
    assert (unstored["doi"], unstored["found"], unstored["reason"]) == (
        UNSTORED,
        False,
        "upstream_unavailable",
    )
    assert "read-only" in unstored["message"]
    assert res.structured_content["counts"]["failed"] == 1
    assert res.structured_content["listRequests"] == 0
    assert fake.count() == 0


@pytest.mark.anyio
async def test_syncd_mcp_starts_on_a_read_only_store(
    ro_cli: Path, fake: FakeUpstream, tmp_path: Path
) -> None:
    """`syncd mcp` over a read-only store starts (no "Connection closed") and answers from the store."""
    fake.reset_log()
    child_env = process_env(fake, f"sqlite:///{ro_cli}?mode=ro", tmp_path)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "syncd", "mcp"], env=child_env, cwd=str(ROOT)
    )
    async with Client(params) as client:
        res = await client.call_tool("crossref_get_work", {"doi": RAPTOR})
    assert res.structured_content["title"] == RAPTOR_TITLE
    assert res.structured_content["cache"]["source"] == "store"
    assert fake.count() == 0
