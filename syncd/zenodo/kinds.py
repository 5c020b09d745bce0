"""The Zenodo slice's stored kinds: records, search / versions / vocabulary pages, communities, terms.

Each :class:`~syncd.kinds.Kind` carries its ``ttl.*`` setting, budget pool, store rules
(:mod:`syncd.zenodo.rules`) and hooks; they are declared beside the fetches their hooks call
(:mod:`syncd.zenodo.lookups`) and listed here for the registry.
"""

from __future__ import annotations

from syncd.kinds import Kind
from syncd.services import ClientFactory
from syncd.zenodo.client import ZenodoClient
from syncd.zenodo.lookups_fetch import RECORD
from syncd.zenodo.lookups_pages import PAGE_KINDS
from syncd.zenodo.lookups_records import RECORDS
from syncd.zenodo.lookups_terms import TERM_KINDS

__all__ = ["CLIENTS", "KINDS", "RECORDS"]

KINDS: tuple[Kind, ...] = (RECORD, *PAGE_KINDS.values(), *TERM_KINDS.values())
"""The Zenodo slice's kinds, in the order ``syncd cache stats`` lists them."""

CLIENTS: dict[str, ClientFactory] = {"zenodo": ZenodoClient}
"""The slice's upstream client constructor by client name (also its settings section, ``zenodo.*``)."""
