"""Whether a process of this host still runs: one answer for budget leases and sync walks.

A lease (:mod:`syncd.budget`) or a ``running`` sync walk (:mod:`syncd.store.watches`) names the process
that holds it (pid and host); when that process is gone, the lease or the walk is reclaimed instead of
waited for. The check is psutil's, so it works the same on every platform psutil supports.
"""

from __future__ import annotations

import psutil

__all__ = ["pid_alive"]


def pid_alive(pid: int) -> bool:
    """True unless process ``pid`` of this host has certainly ended.

    A zombie (ended, not yet reaped by its parent) counts as ended; a process this user may not
    inspect (another user's) counts as running, since it exists. Never raises.
    """
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except (psutil.AccessDenied, OSError, ValueError):
        return True
