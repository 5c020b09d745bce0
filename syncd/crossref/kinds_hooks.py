"""The hooks of the Crossref slice's kinds (:class:`~syncd.kinds.KindHooks`), its record answer and data file.

Loaded by the code that calls a hook, through :func:`syncd.registry.hooks_of`,
:func:`~syncd.registry.record_answer` and :func:`~syncd.registry.data_files` (:mod:`syncd.lazy`): the
kinds themselves (:mod:`syncd.crossref.kinds`) are data, so a command that only reads the store never
imports the lookups, views and contracts these hooks run.
"""

from __future__ import annotations

from syncd.crossref import lookups_datafile, lookups_records, views_export
from syncd.crossref.kinds import ENTITY_KINDS, LIST, WORK
from syncd.crossref.lookups import fetch_entity, fetch_work, load_work, refetch_list
from syncd.crossref.lookups_revalidate import REVALIDATE_MANY
from syncd.kinds import DataFileRows, KindHooks
from syncd.normalize.doi import ParsedDOI
from syncd.road.records import RecordAnswer
from syncd.road.services import Services
from syncd.store.repo import StoredEntry
from syncd.upstream.deadline import Deadline

__all__ = ["ANSWERS", "DATA_FILES", "HOOKS"]


def _refetch_work(svc: Services, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    doi = ParsedDOI(doi=entry.doi or entry.key, key=entry.key, input_form="bare")
    return fetch_work(svc.upstreams.crossref, svc.store, doi, entry, deadline)


def _refetch_entity(svc: Services, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    return fetch_entity(svc.upstreams.crossref, svc.store, entry.kind, entry.key, deadline)


def _refetch_list(svc: Services, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    return refetch_list(svc.upstreams.crossref, svc.store, entry, deadline)


HOOKS: dict[str, KindHooks] = {
    WORK.name: KindHooks(
        refetch=_refetch_work, load=load_work, revalidate_many=REVALIDATE_MANY, export=views_export.EXPORT
    ),
    LIST.name: KindHooks(refetch=_refetch_list),
    **{name: KindHooks(refetch=_refetch_entity) for name in ENTITY_KINDS},
}
"""Each Crossref kind's hooks by kind name: works refetched by DOI (``GET /works/{doi}``) and confirmed in
groups by their ``indexed`` stamps, list pages and entities refetched by their stored request."""

ANSWERS: dict[str, RecordAnswer[ParsedDOI]] = {"crossref": lookups_records.ANSWER}
"""The record answer of each record source of the slice, by source name (``syncd cache get``)."""

DATA_FILES: tuple[DataFileRows, ...] = (lookups_datafile.DATA_FILE,)
"""Crossref's public data file of works (``syncd cache import``)."""
