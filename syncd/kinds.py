"""What a stored kind is and the hooks it may supply (the hook specification; no kind is named here).

Every entry in the store has a ``kind``. A :class:`Kind` is the kind's data: its ``ttl.*`` setting,
its budget pool, its statuses and its store-side ``rules`` (:class:`~syncd.store.rules.StoreRules`:
hollow-body guard, shrink check, change summary, arrival summary, content-hash projection, the stored
document, search band, bulk import). Each upstream slice declares its kinds in its own ``kinds.py``
(:mod:`syncd.crossref.kinds`, :mod:`syncd.zenodo.kinds`, :mod:`syncd.doiorg.kinds`,
:mod:`syncd.datacite.kinds`), which imports none of the slice's lookups, views or contracts, so a
command that only reads the store (``syncd cache show``) loads none of them; the composition root
:mod:`syncd.registry` is the one table of them. A kind's behaviour is its :class:`KindHooks`, declared
in the slice's ``kinds_hooks.py`` (beside nothing else) and loaded by the code that calls a hook,
through :func:`syncd.registry.hooks_of` (issue 28 item 1). The core (road, policy, refresh, sync,
transfer, cli) reads a kind's hooks and never names a kind.

The hooks (every one optional; a kind supplies what it has):

=================== ================================================================================
``refetch``         ask upstream again for a stored entry and store the answer (revalidation, sweep)
``load``            the content to store for one exported item of the kind (``syncd cache import``;
                    without it, the line is stored as exported: :meth:`Kind.load_line`)
``arrived``         what the store learns after an item of the kind was stored (a concept's latest)
``revalidate_many`` revalidate many stored entries of the kind at once (Crossref works: their
                    ``indexed`` stamps through ``filter=doi:`` list requests; :class:`RevalidateMany`)
``export``          the kind's own table of ``syncd cache export --format parquet``: its name, the
                    columns it adds and how a stored entry fills them (:class:`ExportRows`)
=================== ================================================================================

An upstream that publishes a data file of one of its kinds (Crossref's public data file of works) also
declares how a line of it becomes an entry: a :class:`DataFileRows` (the kind's own bulk-import row
builder), which the registry lists and the CLI hands to :func:`syncd.transfer.import_paths`.

A kind's stored content is built with :meth:`Kind.content`, which puts the kind's rules on it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from syncd.budget.pools import PoolName
from syncd.errors import MalformedResponse
from syncd.store.content import content_hash
from syncd.store.repo import EntryContent, Store, StoredEntry
from syncd.store.rules import PLAIN, StoreRules
from syncd.upstream.deadline import Deadline

__all__ = [
    "ALL_STATUSES",
    "MISS_STATUSES",
    "NO_HOOKS",
    "Arrived",
    "Built",
    "DataFileRows",
    "ExportColumn",
    "ExportRows",
    "Kind",
    "KindHooks",
    "Load",
    "OnEntry",
    "Refetch",
    "RevalidateMany",
    "RevalidateOne",
]

ALL_STATUSES = ("ok", "not_found", "gone", "restricted")
"""Every status an entry can be stored with (``ok`` carries a body; the others are misses)."""

MISS_STATUSES = ("ok", "not_found")
"""The statuses of a kind that knows no tombstone or restriction."""

Refetch = Callable[[Any, StoredEntry, Deadline], StoredEntry]
"""``(services, entry, deadline) -> stored entry``: ask upstream again for ``entry`` and store the
answer. ``services`` is the process's :class:`syncd.road.services.Services`.

Raises :class:`~syncd.errors.UpstreamError` or :class:`~syncd.errors.BudgetExhausted` when upstream
could not be used (nothing written)."""

Load = Callable[[dict[str, Any], "str | None"], EntryContent]
"""``(exported line, body as JSON text) -> content``: one ``syncd cache export`` line of the kind.

