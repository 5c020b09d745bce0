"""The doi.org slice as the composition root sees it (:class:`~syncd.slice.Slice`): no tools, no walks."""

from __future__ import annotations

from syncd.doiorg import client_probe, kinds, pools
from syncd.doiorg.names import DOI_RA
from syncd.slice import Slice

__all__ = ["SLICE"]

SLICE = Slice(
    name="doiorg",
    kinds=kinds.KINDS,
    hooks="syncd.doiorg.kinds_hooks",
    changes={"agency": (DOI_RA,)},
    clients=kinds.CLIENTS,
    probes=client_probe.PROBES,
    pools=pools.POOLS,
    groups=pools.GROUPS,
)
"""The registration agency of a DOI prefix (asked anonymously: no identity), one pool."""
