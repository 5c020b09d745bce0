"""The ``crossref_get_work`` answer, assembled: the work's contract view, its provenance, its notices.

The view of one stored work is built once per content and author page and kept for the last
:data:`_VIEWS_MAX` answers (a warm hit skips ``json.loads`` of the body, ``work_view`` and the
dump). A work with updates (``updatedBy``: retraction, correction, ...) gets the "since first
stored" notice from what the change feed recorded of it
(:func:`syncd.crossref.lookups_stored.since_stored`).
"""

from __future__ import annotations

from collections import OrderedDict
from threading import Lock
from typing import Any

from syncd.crossref import lookups as lookups_crossref
from syncd.crossref.lookups_stored import since_stored
from syncd.crossref.rules import WORK_RULES
from syncd.crossref.views import work_view
from syncd.normalize.changes import since_stored_notice
from syncd.normalize.doi import ParsedDOI
from syncd.road.local_first import Lookup
from syncd.road.services import Services
from syncd.store.content import document

__all__ = ["work_answer"]


_VIEWS: OrderedDict[tuple[str, str, str | None, int, int], dict[str, Any]] = OrderedDict()
"""Recent work answers without ``cache``, by (DOI key, content hash, volatile fields, offset, limit)."""
_VIEWS_MAX = 256
_VIEWS_LOCK = Lock()


def _work_data(lookup: Lookup, offset: int, limit: int) -> dict[str, Any]:
    """The work answer of ``lookup``: its contract view plus this call's ``cache`` block.

    The view is built once per stored content and author page and kept for the last
    :data:`_VIEWS_MAX` (a warm hit skips ``json.loads`` of the body, ``work_view`` and the dump).
    The answer is a new top-level dict; its nested values are shared with the kept view, so no
    caller may change them in place (``fit_answer`` copies before it cuts).
    """
    entry = lookup.entry
    key = (entry.key, entry.content_hash, entry.volatile, offset, limit) if entry.content_hash else None
    with _VIEWS_LOCK:
        view = _VIEWS.get(key) if key else None
        if view is not None and key is not None:
            _VIEWS.move_to_end(key)
    if view is None:
        built = work_view(document(entry, WORK_RULES), offset=offset, limit=limit)
        view = built.model_dump(mode="json", exclude_none=True)
        if key:
            with _VIEWS_LOCK:
                _VIEWS[key] = view
                if len(_VIEWS) > _VIEWS_MAX:
                    _VIEWS.popitem(last=False)
    return {**view, "cache": lookup.provenance.as_dict()}


def work_answer(svc: Services, doi: ParsedDOI, offset: int, limit: int) -> dict[str, Any]:
    """The ``crossref_get_work`` answer for ``doi``: one author page (``offset``, ``limit``) and ``cache``.

    A work with updates carries the "retracted or corrected since first stored" notice first.

    Raises:
        SyncdError: a declared failure of the lookup (doi_not_found, rate_limited, ...).
    """
    lookup = lookups_crossref.get_work(svc, doi)
    data = _work_data(lookup, offset, limit)
    if data.get("updatedBy"):
        notice = since_stored_notice([(u.detected_at, u.summary) for u in since_stored(svc, lookup.entry.id)])
        if notice:
            data["notice"] = "\n".join(filter(None, (notice, data.get("notice"))))
    return data
