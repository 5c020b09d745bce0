"""The DataCite slice's stored kinds: works and list pages.

Each :class:`~syncd.kinds.Kind` is data: its ``ttl.*`` setting, budget pool (``datacite``) and store rules
(:mod:`syncd.datacite.rules`). Nothing here imports the slice's lookups or contracts: the kinds' hooks
are in :mod:`syncd.datacite.kinds_hooks`, loaded by the code that calls one
(:func:`syncd.registry.hooks_of`).
"""

from __future__ import annotations

from syncd.datacite.client import DataciteClient
from syncd.datacite.names import DATACITE_SEARCH, DATACITE_WORK
from syncd.datacite.pools import DATACITE
from syncd.datacite.rules import LIST_RULES, WORK_RULES
from syncd.kinds import Kind
from syncd.normalize.doi import ParsedDOI, parse_doi
from syncd.road.records import RecordSource
from syncd.road.services import ClientFactory
from syncd.store.repo import Store, StoredEntry

__all__ = ["CLIENTS", "KINDS", "LIST", "RECORDS", "WORK"]

WORK = Kind(DATACITE_WORK, "datacite", DATACITE.name, rules=WORK_RULES)
"""``datacite_work``: a DataCite record (``ttl.datacite``, pool ``datacite``)."""

LIST = Kind(DATACITE_SEARCH, "search", DATACITE.name, rules=LIST_RULES)
"""``datacite_search``: a list page (``ttl.search``, pool ``datacite``; refetched only when asked)."""

KINDS: tuple[Kind, ...] = (WORK, LIST)
"""The DataCite slice's kinds, in the order ``syncd cache stats`` lists them."""


def _stored_work(store: Store, doi: ParsedDOI) -> StoredEntry | None:
    """The stored ``datacite_work`` entry of ``doi`` (no request; None when not stored)."""
    return store.get(DATACITE_WORK, doi.key)


RECORDS: RecordSource[ParsedDOI] = RecordSource(
    name="datacite", kind=WORK, parse=parse_doi, stored=_stored_work
)
"""DataCite records by DOI (``syncd cache show/get/refresh/evict --kind datacite``; a DOI is Crossref's
under ``--kind auto``, whose fallback reads any DOI as a Crossref work). The view ``syncd cache get``
answers is :data:`syncd.datacite.kinds_hooks.ANSWERS`."""

CLIENTS: dict[str, ClientFactory] = {"datacite": DataciteClient}
"""The slice's upstream client constructor by client name (also its settings section, ``datacite.*``)."""
