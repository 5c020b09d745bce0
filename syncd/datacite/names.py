"""The names of the DataCite slice's stored kinds (``entries.kind``; fixed by the schema and exports)."""

from __future__ import annotations

__all__ = ["DATACITE_SEARCH", "DATACITE_WORK"]

DATACITE_WORK = "datacite_work"
"""A DataCite work (key: the lower-cased DOI; body: ``{"data": {...}, "included": [client]}``, the
``GET /dois/{doi}`` shape, whichever endpoint answered). A miss (``not_found``) keeps doi.org's
registration-agency answer for the DOI as its body."""
DATACITE_SEARCH = "datacite_search"
"""A list page: ``/dois`` searches, ``/repositories`` searches (key: canonical route + params)."""
