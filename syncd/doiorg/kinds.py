"""The doi.org slice's stored kind: the registration agency of a DOI prefix (``doi_ra``).

Data only (its ``ttl.*`` setting, pool and store rules); its hook, which asks doi.org again
(:func:`syncd.doiorg.lookups.fetch_ra`), is in :mod:`syncd.doiorg.kinds_hooks`, loaded by the code that
calls it (:func:`syncd.registry.hooks_of`).
"""

from __future__ import annotations

from syncd.doiorg.client import DoiClient
from syncd.doiorg.names import DOI_RA
from syncd.doiorg.rules import RA_RULES
from syncd.kinds import Kind
from syncd.road.services import ClientFactory

__all__ = ["CLIENTS", "KINDS", "RA"]

RA = Kind(DOI_RA, "entity", "doi", rules=RA_RULES)
"""``doi_ra``: doi.org's ``/ra/{prefix}`` answer, cached per prefix (``ttl.entity``, pool ``doi``)."""

KINDS: tuple[Kind, ...] = (RA,)
"""The doi.org slice's kinds."""

CLIENTS: dict[str, ClientFactory] = {"doi": DoiClient}
"""The slice's upstream client constructor by client name (also its settings section, ``doi.*``)."""
