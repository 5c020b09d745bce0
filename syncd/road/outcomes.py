"""How revalidations ended: the typed :class:`Outcome` of one and the :class:`Tally` of many.

Plain values (no I/O, no store): :func:`syncd.road.policy.outcome_of` decides the outcome of one refetch
from the entry's facts; the sweep (:func:`syncd.passes.refresh.sweep`), the batch revalidation and
``syncd cache refresh`` count them. Re-exported by :mod:`syncd.road.policy`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

__all__ = ["CHANGED", "UNCHANGED", "Outcome", "Result", "Tally", "failed"]


class Result(enum.Enum):
    """How one revalidation ended."""

    UNCHANGED = "unchanged"
    CHANGED = "changed"
    FAILED = "failed"


@dataclass(frozen=True)
class Outcome:
    """One revalidation: ``result`` and, for FAILED, the ``reason`` code."""

    result: Result
    reason: str | None = None

    def __str__(self) -> str:
        """``unchanged``, ``changed`` or ``failed:<reason>`` (log and progress text)."""
        return f"failed:{self.reason}" if self.result is Result.FAILED else self.result.value


UNCHANGED = Outcome(Result.UNCHANGED)
CHANGED = Outcome(Result.CHANGED)


def failed(reason: str) -> Outcome:
    """A failed revalidation with ``reason``."""
    return Outcome(Result.FAILED, reason)


@dataclass
class Tally:
    """Counts of revalidation outcomes: ``checked`` and how each ended (failures by reason)."""

    checked: int = 0
    unchanged: int = 0
    changed: int = 0
    failed: int = 0
    failures: dict[str, int] = field(default_factory=dict)

    def add(self, outcome: Outcome) -> None:
        """Count one outcome."""
        self.checked += 1
        if outcome.result is Result.UNCHANGED:
            self.unchanged += 1
        elif outcome.result is Result.CHANGED:
            self.changed += 1
        else:
            self.failed += 1
            reason = outcome.reason or "unknown"
            self.failures[reason] = self.failures.get(reason, 0) + 1

    def merge(self, other: Tally) -> None:
        """Add the counts of ``other``."""
        self.checked += other.checked
        self.unchanged += other.unchanged
        self.changed += other.changed
        self.failed += other.failed
        for reason, n in other.failures.items():
            self.failures[reason] = self.failures.get(reason, 0) + n
