"""``python -m syncd``: the same as the ``syncd`` command."""

from syncd.cli import main

main()
