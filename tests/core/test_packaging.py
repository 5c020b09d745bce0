"""The wheel ships every package of syncd/: `pip install .` gives a working `syncd` command, with its
``py.typed`` marker and a mypy configuration that names only real modules.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_directory_is_listed_in_pyproject() -> None:
    """Each syncd/**/__init__.py directory is in [tool.setuptools] packages (syncd.cli was missing once:
    the installed `syncd` command failed with ModuleNotFoundError while the tests, run from the tree, passed).
    """
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "syncd").rglob("__init__.py")}
    assert on_disk - listed == set()


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_package_ships_its_typing_marker() -> None:
    """``syncd/py.typed`` exists and is package data of ``syncd`` (PEP 561: callers' type checkers read
    syncd's annotations).
    """
    assert (ROOT / "syncd" / "py.typed").is_file()
    assert "py.typed" in _pyproject()["tool"]["setuptools"]["package-data"]["syncd"]


def test_mypy_runs_strict_with_the_pydantic_plugin_over_real_modules_only() -> None:
    """``[tool.mypy]`` is strict with ``pydantic.mypy``; every module it still excuses (``ignore_errors``)
    is a module of the tree, so a module that is split or removed leaves the list.
    """
    mypy = _pyproject()["tool"]["mypy"]
    assert mypy["strict"] is True and "pydantic.mypy" in mypy["plugins"]
    assert any(dep.startswith("mypy") for dep in _pyproject()["project"]["optional-dependencies"]["test"])
    modules = {
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for p in (ROOT / "syncd").rglob("*.py")
    }
    excused = [m for o in mypy.get("overrides", []) if o.get("ignore_errors") for m in o["module"]]
    assert excused and sorted(excused) == excused
    assert set(excused) <= modules, sorted(set(excused) - modules)
