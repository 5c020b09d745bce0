"""The Crossref slice's stored kinds: works, list pages, journals, funders, members, prefixes.

Each :class:`~syncd.kinds.Kind` carries its ``ttl.*`` setting, budget pool, store rules
(:mod:`syncd.crossref.rules`) and hooks; they are declared beside the fetches their hooks call
(:mod:`syncd.crossref.lookups`) and listed here for the registry.
"""

from __future__ import annotations

from syncd.crossref.client import CrossrefClient
from syncd.crossref.lookups import ENTITY_KINDS, LIST, WORK
from syncd.crossref.lookups_datafile import DATA_FILE
from syncd.crossref.lookups_records import RECORDS
from syncd.kinds import Kind
from syncd.services import ClientFactory

__all__ = ["CLIENTS", "DATA_FILE", "KINDS", "RECORDS"]

KINDS: tuple[Kind, ...] = (WORK, LIST, *ENTITY_KINDS.values())
"""The Crossref slice's kinds, in the order ``syncd cache stats`` lists them."""

CLIENTS: dict[str, ClientFactory] = {"crossref": CrossrefClient}
"""The slice's upstream client constructor by client name (also its settings section, ``crossref.*``)."""
