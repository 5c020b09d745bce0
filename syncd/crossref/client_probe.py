"""The Crossref client's base-URL check and how it identifies itself.

The check: ``GET /works?rows=0`` answers a ``work-list`` message; the identity: the ``crossref.mailto``
of the polite pool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from syncd.crossref.settings import SECTION
from syncd.logsetup import mask_email
from syncd.upstream.probe import Identity, Probe

if TYPE_CHECKING:
    from syncd.config import Settings

__all__ = ["PROBES", "identity"]


def _work_list(body: Any) -> bool:
    """True for Crossref's own list answer: JSON ``{"message-type": "work-list", ...}``."""
    return isinstance(body, dict) and body.get("message-type") == "work-list"


PROBES: tuple[Probe, ...] = (Probe("crossref", "crossref_list", "/works", _work_list, {"rows": "0"}),)
"""One request paid from the list pool, no work returned (``rows=0``)."""


def identity(settings: Settings) -> Identity:
    """The masked ``crossref.mailto`` (the polite pool), else anonymous with the hint to set it."""
    if SECTION.of(settings).mailto:
        return Identity("crossref", f"mailto:{mask_email(SECTION.of(settings).mailto)}")
    return Identity("crossref", "anonymous", "set crossref.mailto to use the polite pool (higher limits)")
