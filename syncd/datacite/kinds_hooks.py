"""The hooks of the DataCite slice's kinds (:class:`~syncd.kinds.KindHooks`).

Loaded by the code that calls a hook, through :func:`syncd.registry.hooks_of` (:mod:`syncd.lazy`): the
kinds themselves (:mod:`syncd.datacite.kinds`) are data, so a command that only reads the store never
imports the lookups these hooks run.
"""

from __future__ import annotations

import json

from syncd.datacite.kinds import LIST, WORK
from syncd.datacite.lookups import fetch_list, fetch_work, load_work
from syncd.datacite.lookups_revalidate import REVALIDATE_MANY
from syncd.kinds import KindHooks
from syncd.services import Services
from syncd.store.repo import StoredEntry
from syncd.upstream.deadline import Deadline

__all__ = ["HOOKS"]


def _refetch_work(svc: Services, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    return fetch_work(svc, entry.key, deadline)


def _refetch_list(svc: Services, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    spec = json.loads(entry.key)
    params = {str(k): str(v) for k, v in spec["params"].items()}
    return fetch_list(svc, str(spec["route"]), params, deadline)


HOOKS: dict[str, KindHooks] = {
    WORK.name: KindHooks(refetch=_refetch_work, load=load_work, revalidate_many=REVALIDATE_MANY),
    LIST.name: KindHooks(refetch=_refetch_list),
}
"""Each DataCite kind's hooks by kind name: works refetched by DOI and confirmed in groups, list pages
refetched by their stored request."""
