"""What a slice declares to have its base URL checked: one cheap request and its answer's own shape.

Each upstream slice declares its :class:`Probe` beside its client (``syncd/<slice>/client_probe.py``);
the composition root collects them (:data:`syncd.registry.PROBES`) and hands them to every
:class:`~syncd.services.Services` bundle, whose :meth:`~syncd.services.Upstreams.check` runs them
(:func:`syncd.upstream.check.check_upstreams`). No upstream is named here. Importing this module
costs no HTTP client.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Probe"]


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
