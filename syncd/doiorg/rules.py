"""The store rules of the doi.org slice's kind (``doi_ra``; pure).

doi.org's ``/ra/{prefix}`` answers a JSON list of one object, ``[{"DOI": "10.1000", "RA": "Crossref"}]``
(an unknown prefix: ``"status": "Prefix does not exist"``, stored as ``not_found``). An ``ok`` body
without ``RA`` is refused as hollow.
"""

from __future__ import annotations

from typing import Any

from syncd.normalize.changes import summarize_agency
from syncd.store.rules import StoreRules

__all__ = ["RA_RULES", "ra_object"]


def ra_object(body: Any) -> dict[str, Any] | None:
    """The first object of doi.org's answer list (``{}`` for an empty list; None for another shape)."""
    if isinstance(body, list):
        first = body[0] if body else {}
        return first if isinstance(first, dict) else None
    return body if isinstance(body, dict) else None


RA_RULES = StoreRules(checked=ra_object, required=(("RA",),), summarize=summarize_agency)
"""``doi_ra``: the agency named (``RA``); a change of agency is recorded."""
