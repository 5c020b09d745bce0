"""Where this machine keeps syncd's state: the embedded store's default place and the budget fallback."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["local_state_dir"]


def local_state_dir() -> Path:
    """The syncd state directory of this machine: ``$XDG_DATA_HOME/syncd`` (``~/.local/share/syncd``).

    Under systemd (``$STATE_DIRECTORY`` set by ``StateDirectory=``) it is ``$STATE_DIRECTORY``.
    """
    state_dir = os.environ.get("STATE_DIRECTORY")
    if state_dir:
        return Path(state_dir.split(":")[0])
    xdg = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg) / "syncd"
