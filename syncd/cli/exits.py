"""The exit codes of every ``syncd`` command, declared once (README's table is tested against them)."""

from __future__ import annotations

from typing import Final

__all__ = ["EXIT_FAILURE", "EXIT_INTERRUPTED", "EXIT_NOT_FOUND", "EXIT_USAGE"]

EXIT_NOT_FOUND: Final = 1
"""Nothing stored, an unknown id, or upstream says the thing does not exist."""
EXIT_USAGE: Final = 2
"""Bad usage or invalid input (an unknown option or value, an unreadable or refused file)."""
EXIT_FAILURE: Final = 3
"""An upstream or store failure (a failed revalidation or walk, a pass stopped early)."""
EXIT_INTERRUPTED: Final = 130
"""Stopped by Ctrl-C (SIGINT; 128 + 2, as shells report it), every command."""
