"""Settings: one pydantic-settings model, read from a TOML file and ``SYNCD_*`` environment variables.

Precedence (highest first): keyword arguments, environment (``SYNCD_`` prefix, nested keys joined by
``__``, e.g. ``SYNCD_CROSSREF__MAILTO``), the TOML config file, the defaults below.

The config file is the first of: ``--config PATH`` (passed to :func:`load_settings`), ``$SYNCD_CONFIG``,
``$XDG_CONFIG_HOME/syncd/syncd.toml`` (``~/.config/syncd/syncd.toml``), ``/etc/syncd/syncd.toml``.
A missing file is not an error, except when it was named explicitly.

The model is composed from the slices (:data:`syncd.slices.SLICE_PACKAGES`): each slice's
``settings.py`` adds its sections (``[crossref]``), its kinds' lifetimes (``ttl.crossref_work``) and
its watch-list entries (``watch.zenodo_queries``); each slice's ``pools.py`` adds a ``budget.<pool>``
table per pool and a ``budget.<setting>`` per concurrency group; the slices serving MCP tools are the
choices of ``mcp.slices``. The classes below are the core every composition starts from; at run time
:data:`Settings`, :data:`TtlSettings`, :data:`BudgetSettings`, :data:`WatchSettings` and
:data:`McpSettings` are the composed classes (:func:`compose`), so the TOML keys and ``SYNCD_*``
variables of every slice are read as before, and no core module declares a slice's settings.
"""

from __future__ import annotations

import difflib
import logging
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, SecretStr, ValidationError, create_model, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from syncd.budget.settings import BudgetSettings, PoolSettings
from syncd.errors import InvalidInput
from syncd.slices import SLICE_PACKAGES, SliceSettings, slice_module
from syncd.store.paths import local_state_dir
from syncd.upstream.network import NetworkSettings

__all__ = [
    "ANSWER_MIN_CHARS",
    "CHANGES_SLICE",
    "AlertsSettings",
    "BudgetSettings",
    "ChangesSettings",
    "HttpSettings",
    "McpSettings",
    "NetworkSettings",
    "PoolSettings",
    "Settings",
    "StoreSettings",
    "TtlSettings",
    "Unconfigured",
    "WatchSettings",
    "check_config_keys",
    "compose",
    "config_file_candidates",
    "default_database_url",
    "load_settings",
    "local_state_dir",
    "unconfigured",
    "unknown_env_vars",
]

DAY = 86_400.0

log = logging.getLogger("syncd.config")

NON_SETTING_ENV = frozenset(
    {"SYNCD_CONFIG", "SYNCD_TEST_PG", "SYNCD_TEST_PG_URL", "SYNCD_TEST_BACKEND", "SYNCD_UPSTREAM_CORPUS"}
)
"""``SYNCD_*`` variables that are not settings: the config file path and the test suite's switches."""


def default_database_url() -> str:
    """The embedded SQLite default: ``syncd.db`` in :func:`local_state_dir`."""
    return f"sqlite:///{local_state_dir() / 'syncd.db'}"


