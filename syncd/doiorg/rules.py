"""The store rules of the doi.org slice's kind (``doi_ra``; pure).

doi.org's ``/ra/{prefix}`` answers a JSON list of one object, ``[{"DOI": "10.1000", "RA": "Crossref"}]``
(an unknown prefix: ``"status": "Prefix does not exist"``, stored as ``not_found``). An ``ok`` body
without ``RA`` is refused as hollow. A change of agency is recorded (``agency_changed``,
:func:`summarize_agency`).
"""

from __future__ import annotations

from typing import Any

from syncd.normalize.changes import as_object, json_body, summary_of
from syncd.store.rules import ChangeSummary, Side, StoreRules

__all__ = ["RA_RULES", "ra_object", "summarize_agency"]


def ra_object(body: Any) -> dict[str, Any] | None:
    """The first object of doi.org's answer list (``{}`` for an empty list; None for another shape)."""
    if isinstance(body, list):
        first = body[0] if body else {}
        return first if isinstance(first, dict) else None
    return body if isinstance(body, dict) else None


def _agency(body: str | None) -> str | None:
    data = json_body(body)
    first = data[0] if isinstance(data, list) and data else data
    agency = as_object(first).get("RA")
    return agency.strip() if isinstance(agency, str) and agency.strip() else None


def summarize_agency(old: Side, new: Side) -> ChangeSummary | None:
    """``agency_changed`` when doi.org names another registration agency for a prefix (``doi_ra``)."""
    before, after = _agency(old.body), _agency(new.body)
    if before == after:
        return None
    return summary_of([{"type": "agency_changed", "from": before, "to": after}])


RA_RULES = StoreRules(checked=ra_object, required=(("RA",),), summarize=summarize_agency)
"""``doi_ra``: the agency named (``RA``); a change of agency is recorded."""
