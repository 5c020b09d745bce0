"""The Crossref client's base-URL check: ``GET /works?rows=0`` answers a ``work-list`` message."""

from __future__ import annotations

from typing import Any

from syncd.upstream.probe import Probe

__all__ = ["PROBES"]


def _work_list(body: Any) -> bool:
    """True for Crossref's own list answer: JSON ``{"message-type": "work-list", ...}``."""
    return isinstance(body, dict) and body.get("message-type") == "work-list"


PROBES: tuple[Probe, ...] = (Probe("crossref", "crossref_list", "/works", _work_list, {"rows": "0"}),)
"""One request paid from the list pool, no work returned (``rows=0``)."""
