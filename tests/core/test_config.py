"""Settings: fixed names and env variables, TOML lookup order, and an example file documenting every key."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from pydantic import BaseModel

from syncd.config import Settings, check_config_keys, config_file_candidates, load_settings, unknown_env_vars
from syncd.errors import InvalidInput
from syncd.registry import POOLS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "config" / "syncd.example.toml"


def _keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    out: list[str] = []
    for name, field in model.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out.extend(_keys(ann, f"{prefix}{name}."))
        else:
            out.append(f"{prefix}{name}")
    return out


def test_example_config_parses_and_documents_every_key() -> None:
    """config/syncd.example.toml loads into Settings, and every setting's name appears in it."""
    data = tomllib.loads(EXAMPLE.read_text())
    Settings(**data)
    text = EXAMPLE.read_text()
    for key in _keys(Settings):
        leaf = key.rsplit(".", 1)[-1]
        assert leaf in text, f"{key} is not documented in {EXAMPLE.name}"


def test_env_names_follow_design(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """SYNCD_* variables with __ nesting set the DESIGN.md settings, over the config file."""
    cfg = tmp_path / "syncd.toml"
    cfg.write_text('deadline_s = 9\n[crossref]\nmailto = "file@example.org"\n[ttl]\nmiss = 60\n')
    monkeypatch.setenv("SYNCD_CROSSREF__MAILTO", "env@example.org")
    monkeypatch.setenv("SYNCD_TTL__CROSSREF_WORK", "120")
    monkeypatch.setenv("SYNCD_BUDGET__CROSSREF_SINGLE__PER_S", "2.5")
    monkeypatch.setenv("SYNCD_HTTP__PORT", "9999")
    s = load_settings(cfg)
    assert s.crossref.mailto == "env@example.org"  # environment beats the file
    assert s.deadline_s == 9 and s.ttl.miss == 60  # the file beats defaults
    assert s.ttl.crossref_work == 120
    assert POOLS.limits(s, "crossref_single").per_s == 2.5
    assert POOLS.limits(s, "crossref_single").in_flight == 5  # polite pool default, mailto set
    assert POOLS.group_in_flight(s, "crossref") == 5  # single and list requests together (Dec 2025)
    assert s.http.port == 9999


def test_lookup_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """--config beats $SYNCD_CONFIG, which beats $XDG_CONFIG_HOME/syncd/syncd.toml, then /etc."""
    monkeypatch.delenv("SYNCD_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert config_file_candidates() == [tmp_path / "syncd" / "syncd.toml", Path("/etc/syncd/syncd.toml")]
    monkeypatch.setenv("SYNCD_CONFIG", "/x/y.toml")
    assert config_file_candidates() == [Path("/x/y.toml")]
    assert config_file_candidates("/a.toml") == [Path("/a.toml")]


def test_public_pool_defaults_without_mailto(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without crossref.mailto the Crossref pools take the public limits (5/s, 1 in flight; 1/s)."""
    monkeypatch.delenv("SYNCD_CROSSREF__MAILTO", raising=False)
    s = Settings()
    single, listing = POOLS.limits(s, "crossref_single"), POOLS.limits(s, "crossref_list")
    assert (single.per_s, single.in_flight, listing.per_s) == (5, 1, 1)
    assert POOLS.group_in_flight(s, "crossref") == 1


def test_bad_value_is_invalid_config(tmp_path: Path) -> None:
    """A wrong type in the file is refused as invalid_config, not a traceback."""
    cfg = tmp_path / "bad.toml"
    cfg.write_text('deadline_s = "soon"\n')
    with pytest.raises(InvalidInput) as err:
        load_settings(cfg)
    assert err.value.reason == "invalid_config"


def test_example_config_has_no_unknown_keys() -> None:
    """Every key of the shipped example file is a setting (the unknown-key check passes it)."""
    assert check_config_keys(tomllib.loads(EXAMPLE.read_text())) == []


def test_unknown_key_in_file_is_refused_with_the_nearest_name(tmp_path: Path) -> None:
    """A mistyped key in the config file is invalid_config naming the key and the setting meant."""
    cfg = tmp_path / "syncd.toml"
    cfg.write_text('[crossref]\nmail_to = "me@lab.example"\n\n[[watch.crossref]]\nfiltr = ["prefix:10.1"]\n')
    with pytest.raises(InvalidInput) as err:
        load_settings(cfg)
    assert err.value.reason == "invalid_config"
    assert "crossref.mail_to (did you mean crossref.mailto?)" in str(err.value)
    assert "watch.crossref[0].filtr (did you mean watch.crossref[0].filter?)" in str(err.value)


def test_unknown_env_variable_is_warned_with_the_nearest_name(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """SYNCD_TTL__WORK loads (a warning, not an error) and the warning names SYNCD_TTL__CROSSREF_WORK."""
    monkeypatch.delenv("SYNCD_CONFIG", raising=False)
    monkeypatch.setenv("SYNCD_TTL__WORK", "60")
    monkeypatch.setenv("SYNCD_TEST_PG", "off")  # the suite's own switches are not settings, nor warned
    with caplog.at_level("WARNING", logger="syncd.config"):
        load_settings()
    assert "SYNCD_TTL__WORK (did you mean SYNCD_TTL__CROSSREF_WORK?)" in caplog.text
    assert "SYNCD_TEST_PG " not in caplog.text
    assert unknown_env_vars({"SYNCD_DATABASE_URL": "sqlite://", "SYNCD_CONFIG": "/x"}) == []


def test_database_url_without_scheme_is_refused_with_the_form() -> None:
    """SYNCD_DATABASE_URL=/path/to/file.db is one invalid_config line showing sqlite:////..., no traceback."""
    with pytest.raises(InvalidInput) as err:
        load_settings(database_url="/path/to/file.db")
    assert err.value.reason == "invalid_config"
    assert "sqlite:////absolute/path/syncd.db" in str(err.value)
    assert "\n" not in str(err.value)


def test_missing_database_directory_is_refused_unless_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A database in a directory that does not exist is refused; the default location may be created."""
    with pytest.raises(InvalidInput) as err:
        load_settings(database_url=f"sqlite:///{tmp_path}/typo/syncd.db")
    assert f"{tmp_path}/typo does not exist" in str(err.value)
    monkeypatch.delenv("SYNCD_DATABASE_URL", raising=False)
    monkeypatch.delenv("SYNCD_CONFIG", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "fresh"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.delenv("STATE_DIRECTORY", raising=False)
    assert load_settings().database_url == f"sqlite:///{tmp_path}/fresh/syncd/syncd.db"
