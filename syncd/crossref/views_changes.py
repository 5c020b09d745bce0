"""What changed in a Crossref work (``crossref_work``) between two stored bodies (pure: no I/O).

The work kind's store rules (:data:`syncd.crossref.rules.WORK_RULES`, ``summarize``) hand
:func:`summarize_work` to the store, which calls it when it replaces a stored work. Bodies are
compared through the ``crossref_get_work`` view (:func:`syncd.crossref.views.work_view`), never as raw
JSON; the generic diff (title, authors, date, other fields) is :mod:`syncd.normalize.changes`.

Change types of a work (in this order): an ``updatedBy`` entry that appeared (its update type, see
:func:`update_type`; the item names the notice ``doi``, ``source``, ``recordId``, ``updated``),
``update_removed``, then ``title``, ``authors``, ``date``, ``metadata``; ``found`` when a work stored
as a miss is answered now.
"""

from __future__ import annotations

from typing import Any

from syncd.crossref import views as crossref_norm
from syncd.errors import MalformedResponse
from syncd.normalize.changes import ViewFields, as_object, described_items, json_body, summary_of
from syncd.store.rules import ChangeSummary, Side

__all__ = ["WORK_FIELDS", "summarize_work", "update_type"]


def update_type(value: str) -> str:
    """A Crossref update ``type`` as a change type: lower-cased, ``-`` and spaces as ``_``."""
    return value.strip().lower().replace("-", "_").replace(" ", "_")


def _date(value: dict[str, Any] | None) -> str | None:
    """A work view's date (``{"year", "month", "day"}``) as ``YYYY[-MM[-DD]]``, or None."""
    if not value:
        return None
    parts = [f"{value['year']:04d}"] + [f"{value[k]:02d}" for k in ("month", "day") if value.get(k)]
    return "-".join(parts)


WORK_FIELDS = ViewFields("authors", "authorCount", "published", _date)
"""Where the work view (:func:`syncd.crossref.views.work_view`) keeps people, their count and the date."""


def _work_view(body: str | None) -> dict[str, Any] | None:
    """The ``crossref_get_work`` view of a stored work body (authors up to the 500 cap), or None."""
    data = as_object(json_body(body))
    inner = data.get("message")
    message: dict[str, Any] = inner if isinstance(inner, dict) else data
    try:
        view = crossref_norm.work_view(message, offset=0, limit=crossref_norm.AUTHOR_LIMIT_MAX)
    except MalformedResponse:
        return None
    return view.model_dump(mode="json", exclude_none=True)


def _update_key(u: dict[str, Any]) -> tuple[str, str, str]:
    return (str(u.get("doi", "")).lower(), update_type(str(u.get("type", ""))), str(u.get("source") or ""))


def _update_item(u: dict[str, Any], change_type: str) -> dict[str, Any]:
    item: dict[str, Any] = {"type": change_type, "doi": u.get("doi")}
    if change_type == "update_removed":
        item["update_type"] = update_type(str(u.get("type", "")))
    for name in ("source", "recordId"):
        if u.get(name):
            item[name] = u[name]
    updated = _date(u.get("updated"))
    if updated:
        item["updated"] = updated
    return item


def _work_items(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """The typed items between two work views (updates first, then title, authors, date, the rest)."""
    items: list[dict[str, Any]] = []
    before = {_update_key(u): u for u in old.get("updatedBy") or []}
    after = {_update_key(u): u for u in new.get("updatedBy") or []}
    items += [_update_item(u, k[1] or "update") for k, u in after.items() if k not in before]
    items += [_update_item(u, "update_removed") for k, u in before.items() if k not in after]
    return items + described_items(old, new, WORK_FIELDS, set())


def summarize_work(old: Side, new: Side) -> ChangeSummary | None:
    """What changed in a Crossref work (``crossref_work``) from ``old`` to ``new``; None: nothing."""
    after = _work_view(new.body) if new.status == "ok" else None
    if after is None:
        return None  # a work is only replaced by a readable work (a 404 never replaces one)
    before = _work_view(old.body) if old.status == "ok" else None
    doi = str(after["doi"]).lower()
    if before is None:  # a stored miss answered now: the work appeared
        items: list[dict[str, Any]] = [{"type": "found", "from_status": old.status}]
        items[:0] = [
            _update_item(u, update_type(str(u.get("type", "")))) for u in after.get("updatedBy") or []
        ]
        return summary_of(items, doi=doi, title=after.get("title"))
    return summary_of(_work_items(before, after), doi=doi, title=after.get("title"))
