"""The doi.org client's base-URL check: ``GET /ra/10.1000`` answers a JSON list of objects."""

from __future__ import annotations

from typing import Any

from syncd.upstream.probe import Probe

__all__ = ["PROBES"]


def _agency_list(body: Any) -> bool:
    """True for doi.org's own ``/ra`` answer: a non-empty JSON list of objects."""
    return isinstance(body, list) and bool(body) and isinstance(body[0], dict)


PROBES: tuple[Probe, ...] = (Probe("doi", "doi", "/ra/10.1000", _agency_list),)
"""The registration agency of the DOI handbook's prefix (always registered)."""
