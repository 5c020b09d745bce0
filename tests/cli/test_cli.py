"""The `syncd` CLI: cache stats/show/get, db upgrade, exit codes, and every command documented."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from syncd.cli import cli
from syncd.config import Settings
from syncd.store.engine import head_revision
from tests.conftest import make_settings
from tests.fakeupstream import FakeUpstream

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def env(fake: FakeUpstream, db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    settings = make_settings(fake, db_url)
    for key in list(__import__("os").environ):
        if key.startswith("SYNCD_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("SYNCD_DATABASE_URL", db_url)
    monkeypatch.setenv("SYNCD_CROSSREF__BASE_URL", fake.crossref_url)
    monkeypatch.setenv("SYNCD_CROSSREF__MAILTO", "ci@example.org")
    monkeypatch.setenv("SYNCD_ZENODO__BASE_URL", fake.zenodo_url)
    monkeypatch.setenv("SYNCD_DOI__BASE_URL", fake.doi_url)
    monkeypatch.setenv("SYNCD_DATACITE__BASE_URL", fake.datacite_url)
    return settings


def run(*args: str) -> click.testing.Result:
    return CliRunner().invoke(cli, list(args), obj={}, catch_exceptions=False)


def test_get_then_show_then_stats(env: Settings, fake: FakeUpstream) -> None:
    """`cache get` fetches once, `cache show` reads the stored entry, `cache stats` counts it."""
    got = run("cache", "get", "10.1101/598821", "--json")
    assert got.exit_code == 0, got.output
    data = json.loads(got.output)
    assert (
        data["title"] == "Raptor genomes reveal evolutionary signatures of predatory and nocturnal lifestyles"
    )
    assert data["cache"]["source"] == "upstream"
    again = json.loads(run("cache", "get", "https://doi.org/10.1101/598821", "--json").output)
    assert again["cache"]["source"] == "store"
    assert fake.count("/works", service="crossref") == 1

    shown = json.loads(run("cache", "show", "10.1101/598821", "--json").output)
    assert shown["key"] == "10.1101/598821"
    assert shown["status"] == "ok"
    assert shown["stale"] is False
    assert shown["checks"] == 1

    stats = json.loads(run("cache", "stats", "--json").output)
    assert {"kind": "crossref_work", "status": "ok", "entries": 1, "stale": 0, "fresh": 1} in stats["entries"]
    assert stats["database_size_bytes"] > 0
    assert {p["pool"] for p in stats["budget"]} >= {"crossref_single", "zenodo_general"}


def test_get_zenodo_record_by_doi(env: Settings) -> None:
    """`cache get` with a Zenodo DOI goes to Zenodo and prints the record's title."""
    res = run("cache", "get", "10.5281/zenodo.5244404")
    assert res.exit_code == 0, res.output
    assert "The Origins of SARS-CoV-2: A Critical Review" in res.output


def test_human_tables(env: Settings) -> None:
    """Without --json, stats and show print tables a person can read."""
    run("cache", "get", "10.1101/598821")
    assert "crossref_work" in run("cache", "stats").output
    assert "validated_at" in run("cache", "show", "10.1101/598821").output


def test_exit_codes(env: Settings, fake: FakeUpstream) -> None:
    """Not stored -> 1; not a DOI -> 2; upstream down and nothing stored -> 3; one stderr line each."""
    missing = CliRunner().invoke(cli, ["cache", "show", "10.1234/nothing"], obj={})
    assert missing.exit_code == 1
    assert missing.output.startswith("error: not_cached:")
    bad = CliRunner().invoke(cli, ["cache", "get", "not a doi"], obj={})
    assert bad.exit_code == 2
    assert "invalid_parameter" in bad.output
    fake.stop()
    down = CliRunner().invoke(cli, ["cache", "get", "10.1234/nothing"], obj={})
    assert down.exit_code == 3
    assert "upstream_unavailable" in down.output


def test_missing_config_file_is_a_usage_error(env: Settings, tmp_path: Path) -> None:
    """--config naming a missing file exits 2 with invalid_config."""
    res = CliRunner().invoke(cli, ["--config", str(tmp_path / "nope.toml"), "cache", "stats"], obj={})
    assert res.exit_code == 2
    assert "invalid_config" in res.output


def test_config_file_is_read(env: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A TOML file given with --config sets database_url when the environment does not."""
    monkeypatch.delenv("SYNCD_DATABASE_URL")
    other = tmp_path / "from-file.db"
    cfg = tmp_path / "syncd.toml"
    cfg.write_text(f'database_url = "sqlite:///{other}"\n[ttl]\nmiss = 60\n')
    res = run("--config", str(cfg), "db", "upgrade")
    assert res.exit_code == 0 and f"revision {head_revision()}" in res.output
    assert other.exists()


def _commands(group: click.Group, prefix: str = "syncd") -> list[tuple[str, click.Command]]:
    out: list[tuple[str, click.Command]] = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):  # the lazy group's contract: list_commands + get_command
        cmd = group.get_command(ctx, name)
        assert cmd is not None, name
        full = f"{prefix} {name}"
        if isinstance(cmd, click.Group):
            out.extend(_commands(cmd, full))
        else:
            out.append((full, cmd))
    return out


def test_every_command_is_documented_in_readme_with_help() -> None:
    """Every CLI command has help text and appears in README.md (as sqlite-utils checks its docs)."""
    readme = (ROOT / "README.md").read_text()
    commands = _commands(cli)
    assert len(commands) >= 6
    for name, cmd in commands:
        assert cmd.help, f"{name} has no help text"
        assert re.search(re.escape(name) + r"\b", readme), f"{name} is not in README.md"
