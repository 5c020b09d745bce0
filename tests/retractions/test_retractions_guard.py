"""The import guard: a cut, damaged, row-less or shrinking Retraction Watch file never replaces the good one.

Each bad file is refused by ``syncd retractions import`` and by the daemon's scheduled read, with the
version held kept and the verdicts resting on it unchanged; ``--accept-shrink`` imports a file that
shrinks on purpose. The files are the sample export (real-shaped: CRLF, the trailing comma, a quoted
line break) grown with rows of the same shape, then cut the ways a download or a copy gets cut.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from syncd.cli import cli
from syncd.config import Settings
from syncd.retractions.csvfile import RefusedFile, parse_bytes
from syncd.retractions.fetch import fetch_when_due, held_back
from syncd.retractions.importer import ImportReport, import_bytes, import_path
from syncd.retractions.lookups import Seen, verdicts_for
from syncd.retractions.storage import latest_dataset, rows_for
from syncd.store.repo import Store
from tests.retraction_helpers import sample_bytes

T0 = 1_800_000_000.0
DAY = 86_400.0
LANCET = "10.1016/s0140-6736(20)31180-6"
RW_ONLY = "10.5555/rw-only-1"
BULK = 491
"""Rows added to the sample's 9 so that the full file holds 500."""


def full_file() -> bytes:
    """The sample with 491 more rows shaped like its Retraction Watch-only row 999000001 (500 rows)."""
    lines = sample_bytes().split(b"\r\n")
    [model] = [line for line in lines if line.startswith(b"999000001,")]
    extra = [
        model.replace(b"999000001,", f"{998000000 + i},".encode(), 1).replace(
            b"10.5555/rw-only-1", f"10.5555/rw-bulk-{i}".encode()
        )
        for i in range(1, BULK + 1)
    ]
    body = sample_bytes().rstrip(b"\r\n")
    return body + b"\r\n" + b"\r\n".join(extra) + b"\r\n"


def header_only() -> bytes:
    return sample_bytes().split(b"\r\n", 1)[0] + b"\r\n"


def cut_to_tenth() -> bytes:
    """The first 50 of the 500 rows, cut cleanly at a line break (the issue's ``rows 502, removed 4498``)."""
    lines = full_file().split(b"\r\n")
    return b"\r\n".join(lines[:51]) + b"\r\n"


def cut_mid_row() -> bytes:
    """Cut in the middle of the last bulk row's title (no quote open, no line break at the end)."""
    data = full_file().rstrip(b"\r\n")
    return data[: data.rindex(b",") - 40]


def cut_in_quote() -> bytes:
    """Cut inside the quoted, line-broken title of row 999000004 (a quoted field left open)."""
    data = full_file()
    return data[: data.index(b"a comma, and a") + 8]


def short_row() -> bytes:
    """Row 5 (record 25991) loses its last eight cells; every other row intact."""
    lines = full_file().split(b"\r\n")
    i = next(n for n, line in enumerate(lines) if line.startswith(b"25991,"))
    lines[i] = b",".join(lines[i].split(b",")[:13])
    return b"\r\n".join(lines)


BAD = {
    "cut_to_tenth": (cut_to_tenth, "shrink", "would remove 450 of the 500 rows held"),
    "header_only": (header_only, "empty", "a header and no rows"),
    "cut_mid_row": (cut_mid_row, "short_row", "row 500 (line 502) has"),
    "cut_in_quote": (cut_in_quote, "open_quote", "row 9 (line 10) opens a quoted field"),
    "short_row": (short_row, "short_row", "row 5 (line 6) has 13 cells, the header 20"),
}


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store.open(f"sqlite:///{tmp_path / 'store.db'}")
    yield s  # type: ignore[misc]
    s.close()


def severities(store: Store) -> list[str]:
    verdicts = verdicts_for(store, [Seen(LANCET), Seen(RW_ONLY), Seen("10.5555/rw-bulk-300")])
    return [v.severity for v in verdicts]


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_file_is_refused_by_the_import_and_the_version_held_is_kept(store: Store, name: str) -> None:
    """Each bad file: RefusedFile naming the figure; the 500-row version and its verdicts unchanged."""
    import_bytes(store, full_file(), "good.csv", now=T0)
    held = latest_dataset(store)
    assert held is not None and held.rows == 500
    assert severities(store) == ["retracted", "retracted", "retracted"]
    make, refusal, figure = BAD[name]
    with pytest.raises(RefusedFile) as caught:
        import_bytes(store, make(), "bad.csv", now=T0 + DAY)
    assert caught.value.refusal == refusal and figure in caught.value.message
    assert caught.value.reason == "invalid_parameter"
    assert latest_dataset(store) == held
    assert severities(store) == ["retracted", "retracted", "retracted"]


def test_a_cut_file_is_refused_as_a_first_version_too() -> None:
    """The parse alone refuses cut and damaged files (no version held to compare with)."""
    for name in ("header_only", "cut_mid_row", "cut_in_quote", "short_row"):
        make, refusal, _ = BAD[name]
        with pytest.raises(RefusedFile) as caught:
            parse_bytes(make())
        assert caught.value.refusal == refusal, name


