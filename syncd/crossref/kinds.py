"""The Crossref slice's stored kinds: works, list pages, journals, funders, members, prefixes.

Each :class:`~syncd.kinds.Kind` is data: its ``ttl.*`` setting, budget pool and store rules
(:mod:`syncd.crossref.rules`). Nothing here imports the slice's lookups, views or contracts (a command
that only reads the store loads none of them): the kinds' hooks are in :mod:`syncd.crossref.kinds_hooks`,
loaded by the code that calls one (:func:`syncd.registry.hooks_of`). The works are reached by DOI
through :data:`RECORDS` (``syncd cache show/get/refresh/evict``).
"""

from __future__ import annotations

from syncd.crossref.client import CrossrefClient
from syncd.crossref.names import (
    CROSSREF_FUNDER,
    CROSSREF_JOURNAL,
    CROSSREF_MEMBER,
    CROSSREF_PREFIX,
    CROSSREF_SEARCH,
    CROSSREF_WORK,
)
from syncd.crossref.rules import ENTITY_RULES, LIST_RULES, WORK_RULES
from syncd.kinds import Kind
from syncd.normalize.doi import ParsedDOI, parse_doi
from syncd.road.records import RecordSource
from syncd.road.services import ClientFactory
from syncd.store.repo import Store, StoredEntry

__all__ = ["CLIENTS", "ENTITY_KINDS", "KINDS", "LIST", "RECORDS", "WORK", "stored_work"]

WORK = Kind(CROSSREF_WORK, "crossref_work", "crossref_single", rules=WORK_RULES)
"""``crossref_work``: a work, ``GET /works/{doi}`` (``ttl.crossref_work``, pool ``crossref_single``);
stale works confirmed in groups by their ``indexed`` stamps (:mod:`syncd.crossref.lookups_revalidate`)."""

LIST = Kind(CROSSREF_SEARCH, "search", "crossref_list", rules=LIST_RULES)
"""``crossref_search``: a list page (``ttl.search``, pool ``crossref_list``; refetched only when asked)."""

ENTITY_KINDS: dict[str, Kind] = {
    name: Kind(name, "entity", "crossref_single", rules=ENTITY_RULES[name])
    for name in (CROSSREF_JOURNAL, CROSSREF_FUNDER, CROSSREF_MEMBER, CROSSREF_PREFIX)
}
"""Journals, funders, members, prefixes (``ttl.entity``, pool ``crossref_single``), by kind name."""

KINDS: tuple[Kind, ...] = (WORK, LIST, *ENTITY_KINDS.values())
"""The Crossref slice's kinds, in the order ``syncd cache stats`` lists them."""


def stored_work(store: Store, doi: ParsedDOI) -> StoredEntry | None:
    """The stored ``crossref_work`` entry of ``doi`` (no request; None when not stored)."""
    return store.get(CROSSREF_WORK, doi.key)


RECORDS: RecordSource[ParsedDOI] = RecordSource(
    name="crossref", kind=WORK, parse=parse_doi, stored=stored_work
)
"""Crossref works by DOI (bare, ``doi:``, doi.org URL): the fallback of ``--kind auto``; the work view
``syncd cache get`` answers is :data:`syncd.crossref.kinds_hooks.ANSWERS`."""

CLIENTS: dict[str, ClientFactory] = {"crossref": CrossrefClient}
"""The slice's upstream client constructor by client name (also its settings section, ``crossref.*``)."""
