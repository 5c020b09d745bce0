"""The name of the doi.org slice's stored kind (``entries.kind``)."""

from __future__ import annotations

__all__ = ["DOI_RA"]

DOI_RA = "doi_ra"
"""The registration agency of a DOI prefix, ``GET https://doi.org/ra/{prefix}`` (key: the prefix)."""
