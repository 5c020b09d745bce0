"""The doi.org slice's stored kind: the registration agency of a DOI prefix (``doi_ra``).

Declared beside the fetch its hook calls (:func:`syncd.lookups.crossref.fetch_ra`) and listed here
for the registry.
"""

from __future__ import annotations

from syncd.kinds import Kind
from syncd.lookups.crossref import RA

__all__ = ["KINDS"]

KINDS: tuple[Kind, ...] = (RA,)
"""The doi.org slice's kinds."""
