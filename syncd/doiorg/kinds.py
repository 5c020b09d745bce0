"""The doi.org slice's stored kind: the registration agency of a DOI prefix (``doi_ra``).

Declared beside the fetch its hook calls (:func:`syncd.doiorg.lookups.fetch_ra`) and listed here
for the registry.
"""

from __future__ import annotations

from syncd.doiorg.client import DoiClient
from syncd.doiorg.lookups import RA
from syncd.kinds import Kind
from syncd.services import ClientFactory

__all__ = ["CLIENTS", "KINDS"]

KINDS: tuple[Kind, ...] = (RA,)
"""The doi.org slice's kinds."""

CLIENTS: dict[str, ClientFactory] = {"doi": DoiClient}
"""The slice's upstream client constructor by client name (also its settings section, ``doi.*``)."""
