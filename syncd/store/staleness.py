"""Which stored entries are stale, as plain bounds handed in by the caller (the store decides nothing).

The rule is :func:`syncd.road.policy.fresh_bounds` (RFC 9111 §4.2 freshness, clock skew included): an
entry of ``(kind, status)`` is fresh while ``before < validated_at <= after``. The policy computes the
bounds for "now" (:func:`syncd.road.policy.staleness`); the store turns them into one SQL predicate
(:meth:`Staleness.clause`), so the daemon's sweep, ``cache stats`` counts, ``cache list --stale`` and
the answer of one lookup all apply the same rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, false, or_

from syncd.store.models import Entry, Validation

__all__ = ["Staleness"]


@dataclass(frozen=True)
class Staleness:
    """The staleness bounds at one moment (epoch seconds).

    ``before``: per ``(kind, status)``, an entry validated at or before this time is past its lifetime;
    pairs not listed are never stale. ``after``: an entry validated after this time (a clock that ran
    ahead and was corrected since) has an unknown age and is stale too, whatever its pair.
    """

    before: Mapping[tuple[str, str], float]
    after: float

    def clause(self) -> Any:
        """The SQL predicate over ``entries`` joined with ``validations``: the entry is stale."""
        clauses = [
            and_(
                Entry.kind == kind,
                Entry.status == status,
                or_(Validation.validated_at <= bound, Validation.validated_at > self.after),
            )
            for (kind, status), bound in self.before.items()
        ]
        return or_(*clauses) if clauses else false()

    def pair_clause(self, kind: str, status: str) -> Any:
        """The predicate for the entries of one ``(kind, status)`` (never stale when not listed)."""
        bound = self.before.get((kind, status))
        if bound is None:
            return false()
        return or_(Validation.validated_at <= bound, Validation.validated_at > self.after)
