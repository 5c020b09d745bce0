"""What changed between two stored bodies of one entry, from the normalized views (pure: no I/O).

The store calls :func:`summarize_work`, :func:`summarize_record` or :func:`summarize_agency` (the
summaries the kinds supply as their store rules) when it replaces a stored body (revalidation, sync
walk, fetch, import) and :func:`new_version` when a Zenodo record joins a series it already holds; the summary
becomes one row of the change feed (``changes`` table, ``syncd changes``, ``syncd_list_changes``).
Bodies are compared through the views the tools answer with, never as raw JSON: Crossref works
through :func:`syncd.crossref.views.work_view`, Zenodo records through
:func:`syncd.zenodo.views.record_view`, :func:`~syncd.zenodo.views.record_keys` and
:func:`~syncd.zenodo.views.tombstone_view`.

Change types (``ChangeSummary.types``, in this order; each has one item in ``items``):

* an ``updatedBy`` entry that appeared: its Crossref update type, lower-cased with ``_`` for ``-``
  and spaces (``retraction``, ``correction``, ``erratum``, ``expression_of_concern``,
  ``withdrawal``, ``new_version``, ...); the item names the notice ``doi``, ``source``
  (``publisher``, ``retraction-watch``), ``recordId`` and ``updated`` (``YYYY[-MM[-DD]]``).
* ``update_removed``: an ``updatedBy`` entry that disappeared (``update_type`` says which).
* ``title``, ``authors``, ``date``: the title (``from``/``to``), the creator list (counts, names
  added/removed, at most :data:`NAMES_SHOWN` each), the publication date (``from``/``to``).
* ``superseded``: a Zenodo version stopped being the latest (``is_latest`` true -> false), with
  ``latest_recid`` when the body names it; ``new_version``: a Zenodo record stored for a series
  already held (see :func:`new_version`).
* ``deleted`` (status ``gone``: the tombstone's ``removal_reason``, ``removal_date``, ``note``),
  ``restricted`` (status ``restricted``, or ``access`` moving to restricted/embargoed),
  ``reinstated`` (a deleted or restricted record answered again).
* ``found``: a Crossref work stored as a miss is answered now.
* ``agency_changed``: doi.org names another registration agency for a DOI prefix (``doi_ra``).
* ``metadata``: any other field of the view (``fields`` lists them).

A replacement whose view did not change records nothing: a work first stored from a search page and
now stored whole, a change outside the view (a reference list, Zenodo's file links), a tombstone
answered again.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from syncd.crossref import views as crossref_norm
from syncd.errors import InvalidInput, MalformedResponse
from syncd.store.rules import ChangeSummary, Side
from syncd.zenodo import views as zenodo_norm

__all__ = [
    "ALERT_TYPES",
    "NAMES_SHOWN",
    "NOTICE_TYPES",
    "UPDATE_TYPES",
    "ChangeSummary",
    "Side",
    "describe",
    "new_version",
    "since_epoch",
    "since_stored_notice",
    "summarize_agency",
    "summarize_record",
    "summarize_work",
    "update_type",
]


ALERT_TYPES = ("retraction", "withdrawal", "expression_of_concern", "deleted")
"""Change types that raise an alert for a watched entry (:mod:`syncd.alerts`)."""

UPDATE_TYPES = frozenset(
    {
        "retraction",
        "withdrawal",
        "removal",
        "partial_retraction",
        "expression_of_concern",
        "correction",
        "erratum",
        "corrigendum",
        "addendum",
        "clarification",
        "new_version",
        "new_edition",
        "update_removed",
    }
)
"""The Crossref update types (and their removal) syncd knows; other deposited types are kept as given."""

NOTICE_TYPES = (
    "retraction",
    "partial_retraction",
    "withdrawal",
    "removal",
    "expression_of_concern",
    "correction",
    "erratum",
    "corrigendum",
    "addendum",
    "clarification",
)
"""Update types that make ``crossref_get_work`` say a work was retracted or corrected since first stored."""

NAMES_SHOWN = 10
"""Most author names listed as added or removed in one ``authors`` item."""

_VIEW_SKIP = frozenset(
    {
        "doi",
        "notice",
        "offset",
        "nextOffset",
        "truncated",
        "shown",
        "cap",
        "isReferencedByCount",
        "stats",
        "revision",
        "files",
        "description_truncated",
        "description_length",
    }
)
"""View fields never compared (paging, counters, the notice built from other fields, revision stamps)."""


def update_type(value: str) -> str:
    """A Crossref update ``type`` as a change type: lower-cased, ``-`` and spaces as ``_``."""
    return value.strip().lower().replace("-", "_").replace(" ", "_")


def _json(text: str | None) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _date(value: dict[str, Any] | None) -> str | None:
    if not value:
        return None
    parts = [f"{value['year']:04d}"] + [f"{value[k]:02d}" for k in ("month", "day") if value.get(k)]
    return "-".join(parts)


def _names(people: list[dict[str, Any]] | None) -> list[str]:
    out = []
    for p in people or []:
        name = " ".join(filter(None, (p.get("given"), p.get("family")))) or p.get("name")
        if name:
            out.append(str(name))
    return out


def _authors_item(old: list[str], new: list[str], old_count: int, new_count: int) -> dict[str, Any] | None:
    if old == new and old_count == new_count:
        return None
    added = [n for n in new if n not in old]
    removed = [n for n in old if n not in new]
    item: dict[str, Any] = {"type": "authors", "from_count": old_count, "to_count": new_count}
    if added:
        item["added"] = added[:NAMES_SHOWN]
    if removed:
        item["removed"] = removed[:NAMES_SHOWN]
    if not added and not removed and old_count == new_count:
        item["reordered"] = True
    return item


def _work_view(body: str | None) -> dict[str, Any] | None:
    """The ``crossref_get_work`` view of a stored work body (authors up to the 500 cap), or None."""
    data = _dict(_json(body))
    message = data.get("message") if isinstance(data.get("message"), dict) else data
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
    return items + _described_items(old, new, _WORK_FIELDS, set())


@dataclass(frozen=True)
class _ViewFields:
    """Where a view keeps what every summary compares: title, people and their count, the date."""

    people: str
    count: str
    date: str
    date_text: Callable[[Any], Any]


_WORK_FIELDS = _ViewFields("authors", "authorCount", "published", _date)
"""Crossref work view (:func:`syncd.crossref.views.work_view`)."""
_RECORD_FIELDS = _ViewFields("creators", "creator_count", "publication_date", lambda v: v)
"""Zenodo record view (:func:`syncd.zenodo.views.record_view`)."""


def _described_items(
    old: dict[str, Any], new: dict[str, Any], f: _ViewFields, folded: set[str]
) -> list[dict[str, Any]]:
    """The title, people and date items between two views, then one ``metadata`` item.

    The ``metadata`` item names the other fields that differ, except ``folded`` (fields an earlier typed
    item already tells, e.g. ``access`` after ``restricted``).
    """
    items: list[dict[str, Any]] = []
    if old.get("title") != new.get("title"):
        items.append({"type": "title", "from": old.get("title"), "to": new.get("title")})
    people = _authors_item(
        _names(old.get(f.people)),
        _names(new.get(f.people)),
        int(old.get(f.count) or 0),
        int(new.get(f.count) or 0),
    )
    if people:
        items.append(people)
    if old.get(f.date) != new.get(f.date):
        items.append(
            {"type": "date", "from": f.date_text(old.get(f.date)), "to": f.date_text(new.get(f.date))}
        )
    typed = {"updatedBy", "title", f.people, f.count, f.date} | folded
    fields = sorted(
        k for k in set(old) | set(new) if k not in typed and k not in _VIEW_SKIP and old.get(k) != new.get(k)
    )
    if fields:
        items.append({"type": "metadata", "fields": fields})
    return items


def _record_parts(body: str | None) -> tuple[dict[str, Any], Any] | None:
    """``(record view as JSON, record keys)`` of a stored Zenodo record body, or None when unreadable."""
    data = _json(body)
    if not isinstance(data, dict):
        return None
    try:
        view = zenodo_norm.record_view(data).model_dump(mode="json", exclude_none=True)
        keys = zenodo_norm.record_keys(data)
    except (MalformedResponse, ValueError, TypeError, KeyError):
        return None
    return view, keys


_CLOSED = ("restricted", "embargoed")


def _record_items(old: dict[str, Any], new: dict[str, Any], latest_recid: str | None) -> list[dict[str, Any]]:
    """The typed items between two record views (version, access, title, creators, date, the rest)."""
    items: list[dict[str, Any]] = []
    was_latest = _dict(old.get("versions")).get("is_latest")
    is_latest = _dict(new.get("versions")).get("is_latest")
    if was_latest is True and is_latest is False:
        item: dict[str, Any] = {"type": "superseded"}
        latest = latest_recid or _dict(new.get("versions")).get("latest_recid")
        if latest:
            item["latest_recid"] = str(latest)
        items.append(item)
    old_access = str(_dict(old.get("access")).get("status") or "")
    new_access = str(_dict(new.get("access")).get("status") or "")
    if old_access != new_access and new_access in _CLOSED:
        items.append({"type": "restricted", "from": old_access or None, "to": new_access})
    folded = {"access"} if any(i["type"] == "restricted" for i in items) else set()
    folded |= {"versions"} if any(i["type"] == "superseded" for i in items) else set()
    return items + _described_items(old, new, _RECORD_FIELDS, folded)


def _tombstone_item(body: str | None) -> dict[str, Any]:
    tomb = zenodo_norm.tombstone_view(_dict(_json(body)) or None).model_dump(exclude_none=True)
    item: dict[str, Any] = {"type": "deleted"}
    for name in ("removal_reason", "removal_date", "note"):
        if tomb.get(name):
            item[name] = tomb[name]
    return item


def _agency(body: str | None) -> str | None:
    data = _json(body)
    first = data[0] if isinstance(data, list) and data else data
    agency = _dict(first).get("RA")
    return agency.strip() if isinstance(agency, str) and agency.strip() else None


def _summary(items: list[dict[str, Any]], **about: Any) -> ChangeSummary | None:
    if not items:
        return None  # the view did not change (a body complete now, or a change outside the view)
    types: list[str] = []
    for item in items:
        if item["type"] not in types:
            types.append(item["type"])
    return ChangeSummary(tuple(types), tuple(items), **about)


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
        return _summary(items, doi=doi, title=after.get("title"))
    return _summary(_work_items(before, after), doi=doi, title=after.get("title"))


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
        return _summary([_tombstone_item(new.body)], **about)
    if new.status == "restricted":
        return _summary([{"type": "restricted", "from": old.status, "to": "restricted"}], **about)
    if new.status != "ok" or after is None:
        return None
    if before is None:
        return _summary([{"type": "reinstated", "from_status": old.status}], **about)
    return _summary(_record_items(before[0], after[0], after[1].latest_recid), **about)


def summarize_agency(old: Side, new: Side) -> ChangeSummary | None:
    """``agency_changed`` when doi.org names another registration agency for a prefix (``doi_ra``)."""
    before, after = _agency(old.body), _agency(new.body)
    if before == after:
        return None
    return _summary([{"type": "agency_changed", "from": before, "to": after}])


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
    created = _created(_dict(_json(body)))
    if held_since is not None and created is not None and created < held_since:
        return None
    item: dict[str, Any] = {"type": "new_version", "recid": keys.recid, "older": sorted(older)[:NAMES_SHOWN]}
    if view.get("version"):
        item["version"] = view["version"]
    return _summary([item], doi=keys.doi, title=view.get("title"), series=keys.concept_recid)


def describe(summary: dict[str, Any]) -> str:
    """One line for people from a stored summary: each item in a few words, ``; ``-separated.

    E.g. ``retraction 10.1016/s0140-6736(20)31324-6 (retraction-watch); title changed``.
    """
    out: list[str] = []
    for item in summary.get("items") or []:
        kind = item.get("type")
        if kind == "update_removed":
            out.append(f"{item.get('update_type')} {item.get('doi')} removed")
        elif kind in ("title", "date"):
            out.append(f"{kind}: {item.get('from')!s} -> {item.get('to')!s}")
        elif kind == "authors":
            out.append(f"authors {item.get('from_count')} -> {item.get('to_count')}")
        elif kind == "superseded":
            out.append(
                "no longer the latest version"
                + (f" (latest {item['latest_recid']})" if item.get("latest_recid") else "")
            )
        elif kind == "new_version":
            out.append(
                f"new version {item.get('recid')}" + (f" ({item['version']})" if item.get("version") else "")
            )
        elif kind == "deleted":
            out.append("deleted" + (f" ({item['removal_reason']})" if item.get("removal_reason") else ""))
        elif kind == "restricted":
            out.append(f"restricted ({item.get('from')} -> {item.get('to')})")
        elif kind == "found":
            out.append(f"found (was {item.get('from_status')})")
        elif kind == "reinstated":
            out.append(f"answered again (was {item.get('from_status')})")
        elif kind == "agency_changed":
            out.append(f"registration agency {item.get('from')} -> {item.get('to')}")
        elif kind == "metadata":
            fields = item.get("fields") or []
            out.append("metadata: " + ", ".join(fields) if fields else "metadata changed")
        else:
            source = f" ({item['source']})" if item.get("source") else ""
            out.append(f"{kind} {item.get('doi')}{source}")
    return "; ".join(out)


_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", re.IGNORECASE)
_UNIT_S = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86_400.0, "w": 604_800.0}


def since_epoch(value: str, now: float) -> float:
    """The start of a ``since`` window as epoch seconds: a duration back from ``now`` or a UTC date/time.

    ``7d``, ``12h``, ``30m``, ``45s``, ``2w`` or plain seconds count back from ``now``; ``2026-11-01``
    or ``2026-11-01T08:00:00Z`` (ISO 8601, UTC when no offset is given) is taken as is.

    Raises:
        InvalidInput: reason ``invalid_parameter``, neither a duration nor an ISO date.
    """
    match = _DURATION.fullmatch(value)
    if match:
        return now - float(match.group(1)) * _UNIT_S[match.group(2).lower()]
    try:
        when = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(
            f"since: {value!r} is neither a duration (7d, 12h, 30m) nor an ISO date (2026-11-01)",
            reason="invalid_parameter",
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.timestamp()


def since_stored_notice(summaries: list[tuple[str, dict[str, Any]]]) -> str | None:
    """The notice of a work retracted or corrected since syncd first stored it, or None.

    Args:
        summaries: ``(detected_at ISO 8601, stored summary)`` of the work's recorded changes, oldest first.

    Returns:
        E.g. ``Retracted or corrected since syncd first stored this work: retraction (notice
        10.1016/s0140-6736(20)31324-6, retraction-watch), found 2026-12-01.``; None when no change
        added an update of :data:`NOTICE_TYPES`.
    """
    found: list[str] = []
    for when, summary in summaries:
        for item in summary.get("items") or []:
            if isinstance(item, dict) and item.get("type") in NOTICE_TYPES:
                source = f", {item['source']}" if item.get("source") else ""
                found.append(f"{item['type']} (notice {item.get('doi')}{source}), found {when[:10]}")
    if not found:
        return None
    return "Retracted or corrected since syncd first stored this work: " + "; ".join(found) + "."
