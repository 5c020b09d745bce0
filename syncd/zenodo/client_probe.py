"""The Zenodo client's base-URL check and how it identifies itself.

The check: ``GET /records?size=1`` answers JSON with ``hits``; the identity: a personal access token,
else a guest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from syncd.upstream.probe import Identity, Probe
from syncd.zenodo.settings import SECTION

if TYPE_CHECKING:
    from syncd.config import Settings

__all__ = ["PROBES", "identity"]


def _hits(body: Any) -> bool:
    """True for Zenodo's own search answer: JSON with a ``hits`` object."""
    return isinstance(body, dict) and isinstance(body.get("hits"), dict)


PROBES: tuple[Probe, ...] = (Probe("zenodo", "zenodo_search", "/records", _hits, {"size": "1"}),)
"""One search request of one record, paid from the search pool."""


def identity(settings: Settings) -> Identity:
    """``token`` when ``zenodo.token`` is set (never shown), else ``guest`` (Zenodo's guest limits)."""
    return Identity("zenodo", "token" if SECTION.of(settings).token is not None else "guest")
