"""The generic machinery of change summaries and the change feed's text (pure: no I/O, no upstream named).

Each record kind's slice holds its own summary, handed to the store through the kind's store rules
(:class:`~syncd.store.rules.StoreRules` ``summarize`` / ``arrival``): Crossref works in
:mod:`syncd.crossref.views_changes`, Zenodo records and new versions in :mod:`syncd.zenodo.views_changes`,
doi.org's registration agency in :mod:`syncd.doiorg.rules`. The store calls them when it replaces a
stored body (revalidation, sync walk, fetch, import) or a record joins a series it already holds; the
summary becomes one row of the change feed (``changes`` table, ``syncd changes``,
``syncd_list_changes``). Bodies are compared through the views the tools answer with, never as raw
JSON; what every view shares (title, people, date, the other fields) is compared here
(:func:`described_items`, located by a :class:`ViewFields`).

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
  already held.
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

from syncd.errors import InvalidInput
from syncd.store.rules import ChangeSummary, Side

__all__ = [
    "ALERT_TYPES",
    "NAMES_SHOWN",
    "NOTICE_TYPES",
    "UPDATE_TYPES",
    "ChangeSummary",
    "Side",
    "ViewFields",
    "as_object",
    "describe",
    "described_items",
    "json_body",
    "since_epoch",
    "since_stored_notice",
    "summary_of",
]


ALERT_TYPES = (
    "retraction",
    "withdrawal",
    "expression_of_concern",
    "deleted",
    "retraction_watch_removed",
)
"""Change types that raise an alert for a watched entry (:mod:`syncd.daemon.alerts`); the last is a
Retraction Watch row the newest version no longer holds (a retraction withdrawn from the data)."""

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


def json_body(text: str | None) -> Any:
    """A stored body (JSON text) parsed, or None when empty or not JSON."""
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def as_object(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else ``{}``."""
    return value if isinstance(value, dict) else {}


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


@dataclass(frozen=True)
class ViewFields:
    """Where a view keeps what every summary compares: ``people``, their ``count``, the ``date``.

    ``date_text``: the date as the ``date`` item tells it (e.g. ``YYYY-MM-DD``).
    """

    people: str
    count: str
    date: str
    date_text: Callable[[Any], Any]


def described_items(
    old: dict[str, Any], new: dict[str, Any], f: ViewFields, folded: set[str]
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


def summary_of(items: list[dict[str, Any]], **about: Any) -> ChangeSummary | None:
    """The summary of ``items`` (types in first-seen order; ``about``: ``doi``, ``title``, ``series``).

    None when ``items`` is empty: nothing is recorded.
    """
    if not items:
        return None  # the view did not change (a body complete now, or a change outside the view)
    types: list[str] = []
    for item in items:
        if item["type"] not in types:
            types.append(item["type"])
    return ChangeSummary(tuple(types), tuple(items), **about)


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
