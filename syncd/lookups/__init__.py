"""Lookups through the local-first path, one module per upstream; importing registers their kinds."""

from syncd.lookups import crossref, zenodo

__all__ = ["crossref", "zenodo"]
