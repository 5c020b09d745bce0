"""Every `syncd <group> <command>` a message or docstring names is a real command.

Found in a last read: the verify problem for an undecodable body told users to run `syncd cache rm`,
which does not exist (the command is `syncd cache evict`).
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from syncd.cli import cli

ROOT = Path(__file__).resolve().parents[2] / "syncd"
NAMED = re.compile(r"\bsyncd (cache|watch|db) ([a-z][a-z-]*)")


def test_every_named_subcommand_exists() -> None:
    """Each `syncd cache|watch|db NAME` written anywhere in syncd/ is a subcommand of that group."""
    ctx = click.Context(cli)
    commands = {name: cli.get_command(ctx, name) for name in cli.list_commands(ctx)}
    groups = {name: cmd for name, cmd in commands.items() if isinstance(cmd, click.Group)}
    named = {
        (path.relative_to(ROOT).as_posix(), group, sub)
        for path in ROOT.rglob("*.py")
        for group, sub in NAMED.findall(path.read_text(encoding="utf-8"))
    }
    assert len(named) > 10
    missing = sorted((where, f"syncd {g} {s}") for where, g, s in named if s not in groups[g].commands)
    assert missing == []
