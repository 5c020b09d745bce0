"""What changed in a Zenodo record (``zenodo_record``) between two stored bodies, and new versions (pure).

The record kind's store rules (:data:`syncd.zenodo.rules.RECORD_RULES`) hand :func:`summarize_record`
(``summarize``: a stored record replaced) and :func:`new_version` (``arrival``: a record joining a
series already held) to the store. Bodies are compared through the ``zenodo_get_record`` views
(:func:`syncd.zenodo.views.record_view`, :func:`~syncd.zenodo.views.record_keys`,
:func:`~syncd.zenodo.views.tombstone_view`); the generic diff is :mod:`syncd.normalize.changes`.

Change types of a record: ``superseded`` (``is_latest`` true -> false, with ``latest_recid`` when
known), ``restricted`` (status ``restricted``, or ``access`` moving to restricted/embargoed),
``deleted`` (status ``gone``: the tombstone's ``removal_reason``, ``removal_date``, ``note``),
``reinstated`` (a deleted or restricted record answered again), ``new_version``, then ``title``,
``authors``, ``date``, ``metadata``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from syncd.errors import MalformedResponse
from syncd.normalize.changes import (
    NAMES_SHOWN,
    ViewFields,
    as_object,
    described_items,
    json_body,
    summary_of,
)
from syncd.store.rules import ChangeSummary, Side
from syncd.zenodo import views as zenodo_norm

__all__ = ["RECORD_FIELDS", "new_version", "summarize_record"]

RECORD_FIELDS = ViewFields("creators", "creator_count", "publication_date", lambda v: v)
"""Where the record view (:func:`syncd.zenodo.views.record_view`) keeps people, their count, the date."""

_CLOSED = ("restricted", "embargoed")


def _record_parts(body: str | None) -> tuple[dict[str, Any], Any] | None:
    """``(record view as JSON, record keys)`` of a stored Zenodo record body, or None when unreadable."""
    data = json_body(body)
    if not isinstance(data, dict):
        return None
    try:
        view = zenodo_norm.record_view(data).model_dump(mode="json", exclude_none=True)
        keys = zenodo_norm.record_keys(data)
    except (MalformedResponse, ValueError, TypeError, KeyError):
        return None
    return view, keys


def _record_items(old: dict[str, Any], new: dict[str, Any], latest_recid: str | None) -> list[dict[str, Any]]:
    """The typed items between two record views (version, access, title, creators, date, the rest)."""
    items: list[dict[str, Any]] = []
    was_latest = as_object(old.get("versions")).get("is_latest")
    is_latest = as_object(new.get("versions")).get("is_latest")
    if was_latest is True and is_latest is False:
        item: dict[str, Any] = {"type": "superseded"}
        latest = latest_recid or as_object(new.get("versions")).get("latest_recid")
        if latest:
            item["latest_recid"] = str(latest)
        items.append(item)
    old_access = str(as_object(old.get("access")).get("status") or "")
    new_access = str(as_object(new.get("access")).get("status") or "")
    if old_access != new_access and new_access in _CLOSED:
        items.append({"type": "restricted", "from": old_access or None, "to": new_access})
    folded = {"access"} if any(i["type"] == "restricted" for i in items) else set()
    folded |= {"versions"} if any(i["type"] == "superseded" for i in items) else set()
    return items + described_items(old, new, RECORD_FIELDS, folded)


def _tombstone_item(body: str | None) -> dict[str, Any]:
    tomb = zenodo_norm.tombstone_view(as_object(json_body(body)) or None).model_dump(exclude_none=True)
    item: dict[str, Any] = {"type": "deleted"}
    for name in ("removal_reason", "removal_date", "note"):
        if tomb.get(name):
            item[name] = tomb[name]
    return item


def summarize_record(old: Side, new: Side) -> ChangeSummary | None:
    """What changed in a Zenodo record (``zenodo_record``) from ``old`` to ``new``; None: nothing."""
    after = _record_parts(new.body) if new.status == "ok" else None
    before = _record_parts(old.body) if old.status == "ok" else None
    about: dict[str, Any] = {}
    if after is not None:
        view, keys = after
        about = {"doi": keys.doi, "title": view.get("title"), "series": keys.concept_recid}
    elif before is not None:
        view, keys = before
        about = {"doi": keys.doi, "title": view.get("title"), "series": keys.concept_recid}
    if new.status == old.status and new.status in ("gone", "restricted"):
        return None  # a tombstone or refusal answered again
    if new.status == "gone":
        return summary_of([_tombstone_item(new.body)], **about)
    if new.status == "restricted":
        return summary_of([{"type": "restricted", "from": old.status, "to": "restricted"}], **about)
    if new.status != "ok" or after is None:
        return None
    if before is None:
        return summary_of([{"type": "reinstated", "from_status": old.status}], **about)
    return summary_of(_record_items(before[0], after[0], after[1].latest_recid), **about)


def _created(body: dict[str, Any]) -> float | None:
    """A record body's ``created`` time (ISO 8601, both shapes) as epoch seconds, or None."""
    value = body.get("created")
    if not isinstance(value, str):
        return None
    try:
        when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=dt.UTC)).timestamp()


def new_version(body: str | None, older: list[str], held_since: float | None = None) -> ChangeSummary | None:
    """A new Zenodo version stored for a series already held: type ``new_version``, or None.

    Args:
        body: the new record's body (JSON text).
        older: record ids of the versions of its series stored before it.
        held_since: when the store first held a version of the series (epoch seconds).

    Returns:
        The summary when the new record reads as the latest version and was not created before
        ``held_since`` (an older version stored later, or a version that existed before syncd held the
        series and is only stored now, is no news), else None.
    """
    parts = _record_parts(body)
    if parts is None or not older:
        return None
    view, keys = parts
    if keys.is_latest is False:
        return None
    created = _created(as_object(json_body(body)))
    if held_since is not None and created is not None and created < held_since:
        return None
    item: dict[str, Any] = {"type": "new_version", "recid": keys.recid, "older": sorted(older)[:NAMES_SHOWN]}
    if view.get("version"):
        item["version"] = view["version"]
    return summary_of([item], doi=keys.doi, title=view.get("title"), series=keys.concept_recid)
