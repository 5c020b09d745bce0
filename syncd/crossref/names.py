"""The names of the Crossref slice's stored kinds (``entries.kind``; fixed by the schema and exports)."""

from __future__ import annotations

__all__ = [
    "CROSSREF_FUNDER",
    "CROSSREF_JOURNAL",
    "CROSSREF_MEMBER",
    "CROSSREF_PREFIX",
    "CROSSREF_SEARCH",
    "CROSSREF_WORK",
]

CROSSREF_WORK = "crossref_work"
"""A work, ``GET /works/{doi}`` (key: the lower-cased DOI)."""
CROSSREF_SEARCH = "crossref_search"
"""A list page: ``/works``, ``/journals``, ``/funders`` queries and sub-resources (key: route + params)."""
CROSSREF_JOURNAL = "crossref_journal"
"""A journal, ``GET /journals/{issn}``."""
CROSSREF_FUNDER = "crossref_funder"
"""A funder, ``GET /funders/{id}``."""
CROSSREF_MEMBER = "crossref_member"
"""A member, ``GET /members/{id}``."""
CROSSREF_PREFIX = "crossref_prefix"
"""A DOI prefix, ``GET /prefixes/{prefix}``."""