Raises :class:`~syncd.errors.MalformedResponse` when the line cannot be stored."""

Arrived = Callable[[Store, dict[str, Any], float], None]
"""``(store, exported line, when)``: what the store learns after an exported line was stored."""

RevalidateOne = Callable[[Any, StoredEntry, Deadline], Any]
"""``(services, entry, deadline) -> outcome``: revalidate one stored entry now, its failure recorded
beside it (:func:`syncd.passes.refresh.revalidate`, answering a :class:`syncd.road.policy.Outcome`)."""

OnEntry = Callable[[StoredEntry, Any], None]
"""``(entry, outcome)``: told the outcome of each entry a revalidation went through (progress lines)."""


@dataclass(frozen=True)
class RevalidateMany:
    """How a kind revalidates many stored entries at once (the ``revalidate_many`` hook).

    ``eligible(entry)``: whether a stored entry of the kind can be revalidated this way (e.g. it
    carries the stamp a list request answers). ``run(services, entries, single, on_entry)``:
    revalidate ``entries`` (each eligible), falling back on ``single`` (:data:`RevalidateOne`) for
    those it cannot settle at once, telling ``on_entry`` each outcome; returns a
    :class:`syncd.road.batch.BatchReport` (its ``stopped`` set when upstream could not be used any more).
    """

    eligible: Callable[[StoredEntry], bool]
    run: Callable[[Any, Sequence[StoredEntry], RevalidateOne, OnEntry | None], Any]


Built = tuple[EntryContent, float]
"""``(content, when)``: an entry to store and the time (epoch seconds) it counts as fetched and validated
at (a data-file object keeps its age: its upstream stamp, never later than now)."""


@dataclass(frozen=True)
class DataFileRows:
    """How the objects of one kind in an upstream's public data file are imported (``syncd cache import``).

    ``kind``: the :class:`Kind` the entries are of; ``label``: what one object is called in messages
    ("a Crossref work").

    ``find(doc)``: the kind's object in a decoded data-file item (a bare object or one in its single-object
    envelope) as ``(object, enveloped)``, or None when ``doc`` is not one of the kind's.
    ``complete(obj)``: whether the object carries every key the kind requires (else it takes the exact
    path, where the store's guard decides).
    ``envelope(text)``: the stored body of a bare object given as the JSON text ``text``.
    ``row(obj, body, floats)``: the fast path's entry (``body``: the stored text; ``floats``: floats in the
    item as :class:`~syncd.store.content.ExactDecoder` counted them) with the same values as ``exact``.
    ``exact(obj, raw)``: the entry the fetch path's own builder makes (``raw``: the body text or None).
    Both raise :class:`~syncd.errors.MalformedResponse`, :class:`~syncd.errors.InvalidInput`,
    ``ValueError``, ``KeyError``, ``TypeError`` or ``AttributeError`` for an object they cannot store.
    """

    kind: Kind
    label: str
    find: Callable[[Any], tuple[dict[str, Any], bool] | None]
    complete: Callable[[dict[str, Any]], bool]
    envelope: Callable[[str], str]
    row: Callable[[dict[str, Any], str, int], Built]
    exact: Callable[[dict[str, Any], str | None], Built]


@dataclass(frozen=True)
class ExportColumn:
    """One column a kind adds to its Parquet table: ``name``, its DuckDB SQL ``type``, what it holds.

    ``type`` is a DuckDB type name as the export declares it to the writer and a reader sees it
    (``VARCHAR``, ``INTEGER``, ``BIGINT``, ``BOOLEAN``, ``DOUBLE``, ``DATE``, ``VARCHAR[]``); ``doc``
    names the upstream field it comes from (the export's schema file and the README quote it).
    """

    name: str
    type: str
    doc: str


@dataclass(frozen=True)
class ExportRows:
    """How the entries of one kind become rows of their own Parquet table (the ``export`` hook).

    ``table``: the table's name (its directory in the export, ``crossref_works``); ``columns``: the
    columns the kind adds after the ones every entry table has (key, status, DOI, title, times, body);
    ``row(body, entry)``: those columns' values for one stored entry (``body`` its decoded JSON, None
    for a miss or a body that is not JSON), a dict by column name (a missing name is NULL). ``row``
    never raises for an odd body: a field of an unexpected shape is NULL.
    """

    table: str
    columns: tuple[ExportColumn, ...]
    row: Callable[[Any, StoredEntry], dict[str, Any]]


@dataclass(frozen=True)
class KindHooks:
    """A kind's behaviour (every hook optional): refetch, load, arrived, revalidate_many, export.

    Declared per kind name in the slice's ``kinds_hooks.py`` (``HOOKS``) and read through
    :func:`syncd.registry.hooks_of`, which loads that module on the first hook asked for.
    """

    refetch: Refetch | None = None
    load: Load | None = None
    arrived: Arrived | None = None
    revalidate_many: RevalidateMany | None = None
    export: ExportRows | None = None


NO_HOOKS = KindHooks()
"""The hooks of a kind that has none (it is stored, never refetched)."""


@dataclass(frozen=True)
class Kind:
    """One stored kind: ``name``, ``ttl.*`` setting, budget ``pool``, ``statuses`` and store ``rules``.

    ``ttl``: the :class:`~syncd.config.TtlSettings` field of its lifetime (a shared one, ``search`` or
    ``entity``, or one its slice's ``settings.py`` declares); ``pool``: a pool its slice declares
    (``syncd/<slice>/pools.py``).
    ``hooks``: the kind's :class:`KindHooks` when it is declared with them at hand (a kind whose hooks
    need no lazy load); None for a slice's kind, whose hooks are in the slice's ``kinds_hooks.py``
    (:func:`syncd.registry.hooks_of` reads either).
    """

    name: str
    ttl: str
    pool: PoolName
    statuses: tuple[str, ...] = MISS_STATUSES
    rules: StoreRules = PLAIN
    hooks: KindHooks | None = None

    @property
    def on_demand(self) -> bool:
        """Search and version pages: fetched again when asked, never by the background sweep."""
        return self.ttl == "search"

    def content(
        self, key: str, status: str, body: str | None, content_hash: str | None, **fields: Any
    ) -> EntryContent:
        """The :class:`~syncd.store.repo.EntryContent` of this kind (its rules on it) to store.

        ``fields``: the other :class:`~syncd.store.repo.EntryContent` fields (``doi``, ``title``,
        ``search_text``, ``etag``, ...).
        """
        return EntryContent(self.name, key, status, body, content_hash, rules=self.rules, **fields)

    def load_line(self, rec: dict[str, Any], raw: str | None, load: Load | None = None) -> EntryContent:
        """The content to store for the exported line ``rec`` of this kind (``raw``: its body as JSON text).

        Through ``load`` (the kind's ``load`` hook, :attr:`KindHooks.load`); without one, the entry is
        stored as exported (key, status, body, title), its hash taken over the body text.

        Raises:
            MalformedResponse: the line cannot be stored (no key; what the hook refuses).
        """
        if load is not None:
            return load(rec, raw)
        key = str(rec.get("key", ""))
        if not key:
            raise MalformedResponse(f"{self.name} entry without a key")
        status = str(rec.get("status", "ok"))
        return self.content(key, status, raw, content_hash(raw) if raw else None, title=rec.get("title"))