class HttpSettings(BaseModel):
    """The daemon's Streamable HTTP MCP endpoint (``http://host:port/mcp``)."""

    host: str = Field("127.0.0.1", description="Bind address; loopback by default.")
    port: int = Field(8765, ge=0, le=65535, description="TCP port.")
    token: SecretStr | None = Field(
        None,
        description="Bearer token clients must send; required when binding beyond loopback (never logged).",
    )
    token_file: str | None = Field(None, description="File holding the bearer token (first line), e.g. 0600.")
    max_request_bytes: int = Field(
        1_048_576, ge=1024, description="Largest accepted MCP request body in bytes (1 MiB)."
    )
    header_timeout_s: float = Field(
        10.0,
        gt=0,
        le=300,
        description="Seconds a client has to send a request line and headers before it is disconnected.",
    )
    body_timeout_s: float = Field(
        30.0,
        gt=0,
        le=600,
        description="Seconds a client has to send a whole request body once its headers are in; a slower "
        "body is answered 408 and the connection closed (slowloris protection).",
    )
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host names and addresses clients use to reach the endpoint (Host header), e.g. "
        '["syncd.lab.example", "192.0.2.10"]; "name:port" pins a port, "*" turns the check off. Empty: '
        "loopback names for a loopback bind, else the machine's own names and addresses.",
    )

    def bearer_token(self) -> str | None:
        """The configured bearer token: ``token``, else the first line of ``token_file``, else None.

        Raises:
            InvalidInput: ``token`` is blank, or ``token_file`` cannot be read or is empty (reason
                ``invalid_config``).
        """
        if self.token is not None:
            value = self.token.get_secret_value()
            if not value.strip():
                raise InvalidInput(
                    "http.token is blank; set a real token or unset it", reason="invalid_config"
                )
            return value
        if not self.token_file:
            return None
        try:
            value = Path(self.token_file).expanduser().read_text(encoding="utf-8").splitlines()[0].strip()
        except (OSError, IndexError) as exc:
            raise InvalidInput(
                f"cannot read http.token_file {self.token_file}: {exc}", reason="invalid_config"
            ) from exc
        if not value:
            raise InvalidInput(f"http.token_file {self.token_file} is empty", reason="invalid_config")
        return value


class TtlSettings(BaseModel):
    """Freshness lifetimes in seconds, per kind of stored entry (each slice adds its kinds' own).

    A kind's ``ttl`` (:attr:`syncd.kinds.Kind.ttl`) names one of these fields, never ``miss`` or
    ``deleted``.
    """

    search: float = Field(1 * DAY, gt=0, description="Cached search pages (seconds).")
    entity: float = Field(7 * DAY, gt=0, description="Journals, funders, members, prefixes (seconds).")
    miss: float = Field(3600.0, gt=0, description="Misses: 404s, restricted, other agencies (seconds).")
    deleted: float = Field(
        7 * DAY,
        gt=0,
        description="Deleted records (status gone, 410 tombstones): rechecked this rarely (seconds).",
    )


class StoreSettings(BaseModel):
    """The store's safety limits: replaced-body retention and the bounds of local full-text search."""

    keep_previous_s: float = Field(
        30 * DAY,
        ge=0,
        description="Seconds a replaced body is kept beside its entry (previous_bodies), 30 days.",
    )
    search_max_chars: int = Field(
        2000, ge=1, le=100_000, description="Longest local search query in characters."
    )
    search_max_terms: int = Field(
        256, ge=1, le=10_000, description="Most whitespace-separated terms in a local search query."
    )
    connect_timeout_s: float = Field(
        2.0,
        ge=2,
        le=60,
        description="PostgreSQL: longest wait for a connection to the lab database (seconds; libpq's "
        "minimum is 2). An unreachable database is then not tried again for 30 s: answers come from "
        "upstream, not stored.",
    )


class ChangesSettings(BaseModel):
    """The change feed (``syncd changes``, ``syncd_list_changes``, ``syncd://changes``)."""

    keep_s: float = Field(
        365 * DAY,
        gt=0,
        description="Seconds a recorded change is kept (the daemon prunes older ones), 1 year.",
    )
    poll_s: float = Field(
        10.0,
        gt=0,
        description="Seconds between two checks for changes recorded by other processes (MCP resource "
        "notifications, daemon alerts).",
    )


class AlertsSettings(BaseModel):
    """Alerts for watched entries: retraction, withdrawal, expression of concern, deletion."""

    command: str | list[str] | None = Field(
        None,
        description="Command run once per alert with the change as JSON on stdin (a string is split like a "
        "shell command line, no shell), e.g. \"mail -s 'syncd alert' lab@uni.example\".",
    )
    timeout_s: float = Field(
        30.0, gt=0, le=600, description="Seconds an alert command may run before it is killed."
    )


