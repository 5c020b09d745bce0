"""The names of the Zenodo slice's stored kinds (``entries.kind``; fixed by the schema and exports).

``zenodo_funder`` and ``zenodo_award`` hold one entry of Zenodo's funders / awards vocabulary each
(key: the ROR id / the award id ``<ror>::<number>``; ``doi``: its Funder DOI / award DOI), learnt from
``GET /api/funders/{ror}``, ``/api/awards/{id}`` or any stored vocabulary page, so a Funder DOI or an
award DOI resolves from the store.
"""

from __future__ import annotations

__all__ = [
    "CONCEPT_DOI_PREFIX",
    "ZENODO_AWARD",
    "ZENODO_CONTAINER",
    "ZENODO_ENTITY",
    "ZENODO_FUNDER",
    "ZENODO_PREVIEW",
    "ZENODO_RECORD",
    "ZENODO_SEARCH",
    "ZENODO_VERSIONS",
    "ZENODO_VOCAB",
]

ZENODO_RECORD = "zenodo_record"
"""A record (one version), ``GET /api/records/{id}`` (key: the record id)."""
ZENODO_SEARCH = "zenodo_search"
"""A search page, ``GET /api/records?q=...``."""
ZENODO_VERSIONS = "zenodo_versions"
"""A page of a concept's versions, ``GET /api/records/{id}/versions``."""
ZENODO_VOCAB = "zenodo_vocab"
"""A vocabulary page (licenses, funders, awards, communities search)."""
ZENODO_ENTITY = "zenodo_entity"
"""A community, ``GET /api/communities/{slug}``."""
ZENODO_CONTAINER = "zenodo_container"
"""A file container listing (``/api/records/{id}/files/{key}/container``)."""
ZENODO_FUNDER = "zenodo_funder"
"""A funder of Zenodo's vocabulary, ``GET /api/funders/{ror}``."""
ZENODO_AWARD = "zenodo_award"
"""An award of Zenodo's vocabulary, ``GET /api/awards/{id}``."""
ZENODO_PREVIEW = "zenodo_preview"
"""Blob kind of kept file previews (``blobs`` table; not an entry kind)."""

CONCEPT_DOI_PREFIX = "10.5281/zenodo."
"""A concept DOI is this prefix + the concept record id (a series' DOI in the change feed)."""
