"""The DataCite slice as the composition root sees it (:class:`~syncd.slice.Slice`)."""

from __future__ import annotations

from syncd.datacite import client_probe, kinds, pools
from syncd.datacite.names import DATACITE_WORK
from syncd.slice import Slice

__all__ = ["SLICE"]

SLICE = Slice(
    name="datacite",
    kinds=kinds.KINDS,
    hooks="syncd.datacite.kinds_hooks",
    records=(kinds.RECORDS,),
    changes={"datacite": (DATACITE_WORK,)},
    walks=("syncd.datacite.walk", "syncd.datacite.walk_specs"),
    clients=kinds.CLIENTS,
    probes=client_probe.PROBES,
    identity=client_probe.identity,
    agencies={"datacite": "syncd.datacite.queries_agency"},
    pools=pools.POOLS,
    groups=pools.GROUPS,
    tools=("syncd.datacite.tools",),
)
"""DataCite works and search pages; answers for the DOIs doi.org says DataCite registered; one pool."""
