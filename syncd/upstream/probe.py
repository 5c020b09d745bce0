"""What a slice declares about its client for the operator: its base-URL check and how it identifies itself.

Each upstream slice declares beside its client (``syncd/<slice>/client_probe.py``) its :class:`Probe`
(one cheap request and its answer's own shape) and its :data:`Identify` function. The composition
root collects them (:data:`syncd.registry.PROBES`, :data:`syncd.registry.IDENTITIES`): the probes are
handed to every :class:`~syncd.road.services.Services` bundle, whose
:meth:`~syncd.road.services.Upstreams.check` runs them (:func:`syncd.upstream.check.check_upstreams`); the
identities make the daemon's start-up line. No upstream is named here. Importing this module costs no
HTTP client.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from syncd.config import Settings

__all__ = ["Identify", "Identity", "Probe"]


@dataclass(frozen=True)
class Probe:
    """One service's check request (``syncd cache stats``, the daemon at start).

    ``service``: the client's name (also its settings section: ``<service>.base_url``); ``pool``: the
    budget pool the request is paid from; ``path`` and ``params``: the request, relative to the base
    URL (a 200 or a 404 is an answer); ``own_shape(body)``: True when a 200's JSON body is the
    service's own (a wrong base URL answers something else).
    """

    service: str
    pool: str
    path: str
    own_shape: Callable[[Any], bool]
    params: Mapping[str, str] = field(default_factory=dict)

    @property
    def setting(self) -> str:
        """The setting naming the probed base URL (``<service>.base_url``), as the failure hint says it."""
        return f"{self.service}.base_url"


@dataclass(frozen=True)
class Identity:
    """How a client identifies itself to its upstream (the daemon's start-up line).

    ``client``: the client's name; ``how``: what it sends, already masked (``mailto:c***@example.org``,
    ``token``, ``guest``, ``anonymous``); ``hint``: what to set for the better limits it goes
    without (None: nothing to gain), logged as a warning at start.
    """

    client: str
    how: str
    hint: str | None = None


Identify = Callable[["Settings"], Identity]
"""A slice's ``identity(settings)``: how its client identifies itself under these settings."""
