"""What one upstream slice declares: the one object the composition root asks about it.

Each slice package holds ``slice.py`` exporting ``SLICE``, a :class:`Slice` naming everything the
rest of syncd needs to know of that upstream: its stored kinds, the module of their hooks, its record
sources and change-feed filters, its watch walkers, its clients, base-URL checks and identity, the
registration agencies it answers for, its budget pools, its MCP tool modules, its daemon jobs. The
composition root (:mod:`syncd.registry`) holds one tuple of slices and derives every table from it
(datasette's one list of plugins), so adding an upstream is its folder and one entry in that tuple.
Parts that must load lazily (hooks, walkers, tools, agency answers, daemon jobs) are module names,
loaded through :mod:`syncd.lazy`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from syncd.budget.pools import Group, Pool
    from syncd.kinds import Kind
    from syncd.road.records import RecordSource
    from syncd.road.services import ClientFactory
    from syncd.upstream.probe import Identify, Probe

__all__ = ["Job", "Slice"]


@dataclass(frozen=True)
class Job:
    """A scheduled pass a slice runs on the refreshing daemon (one daemon of the lab runs it).

    ``name`` is the scheduler's job id; ``module`` holds ``daemon_pass(services)``, loaded when the job
    first runs (a ``<slice>.fetch`` module, :data:`syncd.lazy.LAZY`); it runs every ``interval_s``
    seconds, taking its turn with the sweep and the watch walks, its first run after READY=1.
    """

    name: str
    module: str
    interval_s: float


@dataclass(frozen=True)
class Slice:
    """One upstream slice as the composition root sees it (every field but ``name`` may be empty).

    Attributes:
        name: the slice's name, its package's (``crossref``) and its ``mcp.slices`` tool-set name.
        kinds: the stored kinds it declares, in the order ``syncd cache stats`` lists them.
        hooks: module holding ``HOOKS`` (kind name -> hooks), optionally ``ANSWERS`` (record source name
            -> answer) and ``DATA_FILES`` (data-file row builders); loaded on the first hook asked for.
        records: how an identifier reaches its records (``syncd cache show/get/refresh/evict --kind``).
        default_doi: True for the one slice that answers a DOI no other slice claims: its first record
            source is ``--kind auto``'s fallback and that source's kind is what a DOI watch protects.
        series_doi_prefixes: DOI prefixes that make a series id a concept DOI (the feed's watch match).
        changes: the change feed's ``kind`` filters it adds: filter name -> entry kinds.
        walks: ``(walk module, walk_specs module)`` of its watch walkers and watch types, if it has any.
        clients: its upstream client constructors by client name (also their settings section).
        probes: its base-URL checks (``syncd cache stats``, the daemon's start).
        identity: how its client identifies itself (the daemon's start-up line), if it sends a contact.
        agencies: registration agencies it answers for (lower-cased doi.org ``RA``) -> the module whose
            ``agency_records(services, dois)`` answers them.
        pools: its budget pools; ``groups``: their concurrency groups.
        tools: its MCP tool modules, in ``tools/list`` order (each holds ``TOOLS``, maybe ``RESOURCES``).
        jobs: its passes on the refreshing daemon (:class:`Job`).
        verdicts: module whose ``work_verdicts(services, items)`` gives a works batch's retraction
            verdicts (:data:`syncd.road.services.Verdicts`; the Retraction Watch slice's), if any.
    """

    name: str
    kinds: tuple[Kind, ...] = ()
    hooks: str | None = None
    records: tuple[RecordSource[Any], ...] = ()
    default_doi: bool = False
    series_doi_prefixes: tuple[str, ...] = ()
    changes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    walks: tuple[str, str] | None = None
    clients: Mapping[str, ClientFactory] = field(default_factory=dict)
    probes: tuple[Probe, ...] = ()
    identity: Identify | None = None
    agencies: Mapping[str, str] = field(default_factory=dict)
    pools: tuple[Pool, ...] = ()
    groups: tuple[Group, ...] = ()
    tools: tuple[str, ...] = ()
    jobs: tuple[Job, ...] = ()
    verdicts: str | None = None