def test_a_small_removal_passes_and_a_larger_one_needs_accept_shrink(store: Store) -> None:
    """Removing 10 of 500 rows (2 %) passes the default guard; 11 do not, unless accept_shrink."""
    import_bytes(store, full_file(), "good.csv", now=T0)
    lines = full_file().split(b"\r\n")
    ten = b"\r\n".join(
        line
        for line in lines
        if not line.startswith(tuple(f"{998000000 + i},".encode() for i in range(1, 11)))
    )
    eleven = b"\r\n".join(line for line in ten.split(b"\r\n") if not line.startswith(b"998000011,"))
    with pytest.raises(RefusedFile, match="would remove 11 of the 500 rows held"):
        import_bytes(store, eleven, "eleven.csv", now=T0 + DAY, max_removed_share=0.02)
    report = import_bytes(store, ten, "ten.csv", now=T0 + DAY)
    assert (report.dataset.rows, report.dataset.removed) == (490, 10)
    forced = import_bytes(store, cut_to_tenth(), "tenth.csv", now=T0 + 2 * DAY, accept_shrink=True)
    assert (forced.dataset.rows, forced.dataset.removed) == (50, 450)
    assert rows_for(store, ["10.5555/rw-bulk-300"]) == []


def test_the_cli_refuses_with_exit_2_and_imports_with_accept_shrink(store: Store, tmp_path: Path) -> None:
    """``syncd retractions import``: exit 2 and the figure for a cut file; --accept-shrink imports it."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    env = {"SYNCD_DATABASE_URL": url}
    (tmp_path / "good.csv").write_bytes(full_file())
    (tmp_path / "cut.csv").write_bytes(cut_to_tenth())
    runner = CliRunner()
    assert runner.invoke(cli, ["retractions", "import", str(tmp_path / "good.csv")], env=env).exit_code == 0
    refused = runner.invoke(cli, ["retractions", "import", str(tmp_path / "cut.csv")], env=env)
    assert refused.exit_code == 2
    assert "would remove 450 of the 500 rows held" in refused.output
    assert "--accept-shrink" in refused.output
    assert latest_dataset(store) is not None and latest_dataset(store).rows == 500  # type: ignore[union-attr]
    forced = runner.invoke(
        cli, ["retractions", "import", "--accept-shrink", "--json", str(tmp_path / "cut.csv")], env=env
    )
    assert forced.exit_code == 0, forced.output
    assert json.loads(forced.stdout)["dataset"]["rows"] == 50


def test_the_daemon_read_holds_a_bad_file_back_and_says_why(
    store: Store, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The scheduled https read: a cut download is held back (WARNING, state, status page), the version
    held kept; the next good download clears it (at the httpx.MockTransport seam).
    """
    bodies = iter([full_file(), cut_to_tenth(), full_file()])
    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=next(bodies)))
    cfg = Settings(
        database_url=f"sqlite:///{tmp_path / 'store.db'}",
        retractions={"source": "https://rw.example/retraction_watch.csv"},
    )
    first = fetch_when_due(store, cfg, T0, transport=transport)
    assert isinstance(first, ImportReport) and first.dataset.rows == 500
    with caplog.at_level(logging.WARNING, logger="syncd.retractions"):
        assert fetch_when_due(store, cfg, T0 + DAY, transport=transport) == "held_back:shrink"
    assert "event=retractions_held_back" in caplog.text and "refusal=shrink" in caplog.text
    assert latest_dataset(store) == first.dataset
    assert severities(store) == ["retracted", "retracted", "retracted"]
    held = held_back(store)
    assert held is not None and held["refusal"] == "shrink" and held["at"] == T0 + DAY
    assert "450 of the 500" in held["detail"]
    again = fetch_when_due(store, cfg, T0 + 2 * DAY, transport=transport)
    assert isinstance(again, ImportReport) and again.unchanged
    assert held_back(store) is None


def test_a_path_source_is_held_back_too(store: Store, tmp_path: Path) -> None:
    """The daemon reading a directory (a git checkout the lab pulls): a header-only file is held back."""
    folder = tmp_path / "rw"
    folder.mkdir()
    (folder / "retraction_watch.csv").write_bytes(full_file())
    cfg = Settings(database_url=f"sqlite:///{tmp_path / 'store.db'}", retractions={"source": str(folder)})
    assert isinstance(fetch_when_due(store, cfg, T0), ImportReport)
    (folder / "retraction_watch.csv").write_bytes(header_only())
    assert fetch_when_due(store, cfg, T0 + DAY) == "held_back:empty"
    assert latest_dataset(store) is not None and latest_dataset(store).rows == 500  # type: ignore[union-attr]
    held = held_back(store)
    assert held is not None and held["refusal"] == "empty"


def test_the_max_removed_share_setting_loads_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """``retractions.max_removed_share``: 0.02 by default, SYNCD_RETRACTIONS__MAX_REMOVED_SHARE sets it."""
    assert Settings().retractions.max_removed_share == 0.02
    monkeypatch.setenv("SYNCD_RETRACTIONS__MAX_REMOVED_SHARE", "0.5")
    assert Settings().retractions.max_removed_share == 0.5


def test_import_path_passes_the_guard(store: Store, tmp_path: Path) -> None:
    """``import_path`` (the CLI's and the daemon's file read) applies the same guard."""
    (tmp_path / "good.csv").write_bytes(full_file())
    (tmp_path / "short.csv").write_bytes(short_row())
    import_path(store, tmp_path / "good.csv")
    with pytest.raises(RefusedFile, match="row 5"):
        import_path(store, tmp_path / "short.csv")
