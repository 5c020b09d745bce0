"""The hook of the doi.org slice's kind (:class:`~syncd.kinds.KindHooks`): ask ``/ra/{prefix}`` again.

Loaded by the code that calls it, through :func:`syncd.registry.hooks_of` (:mod:`syncd.lazy`).
"""

from __future__ import annotations

from syncd.doiorg.kinds import RA
from syncd.doiorg.lookups import fetch_ra
from syncd.kinds import KindHooks
from syncd.road.services import Services
from syncd.store.repo import StoredEntry
from syncd.upstream.deadline import Deadline

__all__ = ["HOOKS"]


def _refetch_ra(svc: Services, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    return fetch_ra(svc.upstreams.doi, svc.store, entry.key, deadline)


HOOKS: dict[str, KindHooks] = {RA.name: KindHooks(refetch=_refetch_ra)}
"""The ``doi_ra`` kind's hooks: refetched by its prefix."""
