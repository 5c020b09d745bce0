"""The stored kinds: one table, declared once.

Every entry in the store has a ``kind``. This module is the only list of them: the ``ttl.*`` setting
that gives an ``ok`` entry its lifetime, the budget pool its requests are charged to (and whose
breaker the sweep consults), and the statuses it can be stored with. How a kind is refetched is
not here: :mod:`syncd.refresh` holds that table over the lookups.

=================== =============== ================ ======================================
kind                ttl setting     pool             statuses
=================== =============== ================ ======================================
``crossref_work``   crossref_work   crossref_single  ok, not_found
``crossref_search`` search          crossref_list    ok, not_found
``crossref_journal`` entity         crossref_single  ok, not_found
``crossref_funder`` entity          crossref_single  ok, not_found
``crossref_member`` entity          crossref_single  ok, not_found
``crossref_prefix`` entity          crossref_single  ok, not_found
``doi_ra``          entity          doi              ok, not_found
``zenodo_record``   zenodo_record   zenodo_general   ok, not_found, gone, restricted
``zenodo_search``   search          zenodo_search    ok, not_found
``zenodo_versions`` search          zenodo_general   ok, not_found
``zenodo_vocab``    entity          zenodo_general   ok, not_found
``zenodo_entity``   entity          zenodo_general   ok, not_found
``zenodo_container`` zenodo_record  zenodo_general   ok, not_found
``zenodo_funder``   entity          zenodo_general   ok, not_found
``zenodo_award``    entity          zenodo_general   ok, not_found
=================== =============== ================ ======================================

``zenodo_funder`` and ``zenodo_award`` hold one entry of Zenodo's funders / awards vocabulary each
(key: the ROR id / the award id ``<ror>::<number>``; ``doi``: its Funder DOI / award DOI), learnt from
``GET /api/funders/{ror}``, ``/api/awards/{id}`` or any stored vocabulary page, so a Funder DOI or an
award DOI resolves from the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from syncd.config import PoolName

__all__ = [
    "ALL_STATUSES",
    "CROSSREF_FUNDER",
    "CROSSREF_JOURNAL",
    "CROSSREF_MEMBER",
    "CROSSREF_PREFIX",
    "CROSSREF_SEARCH",
    "CROSSREF_WORK",
    "DOI_RA",
    "KINDS",
    "RECORD_KINDS",
    "ZENODO_AWARD",
    "ZENODO_CONTAINER",
    "ZENODO_ENTITY",
    "ZENODO_FUNDER",
    "ZENODO_PREVIEW",
    "ZENODO_RECORD",
    "ZENODO_SEARCH",
    "ZENODO_VERSIONS",
    "ZENODO_VOCAB",
    "Kind",
    "TtlSetting",
    "kind_of",
]

TtlSetting = Literal["crossref_work", "zenodo_record", "search", "entity"]
"""Name of the ``ttl.*`` setting that gives an ``ok`` entry its lifetime."""

ALL_STATUSES = ("ok", "not_found", "gone", "restricted")
"""Every status an entry can be stored with (``ok`` carries a body; the others are misses)."""

_MISS = ("ok", "not_found")


@dataclass(frozen=True)
class Kind:
    """One stored kind: ``name``, its ``ttl.*`` setting, its budget ``pool`` and possible ``statuses``."""

    name: str
    ttl: TtlSetting
    pool: PoolName
    statuses: tuple[str, ...] = _MISS

    @property
    def on_demand(self) -> bool:
        """Search and version pages: fetched again when asked, never by the background sweep."""
        return self.ttl == "search"


CROSSREF_WORK = "crossref_work"
CROSSREF_SEARCH = "crossref_search"
CROSSREF_JOURNAL = "crossref_journal"
CROSSREF_FUNDER = "crossref_funder"
CROSSREF_MEMBER = "crossref_member"
CROSSREF_PREFIX = "crossref_prefix"
DOI_RA = "doi_ra"
ZENODO_RECORD = "zenodo_record"
ZENODO_SEARCH = "zenodo_search"
ZENODO_VERSIONS = "zenodo_versions"
ZENODO_VOCAB = "zenodo_vocab"
ZENODO_ENTITY = "zenodo_entity"
ZENODO_CONTAINER = "zenodo_container"
ZENODO_FUNDER = "zenodo_funder"
ZENODO_AWARD = "zenodo_award"
ZENODO_PREVIEW = "zenodo_preview"
"""Blob kind of kept file previews (``blobs`` table; not an entry kind)."""

KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(CROSSREF_WORK, "crossref_work", "crossref_single"),
        Kind(CROSSREF_SEARCH, "search", "crossref_list"),
        Kind(CROSSREF_JOURNAL, "entity", "crossref_single"),
        Kind(CROSSREF_FUNDER, "entity", "crossref_single"),
        Kind(CROSSREF_MEMBER, "entity", "crossref_single"),
        Kind(CROSSREF_PREFIX, "entity", "crossref_single"),
        Kind(DOI_RA, "entity", "doi"),
        Kind(ZENODO_RECORD, "zenodo_record", "zenodo_general", ALL_STATUSES),
        Kind(ZENODO_SEARCH, "search", "zenodo_search"),
        Kind(ZENODO_VERSIONS, "search", "zenodo_general"),
        Kind(ZENODO_VOCAB, "entity", "zenodo_general"),
        Kind(ZENODO_ENTITY, "entity", "zenodo_general"),
        Kind(ZENODO_CONTAINER, "zenodo_record", "zenodo_general"),
        Kind(ZENODO_FUNDER, "entity", "zenodo_general"),
        Kind(ZENODO_AWARD, "entity", "zenodo_general"),
    )
}
"""The 15 stored entry kinds by name."""


RECORD_KINDS: dict[str, str] = {"crossref": CROSSREF_WORK, "zenodo": ZENODO_RECORD}
"""The kind holding each upstream's records (Crossref works, Zenodo records), by upstream name."""


def kind_of(name: str) -> Kind:
    """The :class:`Kind` called ``name``.

    Raises:
        KeyError: ``name`` is not a stored kind.
    """
    return KINDS[name]
