"""A call's deadline: one point in monotonic time every stage of a tool call takes its time from.

:class:`Deadline` is ``seconds`` from its creation; :func:`call_deadline` makes one the deadline of a
whole call (a context variable) and :func:`current_deadline` gives it to each stage (a record, then
its ZIP listing; a community check, then the search). Re-exported by :mod:`syncd.upstream.http`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["Deadline", "call_deadline", "current_deadline"]


class Deadline:
    """A point in monotonic time by which a call must be done (``seconds`` from creation)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def remaining(self) -> float:
        """Seconds left (never negative)."""
        return max(0.0, self._end - time.monotonic())

    def expired(self) -> bool:
        """True once no time is left."""
        return self.remaining() <= 0.0


_CURRENT: ContextVar[Deadline | None] = ContextVar("syncd_call_deadline", default=None)


@contextmanager
def call_deadline(seconds: float) -> Iterator[Deadline]:
    """Make one :class:`Deadline` of ``seconds`` the deadline of everything this call does.

    Every stage of a tool call (a record, then its ZIP listing; a community check, then the search)
    takes its time from the same deadline through :func:`current_deadline`.
    """
    deadline = Deadline(seconds)
    token = _CURRENT.set(deadline)
    try:
        yield deadline
    finally:
        _CURRENT.reset(token)


def current_deadline(seconds: float) -> Deadline:
    """The deadline of the running call (see :func:`call_deadline`), else a new one of ``seconds``."""
    return _CURRENT.get() or Deadline(seconds)
