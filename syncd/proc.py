"""Processes: whether one of this host still runs, and children that die with their parent.

A lease (:mod:`syncd.budget.buckets`) or a ``running`` sync walk (:mod:`syncd.store.watches`) names the
process
that holds it (pid and host); when that process is gone, the lease or the walk is reclaimed instead of
waited for. The check is psutil's, so it works the same on every platform psutil supports.

Every child process syncd starts (the import's parse workers, :mod:`syncd.transfer`; alert commands,
:mod:`syncd.daemon.alerts`) ends when its parent does, killed or not, without relying on the parent's
cleanup: on Linux the kernel sends it ``SIGKILL`` (``prctl(PR_SET_PDEATHSIG)``), elsewhere a Python
child polls its parent (:func:`die_with_parent`).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

__all__ = ["PARENT_POLL_S", "die_with_parent", "pid_alive", "pre_exec_die_with_parent"]

PR_SET_PDEATHSIG = 1
"""``prctl`` option (linux/prctl.h): the signal the kernel sends a process when its parent ends."""
PARENT_POLL_S = 0.5
"""Seconds between two looks at the parent, where no parent-death signal exists."""


def _set_pdeathsig() -> bool:
    """Linux: ask the kernel for ``SIGKILL`` when the parent ends; False where that is not possible."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os._exit(1)


def die_with_parent(parent: int) -> None:
    """Make this (child) process end when process ``parent`` ends; call it first thing in the child.

    ``parent``: the pid of the process that started this one, as the parent knew it (so a parent
    already gone when this runs is noticed: the child then exits at once). Linux: the kernel sends
    ``SIGKILL`` when the parent thread that forked this process ends (syncd forks from the thread
    that owns the pool for the pool's whole life). Elsewhere: a daemon thread looks every
    :data:`PARENT_POLL_S` seconds and exits the process (status 1) once the parent is gone.
    """
    armed = _set_pdeathsig()
    if os.getppid() != parent:
        os._exit(1)
    if not armed:
        threading.Thread(target=_watch_parent, args=(parent,), name="parent-watch", daemon=True).start()


def pre_exec_die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` for :mod:`subprocess` that arms the parent-death signal in the child, or None.

    Linux only (elsewhere None: there is no way to make an arbitrary program die with its parent).
    The function only calls ``prctl`` through a ``ctypes`` function resolved here, before the fork, and
    ``_exit(1)`` if the parent is already gone: nothing in the child between fork and exec takes a lock.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()
    sig = int(signal.SIGKILL)

    def arm() -> None:
        prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return arm


def pid_alive(pid: int) -> bool:
    """True unless process ``pid`` of this host has certainly ended.

    A zombie (ended, not yet reaped by its parent) counts as ended; a process this user may not
    inspect (another user's) counts as running, since it exists. Never raises.
    """
    import psutil  # on the first check of a holder (syncd.lazy.LAZY): a store-only command never pays it

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except (psutil.AccessDenied, OSError, ValueError):
        return True
