"""The flags of a Crossref work from its updates: ``retracted``, ``corrected``, ``expression_of_concern``.

Pure: read from the ``updatedBy`` / ``updateTo`` entries of the work's contract view
(:class:`~syncd.crossref.contracts.Update`), for ``crossref_get_works`` items and ``syncd check``.
"""

from __future__ import annotations

from collections.abc import Sequence

from syncd.crossref.contracts import Update

__all__ = ["CORRECTION_TYPES", "EOC_TYPES", "RETRACTION_TYPES", "RETRACTION_WATCH", "update_flags"]

RETRACTION_TYPES = frozenset({"retraction", "withdrawal", "removal", "partial_retraction"})
"""``updatedBy`` types that flag a work ``retracted``."""
CORRECTION_TYPES = frozenset({"correction", "erratum", "corrigendum", "addendum", "clarification"})
"""``updatedBy`` types that flag a work ``corrected``."""
EOC_TYPES = frozenset({"expression_of_concern"})
"""``updatedBy`` types that flag a work ``expression_of_concern``."""
RETRACTION_WATCH = "retraction-watch"
"""``source`` of the updates Crossref adds from the Retraction Watch database."""


def _norm_type(kind: str) -> str:
    return kind.strip().lower().replace("-", "_").replace(" ", "_")


def update_flags(
    doi: str, updated_by: Sequence[Update] | None, update_to: Sequence[Update] | None
) -> list[str]:
    """``retracted``, ``corrected``, ``expression_of_concern`` (in that order) from a work's updates.

    Publisher back-links are skipped: an ``updatedBy`` entry not from Retraction Watch that names
    another DOI ``updateTo`` also names (publishers deposit a notice and the work it updates as links
    both ways). Retraction Watch entries (``source: retraction-watch``, curated against the retracted
    work) and in-place updates (the work's own DOI) always count. A correction-type entry whose DOI
    is also a retraction notice of the work is part of that retraction (publishers deposit the
    notice as an erratum too), not a separate correction.
    """
    own = doi.lower()
    targets = {u.doi.lower() for u in update_to or []} - {own}
    updates = [
        (_norm_type(u.type), u.doi.lower())
        for u in updated_by or []
        if u.source == RETRACTION_WATCH or u.doi.lower() not in targets
    ]
    retractions = {d for t, d in updates if t in RETRACTION_TYPES}
    flags = []
    if retractions:
        flags.append("retracted")
    if any(t in CORRECTION_TYPES and d not in retractions for t, d in updates):
        flags.append("corrected")
    if any(t in EOC_TYPES for t, _ in updates):
        flags.append("expression_of_concern")
    return flags
