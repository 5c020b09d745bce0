"""A ``syncd`` started with nothing configuring it says what it uses (issue 40 item 7).

An MCP client that starts ``syncd mcp`` without passing its environment (the Inspector did) made syncd use
the public APIs and a database in the home directory without a word. Now :func:`syncd.config.unconfigured`
tells defaults-alone apart (no config file found, no ``SYNCD_*`` variable naming a setting), ``syncd mcp``
logs it at WARNING and ``cache stats`` shows it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import syncd.cli.cache_commands as commands
from syncd.cli import cli
from syncd.config import Settings, unconfigured
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.e2e.test_processes import ROOT

PUBLIC_HOSTS = ("api.crossref.org", "api.datacite.org", "doi.org", "zenodo.org")


def test_defaults_alone_name_the_database_and_the_public_hosts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no config file in the lookup order and only the test suite's own ``SYNCD_TEST_*`` switch and
    a misspelt name in the environment, the settings are defaults alone: the default database in the
    state directory and the four public upstream hosts; a setting variable or a config file ends it.
    """
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in [n for n in os.environ if n.startswith("SYNCD_")]:
        monkeypatch.delenv(name)
    environ = {"SYNCD_TEST_FULL": "1", "SYNCD_CROSREF__MAILTO": "x@example.org", "HOME": str(tmp_path)}
    settings = Settings()
    found = unconfigured(settings, environ=environ)
    assert found is not None
    assert found.hosts == PUBLIC_HOSTS
    assert found.database_url == settings.database_url
    assert "may not have passed its environment" in found.sentence()
    assert unconfigured(settings, environ={**environ, "SYNCD_CROSSREF__MAILTO": "x@example.org"}) is None
    assert unconfigured(settings, environ={**environ, "SYNCD_CONFIG": "/etc/syncd/other.toml"}) is None
    assert unconfigured(settings, "given.toml", environ=environ) is None
    (tmp_path / "config" / "syncd").mkdir(parents=True)
    (tmp_path / "config" / "syncd" / "syncd.toml").write_text("deadline_s = 9\n")
    assert unconfigured(settings, environ=environ) is None


def test_syncd_mcp_started_without_environment_warns(tmp_path: Path) -> None:
    """A real ``syncd mcp`` process started with no ``SYNCD_*`` variable and no config file logs one
    WARNING ``event=unconfigured`` naming the database file under its state directory and the public
    upstream hosts (and asks nothing upstream: stdin is closed at once).
    """
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCD_")}
    child_env.update(
        PYTHONPATH=str(ROOT),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        HOME=str(tmp_path),
    )
    done = subprocess.run(
        [sys.executable, "-m", "syncd", "mcp"],
        input="",
        capture_output=True,
        text=True,
        env=child_env,
        cwd=str(ROOT),
        timeout=120,
        check=False,
    )
    lines = [line for line in done.stderr.splitlines() if "event=unconfigured" in line]
    assert len(lines) == 1, done.stderr[-2000:]
    assert "WARNING" in lines[0]
    assert f"sqlite:///{tmp_path / 'data' / 'syncd' / 'syncd.db'}" in lines[0]
    assert "api.crossref.org, api.datacite.org, doi.org, zenodo.org" in lines[0]


def test_a_configured_syncd_mcp_says_nothing(env: Settings) -> None:  # noqa: F811
    """With ``SYNCD_*`` settings in the environment (the fake upstream, a temp database), ``cache stats``
    carries ``unconfigured: null`` and prints no configuration line.
    """
    runner = CliRunner()
    data = json.loads(runner.invoke(cli, ["cache", "stats", "--json"], obj={}).stdout)
    assert data["unconfigured"] is None
    assert "Configuration:" not in runner.invoke(cli, ["cache", "stats"], obj={}).stdout


def test_cache_stats_shows_the_defaults(env: Settings, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """``cache stats`` of a syncd running on defaults alone (the environment's settings hidden from the
    check, so the fake upstream still answers) carries the same sentence as ``syncd mcp`` logs, in JSON
    and as the text's ``Configuration:`` line.
    """

    def hidden(settings: Settings, config: object = None, environ: object = None) -> object:
        return unconfigured(settings, None, environ={})

    monkeypatch.setattr(commands, "unconfigured", hidden)
    runner = CliRunner()
    data = json.loads(runner.invoke(cli, ["cache", "stats", "--json"], obj={}).stdout)
    assert "no config file and no SYNCD_* setting: using the database sqlite:///" in data["unconfigured"]
    text = runner.invoke(cli, ["cache", "stats"], obj={}).stdout
    assert f"Configuration: {data['unconfigured']}" in text
