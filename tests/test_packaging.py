"""The wheel ships every package of syncd/: `pip install .` gives a working `syncd` command."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_directory_is_listed_in_pyproject() -> None:
    """Each syncd/**/__init__.py directory is in [tool.setuptools] packages (syncd.cli was missing once:
    the installed `syncd` command failed with ModuleNotFoundError while the tests, run from the tree, passed).
    """
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "syncd").rglob("__init__.py")}
    assert on_disk - listed == set()
