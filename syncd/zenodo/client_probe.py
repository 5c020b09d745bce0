"""The Zenodo client's base-URL check: ``GET /records?size=1`` answers JSON with ``hits``."""

from __future__ import annotations

from typing import Any

from syncd.upstream.probe import Probe

__all__ = ["PROBES"]


def _hits(body: Any) -> bool:
    """True for Zenodo's own search answer: JSON with a ``hits`` object."""
    return isinstance(body, dict) and isinstance(body.get("hits"), dict)


PROBES: tuple[Probe, ...] = (Probe("zenodo", "zenodo_search", "/records", _hits, {"size": "1"}),)
"""One search request of one record, paid from the search pool."""
