"""The composition root: the one module that names every slice (its kinds and its MCP tools).

Adding an upstream is one folder (``syncd/<slice>/`` with its ``names.py``, ``rules.py``, ``kinds.py``
and ``kinds_hooks.py``) plus one entry in :data:`SLICES` and one in :data:`HOOK_MODULES`. A slice's
``kinds.py`` is data (imported here at start); its ``kinds_hooks.py`` (each kind's
:class:`~syncd.kinds.KindHooks`, its record answers, its data files) is loaded on the first hook asked
for (:func:`hooks_of`, :func:`record_answer`, :func:`data_files`; :mod:`syncd.lazy`), so a command that
only reads the store (``syncd cache show``) loads no lookup, view or contract of any slice.

Everything else reads the kinds from here: the road (:func:`syncd.road.local_first.local_first`) and the store
receive a :class:`~syncd.kinds.Kind`, the refresh, import, verify and change-feed code look a kind up
by name in :data:`KINDS` (and its hooks with :func:`hooks_of`); the passes over
the watch lists (:mod:`syncd.passes.sync`) find each watch kind's walker in :data:`WALKERS` and who
fetches a watched DOI in :data:`DOI_WALKERS` (each slice declares its own in its ``walk.py``);
:mod:`syncd.passes.watches` and ``syncd watch add`` find how a watch kind is added and described
in :data:`WATCH_TYPES`.

A slice with MCP tools adds one entry to :data:`TOOL_MODULES`: the names of its tool modules, each
holding ``TOOLS``, a tuple of :class:`~syncd.tools.params.ToolSpec` (one row per tool: name, title,
input model from the slice's ``args.py``, output model, body, annotations and its size-budget
``fit``), and optionally ``RESOURCES``, a tuple of :class:`~syncd.tools.resource.ResourceSpec`.
The MCP server (:mod:`syncd.server.app`) names no slice itself: it is handed the tools of the
slices ``mcp.slices`` names and every resource (:func:`mcp_specs`). The tool modules are loaded on
the first call (:mod:`syncd.lazy`), so importing the registry costs no MCP SDK. For a slice ``datacite``::

    TOOL_MODULES = {..., "datacite": ("syncd.datacite.tools",)}

(the lazy table declares every slice's ``tools*`` modules for the registry by pattern: nothing to add
there). A slice's budget pools are declared in its ``pools.py`` and composed into :data:`POOLS`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from syncd.budget.pools import Pools
from syncd.errors import InvalidInput
from syncd.kinds import NO_HOOKS, DataFileRows, Kind, KindHooks
from syncd.lazy import load
from syncd.road.records import RecordAnswer, RecordSource
from syncd.road.services import AgencyRecords, ClientFactory, Judged, Services, Verdicts
from syncd.slice import Job, Slice
from syncd.slices import SLICE_PACKAGES, slice_module
from syncd.store.repo import Store
from syncd.store.rules import StoreRules
from syncd.upstream.probe import Identify, Probe

if TYPE_CHECKING:
    import httpx

    from syncd.config import Settings
    from syncd.tools.params import ToolSpec
    from syncd.tools.resource import ResourceSpec
    from syncd.walks.walker import DoiWalker, Walker, WatchType

    WALKERS: dict[str, Walker]
    """The walker of each watch kind but ``doi`` (built on first use: :func:`_walkers`)."""
    WATCH_TYPES: dict[str, WatchType]
    """How each watch kind but ``doi`` is added and described (built on first use: :func:`_watch_types`)."""
    DOI_WALKERS: tuple[DoiWalker, ...]
    """Who fetches watched DOIs, in fetch order (built on first use: :func:`_doi_walkers`)."""

__all__ = [
    "AGENCIES",
    "CHANGE_SOURCES",
    "CLIENTS",
    "DOI_WALKERS",
    "HOOK_MODULES",
    "IDENTITIES",
    "JOBS",
    "KINDS",
    "POOLS",
    "PROBES",
    "RECORD_KINDS",
    "RECORD_SOURCES",
    "SERIES_DOI_PREFIXES",
    "SLICES",
    "STORE_RULES",
    "TOOL_MODULES",
    "VERDICTS",
    "WALKERS",
    "WALK_MODULES",
    "WATCHED_DOI_KIND",
    "WATCH_TYPES",
    "change_sources",
    "compose",
    "data_files",
    "hooks_of",
    "kind_of",
    "mcp_loaders",
    "mcp_specs",
    "open_services",
    "record_answer",
    "record_source",
    "resolve_record",
    "resource_specs",
    "tool_specs",
]


def compose(packages: Sequence[str]) -> tuple[Slice, ...]:
    """The :class:`~syncd.slice.Slice` of each slice package (its ``slice.py``'s ``SLICE``), in order.

    Raises:
        ImportError: a package has no ``slice.py`` or it cannot be imported.
    """
    found = []
    for package in packages:
        module = slice_module(__name__, package, "slice")
        if module is None:
            raise ImportError(f"the slice package {package} has no slice.py")
        found.append(module.SLICE)
    return tuple(found)


SLICES: tuple[Slice, ...] = compose(SLICE_PACKAGES)
"""Every slice (:data:`syncd.slices.SLICE_PACKAGES`, in that order): every table below is derived
from it. Adding an upstream is its folder and one entry in that list."""

KINDS: dict[str, Kind] = {kind.name: kind for s in SLICES for kind in s.kinds}
"""Every stored entry kind by name."""

STORE_RULES: Mapping[str, StoreRules] = {name: kind.rules for name, kind in KINDS.items()}
"""Each kind's store rules by name (``cache verify --hashes``)."""

HOOK_MODULES: dict[str, str] = {s.name: s.hooks for s in SLICES if s.hooks}
"""Each slice's hooks module by slice name: ``HOOKS`` (kind name -> :class:`~syncd.kinds.KindHooks`), and
optionally ``ANSWERS`` (record source name -> :class:`~syncd.road.records.RecordAnswer`) and ``DATA_FILES``
(:class:`~syncd.kinds.DataFileRows`); each also in ``syncd.lazy.LAZY["syncd.registry"]``."""

_SLICE_OF: dict[str, str] = {kind.name: s.name for s in SLICES for kind in s.kinds}
"""The slice declaring each kind, by kind name."""

RECORD_SOURCES: dict[str, RecordSource[Any]] = {r.name: r for s in SLICES for r in s.records}
"""How an identifier reaches each upstream's records (``syncd cache show/get/refresh/evict --kind``)."""

_DEFAULT_DOI: RecordSource[Any] = next(s.records[0] for s in SLICES if s.default_doi)

DOI_RECORDS = _DEFAULT_DOI.name
"""The source of an identifier no other source claims (``--kind auto``): a DOI, read as a Crossref work."""

RECORD_KINDS: dict[str, str] = {name: source.kind.name for name, source in RECORD_SOURCES.items()}
"""The kind holding each upstream's records (Crossref works, Zenodo records), by upstream name."""

CHANGE_SOURCES: dict[str, tuple[str, ...]] = {
    **{name: kinds for s in SLICES if s.tools for name, kinds in s.changes.items()},
    **{name: kinds for s in SLICES if not s.tools for name, kinds in s.changes.items()},
    "all": (),
}
"""The change feed's ``kind`` filter (``syncd changes --kind``, ``syncd_list_changes``): entry kinds.

A filter named after a slice of :data:`TOOL_MODULES` is that slice's; ``agency`` (doi.org's registration
agency of a prefix) and ``all`` belong to no served tool set (:func:`change_sources`)."""

WATCHED_DOI_KIND = _DEFAULT_DOI.kind.name
"""The kind of the entries a DOI watch protects from ``syncd cache prune`` (the watched works)."""

SERIES_DOI_PREFIXES: tuple[str, ...] = tuple(p for s in SLICES for p in s.series_doi_prefixes)
"""DOI prefixes that make a series id a concept DOI (the change feed's watch match)."""


WALK_MODULES: dict[str, tuple[str, str]] = {s.name: s.walks for s in SLICES if s.walks}
"""Each slice's watch walkers and watch types by slice name: ``(walk module, walk_specs module)``, in
``syncd watch add``'s order; loaded on the first look at :data:`WALKERS`, :data:`WATCH_TYPES` or
:data:`DOI_WALKERS` (each module also in ``syncd.lazy.LAZY["syncd.registry"]``)."""


def _walkers() -> dict[str, Walker]:
    """The walker of each watch kind but ``doi`` (:mod:`syncd.passes.sync` walks a watch by its kind's)."""
    return {k: w for walk, _ in WALK_MODULES.values() for k, w in load(__name__, walk).WALKERS.items()}


def _watch_types() -> dict[str, WatchType]:
    """How each watch kind but ``doi`` is added and described, in ``syncd watch add``'s order.

    Also the config's ``[watch]`` table.
    """
    return {k: t for _, specs in WALK_MODULES.values() for k, t in load(__name__, specs).WATCH_TYPES.items()}


def _doi_walkers() -> tuple[DoiWalker, ...]:
    """Who fetches watched DOIs, in fetch order.

    A DOI goes to the walker that claims it, else to the one claiming every DOI no other does (Crossref's).
    """
    walks = [load(__name__, walk) for walk, _ in WALK_MODULES.values()]
    return tuple(walk.DOIS for walk in walks if hasattr(walk, "DOIS"))


_WALK_TABLES: dict[str, Callable[[], Any]] = {
    "WALKERS": _walkers,
    "WATCH_TYPES": _watch_types,
    "DOI_WALKERS": _doi_walkers,
}
"""The watch tables, :pep:`562` attributes of this module built on first use (a command that walks no
watch, such as ``syncd cache show`` or ``syncd mcp``, loads no walker)."""


@functools.cache
def _walk_table(name: str) -> Any:
    return _WALK_TABLES[name]()


def __getattr__(name: str) -> Any:
    """:data:`WALKERS`, :data:`WATCH_TYPES` and :data:`DOI_WALKERS`, each built once on first use.

    Raises:
        AttributeError: no such attribute.
    """
    if name in _WALK_TABLES:
        return _walk_table(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


CLIENTS: dict[str, ClientFactory] = {name: make for s in SLICES for name, make in s.clients.items()}
"""Each upstream's client constructor by client name."""

PROBES: tuple[Probe, ...] = tuple(p for s in SLICES for p in s.probes)
"""Each upstream's base-URL check, declared beside its client (``client_probe.py``), in the order
``syncd cache stats`` and the daemon's start run them (:mod:`syncd.upstream.check`)."""

IDENTITIES: tuple[Identify, ...] = tuple(s.identity for s in SLICES if s.identity is not None)
"""How each client identifies itself (declared beside it, ``client_probe.py``): the daemon's start-up
line (doi.org's is asked anonymously, with nothing to gain from a contact)."""


def _agency(module: str) -> AgencyRecords:
    """The agency answer of ``module`` (its ``agency_records``), loaded on the first DOI asked."""

    def records(svc: Services, dois: Sequence[str]) -> dict[str, dict[str, Any]]:
        answer: AgencyRecords = load(__name__, module).agency_records
        return answer(svc, dois)

    return records


def _verdicts() -> Verdicts | None:
    """The verdicts of the slice declaring a verdicts module (its ``work_verdicts``), loaded on first use."""
    modules = [s.verdicts for s in SLICES if s.verdicts]
    if not modules:
        return None

    def verdicts(svc: Services, items: Sequence[Any]) -> Sequence[Judged | None]:
        give: Verdicts = load(__name__, modules[0]).work_verdicts
        return give(svc, items)

    return verdicts


VERDICTS: Verdicts | None = _verdicts()
"""The works' retraction verdicts (:data:`syncd.road.services.Verdicts`), from the slice declaring them
(the Retraction Watch slice): handed to every :class:`~syncd.road.services.Services` bundle, so the
Crossref batch gives a verdict per item without importing that slice; None without such a slice."""


AGENCIES: dict[str, AgencyRecords] = {
    name: _agency(module) for s in SLICES for name, module in s.agencies.items()
}
"""Each registration agency a slice answers for, by lower-cased name (doi.org's ``RA``): handed to every
:class:`~syncd.road.services.Services` bundle, so the Crossref batch answers a DataCite DOI from the
DataCite slice without importing it."""


POOLS = Pools(tuple(p for s in SLICES for p in s.pools), tuple(g for s in SLICES for g in s.groups))
"""The budget's pools, each declared in its slice's ``pools.py`` (name, service, published limits,
concurrency group), in DESIGN.md's order: handed to every budget (:func:`open_services`,
:class:`~syncd.budget.buckets.Budget`); the budget itself names no upstream."""


JOBS: tuple[Job, ...] = tuple(job for s in SLICES for job in s.jobs)
"""The slices' passes on the refreshing daemon (the Retraction Watch read), scheduled by the daemon."""


def open_services(
    settings: Settings,
    store: Store,
    *,
    interactive: bool = True,
    transport: httpx.BaseTransport | None = None,
    read_only: bool | None = None,
    clock: Callable[[], float] | None = None,
    sleep: Callable[[float], None] | None = None,
) -> Services:
    """The :class:`~syncd.road.services.Services` bundle over ``store``, with every slice's :data:`CLIENTS`.

    The keywords are those of :meth:`Services.open <syncd.road.services.Services.open>`: ``interactive``
    (False: the daemon, which leaves the budget reserve), ``transport`` (tests), ``read_only``,
    ``clock`` (epoch seconds) and ``sleep`` (seconds); every bundle gets :data:`AGENCIES`, its budget
    :data:`POOLS` and the base-URL checks :data:`PROBES`.
    """
    return Services.open(
        settings,
        store,
        clients=CLIENTS,
        interactive=interactive,
        transport=transport,
        read_only=read_only,
        clock=clock,
        sleep=sleep,
        agencies=AGENCIES,
        verdicts=VERDICTS,
        pools=POOLS,
        probes=PROBES,
    )


def record_source(name: str) -> RecordSource[Any]:
    """The :class:`~syncd.road.records.RecordSource` of upstream ``name`` (``crossref``, ``zenodo``).

    Raises:
        InvalidInput: reason ``invalid_parameter``, no upstream of that name holds records.
    """
    try:
        return RECORD_SOURCES[name]
    except KeyError:
        known = ", ".join(RECORD_SOURCES)
        raise InvalidInput(
            f"no record source {name!r} (one of {known})", reason="invalid_parameter"
        ) from None


def resolve_record(ident: str, upstream: str = "auto") -> tuple[RecordSource[Any], Any]:
    """The record source ``ident`` belongs to and its parsed reference (no request).

    ``upstream``: a :data:`RECORD_SOURCES` name, or ``auto``: the first source whose ``claims``
    recognises its own form (a Zenodo record id, DOI or URL), else a DOI (:data:`DOI_RECORDS`).

    Raises:
        InvalidInput: ``ident`` is no identifier of that source (for ``auto``: not even a DOI).
    """
    if upstream != "auto":
        source = record_source(upstream)
        return source, source.parse(ident)
    for source in RECORD_SOURCES.values():
        if source.claims is not None and (ref := source.claims(ident)) is not None:
            return source, ref
    fallback = RECORD_SOURCES[DOI_RECORDS]
    return fallback, fallback.parse(ident)


def _hooks_module(slice_name: str) -> Any:
    return load(__name__, HOOK_MODULES[slice_name])


def hooks_of(kind: Kind | str) -> KindHooks:
    """The hooks of ``kind`` (a :class:`~syncd.kinds.Kind` or its name).

    The hooks it was declared with (:attr:`Kind.hooks <syncd.kinds.Kind.hooks>`), else those of its
    slice's hooks module, loaded on the first call; ``NO_HOOKS`` for a kind no slice declares, or one
    without hooks.

    Raises:
        ImportError: the slice's hooks module cannot be imported.
    """
    declared = KINDS.get(kind) if isinstance(kind, str) else kind
    if declared is not None and declared.hooks is not None:
        return declared.hooks
    name = kind if isinstance(kind, str) else kind.name
    slice_name = _SLICE_OF.get(name)
    if slice_name is None or slice_name not in HOOK_MODULES:
        return NO_HOOKS
    hooks: dict[str, KindHooks] = _hooks_module(slice_name).HOOKS
    return hooks.get(name, NO_HOOKS)


def record_answer(source: RecordSource[Any]) -> RecordAnswer[Any]:
    """How the records of ``source`` are fetched and viewed (``syncd cache get``, ``cache refresh ID``).

    The answer it was declared with (``source.answer``), else the one in the hooks module of the slice
    declaring its kind (loaded on the first call).

    Raises:
        LookupError: the slice declares no answer for the source.
    """
    if source.answer is not None:
        return source.answer
    slice_name = _SLICE_OF.get(source.kind.name)
    answers: dict[str, RecordAnswer[Any]] = (
        getattr(_hooks_module(slice_name), "ANSWERS", {}) if slice_name is not None else {}
    )
    try:
        return answers[source.name]
    except KeyError:
        raise LookupError(f"no record answer for source {source.name!r}") from None


@functools.cache
def data_files() -> tuple[DataFileRows, ...]:
    """How each upstream's public data file is imported (``syncd cache import``).

    The row builder of the kind its objects are stored as (Crossref's data file of works), from every
    slice's hooks module (each loaded now).
    """
    return tuple(f for name in HOOK_MODULES for f in getattr(_hooks_module(name), "DATA_FILES", ()))


def kind_of(name: str) -> Kind:
    """The :class:`~syncd.kinds.Kind` called ``name``.

    Raises:
        KeyError: ``name`` is not a stored kind.
    """
    return KINDS[name]


TOOL_MODULES: dict[str, tuple[str, ...]] = {s.name: s.tools for s in SLICES if s.tools}
"""Each slice's MCP tool modules by slice name, in the order ``tools/list`` gives their tools: each
holds ``TOOLS`` (and may hold ``RESOURCES``)."""


@functools.cache
def tool_specs(slices: tuple[str, ...] | None = None) -> tuple[ToolSpec, ...]:
    """The tools of the slices named in ``slices`` (None: every slice), in :data:`TOOL_MODULES` order.

    Each module's ``TOOLS``, loaded once (``mcp.slices`` selects the slices a server exposes).

    Raises:
        ImportError: a tool module cannot be imported.
    """
    return tuple(
        spec
        for slice_name, modules in TOOL_MODULES.items()
        if slices is None or slice_name in slices
        for name in modules
        for spec in load(__name__, name).TOOLS
    )


@functools.cache
def resource_specs(slices: tuple[str, ...] | None = None) -> tuple[ResourceSpec, ...]:
    """The resources and resource templates of the slices named in ``slices`` (None: every slice).

    Each of their tool modules' ``RESOURCES``, if any (only those modules are loaded).
    """
    return tuple(
        spec
        for slice_name, modules in TOOL_MODULES.items()
        if slices is None or slice_name in slices
        for name in modules
        for spec in getattr(load(__name__, name), "RESOURCES", ())
    )


def change_sources(slices: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The change feed's ``kind`` filters a server serving ``slices`` (``mcp.slices``) offers.

    Each :data:`CHANGE_SOURCES` filter named after a slice with tools when that slice is served, and
    those of no such slice (``agency``, ``all``) always, in :data:`CHANGE_SOURCES` order: filter name
    -> the entry kinds it keeps (empty: every kind).
    """
    served = set(slices)
    return {
        name: kinds for name, kinds in CHANGE_SOURCES.items() if name not in TOOL_MODULES or name in served
    }


def mcp_specs(settings: Settings) -> tuple[tuple[ToolSpec, ...], tuple[ResourceSpec, ...]]:
    """What an MCP server of ``settings`` serves of the slices: ``(tools, resources)``.

    The tools and resources of the slices ``mcp.slices`` names (:func:`tool_specs`,
    :func:`resource_specs`; only their tool modules are loaded: a server without the Crossref tools
    serves no Crossref guide either): the arguments :func:`syncd.server.app.build_server` takes
    after its dependency object (the server adds the change feed's own).
    """
    served = tuple(settings.mcp.slices)
    return tool_specs(served), resource_specs(served)


def mcp_loaders(
    settings: Settings,
) -> tuple[Callable[[], tuple[ToolSpec, ...]], Callable[[], tuple[ResourceSpec, ...]]]:
    """:func:`mcp_specs` as two functions, each loading the served slices' tool modules when called.

    What ``syncd mcp`` hands :func:`syncd.server.app.build_server`: the server calls them on the
    first request that needs a tool or a resource, so ``initialize`` is answered without them.
    """
    served = tuple(settings.mcp.slices)
    return functools.partial(tool_specs, served), functools.partial(resource_specs, served)
