"""The composition root of the stored kinds: the one module that names every slice.

Adding an upstream is one folder (``syncd/<slice>/`` with its ``names.py``, ``rules.py`` and
``kinds.py``) plus one entry in :data:`SLICES`. Everything else reads the kinds from here:
the road (:func:`syncd.cache.local_first`) and the store receive a :class:`~syncd.kinds.Kind`, the
refresh, import, verify and change-feed code look a kind up by name in :data:`KINDS`.
"""

from __future__ import annotations

from collections.abc import Mapping

from syncd.crossref import kinds as crossref_kinds
from syncd.crossref.names import CROSSREF_WORK
from syncd.doiorg import kinds as doiorg_kinds
from syncd.doiorg.names import DOI_RA
from syncd.kinds import Kind
from syncd.store.rules import StoreRules
from syncd.zenodo import kinds as zenodo_kinds
from syncd.zenodo.names import CONCEPT_DOI_PREFIX, ZENODO_RECORD

__all__ = [
    "CHANGE_SOURCES",
    "KINDS",
    "RECORD_KINDS",
    "SERIES_DOI_PREFIXES",
    "SLICES",
    "STORE_RULES",
    "WATCHED_DOI_KIND",
    "kind_of",
]

SLICES: dict[str, tuple[Kind, ...]] = {
    "crossref": crossref_kinds.KINDS,
    "doiorg": doiorg_kinds.KINDS,
    "zenodo": zenodo_kinds.KINDS,
}
"""Each slice's kinds by slice name (the packages :mod:`syncd.crossref`, :mod:`syncd.zenodo`,
:mod:`syncd.doiorg`)."""

KINDS: dict[str, Kind] = {kind.name: kind for kinds in SLICES.values() for kind in kinds}
"""Every stored entry kind by name."""

STORE_RULES: Mapping[str, StoreRules] = {name: kind.rules for name, kind in KINDS.items()}
"""Each kind's store rules by name (``cache verify --hashes``)."""

RECORD_KINDS: dict[str, str] = {"crossref": CROSSREF_WORK, "zenodo": ZENODO_RECORD}
"""The kind holding each upstream's records (Crossref works, Zenodo records), by upstream name."""

CHANGE_SOURCES: dict[str, tuple[str, ...]] = {
    "crossref": (CROSSREF_WORK,),
    "zenodo": (ZENODO_RECORD,),
    "agency": (DOI_RA,),
    "all": (),
}
"""The change feed's ``kind`` filter (``syncd changes --kind``, ``syncd_list_changes``): entry kinds."""

WATCHED_DOI_KIND = CROSSREF_WORK
"""The kind of the entries a DOI watch protects from ``syncd cache prune`` (the watched works)."""

SERIES_DOI_PREFIXES: tuple[str, ...] = (CONCEPT_DOI_PREFIX,)
"""DOI prefixes that make a series id a concept DOI (the change feed's watch match)."""


def kind_of(name: str) -> Kind:
    """The :class:`~syncd.kinds.Kind` called ``name``.

    Raises:
        KeyError: ``name`` is not a stored kind.
    """
    return KINDS[name]
