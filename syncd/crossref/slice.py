"""The Crossref slice as the composition root sees it (:class:`~syncd.slice.Slice`)."""

from __future__ import annotations

from syncd.crossref import client_probe, kinds, pools
from syncd.crossref.names import CROSSREF_WORK
from syncd.slice import Slice

__all__ = ["SLICE"]

SLICE = Slice(
    name="crossref",
    kinds=kinds.KINDS,
    hooks="syncd.crossref.kinds_hooks",
    records=(kinds.RECORDS,),
    default_doi=True,
    changes={"crossref": (CROSSREF_WORK,)},
    walks=("syncd.crossref.walk", "syncd.crossref.walk_specs"),
    clients=kinds.CLIENTS,
    probes=client_probe.PROBES,
    identity=client_probe.identity,
    pools=pools.POOLS,
    groups=pools.GROUPS,
    tools=("syncd.crossref.tools", "syncd.crossref.tools_batch"),
)
"""Works, list pages, journals, funders, members, prefixes; the DOI fallback; two pools in one group."""
