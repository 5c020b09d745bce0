"""The hooks of the DataCite slice's kinds (:class:`~syncd.kinds.KindHooks`).

Loaded by the code that calls a hook, through :func:`syncd.registry.hooks_of` (:mod:`syncd.lazy`): the
kinds themselves (:mod:`syncd.datacite.kinds`) are data, so a command that only reads the store never
imports the lookups these hooks run.
"""

from __future__ import annotations

import json
from typing import Any

from syncd.datacite import views_export
from syncd.datacite.kinds import LIST, WORK
from syncd.datacite.lookups import fetch_list, fetch_work, get_work, load_work, miss_of
from syncd.datacite.lookups_revalidate import REVALIDATE_MANY
from syncd.datacite.queries import miss_guidance
from syncd.datacite.rules import WORK_RULES
from syncd.datacite.views import work_view
from syncd.errors import NotFound
from syncd.kinds import KindHooks
from syncd.normalize.doi import ParsedDOI
from syncd.road.local_first import Lookup
from syncd.road.records import RecordAnswer
from syncd.road.services import Services
from syncd.store.content import document
from syncd.store.repo import StoredEntry
from syncd.upstream.deadline import Deadline

__all__ = ["ANSWERS", "HOOKS"]


def _refetch_work(svc: Services, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    return fetch_work(svc, entry.key, deadline)


def _refetch_list(svc: Services, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    spec = json.loads(entry.key)
    params = {str(k): str(v) for k, v in spec["params"].items()}
    return fetch_list(svc, str(spec["route"]), params, deadline)


HOOKS: dict[str, KindHooks] = {
    WORK.name: KindHooks(
        refetch=_refetch_work, load=load_work, revalidate_many=REVALIDATE_MANY, export=views_export.EXPORT
    ),
    LIST.name: KindHooks(refetch=_refetch_list),
}
"""Each DataCite kind's hooks by kind name: works refetched by DOI and confirmed in groups, list pages
refetched by their stored request."""


def _fetch(svc: Services, doi: ParsedDOI, force: bool) -> Lookup:
    return get_work(svc, doi, force=force)


def _view(entry: StoredEntry, label: str) -> dict[str, Any]:
    """The ``datacite_get_work`` record of a stored ``datacite_work`` entry (its found arm, caps applied).

    Raises:
        NotFound: the entry is a stored miss (its reason, e.g. ``not_found`` at DataCite, and guidance).
    """
    if entry.status != "ok":
        miss = miss_of(entry)
        raise NotFound(miss_guidance(miss, entry.key), reason=miss.reason, doi=label)
    record, truncated = work_view(document(entry, WORK_RULES), entry.key)
    if truncated:
        record["truncatedLists"] = truncated
    return record


ANSWERS: dict[str, RecordAnswer[ParsedDOI]] = {"datacite": RecordAnswer(fetch=_fetch, view=_view)}
"""The record answer of the slice's record source (``syncd cache get --kind datacite``): the DataCite
record local-first (:func:`~syncd.datacite.lookups.get_work`) and its ``datacite_get_work`` view."""
