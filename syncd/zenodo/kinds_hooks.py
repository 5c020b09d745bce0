"""The hooks of the Zenodo slice's kinds (:class:`~syncd.kinds.KindHooks`) and its record answer.

Loaded by the code that calls a hook, through :func:`syncd.registry.hooks_of` and
:func:`~syncd.registry.record_answer` (:mod:`syncd.lazy`): the kinds themselves
(:mod:`syncd.zenodo.kinds`) are data, so a command that only reads the store never imports the
lookups, views and contracts these hooks run.
"""

from __future__ import annotations

from syncd.kinds import KindHooks
from syncd.road.records import RecordAnswer
from syncd.road.services import Services
from syncd.store.repo import StoredEntry
from syncd.upstream.deadline import Deadline
from syncd.zenodo import lookups_records, views_export
from syncd.zenodo.kinds import PAGE_KINDS, RECORD, TERM_KINDS
from syncd.zenodo.lookups_fetch import load_record, record_arrived, refetch_record
from syncd.zenodo.lookups_pages import refetch_page
from syncd.zenodo.lookups_terms import fetch_term
from syncd.zenodo.params_id import RecordRef
from syncd.zenodo.settings import SECTION

__all__ = ["ANSWERS", "HOOKS"]


def _refetch_record(svc: Services, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    every = SECTION.of(svc.settings).unconditional_every
    return refetch_record(svc.upstreams.zenodo, svc.store, entry, deadline, unconditional_every=every)


def _refetch_page(svc: Services, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    return refetch_page(svc.upstreams.zenodo, svc.store, entry, deadline)


def _refetch_term(svc: Services, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    return fetch_term(svc.upstreams.zenodo, svc.store, entry.kind, entry.key, deadline)


HOOKS: dict[str, KindHooks] = {
    RECORD.name: KindHooks(
        refetch=_refetch_record, load=load_record, arrived=record_arrived, export=views_export.EXPORT
    ),
    **{name: KindHooks(refetch=_refetch_page) for name in PAGE_KINDS},
    **{name: KindHooks(refetch=_refetch_term) for name in TERM_KINDS},
}
"""Each Zenodo kind's hooks by kind name: records refetched conditionally (``zenodo.unconditional_every``)
and noted as their concept's latest on import, pages and vocabulary terms refetched by their key."""

ANSWERS: dict[str, RecordAnswer[RecordRef]] = {"zenodo": lookups_records.ANSWER}
"""The record answer of each record source of the slice, by source name (``syncd cache get``)."""
