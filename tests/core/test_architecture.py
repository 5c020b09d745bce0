"""The package's shape: imports flow one way (no cycle), none hides inside a function, the runner stays low.

The module graph is built from the source with :mod:`ast` (every ``import``/``from ... import`` of a
``syncd`` module, at any depth) plus the lazily loaded modules :data:`syncd.lazy.LAZY` declares (the
``syncd`` commands, loaded by name when one runs), so the graph shows every edge. An import inside a
function is refused unless ``LAZY`` declares it for its module. Start-up (issue 28 item 1): importing
the command line loads no MCP SDK, no tool, no lxml, no citeproc and no database layer.
"""

from __future__ import annotations

import ast
import functools
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from syncd.cli import COMMANDS
from syncd.config import BudgetSettings, Settings, TtlSettings
from syncd.lazy import LAZY, declared, declares, load
from syncd.registry import (
    HOOK_MODULES,
    KINDS,
    POOLS,
    SLICES,
    TOOL_MODULES,
    WALK_MODULES,
    WATCH_TYPES,
    mcp_specs,
    resource_specs,
    tool_specs,
)
from syncd.server import app as server
from syncd.server import changes
from tests.helpers import every_tool

ROOT = Path(__file__).resolve().parents[2] / "syncd"


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _targets(node: ast.Import | ast.ImportFrom, module: str) -> list[str]:
    """The ``syncd`` modules one import statement names (``from pkg import mod`` counts ``pkg.mod``)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".")
        if MODULES[module].name != "__init__.py":
            package = package[:-1]
        package = package[: len(package) - node.level + 1]
        base = ".".join([*package, base] if base else package)
    out = [base]
    out += [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES]
    return out


def _type_checking_only(tree: ast.Module) -> set[int]:
    """Ids of the nodes inside ``if TYPE_CHECKING:`` blocks (imports for annotations, never run)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            inside.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return inside


