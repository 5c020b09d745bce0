"""systemd notifications (``sd_notify``) over ``$NOTIFY_SOCKET``, without libsystemd.

Outside systemd (no ``NOTIFY_SOCKET``) every call is a no-op returning False.
"""

from __future__ import annotations

import os
import socket

__all__ = ["notify", "watchdog_interval_s"]


def notify(*fields: str) -> bool:
    """Send ``fields`` (e.g. ``"READY=1"``, ``"STATUS=..."``) to systemd; True when sent.

    Supports path and abstract (``@``) socket addresses; errors are swallowed (False), since a
    notification must never take the daemon down.
    """
    addr = os.environ.get("NOTIFY_SOCKET")
    if not addr:
        return False
    if addr[0] == "@":
        addr = "\0" + addr[1:]
    elif addr[0] != "/":
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(addr)
            sock.sendall("\n".join(fields).encode("utf-8"))
    except OSError:
        return False
    return True


def watchdog_interval_s() -> float | None:
    """Half of systemd's ``WatchdogSec`` in seconds when the watchdog is on for this process, else None."""
    usec = os.environ.get("WATCHDOG_USEC")
    pid = os.environ.get("WATCHDOG_PID")
    if not usec or (pid and pid != str(os.getpid())):
        return None
    try:
        return max(0.5, int(usec) / 2_000_000)
    except ValueError:
        return None
