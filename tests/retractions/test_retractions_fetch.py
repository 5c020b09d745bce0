"""The daemon's scheduled read of the Retraction Watch data: at most daily; a failed read keeps the data."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from syncd.config import Settings
from syncd.retractions.fetch import STATE, fetch_when_due
from syncd.retractions.importer import ImportReport
from syncd.retractions.storage import latest_dataset
from syncd.store.repo import Store
from syncd.store.watches import get_sync_state
from tests.retraction_helpers import SAMPLE, sample_bytes

DAY = 86_400.0
T0 = 1_800_000_000.0


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store.open(f"sqlite:///{tmp_path / 'store.db'}")
    yield s  # type: ignore[misc]
    s.close()


def settings(tmp_path: Path, source: str | None) -> Settings:
    return Settings(database_url=f"sqlite:///{tmp_path / 'store.db'}", retractions={"source": source})


def test_no_source_reads_nothing(store: Store, tmp_path: Path) -> None:
    """Without ``retractions.source`` the scheduled job does nothing."""
    assert fetch_when_due(store, settings(tmp_path, None), T0) is None
    assert get_sync_state(store, STATE) is None


def test_a_path_source_is_read_at_most_daily(store: Store, tmp_path: Path) -> None:
    """A file source: imported at the first check, not read within the day, read (unchanged) after it."""
    cfg = settings(tmp_path, str(SAMPLE))
    first = fetch_when_due(store, cfg, T0)
    assert isinstance(first, ImportReport) and first.dataset.rows == 9 and not first.unchanged
    assert fetch_when_due(store, cfg, T0 + DAY - 1) is None
    again = fetch_when_due(store, cfg, T0 + DAY)
    assert isinstance(again, ImportReport) and again.unchanged
    state = get_sync_state(store, STATE)
    assert state is not None and state.checkpoint["attempted_at"] == T0 + DAY
    assert state.checkpoint["sha256"].startswith("7a8cef32a5b5")


def test_a_failed_read_keeps_the_last_good_version(store: Store, tmp_path: Path) -> None:
    """The source gone (then not the export): logged as the reason, the version imported before stays."""
    good = tmp_path / "rw"
    good.mkdir()
    (good / "retraction_watch.csv").write_bytes(sample_bytes())
    cfg = settings(tmp_path, str(good))
    assert isinstance(fetch_when_due(store, cfg, T0), ImportReport)
    kept = latest_dataset(store)
    (good / "retraction_watch.csv").unlink()
    assert fetch_when_due(store, cfg, T0 + DAY) == "invalid_parameter"
    (good / "retraction_watch.csv").write_bytes(b"<html>maintenance</html>")
    assert fetch_when_due(store, cfg, T0 + 2 * DAY) == "invalid_parameter"
    assert latest_dataset(store) == kept
    state = get_sync_state(store, STATE)
    assert state is not None and state.checkpoint["error"] == "invalid_parameter"
    assert state.last_success_at == T0


def test_a_url_source_is_downloaded_with_its_validators(store: Store, tmp_path: Path) -> None:
    """An https source: 200 imports (ETag kept), the next day's request sends If-None-Match and a 304 reads
    nothing; a 503 keeps the data (at the httpx.MockTransport seam).
    """
    seen: list[httpx.Request] = []
    answers = iter(
        [
            httpx.Response(200, content=sample_bytes(), headers={"etag": '"v1"'}),
            httpx.Response(304),
            httpx.Response(503),
        ]
    )

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return next(answers)

    transport = httpx.MockTransport(handler)
    url = "https://example.org/retraction_watch.csv"
    cfg = settings(tmp_path, url)
    first = fetch_when_due(store, cfg, T0, transport)
    assert isinstance(first, ImportReport) and first.dataset.source == url
    assert fetch_when_due(store, cfg, T0 + DAY, transport) == "not_modified"
    assert seen[1].headers["if-none-match"] == '"v1"'
    assert fetch_when_due(store, cfg, T0 + 2 * DAY, transport) == "upstream_unavailable"
    assert latest_dataset(store) == first.dataset
