"""The Zenodo slice as the composition root sees it (:class:`~syncd.slice.Slice`)."""

from __future__ import annotations

from syncd.slice import Slice
from syncd.zenodo import client_probe, kinds, pools
from syncd.zenodo.names import CONCEPT_DOI_PREFIX, ZENODO_RECORD

__all__ = ["SLICE"]

SLICE = Slice(
    name="zenodo",
    kinds=kinds.KINDS,
    hooks="syncd.zenodo.kinds_hooks",
    records=(kinds.RECORDS,),
    series_doi_prefixes=(CONCEPT_DOI_PREFIX,),
    changes={"zenodo": (ZENODO_RECORD,)},
    walks=("syncd.zenodo.walk", "syncd.zenodo.walk_specs"),
    clients=kinds.CLIENTS,
    probes=client_probe.PROBES,
    identity=client_probe.identity,
    pools=pools.POOLS,
    groups=pools.GROUPS,
    tools=("syncd.zenodo.tools",),
)
"""Records (concept DOIs are series), search pages and term lists; a general and a search pool."""
