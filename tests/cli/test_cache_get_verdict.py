"""``syncd cache get`` gives a work's one retraction verdict, a retraction only Retraction Watch knows too.

The recorded Science paper 10.1126/science.280.5362.421 has no update deposited at Crossref; a Retraction
Watch row (record 990000099, real-shaped) retracts it.
"""

from __future__ import annotations

import json

from click.testing import CliRunner

from syncd.cli import cli
from syncd.config import Settings
from syncd.retractions.importer import import_bytes
from syncd.store.repo import Store
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.retraction_helpers import sample_bytes
from tests.retractions.test_reference_index import CITED, RW_ROW


def test_cache_get_shows_a_retraction_only_retraction_watch_knows(
    env: Settings,  # noqa: F811
    db_url: str,
) -> None:
    """``syncd cache get`` of the Science paper (no update at Crossref) with a Retraction Watch row
    retracting it: the text says ``retraction verdict: retracted`` naming the record, and ``--json``
    carries the same verdict as ``syncd check`` gives (severity, the row's record id).
    """
    store = Store.open(db_url)
    try:
        import_bytes(store, sample_bytes() + RW_ROW, "rw.csv")
    finally:
        store.close()
    runner = CliRunner()
    data = json.loads(runner.invoke(cli, ["cache", "get", CITED, "--json"], obj={}).stdout)
    assert data["retraction"]["severity"] == "retracted" and not data.get("flags")
    assert [s["recordId"] for s in data["retraction"]["signals"]] == ["990000099"]
    text = runner.invoke(cli, ["cache", "get", CITED], obj={}).stdout
    assert "retraction verdict: retracted (retraction-watch-data record 990000099" in text