@functools.cache  # one parse of the package per worker; the tests only read it
def _graph(runtime: bool = False) -> dict[str, set[str]]:
    """Each syncd module -> the syncd modules it imports (at the top, in a function, or declared lazy).

    ``runtime``: leave out the imports of ``if TYPE_CHECKING:`` blocks (they are never run).
    """
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        deps: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_only(tree) if runtime else set()
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                deps.update(t for t in _targets(node, module) if t in MODULES and t != module)
        deps.update(declared(module, MODULES))
        graph[module] = deps
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` as a list of modules (first repeated last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                return [*stack[stack.index(dep) :], dep]
            if dep not in state and (found := visit(dep)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_module_graph_has_no_cycle() -> None:
    """No ``syncd`` module imports, directly or through others, a module that imports it back (imports
    inside functions and the lazy ones count; those of ``if TYPE_CHECKING:`` blocks are never run).
    """
    graph = _graph(runtime=True)
    assert len(graph) > 50  # the walk saw the package
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def _package_of(module: str) -> str:
    """The top-level package (``syncd.road``) or root module (``syncd.config``) ``module`` belongs to."""
    return ".".join(module.split(".")[:2])


def _loops(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of ``graph`` with more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            node, deps = work[-1]
            dep = next(deps, None)
            if dep is not None:
                if dep not in index:
                    index[dep] = low[dep] = len(index)
                    stack.append(dep)
                    on.add(dep)
                    work.append((dep, iter(sorted(graph.get(dep, ())))))
                elif dep in on:
                    low[node] = min(low[node], index[dep])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = set()
                while True:
                    top = stack.pop()
                    on.discard(top)
                    part.add(top)
                    if top == node:
                        break
                if len(part) > 1:
                    found.append(part)
    return found


def _package_graph() -> dict[str, set[str]]:
    """Syncd's top-level packages and root modules -> those they import (run-time imports only)."""
    out: dict[str, set[str]] = {}
    for module, deps in _graph(runtime=True).items():
        mine = _package_of(module)
        out.setdefault(mine, set()).update(_package_of(d) for d in deps if _package_of(d) != mine)
    out.pop("syncd", None)
    return out


PENDING_PACKAGE_LOOPS: dict[str, str] = {}
"""Top-level packages still inside an import loop, with what removes them (kept failing if it grows)."""


def test_the_top_level_packages_form_no_import_loop() -> None:
    """No top-level package or root module of syncd (``syncd.store``, ``syncd.road``, a slice, the
    registry ...) is inside an import loop with others: imports in functions and the lazy ones count,
    ``if TYPE_CHECKING:`` ones do not (a listed pending package leaves the list once no loop holds it).
    """
    graph = _package_graph()
    assert {"syncd.crossref", "syncd.retractions", "syncd.registry", "syncd.road"} <= set(graph)
    looped = set().union(*_loops(graph))
    assert looped <= set(PENDING_PACKAGE_LOOPS), sorted(looped - set(PENDING_PACKAGE_LOOPS))
    assert set(PENDING_PACKAGE_LOOPS) <= looped, sorted(set(PENDING_PACKAGE_LOOPS) - looped)
    assert {"syncd.store", "syncd.normalize", "syncd.errors"}.isdisjoint(looped)


def test_the_loop_finder_finds_a_planted_loop() -> None:
    """The package-loop finder reports a planted loop of three and leaves a chain alone."""
    assert _loops({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert _loops({"a": {"b"}, "b": set()}) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The checker itself reports a planted cycle (so the test above can fail)."""
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def _function_imports() -> list[str]:
    """``module:line name`` of every import inside a function that :data:`LAZY` does not declare."""
    found = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(func):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = [node.module or ""]
                else:
                    continue
                found += [f"{module}:{node.lineno} {n}" for n in names if not declares(module, n)]
    return found


def test_no_import_inside_a_function_except_the_declared_lazy_ones() -> None:
    """Every import sits at the top of its module, except those syncd.lazy.LAZY declares for it."""
    assert _function_imports() == []


def test_the_lazy_table_names_real_modules_and_the_commands_it_loads() -> None:
    """Each importer in LAZY is a syncd module, each syncd module it names exists (each ``*`` pattern
    matches one at least), and the modules of the ``syncd`` commands (syncd.cli.COMMANDS) are exactly
    those LAZY declares for syncd.cli.
    """
    assert {k for k in LAZY if "*" not in k} <= set(MODULES)
    keys = [re.compile(re.escape(k).replace(r"\*", "[A-Za-z0-9_]+")) for k in LAZY if "*" in k]
    assert all(any(key.fullmatch(m) for m in MODULES) for key in keys)
    named = {m for mods in LAZY.values() for m in mods if m.startswith("syncd") and "*" not in m}
    assert named <= set(MODULES), named - set(MODULES)
    patterns = {(i, m) for i, mods in LAZY.items() for m in mods if "*" in m}
    assert patterns and all(declared(i, MODULES) for i, _ in patterns)
    assert {c.module for c in COMMANDS.values()} == declared("syncd.cli", MODULES)
    assert all(declares("syncd.cli", c.module) for c in COMMANDS.values())


def test_load_refuses_a_module_the_table_does_not_declare() -> None:
    """syncd.lazy.load imports a declared module and raises LookupError for an undeclared one."""
    assert load("syncd.cli", "syncd.cli.db_commands").__name__ == "syncd.cli.db_commands"
    with pytest.raises(LookupError, match="does not declare"):
        load("syncd.cli", "syncd.server.app")
    assert declares("syncd.registry", "syncd.datacite.tools") and declares(
        "syncd.registry", "syncd.crossref.tools_batch"
    )
    assert not declares("syncd.registry", "syncd.datacite.lookups")
    assert not declares("syncd.registry", "syncd.a.b.tools")  # ``*`` is one name, never a dotted path
    with pytest.raises(LookupError, match="does not declare"):
        load("syncd.registry", "syncd.datacite.queries")


def test_a_pattern_key_declares_each_slice_s_own_modules() -> None:
    """A key ``syncd.*.rules`` declares for each slice's rules that slice's views, never another's, and
    an entry's own ``*`` past the key's stays a pattern (a planted table).
    """
    table = {"syncd.*.rules": frozenset({"syncd.*.views", "syncd.*.views_*"})}
    assert declares("syncd.zenodo.rules", "syncd.zenodo.views", table)
    assert declares("syncd.zenodo.rules", "syncd.zenodo.views_changes", table)
    assert not declares("syncd.zenodo.rules", "syncd.crossref.views", table)
    assert not declares("syncd.zenodo.lookups", "syncd.zenodo.views", table)
    assert declared("syncd.crossref.rules", MODULES, table) >= {"syncd.crossref.views"}


def _loaded(code: str) -> list[str]:
    """The modules loaded by running ``code`` in a fresh interpreter (sorted)."""
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport json, sys; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out.splitlines()[-1])


HEAVY = ("mcp", "syncd.tools", "lxml", "citeproc", "sqlalchemy", "alembic", "httpx", "pydantic")
"""What the command line must not load before a command runs (each costs 20-600 ms at start)."""


def _heavy(loaded: list[str]) -> list[str]:
    return [m for m in loaded if m in HEAVY or m.startswith(tuple(f"{h}." for h in HEAVY))]


def test_importing_the_command_line_loads_no_heavy_library() -> None:
    """``import syncd.cli`` loads no MCP SDK, no syncd.tools module, no lxml, no citeproc, no SQLAlchemy,
    Alembic, httpx or pydantic (issue 28 item 1: every command paid ~3 s for them).
    """
    loaded = _loaded("import syncd.cli")
    assert "syncd.cli" in loaded and "click" in loaded
    assert _heavy(loaded) == []


def test_syncd_help_loads_no_command_module() -> None:
    """``syncd --help`` lists every command from syncd.cli.COMMANDS without importing any of them (it
    loads only the exit codes, ``syncd.cli.exits``).
    """
    code = "from syncd.cli import cli\ntry:\n    cli(['--help'], obj={})\nexcept SystemExit:\n    pass"
    loaded = _loaded(code)
    assert [m for m in loaded if m.startswith("syncd.cli.")] == ["syncd.cli.exits"]
    assert _heavy(loaded) == []


def test_each_command_summary_is_its_own_help() -> None:
    """The summary ``syncd --help`` shows for each command is the first sentence of that command's help."""
    for name, spec in COMMANDS.items():
        command = getattr(load("syncd.cli", spec.module), spec.attribute)
        assert isinstance(command, click.Command)
        assert command.get_short_help_str(limit=10**6) == spec.summary, name
        assert command.name == name


@pytest.mark.parametrize(
    "module", ["syncd.road.local_first", "syncd.road.policy", "syncd.kinds", "syncd.store.content"]
)
def test_the_low_modules_import_no_lookup_and_no_tool(module: str) -> None:
    """Importing the runner, policy, kinds table or content helpers loads no lookup and no tool."""
    code = f"import json, sys, {module}; print(json.dumps(sorted(m for m in sys.modules if 'syncd' in m)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = json.loads(out)
    assert module in loaded
    assert [m for m in loaded if m.startswith(("syncd.lookups", "syncd.tools"))] == []


# --------------------------------------------------------------------------------------------------
# the kind adapter (issue 21): a kind has one home, the core names none


@functools.cache
def _tree(module: str) -> ast.Module:
    return ast.parse(MODULES[module].read_text(encoding="utf-8"))


def _literal_args(tree: ast.Module) -> set[int]:
    """Ids of the constants inside ``Literal[...]`` (setting names that coincide with kind names)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == "Literal"
        ):
            inside.update(id(c) for c in ast.walk(node.slice) if isinstance(c, ast.Constant))
    return inside


def _kind_mentions(module: str) -> list[str]:
    """Kind names (entry kinds and the slices' watch kinds) written as strings, and slice kind-name
    modules imported, in ``module``.
    """
    names = set(KINDS) | set(WATCH_TYPES) | {"zenodo_preview"}
    tree = _tree(module)
    skip = _literal_args(tree)
    found = []
    for node in ast.walk(tree):
        named = isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
        if named and id(node) not in skip:
            found.append(f"{module}:{node.lineno} {node.value!r}")  # type: ignore[attr-defined]
        source = node.module or "" if isinstance(node, ast.ImportFrom) else ""
        if source.endswith(".names") and source.split(".")[1] in {"crossref", "zenodo", "doiorg", "datacite"}:
            found.append(f"{module}:{node.lineno} import {source}")  # type: ignore[attr-defined]
    return found


KIND_FREE = (
    "syncd.store",
    "syncd.road.local_first",
    "syncd.road.policy",
    "syncd.kinds",
    "syncd.road.services",
    "syncd.passes.refresh",
    "syncd.road.batch",
    "syncd.passes.sync",
    "syncd.walks.walker",
    "syncd.passes.watches",
    "syncd.road.records",
)
"""Modules (and packages) that must name no kind: the store, the road, the policy, the hook spec,
the services bundle, revalidation and its batches, the watch passes, what walkers share and the watch
lists (each slice's watch types come from the registry), the record sources."""

PENDING_KIND_NAMES: dict[str, str] = {}
"""Core modules that still name a kind, each with what removes it (kept failing if it grows)."""


def test_the_store_and_the_core_name_no_kind() -> None:
    """No kind name or kind constant in the store, the road, the policy, the hook spec, refresh, the
    batch revalidation or the watch passes.
    """
    core = [m for m in MODULES if m.startswith(KIND_FREE)]
    assert len(core) > 15
    assert [f for m in core for f in _kind_mentions(m)] == []


def test_the_pending_core_modules_name_kinds_only_where_listed() -> None:
    """Transfer, cli and the MCP machinery name no kind; a pending core module is listed with why."""
    others = [
        m
        for m in MODULES
        if m.startswith(("syncd.transfer", "syncd.cli", "syncd.server.app", "syncd.tools.fit"))
        or m.startswith(("syncd.tools.errors", "syncd.budget", "syncd.daemon"))
    ]
    assert [f for m in others for f in _kind_mentions(m)] == []
    for module in PENDING_KIND_NAMES:
        assert _kind_mentions(module), f"{module} names no kind any more: drop it from PENDING_KIND_NAMES"


def test_the_services_bundle_imports_no_slice() -> None:
    """``syncd.road.services`` opens the clients the registry hands over (``CLIENTS``): no slice import."""
    graph = _graph()
    slices = ("syncd.crossref", "syncd.zenodo", "syncd.doiorg", "syncd.registry")
    assert sorted(d for d in graph["syncd.road.services"] if d.startswith(slices)) == []


def test_the_generic_normalizers_import_no_slice() -> None:
    """``syncd.normalize`` (the change-summary machinery, DOIs, text) imports no slice: each kind's change
    summary lives in its slice (``views_changes``, the doi.org rules) and reaches the store through its
    :class:`~syncd.store.rules.StoreRules`.
    """
    graph = _graph()
    slices = ("syncd.crossref", "syncd.zenodo", "syncd.doiorg", "syncd.registry")
    found = {m: sorted(d for d in deps if d.startswith(slices)) for m, deps in graph.items()}
    assert {m: d for m, d in found.items() if m.startswith("syncd.normalize") and d} == {}


def test_the_store_imports_neither_normalize_nor_the_kinds() -> None:
    """``syncd.store`` receives each kind's rules from the caller: no import of normalize, kinds or slices."""
    graph = _graph()
    banned = (
        "syncd.normalize",
        "syncd.kinds",
        "syncd.registry",
        "syncd.crossref",
        "syncd.zenodo",
        "syncd.doiorg",
        "syncd.datacite",
    )
    found = {
        m: sorted(d for d in deps if d.startswith(banned))
        for m, deps in graph.items()
        if m.startswith("syncd.store")
    }
    assert {m: d for m, d in found.items() if d} == {}


def test_the_policy_takes_plain_facts_and_the_store_points_up_to_nothing() -> None:
    """``policy`` never sees the store's row type (it takes :class:`EntryFacts`); ``store/`` imports no
    policy, road or kind (the staleness bounds reach it as plain values).
    """
    graph = _graph()
    policy_tree = _tree("syncd.road.policy")
    names = {n.id for n in ast.walk(policy_tree) if isinstance(n, ast.Name)} | {
        a.name for n in ast.walk(policy_tree) if isinstance(n, ast.ImportFrom) for a in n.names
    }
    assert "StoredEntry" not in names
    rows = ("syncd.store.repo", "syncd.store.rows", "syncd.store.entries")
    assert not {d for d in graph["syncd.road.policy"] if d.startswith(rows)}
    up = (
        "syncd.road.policy",
        "syncd.road.local_first",
        "syncd.kinds",
        "syncd.road.services",
        "syncd.passes.refresh",
    )
    assert {
        m: sorted(d for d in deps if d.startswith(up))
        for m, deps in graph.items()
        if m.startswith("syncd.store") and deps & set(up)
    } == {}


def _calls(module: str, attr: str) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(_tree(module))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == attr
    ]


def test_exactly_one_place_claims_a_plan() -> None:
    """The local-first road (:func:`~syncd.road.local_first.local_first`) alone calls ``Runner.claim``."""
    callers = {m: lines for m in MODULES if (lines := _calls(m, "claim"))}
    assert list(callers) == ["syncd.road.local_first"] and len(callers["syncd.road.local_first"]) == 1


SLICE_ROLES = (
    "__init__",
    "names",
    "rules",
    "kinds",
    "client",
    "params",
    "views",
    "contracts",
    "args",
    "lookups",
    "queries",
    "tools",
    "walk",
    "pools",
    "slice",
    "settings",
)
"""The files every upstream slice holds, each for one job; ``<role>_<topic>.py`` splits a big role."""
FULL_SLICES = ("crossref", "zenodo", "datacite")
"""The upstream slices that hold every role (``doiorg/`` holds a subset)."""
PENDING_ROLES: dict[str, dict[str, str]] = {}
"""Roles a full slice does not hold yet, with what removes each (kept failing when it is done)."""


def _roles(slice_name: str) -> set[str]:
    names = {p.stem for p in (ROOT / slice_name).glob("*.py")}
    return {"__init__" if n == "__init__" else n.split("_")[0] for n in names}


def test_the_slices_hold_files_of_the_same_names_and_only_the_composition_imports_every_slice() -> None:
    """``crossref/``, ``zenodo/`` and ``datacite/`` hold a file (or ``<role>_<topic>`` files) of every
    role in :data:`SLICE_ROLES`, and nothing else; ``doiorg/`` holds a subset; the registry (each slice's
    ``slice.py``) and the settings (each slice's ``settings.py`` and ``pools.py``), both loading the
    packages :data:`syncd.slices.SLICE_PACKAGES` names, are the only modules importing more than one
    slice package; no full slice imports another (doi.org's is shared).
    """
    for name in FULL_SLICES:
        expected = set(SLICE_ROLES) - set(PENDING_ROLES.get(name, {}))
        assert _roles(name) == expected, name
    for name, pending in PENDING_ROLES.items():
        assert not set(pending) & _roles(name), f"{name} holds {pending}: drop it from PENDING_ROLES"
    assert _roles("doiorg") <= set(SLICE_ROLES)
    graph = _graph()
    packages = {f"syncd.{name}" for name in FULL_SLICES}
    both = sorted(
        m
        for m, deps in graph.items()
        if not m.startswith(tuple(f"{p}." for p in packages))
        and len(packages & {d.split(".")[0] + "." + d.split(".")[1] for d in deps if d.count(".")}) > 1
    )
    assert both == sorted({"syncd.registry", "syncd.config", *PENDING_TWO_SLICES})
    across = sorted(
        f"{m} -> {d}"
        for m, deps in graph.items()
        for d in deps
        for a in FULL_SLICES
        for b in FULL_SLICES
        if a != b and m.startswith(f"syncd.{a}.") and d.startswith(f"syncd.{b}.")
    )
    assert across == sorted(PENDING_ACROSS)


WALK_MACHINERY = (
    "syncd.passes.sync",
    "syncd.walks.walker",
    "syncd.passes.watches",
    "syncd.walks.cursor",
    "syncd.road.batch",
    "syncd.passes.refresh",
)


def test_the_walk_and_batch_machinery_import_no_slice() -> None:
    """The watch passes and lists, what walkers share and the batch revalidation import no slice module:
    they read each watch kind's walker and watch type and each kind's ``revalidate_many`` hook from the
    registry.
    """
    graph = _graph()
    slices = ("syncd.crossref", "syncd.zenodo", "syncd.doiorg", "syncd.datacite")
    found = {m: sorted(d for d in graph[m] if d.startswith(slices)) for m in WALK_MACHINERY}
    assert {m: d for m, d in found.items() if d} == {}
    assert "syncd.registry" in graph["syncd.passes.sync"]
    assert "syncd.registry" in graph["syncd.passes.refresh"]


def test_transfer_imports_no_slice() -> None:
    """``syncd.transfer`` (export, Parquet export, import, file formats) imports no slice module: a data
    file's objects are built by their kind's row builder (:class:`syncd.kinds.DataFileRows`), which the CLI
    hands in from the registry's ``DATA_FILES``; an exported line goes through its kind's hooks, looked up
    in the registry; a kind's Parquet columns are its ``export`` hook (:class:`syncd.kinds.ExportRows`).
    """
    graph = _graph()
    slices = ("syncd.crossref", "syncd.zenodo", "syncd.doiorg", "syncd.datacite", "syncd.retractions")
    transfer = {m: sorted(d for d in deps if d.startswith(slices)) for m, deps in graph.items()}
    transfer = {m: d for m, d in transfer.items() if m.startswith("syncd.transfer")}
    assert len(transfer) == 6
    assert {m: d for m, d in transfer.items() if d} == {}
    assert "syncd.kinds" in graph["syncd.transfer.imports"]
    assert "syncd.kinds" in graph["syncd.transfer.parquet"]


def test_the_mcp_machinery_imports_no_slice_and_serves_the_registrys_tools() -> None:
    """``syncd.tools`` (spec, fit, errors, server, stdio, the change feed) imports no slice module; the
    server holds no tool table and imports no registry: the composition root hands it the slices'
    tools (:func:`syncd.registry.mcp_specs`) and it adds the change feed's, in that order.
    """
    graph = _graph()
    slices = ("syncd.crossref", "syncd.zenodo", "syncd.doiorg", "syncd.datacite")
    found = {m: sorted(d for d in deps if d.startswith(slices)) for m, deps in graph.items()}
    assert {m: d for m, d in found.items() if m.startswith("syncd.tools") and d} == {}
    assert "syncd.registry" not in graph["syncd.server.app"]
    assert not hasattr(server, "TOOLS") and not hasattr(server, "RESOURCES")
    assert every_tool() == (*tool_specs(), *changes.TOOLS)
    assert server.served_resources(resource_specs()) == (*resource_specs(), *changes.RESOURCES)
    assert len({s.name for s in every_tool()}) == len(every_tool()) == 22
    tools = {m for mods in TOOL_MODULES.values() for m in mods}
    walks = {m for mods in WALK_MODULES.values() for m in mods}
    lazy = {*tools, *HOOK_MODULES.values(), *walks, "syncd.datacite.queries_agency"}
    assert lazy <= declared("syncd.registry", MODULES)


def test_a_server_serves_the_tools_of_its_slices_only(settings: Settings) -> None:
    """``mcp.slices`` picks the tools and resources: the named slices' in registry order (a Zenodo-only
    server serves no Crossref guide), the feed's tool only when named.
    """
    zenodo = settings.model_copy(
        update={"mcp": settings.mcp.model_copy(update={"slices": ["zenodo", "changes"]})}
    )
    tools, resources = mcp_specs(zenodo)
    assert tools == tool_specs(("zenodo",)) and resources == resource_specs(("zenodo",)) == ()
    assert "skill://crossref-guide/SKILL.md" in {r.uri for r in resource_specs(("crossref",))}
    served = server.served_tools(tools, zenodo.mcp.slices)
    assert {s.name.split("_")[0] for s in served} == {"zenodo", "syncd"} and served[-1] == changes.TOOLS[-1]
    assert server.served_tools(tool_specs(("crossref",)), ["crossref"]) == tool_specs(("crossref",))


def test_importing_the_server_builds_no_tool_table() -> None:
    """``import syncd.server.app`` loads no slice's tool module (no tool table built at import)."""
    loaded = _loaded("import syncd.server.app")
    assert "syncd.server.app" in loaded
    tool_like = [m for m in loaded if m.count(".") == 2 and m.split(".")[2].split("_")[0] == "tools"]
    assert [m for m in tool_like if not m.startswith("syncd.tools.")] == []


def store_uses(source: str) -> list[int]:
    """Lines of ``source`` that use a ``.store`` attribute (``services.store``, ``deps.store``, ...)."""
    return sorted(
        {n.lineno for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Attribute) and n.attr == "store"}
    )


TOOL_MODULES_CHECKED = ("syncd.crossref.tools", "syncd.zenodo.tools", "syncd.doiorg.tools", "syncd.tools.")
STORE_TOOL = "syncd.server.changes"
"""The change-feed tool: the one tool module that reads the store itself (the feed is the store's)."""
PENDING_STORE_QUERIES: dict[str, str] = {}
"""Query modules that still use the store directly, each with what removes it (none since the DataCite
queries read through ``lookups.stored_work`` / ``mirror_search`` taking the services bundle; kept empty)."""


def _query_modules() -> list[str]:
    """The contract-assembly modules of every slice: ``syncd.<slice>.queries`` and ``queries_<topic>``."""
    return [m for m in MODULES if m.count(".") == 2 and m.split(".")[2].split("_")[0] == "queries"]


def test_tools_never_use_the_store_directly_except_the_change_feed_tool() -> None:
    """No tool module of a slice (``tools*.py``) nor of the MCP machinery (``syncd/tools/``) uses a
    ``.store`` attribute, except the change-feed tool: lookups return what they learnt (resolved-from,
    notes, last known, since-stored) and the queries assemble the answers.
    """
    checked = [m for m in MODULES if m.startswith(TOOL_MODULES_CHECKED) and m != STORE_TOOL]
    assert len(checked) > 12
    found = {m: lines for m in checked if (lines := store_uses(MODULES[m].read_text(encoding="utf-8")))}
    assert found == {}
    assert store_uses(MODULES[STORE_TOOL].read_text(encoding="utf-8"))  # the exception is real


def test_queries_never_use_the_store_directly() -> None:
    """No query module of a slice (``queries*.py``, the contract assembly) uses a ``.store`` attribute:
    what the store holds reaches them through the slice's lookups (``lookups_stored``, ``held_record``,
    ``stored_page``...), which take the services bundle. A pending module is listed with what removes it.
    """
    checked = _query_modules()
    assert {"syncd.crossref.queries", "syncd.zenodo.queries_search", "syncd.datacite.queries"} <= set(checked)
    found = {m: lines for m in checked if (lines := store_uses(MODULES[m].read_text(encoding="utf-8")))}
    assert sorted(found) == sorted(PENDING_STORE_QUERIES), found
    assert set(PENDING_STORE_QUERIES) <= set(checked)


def test_the_store_use_finder_finds_a_planted_use() -> None:
    """The checker itself reports a planted ``services.store`` use (so the test above can fail)."""
    source = "def tool(services):\n    x = 1\n    return services.store.get('k', 'v')\n"
    assert store_uses(source) == [3]
    assert store_uses("def tool(services):\n    return services.settings\n") == []


PENDING_TWO_SLICES: dict[str, str] = {}
PENDING_ACROSS: dict[str, str] = {}
"""Modules that import two slices' names besides the registry, each with what removes it."""


def test_provenance_is_built_only_by_the_policy() -> None:
    """Every ``cache`` block comes from a :mod:`syncd.road.policy` function: ``Provenance(`` nowhere else."""
    built = {
        m
        for m in MODULES
        for node in ast.walk(_tree(m))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Provenance"
    }
    assert built == {"syncd.road.policy"}


# --- no test asserts a wall-clock duration ------------------------------------------------------------

TESTS = Path(__file__).resolve().parents[1]
CLOCK_CALLS = {
    "monotonic",
    "monotonic_ns",
    "perf_counter",
    "perf_counter_ns",
    "time",
    "time_ns",
    "process_time",
    "process_time_ns",
}
"""``time.<name>()`` (or a bare ``monotonic()``/``perf_counter()``, or ``loop.time()``): a clock read."""


def _is_clock_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return (func.value.id == "time" and func.attr in CLOCK_CALLS) or (
            func.value.id == "loop" and func.attr == "time"
        )
    return isinstance(func, ast.Name) and func.id in {"monotonic", "perf_counter"}


def _call_name(node: ast.AST) -> str | None:
    node = node.value if isinstance(node, ast.Await) else node
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name):
            return node.func.id
        if isinstance(node.func, ast.Attribute):
            return node.func.attr
    return None


class _Durations:
    """Which expressions of one test module are measured durations (a clock read minus another)."""

    def __init__(self, tree: ast.Module) -> None:
        self.functions: dict[str, set[int | None]] = {}  # name -> positions of its returned tuple (None: all)
        funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for _ in range(3):  # a helper returning another helper's duration
            for func in funcs:
                if not self._may_time(func):
                    continue
                clocked, durations = self._names(func)
                for node in ast.walk(func):
                    if isinstance(node, ast.Return) and node.value is not None:
                        values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
                        at = {i for i, v in enumerate(values) if self.is_duration(v, clocked, durations)}
                        if at:
                            self.functions.setdefault(func.name, set()).update(
                                at if isinstance(node.value, ast.Tuple) else {None}
                            )

    def _may_time(self, func: ast.AST) -> bool:
        """``func`` reads a clock, calls a duration helper or names something ``elapsed`` (else: skipped)."""
        for n in ast.walk(func):
            if _is_clock_call(n) or _call_name(n) in self.functions:
                return True
            if isinstance(n, (ast.Name, ast.Attribute)) and "elapsed" in (getattr(n, "id", "") or n.attr):
                return True
        return False

    def _clock(self, node: ast.AST, clocked: set[str]) -> bool:
        return any(_is_clock_call(n) or (isinstance(n, ast.Name) and n.id in clocked) for n in ast.walk(node))

    def is_duration(self, node: ast.AST, clocked: set[str], durations: set[str]) -> bool:
        """``node`` holds a duration: clock minus clock, a name bound to one, or a duration helper's value."""
        for n in ast.walk(node):
            sub = isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub)
            if sub and self._clock(n.left, clocked) and self._clock(n.right, clocked):  # type: ignore[attr-defined]
                return True
            if isinstance(n, ast.Name) and n.id in durations:
                return True
            if isinstance(n, (ast.Name, ast.Attribute)) and "elapsed" in (getattr(n, "id", "") or n.attr):
                return True
            name = _call_name(n)
            if name is not None and None in self.functions.get(name, set()):
                return True
        return False

    def _names(self, func: ast.AST) -> tuple[set[str], set[str]]:
        """Names of ``func`` bound to a clock read (``start``, ``deadline``) and to a duration."""
        clocked: set[str] = set()
        durations: set[str] = set()
        for _ in range(3):
            for node in ast.walk(func):
                targets: list[ast.AST] = []
                value: ast.AST | None = None
                if isinstance(node, ast.Assign):
                    targets, value = node.targets, node.value
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                    targets, value = [node.target], node.value
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and any(self.is_duration(a, clocked, durations) for a in node.args)
                ):
                    targets = [node.func.value]  # samples.append(time.perf_counter() - started)
                if value is None and not targets:
                    continue
                for target in targets:
                    positions = self.functions.get(_call_name(value) or "", set()) if value else set()
                    if isinstance(target, ast.Tuple) and positions - {None}:
                        picked = [e for i, e in enumerate(target.elts) if i in positions]
                        durations.update(e.id for e in picked if isinstance(e, ast.Name))
                        continue
                    names = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
                    if value is None or self.is_duration(value, clocked, durations):
                        durations |= names
                    elif self._clock(value, clocked):
                        clocked |= names
        return clocked, durations

    def asserts(self, tree: ast.Module) -> list[int]:
        """Lines of ``assert`` statements (in any function) whose test holds a measured duration."""
        found = []
        for func in ast.walk(tree):
            if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) and self._may_time(func):
                clocked, durations = self._names(func)
                found += [
                    n.lineno
                    for n in ast.walk(func)
                    if isinstance(n, ast.Assert) and self.is_duration(n.test, clocked, durations)
                ]
        return sorted(set(found))


def duration_asserts(source: str) -> list[int]:
    """Lines of ``source`` (a test module) asserting a duration measured with the wall clock."""
    tree = ast.parse(source)
    return _Durations(tree).asserts(tree)


def test_no_test_asserts_a_wall_clock_duration() -> None:
    """No test module asserts a duration measured by the test (a clock read minus another, directly, through
    a name, a list of samples or a helper's return value, or anything named ``elapsed``): a busy machine
    must not fail the suite. Timing claims assert bounded work (requests, waits asked of the injected
    clock, timeouts given, terms sent, VM steps), a server-side time (the tool body's, measured by
    ``tests.conftest.time_tool_bodies``) or the fake upstream's receive times; speed is benchmarks/'.
    """
    found = [
        f"{path.name}:{line}"
        for path in sorted(TESTS.rglob("test_*.py"))
        for line in duration_asserts(path.read_text(encoding="utf-8"))
    ]
    assert found == []


@pytest.mark.parametrize(
    "source",
    [
        "import time\ndef test():\n    t = time.monotonic()\n    work()\n"
        "    assert time.monotonic() - t < 2.5\n",
        "import time\ndef test():\n    t = time.perf_counter()\n    work()\n"
        "    took = time.perf_counter() - t\n    assert took < 1\n",
        "import time\ndef test():\n    s = []\n    for _ in range(3):\n        t = time.perf_counter()\n"
        "        s.append(time.perf_counter() - t)\n    assert min(s) < 1\n",
        "import time\ndef _call():\n    t = time.monotonic()\n    return go(), time.monotonic() - t\n"
        "def test():\n    res, spent = _call()\n    assert res.ok\n    assert spent < 3\n",
        "def test():\n    res, elapsed = call()\n    assert elapsed < 3\n",
    ],
    ids=["inline", "named", "samples", "helper-tuple", "elapsed"],
)
def test_the_duration_finder_finds_a_timed_assert(source: str) -> None:
    """The checker itself reports a planted timed assert (so the test above can fail), exactly one a case."""
    assert len(duration_asserts(source)) == 1, duration_asserts(source)


def test_the_duration_finder_leaves_clock_reads_that_are_no_duration() -> None:
    """A poll bounded by the clock, a "now" handed to the code and a server-side body time: not flagged."""
    source = (
        "import time\n"
        "def test(store, o):\n"
        "    end = time.monotonic() + 20\n"
        "    while time.monotonic() < end:\n"
        "        poll()\n"
        "    assert store.sweep(now=time.time() + 30) == 1\n"
        "    assert o.body_s < 11.5\n"
    )
    assert duration_asserts(source) == []


# --------------------------------------------------------------------------------------------------
# the core names no upstream (issue 26: a slice is its folder, the registry, settings, README, tests)
# --------------------------------------------------------------------------------------------------

SLICE_FOLDERS = (*FULL_SLICES, "doiorg", "retractions")
"""The folders ``syncd/<slice>/`` that may name their upstream (the retractions index's too)."""
NAMING_ALLOWED = ("syncd.slices",)
"""The one list of slice packages: the core module allowed to name an upstream (the settings and the
registry are composed from it and name none)."""
GENERIC_NAMES = frozenset({"doi"})
"""Upstream names that are also the field's term: the doi.org pool is called ``doi``, like every
identifier's field; a ``"doi"`` literal is not read as naming the pool."""
PENDING_UPSTREAM_NAMES: dict[str, str] = {
    "syncd.cli": "the command table names `syncd retractions` (the Retraction Watch slice's command "
    "group): it becomes the slice's declaration once the slice list can be read without importing the "
    "slices (syncd --help loads no slice) and the CLI's helpers stop importing the registry",
    "syncd.cli.retraction_commands": "the `syncd retractions` group, kept in the CLI (a slice's module "
    "importing syncd.cli.common made the CLI and the slice one import loop) until the line above is done",
}
"""Core modules that still name an upstream, each with what removes it (kept failing when done)."""


def _upstream_names() -> frozenset[str]:
    """What names an upstream: its slice, pools, services, concurrency groups (and their settings), kinds."""
    names = {p.name for p in POOLS} | {p.service for p in POOLS}
    names |= {g.name for g in POOLS.groups()} | {g.setting for g in POOLS.groups()}
    names |= {s.name for s in SLICES} | set(KINDS)
    return frozenset(names - GENERIC_NAMES)


def _docstrings(tree: ast.AST) -> set[int]:
    nodes = [
        n
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    return {
        id(n.body[0].value)
        for n in nodes
        if n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)
    }


def upstream_names_in(source: str, names: frozenset[str], slices: tuple[str, ...]) -> list[str]:
    """``line:name`` of each place ``source`` names an upstream in code (docstrings and comments aside).

    A string literal equal to one of ``names`` (a pool, service, slice or kind name) or naming a module
    of one of ``slices`` (``"syncd.datacite.tools"``), and an attribute called one of ``names``
    (``settings.crossref.mailto``, ``budget.crossref_in_flight``).
    """
    tree = ast.parse(source)
    docs = _docstrings(tree)
    prefixes = tuple(f"syncd.{s}." for s in slices)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            if node.value in names or node.value.startswith(prefixes):
                found.append(f"{node.lineno}:{node.value}")
        elif isinstance(node, ast.Attribute) and node.attr in names:
            found.append(f"{node.lineno}:.{node.attr}")
    return sorted(set(found), key=lambda f: (int(f.split(":")[0]), f))


def _core_modules() -> list[str]:
    """Every syncd module but the slice folders' and :data:`NAMING_ALLOWED`."""
    slices = tuple(f"syncd.{s}" for s in SLICE_FOLDERS)
    inside = tuple(f"{s}." for s in slices)
    return [m for m in MODULES if m not in NAMING_ALLOWED and m not in slices and not m.startswith(inside)]


def test_no_core_module_names_an_upstream() -> None:
    """No module outside the slice folders, the registry and the settings names an upstream in code:
    no pool, service, slice or kind name as a string literal (``"datacite"``, ``"crossref_single"``), no
    ``syncd.<slice>.`` module path, no ``.crossref`` settings attribute. The budget is handed the pools
    the slices declare; a pending module is listed with what removes it.
    """
    names = _upstream_names()
    assert {"crossref_single", "zenodo_search", "datacite", "DataCite", "crossref_in_flight"} <= names
    core = _core_modules()
    assert {
        "syncd.budget.pools",
        "syncd.budget.buckets",
        "syncd.kinds",
        "syncd.lazy",
        "syncd.budget.fallback",
    } <= set(core)
    assert "syncd.registry" in core and "syncd.config" in core
    assert not any(m.startswith(("syncd.crossref", "syncd.datacite")) or m == "syncd.slices" for m in core)
    found = {
        m: hits
        for m in core
        if (hits := upstream_names_in(MODULES[m].read_text(encoding="utf-8"), names, SLICE_FOLDERS))
    }
    assert sorted(found) == sorted(PENDING_UPSTREAM_NAMES), found
    assert set(PENDING_UPSTREAM_NAMES) <= set(core)


def test_the_upstream_name_finder_finds_planted_names() -> None:
    """The checker reports a planted pool literal, a slice's module path and a settings attribute, and
    leaves docstrings, comments and the generic ``"doi"`` alone (so the test above can fail).
    """
    names = _upstream_names()
    source = (
        '"""Talks of datacite and crossref_single in prose."""\n'
        "POOL = 'datacite'  # crossref_single in a comment\n"
        "def f(settings, load):\n"
        '    """The zenodo_search pool."""\n'
        "    load('syncd.registry', 'syncd.zenodo.tools')\n"
        "    return settings.crossref.mailto, 'doi', settings.budget.crossref_in_flight\n"
    )
    assert upstream_names_in(source, names, SLICE_FOLDERS) == [
        "2:datacite",
        "5:syncd.zenodo.tools",
        "6:.crossref",
        "6:.crossref_in_flight",
    ]
    assert upstream_names_in('POOLS = ("doi",)\n', names, SLICE_FOLDERS) == []


def test_every_pool_is_declared_in_its_slice_with_its_settings() -> None:
    """Each of the six pools comes from a slice's ``pools.py`` (Crossref's two, Zenodo's two, doi.org's,
    DataCite's), with its ``budget.<pool>`` settings section.
    """
    assert POOLS.names == (
        "crossref_single",
        "crossref_list",
        "zenodo_general",
        "zenodo_search",
        "doi",
        "datacite",
    )
    declared_in = {p.name: p.published.__module__ for p in POOLS}
    assert declared_in == {
        "crossref_single": "syncd.crossref.pools",
        "crossref_list": "syncd.crossref.pools",
        "zenodo_general": "syncd.zenodo.pools",
        "zenodo_search": "syncd.zenodo.pools",
        "doi": "syncd.doiorg.pools",
        "datacite": "syncd.datacite.pools",
    }
    assert set(POOLS.names) | {g.setting for g in POOLS.groups()} <= set(BudgetSettings.model_fields)


def test_the_kinds_lifetimes_are_the_composed_ttl_settings() -> None:
    """Every kind's ``ttl`` names a :class:`TtlSettings` lifetime, and every lifetime of ``ok`` entries
    (all but ``miss`` and ``deleted``) is some kind's: the slices' own (``crossref_work``) come from
    their ``settings.py``, the shared ones (``search``, ``entity``) from the core.
    """
    assert {k.ttl for k in KINDS.values()} == set(TtlSettings.model_fields) - {"miss", "deleted"}
    assert {"crossref_work", "zenodo_record", "datacite", "search", "entity"} <= set(TtlSettings.model_fields)


def test_each_slice_declares_its_settings_in_its_own_folder() -> None:
    """The ``[crossref]``, ``[zenodo]``, ``[doi]``, ``[datacite]`` and ``[retractions]`` sections are the
    slices' own models (declared in ``syncd/<slice>/settings.py``); a slice's ``mcp.slices`` choice exists
    exactly when its :class:`~syncd.slice.Slice` serves tools; the core settings hold none of them.
    """
    sections = {
        name: field.annotation.__module__  # type: ignore[union-attr]
        for name, field in Settings.model_fields.items()
        if name in {"crossref", "zenodo", "doi", "datacite", "retractions"}
    }
    assert sections == {
        "crossref": "syncd.crossref.settings",
        "zenodo": "syncd.zenodo.settings",
        "doi": "syncd.doiorg.settings",
        "datacite": "syncd.datacite.settings",
        "retractions": "syncd.retractions.settings",
    }
    core = Settings.__mro__[1]
    assert not set(sections) & set(core.model_fields)
    for s in SLICES:
        settings_module = importlib.import_module(f"syncd.{s.name}.settings")
        assert settings_module.SETTINGS.tool_set == bool(s.tools), s.name
