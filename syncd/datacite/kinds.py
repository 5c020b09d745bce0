"""The DataCite slice's stored kinds: works and list pages.

Each :class:`~syncd.kinds.Kind` carries its ``ttl.*`` setting, budget pool (``datacite``), store rules
(:mod:`syncd.datacite.rules`) and hooks; they are declared beside the fetches their hooks call
(:mod:`syncd.datacite.lookups`) and listed here for the registry.
"""

from __future__ import annotations

from syncd.datacite.client import DataciteClient
from syncd.datacite.lookups import LIST, WORK
from syncd.kinds import Kind
from syncd.services import ClientFactory

__all__ = ["CLIENTS", "KINDS"]

KINDS: tuple[Kind, ...] = (WORK, LIST)
"""The DataCite slice's kinds, in the order ``syncd cache stats`` lists them."""

CLIENTS: dict[str, ClientFactory] = {"datacite": DataciteClient}
"""The slice's upstream client constructor by client name (also its settings section, ``datacite.*``)."""
