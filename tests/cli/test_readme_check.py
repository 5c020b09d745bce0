"""README = CLI for ``syncd check``: every option the README's command list names exists, and the
reverse; the exit codes the README's command list gives are the CLI's constants.
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from syncd.cli import cli
from syncd.cli.check_commands import EXIT_RETRACTED
from syncd.cli.common import EXIT_FAILURE, EXIT_NOT_FOUND, EXIT_USAGE
from syncd.cli.exits import EXIT_INTERRUPTED

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def _check_usage() -> str:
    """The README's ``syncd check FILE [...]`` entry of the command list: its options and description."""
    start = README.index("syncd check FILE [")
    return README[start : README.index("syncd retractions import", start)]


def test_the_readme_names_every_check_option_and_no_other() -> None:
    """The options of ``syncd check --help`` are exactly those of the README's ``syncd check`` line."""
    command = cli.get_command(click.Context(cli), "check")
    assert command is not None
    declared = {
        o for p in command.params if isinstance(p, click.Option) for o in p.opts if o.startswith("--")
    }
    declared.discard("--help")
    in_readme = set(re.findall(r"--[a-z][a-z-]*", _check_usage()))
    assert in_readme == declared, (sorted(in_readme - declared), sorted(declared - in_readme))


def test_the_readme_exit_codes_are_the_cli_s() -> None:
    """0/1/2/3/130 as the README lists them are the CLI's constants, and check's 1 is its own."""
    assert (EXIT_NOT_FOUND, EXIT_USAGE, EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_RETRACTED) == (1, 2, 3, 130, 1)
    assert "130 interrupted (Ctrl-C, every command)" in README
    assert "3 when a verdict is unknown, 130 on Ctrl-C" in _check_usage()
    assert "exit 1 at the" in _check_usage()
