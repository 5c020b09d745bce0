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


def _cli_block() -> str:
    """The README's command list: the fenced block of the CLI section."""
    start = README.index("```\nsyncd daemon ")
    return README[start + 4 : README.index("```", start + 4)]


def _entries() -> list[tuple[list[str], set[str]]]:
    """Each ``syncd ...`` entry of the command list: its command path and the options it names."""
    entries: list[tuple[list[str], set[str]]] = []
    for line in _cli_block().splitlines():
        if line.startswith("syncd "):
            words = []
            for word in line.split()[1:]:
                if not re.fullmatch(r"[a-z][a-z-]*", word):
                    break
                words.append(word)
            entries.append((words, set()))
        if entries:
            entries[-1][1].update(re.findall(r"(?<![\w-])--[a-z][a-z-]*", line))
    return entries


def _command(path: list[str]) -> click.Command:
    """The click command at ``path`` (``["cache", "ls"]``), stopping at the first word that is no command."""
    command: click.Command = cli
    ctx = click.Context(cli)
    for word in path:
        if not isinstance(command, click.Group):
            break
        found = command.get_command(ctx, word)
        if found is None:
            break
        command = found
    return command


def test_every_option_the_readme_command_list_names_exists() -> None:
    """Each option the README's command list gives a command (``syncd cache ls [--stale] ...``) is an
    option of that command (or a group's), so a reader never types one the CLI refuses.
    """
    missing = []
    for path, named in _entries():
        command = _command(path)
        options = {o for p in command.params if isinstance(p, click.Option) for o in p.opts}
        missing += [f"syncd {' '.join(path)}: {o}" for o in sorted(named - options - {"--help"})]
    parsed = {" ".join(path): named for path, named in _entries()}
    assert len(parsed) > 25 and "--stale" in parsed["cache ls"]
    assert "--accept-shrink" in parsed["retractions import"] and "--reset" in parsed["cache budget"]
    assert missing == []