class WatchSettings(BaseModel):
    """Watch lists the daemon keeps mirrored (added to ``syncd watch ls`` at start, label ``config``).

    Each slice with watch types adds its own entries (``watch.zenodo_communities``, ``[[watch.crossref]]``).
    """

    dois: list[str] = Field(default_factory=list, description="DOIs (Crossref or Zenodo).")
    doi_files: list[str] = Field(default_factory=list, description="Files of DOIs, one per line.")


CHANGES_SLICE = "changes"
"""The change feed's tool set (``syncd_list_changes``), an ``mcp.slices`` choice beside the slices'."""


class McpSettings(BaseModel):
    """What the MCP servers (``syncd mcp``, the daemon's ``/mcp``) expose.

    ``slices``: the tool sets a server lists and answers, each a slice serving tools or ``changes``
    (the choices are composed from the slices).
    """

    slices: list[str] = Field(default_factory=lambda: [CHANGES_SLICE], min_length=1)


ANSWER_MIN_CHARS = 4_000
"""Smallest ``answer_max_chars`` other than 0 (no budget): about 1,000 tokens, room for a record's
fields that are never cut (a 4,000-character Zenodo description, a work's abstract) plus a notice."""


class Settings(BaseSettings):
    """All syncd settings. Field names and environment variables are fixed by DESIGN.md."""

    model_config = SettingsConfigDict(
        env_prefix="SYNCD_",
        env_nested_delimiter="__",
        extra="ignore",
        validate_default=True,
    )
    _toml_file: ClassVar[Path | None] = None

    database_url: str = Field(default_factory=default_database_url, description="SQLAlchemy URL.")
    http: HttpSettings = Field(default_factory=HttpSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    ttl: TtlSettings = Field(default_factory=TtlSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    changes: ChangesSettings = Field(default_factory=ChangesSettings)
    alerts: AlertsSettings = Field(default_factory=AlertsSettings)
    network: NetworkSettings = Field(default_factory=NetworkSettings)
    deadline_s: float = Field(5.0, gt=0, le=300, description="Whole tool call deadline, upstream included.")
    answer_max_chars: int = Field(
        60_000,
        ge=0,
        description="Most characters of one tool answer (text block plus structured JSON; about 4 "
        "characters a token, so 60,000 is about 15k tokens, under Claude Code's 25k-token cut). Longer "
        "answers have their lists cut, with a continuation and a notice; 0 means no budget. Otherwise at "
        "least 4,000 (ANSWER_MIN_CHARS): below that a record's uncut fields alone pass it.",
    )
    budget: BudgetSettings = Field(default_factory=BudgetSettings)
    revalidate_interval_s: float = Field(
        300.0, gt=0, description="Daemon: seconds between revalidation sweeps."
    )
    revalidate_batch: int = Field(200, ge=1, description="Daemon: most entries revalidated per sweep.")
    log_level: str = Field("INFO", description="Logging level of the daemon and CLI.")
    check_upstreams_at_start: bool = Field(
        True,
        description="Daemon start and `syncd cache stats`: one cheap request per upstream (inside the "
        "budget) to tell a wrong base URL; false skips it.",
    )
    # daemon: watch lists and their sync (syncd/passes/watches.py, syncd/passes/sync.py, each slice's walk.py)
    watch: WatchSettings = Field(default_factory=WatchSettings)
    sync_interval_s: float = Field(3600.0, gt=0, description="Daemon: seconds between watch-list syncs.")

    @field_validator("answer_max_chars")
    @classmethod
    def _answer_budget_is_usable(cls, value: int) -> int:
        """0 (no budget) or at least :data:`ANSWER_MIN_CHARS`: a smaller budget cuts every list to nothing."""
        if 0 < value < ANSWER_MIN_CHARS:
            raise ValueError(
                f"answer_max_chars {value:,} is below the minimum {ANSWER_MIN_CHARS:,} (use 0 for no budget)"
            )
        return value

    @field_validator("database_url")
    @classmethod
    def _database_url_has_scheme(cls, value: str) -> str:
        """A database URL names its driver: a plain path is refused with the forms that work."""
        if "://" not in value:
            raise ValueError(
                f"{value!r} is not a database URL; use sqlite:////absolute/path/syncd.db (four slashes "
                "for an absolute path) or postgresql+psycopg://user@host/dbname"
            )
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Order: init kwargs > environment > TOML file > defaults."""
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if cls._toml_file is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=cls._toml_file))
        return tuple(sources)


_CORE: tuple[type[Settings], type[TtlSettings], type[BudgetSettings], type[WatchSettings], type[McpSettings]]
_CORE = (Settings, TtlSettings, BudgetSettings, WatchSettings, McpSettings)
"""The core classes every composition starts from (the names below are rebound to the composed ones)."""


def compose(packages: Sequence[str] = SLICE_PACKAGES) -> tuple[type[Settings], dict[str, type[BaseModel]]]:
    """The settings model of syncd composed of the slice ``packages`` (see the module docstring).

    Returns:
        The composed :class:`Settings` class and its composed tables by name (``ttl``, ``budget``,
        ``watch``, ``mcp``).

    Raises:
        ImportError: a slice's ``settings.py`` or ``pools.py`` cannot be imported.
        ValueError: two slices declare the same setting.
    """
    core, core_ttl, core_budget, core_watch, core_mcp = _CORE
    declared: list[SliceSettings] = []
    pools: list[Any] = []
    groups: list[Any] = []
    tool_sets: list[str] = []
    for package in packages:
        module = slice_module(__name__, package, "settings")
        if module is not None:
            declared.append(module.SETTINGS)
            if module.SETTINGS.tool_set:
                tool_sets.append(package.rsplit(".", 1)[-1])
        pool_module = slice_module(__name__, package, "pools")
        if pool_module is not None:
            pools += pool_module.POOLS
            groups += pool_module.GROUPS

    def fields(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in pairs:
            if name in out:
                raise ValueError(f"two slices declare the setting {name}")
            out[name] = value
        return out

    ttl = create_model(
        "TtlSettings",
        __base__=core_ttl,
        **fields(
            [
                (name, (float, Field(t.default_s, gt=0, description=t.description)))
                for d in declared
                for name, t in d.ttls.items()
            ]
        ),
    )
    budget = create_model(
        "BudgetSettings",
        __base__=core_budget,
        **fields(
            [(p.name, (PoolSettings, Field(default_factory=PoolSettings))) for p in pools]
            + [(g.setting, (int | None, Field(None, ge=1, description=g.description))) for g in groups]
        ),
    )
    watch = create_model(
        "WatchSettings",
        __base__=core_watch,
        **fields(
            [
                (name, (kind, Field(default_factory=factory, description=text)))
                for d in declared
                for name, (kind, factory, text) in d.watch.items()
            ]
        ),
    )
    choices = (*tool_sets, CHANGES_SLICE)
    mcp = create_model(
        "McpSettings",
        __base__=core_mcp,
        slices=(
            list[Literal[choices]],  # type: ignore[valid-type]
            Field(
                default_factory=lambda: list(choices),
                min_length=1,
                description=f"The tool sets a server lists and answers: {', '.join(choices)}; default "
                "all. A smaller set keeps tools/list small for an agent.",
            ),
        ),
    )
    tables: dict[str, type[BaseModel]] = {"ttl": ttl, "budget": budget, "watch": watch, "mcp": mcp}
    sections = fields([(s.name, s.model) for d in declared for s in d.sections])
    tops: dict[str, Any] = {name: (m, Field(default_factory=m)) for name, m in {**sections, **tables}.items()}
    model = create_model("Settings", __base__=core, **tops)
    return cast("type[Settings]", model), tables


if not TYPE_CHECKING:  # the composed classes, under the names every caller uses
    _composed, _tables = compose()
    Settings = _composed
    TtlSettings = _tables["ttl"]
    BudgetSettings = _tables["budget"]
    WatchSettings = _tables["watch"]
    McpSettings = _tables["mcp"]


def config_file_candidates(explicit: str | os.PathLike[str] | None = None) -> list[Path]:
    """The config file lookup order: explicit path, ``$SYNCD_CONFIG``, XDG config dir, ``/etc``."""
    if explicit:
        return [Path(explicit)]
    env = os.environ.get("SYNCD_CONFIG")
    if env:
        return [Path(env)]
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return [Path(xdg) / "syncd" / "syncd.toml", Path("/etc/syncd/syncd.toml")]


def check_config_keys(data: dict[str, Any], model: type[BaseModel] = Settings, prefix: str = "") -> list[str]:
    """The keys of a parsed config file that are not settings, each with the nearest known name.

    Args:
        data: the parsed TOML document (or one of its tables).
        model: the settings model the table maps to.
        prefix: dotted path of the table (for messages).

    Returns:
        One message per unknown key, e.g. ``"crossref.mail_to (did you mean crossref.mailto?)"``.
    """
    problems: list[str] = []
    fields = model.model_fields
    for key, value in data.items():
        path = f"{prefix}{key}"
        field = fields.get(key)
        if field is None:
            near = difflib.get_close_matches(key, list(fields), n=1)
            problems.append(f"{path} (did you mean {prefix}{near[0]}?)" if near else path)
            continue
        sub = _model_of(field.annotation)
        if sub is not None and isinstance(value, dict):
            problems += check_config_keys(value, sub, f"{path}.")
        elif sub is not None and isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    problems += check_config_keys(item, sub, f"{path}[{i}].")
    return problems


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The settings model behind a field type (``X``, ``list[X]``, ``X | None``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def unknown_env_vars(environ: dict[str, str] | None = None) -> list[str]:
    """``SYNCD_*`` environment variables that name no setting, each with the nearest known name.

    ``SYNCD_CROSSREF__MAIL_TO`` gives ``"SYNCD_CROSSREF__MAIL_TO (did you mean SYNCD_CROSSREF__MAILTO?)"``.
    """
    environ = dict(os.environ) if environ is None else environ
    known = _env_names(Settings, "SYNCD_")
    problems: list[str] = []
    for name in sorted(environ):
        upper = name.upper()
        if not upper.startswith("SYNCD_") or upper in NON_SETTING_ENV:
            continue
        if upper in known:
            continue
        parent = upper.rsplit("__", 1)[0] + "__" if "__" in upper else "SYNCD_"
        depth = upper.count("__")
        siblings = sorted(k for k in known if k.startswith(parent) and k.count("__") == depth)
        near = difflib.get_close_matches(upper, siblings or sorted(known), n=1, cutoff=0.5)
        problems.append(f"{name} (did you mean {near[0]}?)" if near else name)
    return problems


@dataclass(frozen=True)
class Unconfigured:
    """What syncd runs on when nothing configured it (no config file, no ``SYNCD_*`` setting).

    Attributes:
        database_url: the store used (the default: ``syncd.db`` in the local state directory).
        hosts: the upstream hosts asked (``host[:port]`` of every ``base_url`` setting), sorted.
    """

    database_url: str
    hosts: tuple[str, ...]

    def sentence(self) -> str:
        """One line for a log or a report naming the database, the hosts, and the likely cause."""
        return (
            f"no config file and no SYNCD_* setting: using the database {self.database_url} and the public "
            f"upstreams {', '.join(self.hosts)}; an MCP client that starts `syncd mcp` may not have passed "
            "its environment (set SYNCD_CONFIG or the SYNCD_* variables in the client's server entry)"
        )


def unconfigured(
    settings: Settings, config: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> Unconfigured | None:
    """:class:`Unconfigured` when ``settings`` came from defaults alone, else None.

    Defaults alone means: no config file given (``config``, ``$SYNCD_CONFIG``) or found in the lookup
    order (:func:`config_file_candidates`), and no environment variable naming a setting (the test
    suite's ``SYNCD_TEST_*`` switches and misspelt names do not count).
    """
    environ = os.environ if environ is None else environ
    if config or environ.get("SYNCD_CONFIG") or any(p.is_file() for p in config_file_candidates()):
        return None
    known = _env_names(Settings, "SYNCD_")
    if any(name.upper() in known for name in environ):
        return None
    hosts = {
        urlsplit(url).netloc
        for name in type(settings).model_fields
        if isinstance(url := getattr(getattr(settings, name), "base_url", None), str)
    }
    return Unconfigured(settings.database_url, tuple(sorted(hosts)))


def _env_names(model: type[BaseModel], prefix: str) -> set[str]:
    """Every environment variable name that sets a leaf or a whole table of ``model``."""
    names: set[str] = set()
    for key, field in model.model_fields.items():
        name = f"{prefix}{key.upper()}"
        names.add(name)
        sub = _model_of(field.annotation)
        if sub is not None:
            names |= _env_names(sub, f"{name}__")
    return names


def _check_database_dir(url: str) -> None:
    """A SQLite file outside the default location must be in a directory that exists.

    Raises:
        InvalidInput: the directory is missing (reason ``invalid_config``): a typo would otherwise give
            this user a private empty cache and budget.
    """
    if not url.startswith("sqlite") or url == default_database_url():
        return
    path = url.split("://", 1)[1].split("?", 1)[0]
    if path.startswith("/"):
        path = path[1:]
    if not path or path == ":memory:":
        return
    parent = Path(path).expanduser().parent
    if not parent.is_dir():
        raise InvalidInput(
            f"the database directory {parent} does not exist (database_url {url}); create it or fix the path",
            reason="invalid_config",
        )


def load_settings(config: str | os.PathLike[str] | None = None, **overrides: Any) -> Settings:
    """Build the settings from the first config file found, the environment and ``overrides``.

    Unknown ``SYNCD_*`` variables are logged as warnings (with the nearest setting name).

    Raises:
        InvalidInput: a config file named explicitly (``--config`` or ``$SYNCD_CONFIG``) does not exist,
            the file cannot be parsed or has keys that are not settings, a file or variable holds an
            invalid value (a database URL without a scheme, ...), or the SQLite database's directory
            does not exist outside the default location (reason ``invalid_config``).
    """
    candidates = config_file_candidates(config)
    explicit = bool(config) or bool(os.environ.get("SYNCD_CONFIG"))
    found = next((p for p in candidates if p.is_file()), None)
    if explicit and found is None:
        raise InvalidInput(f"config file not found: {candidates[0]}", reason="invalid_config")
    if found is not None:
        try:
            document = tomllib.loads(found.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise InvalidInput(f"cannot read config file {found}: {exc}", reason="invalid_config") from exc
        unknown = check_config_keys(document)
        if unknown:
            raise InvalidInput(f"unknown settings in {found}: {'; '.join(unknown)}", reason="invalid_config")
    for problem in unknown_env_vars():
        log.warning("event=unknown_setting variable=%s", problem)

    class _Loaded(Settings):
        _toml_file: ClassVar[Path | None] = found

    try:
        loaded = _Loaded(**overrides)
    except ValidationError as exc:
        details = "; ".join(
            f"{'.'.join(str(p) for p in err.get('loc', ()))}: {err.get('msg')}" for err in exc.errors()
        )
        raise InvalidInput(f"invalid settings: {details}", reason="invalid_config") from exc
    _check_database_dir(loaded.database_url)
    return loaded
