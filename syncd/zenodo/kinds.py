"""The Zenodo slice's stored kinds: records, search / versions / vocabulary pages, communities, terms.

Each :class:`~syncd.kinds.Kind` is data: its ``ttl.*`` setting, budget pool and store rules
(:mod:`syncd.zenodo.rules`). Nothing here imports the slice's lookups, views or contracts (a command
that only reads the store loads none of them): the kinds' hooks are in :mod:`syncd.zenodo.kinds_hooks`,
loaded by the code that calls one (:func:`syncd.registry.hooks_of`). The records are reached by id,
DOI or URL through :data:`RECORDS` (``syncd cache show/get/refresh/evict``).
"""

from __future__ import annotations

from syncd.errors import InvalidInput
from syncd.kinds import ALL_STATUSES, Kind
from syncd.road.records import RecordSource
from syncd.road.services import ClientFactory
from syncd.store.repo import Store, StoredEntry
from syncd.zenodo.client import ZenodoClient
from syncd.zenodo.names import (
    ZENODO_AWARD,
    ZENODO_CONTAINER,
    ZENODO_ENTITY,
    ZENODO_FUNDER,
    ZENODO_RECORD,
    ZENODO_SEARCH,
    ZENODO_VERSIONS,
    ZENODO_VOCAB,
)
from syncd.zenodo.params_id import RecordRef, parse_record_ref
from syncd.zenodo.rules import CONTAINER_RULES, ENTITY_RULES, PAGE_RULES, RECORD_RULES, TERM_RULES

__all__ = [
    "CLIENTS",
    "KINDS",
    "PAGE_KINDS",
    "RECORD",
    "RECORDS",
    "TERM_KINDS",
    "claims_record",
    "latest_version",
    "stored_record",
]

RECORD = Kind(ZENODO_RECORD, "zenodo_record", "zenodo_general", ALL_STATUSES, RECORD_RULES)
"""``zenodo_record``: one version, ``GET /api/records/{id}`` (``ttl.zenodo_record``; tombstones too)."""

PAGE_KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(ZENODO_SEARCH, "search", "zenodo_search", rules=PAGE_RULES),
        Kind(ZENODO_VERSIONS, "search", "zenodo_general", rules=PAGE_RULES),
        Kind(ZENODO_VOCAB, "entity", "zenodo_general", rules=PAGE_RULES),
        Kind(ZENODO_ENTITY, "entity", "zenodo_general", rules=ENTITY_RULES),
        Kind(ZENODO_CONTAINER, "zenodo_record", "zenodo_general", rules=CONTAINER_RULES),
    )
}
"""The kinds stored as whole pages (:func:`syncd.zenodo.lookups_pages.get_page`): searches, version
lists, vocabularies, communities, file containers, by name."""

TERM_KINDS: dict[str, Kind] = {
    name: Kind(name, "entity", "zenodo_general", rules=TERM_RULES) for name in (ZENODO_FUNDER, ZENODO_AWARD)
}
"""One term of Zenodo's funders / awards vocabulary (``ttl.entity``), by name."""

KINDS: tuple[Kind, ...] = (RECORD, *PAGE_KINDS.values(), *TERM_KINDS.values())
"""The Zenodo slice's kinds, in the order ``syncd cache stats`` lists them."""


def latest_version(store: Store, recid: str) -> str | None:
    """The stored latest version id when ``recid`` is a known concept record id, else None."""
    concept = store.concept_latest(recid)
    return concept[0] if concept is not None else None


def stored_record(store: Store, ref: RecordRef) -> StoredEntry | None:
    """The stored record ``ref`` names, with no request: a concept id reads its latest version.

    None when nothing is stored (a DOI not yet resolved to a record id included).
    """
    if ref.recid is not None:
        return store.get(ZENODO_RECORD, latest_version(store, ref.recid) or ref.recid)
    return store.find_by_doi(ZENODO_RECORD, ref.doi) if ref.doi else None


def claims_record(ident: str) -> RecordRef | None:
    """The reference of ``ident`` when it names a Zenodo record (it parses to a record id), else None."""
    try:
        ref = parse_record_ref(ident)
    except InvalidInput:
        return None
    return ref if ref.recid is not None else None


RECORDS: RecordSource[RecordRef] = RecordSource(
    name="zenodo", kind=RECORD, parse=parse_record_ref, stored=stored_record, claims=claims_record
)
"""Zenodo records by record id, concept id, DOI or zenodo.org / doi.org URL (``--kind auto`` gives an
identifier to Zenodo when it names a Zenodo record: digits, ``zenodo.N``, a Zenodo DOI, a zenodo.org or
doi.org link to one; any other DOI is left to the DOI fallback). The record view ``syncd cache get``
answers is :data:`syncd.zenodo.kinds_hooks.ANSWERS`."""

CLIENTS: dict[str, ClientFactory] = {"zenodo": ZenodoClient}
"""The slice's upstream client constructor by client name (also its settings section, ``zenodo.*``)."""
