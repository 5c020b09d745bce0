"""Whether a lease's or a walk's process still runs (:func:`syncd.proc.pid_alive`)."""

from __future__ import annotations

import os
import subprocess
import sys

import psutil
import pytest

from syncd.proc import pid_alive


def test_this_process_is_alive() -> None:
    """The calling process is running."""
    assert pid_alive(os.getpid()) is True


@pytest.mark.skipif(sys.platform != "linux", reason="zombie states as Linux reports them")
def test_an_ended_child_not_yet_reaped_counts_as_ended() -> None:
    """A zombie (ended, not reaped) is ended, so its lease or walk is reclaimed; once reaped, still ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    proc = psutil.Process(child.pid)
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # wait for its end, leave it unreaped
    assert proc.status() == psutil.STATUS_ZOMBIE
    assert pid_alive(child.pid) is False
    child.wait()
    assert pid_alive(child.pid) is False
