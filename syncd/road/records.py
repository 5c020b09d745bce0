"""How an identifier reaches one upstream's records (``syncd cache show/get/refresh/evict``); no kind named.

Each upstream slice that holds records declares one :class:`RecordSource` in its ``kinds.py``
(Crossref works by DOI, Zenodo records by id, DOI or URL): data and store reads only, so ``syncd cache
show`` finds a stored record without loading the slice's lookups or views. How the record is fetched
and viewed (``syncd cache get``, ``refresh ID``) is its :class:`RecordAnswer`, in the slice's
``kinds_hooks.py``, loaded when asked (:func:`syncd.registry.record_answer`). The composition root lists
the sources (:data:`syncd.registry.RECORD_SOURCES`) and says which source an identifier belongs to
(:func:`syncd.registry.resolve_record`). The command line parses with it, calls one of its methods and
prints; it never branches on the upstream.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from syncd.kinds import Kind
from syncd.road.local_first import Lookup
from syncd.store.repo import Store, StoredEntry

__all__ = ["Fetch", "RecordAnswer", "RecordSource", "View"]

R = TypeVar("R")
"""The source's parsed reference (a :class:`~syncd.normalize.doi.ParsedDOI`, a Zenodo ``RecordRef``)."""

Fetch = Callable[[Any, R, bool], Lookup]
"""``(services, reference, force) -> lookup``: the record, local-first (``force``: revalidate now).

Raises :class:`~syncd.errors.NotFound` when upstream says no such record exists (a source may instead
answer a stored miss), :class:`~syncd.errors.UpstreamError` / :class:`~syncd.errors.BudgetExhausted`
when nothing is stored and upstream could not be used."""

View = Callable[[StoredEntry, str], "dict[str, Any]"]
"""``(stored entry, identifier as given) -> the record's view as JSON`` (the tools' view of it).

Raises :class:`~syncd.errors.NotFound` (the source's declared reason) for a stored miss."""


@dataclass(frozen=True)
class RecordAnswer(Generic[R]):
    """How one upstream's record is fetched and viewed: ``fetch`` (:data:`Fetch`), ``view`` (:data:`View`)."""

    fetch: Fetch[R]
    view: View

    def answer(self, svc: Any, ref: R, label: str, *, force: bool = False) -> dict[str, Any]:
        """``syncd cache get``: the record local-first as ``{"kind", "key", "cache", **view}``.

        ``svc``: the :class:`~syncd.road.services.Services` bundle; ``label``: the identifier as given (named
        in a miss's message); ``force``: revalidate against upstream even when fresh.

        Raises:
            NotFound: no such record (the source's reason: ``doi_not_found``, ``record_deleted``...).
            UpstreamError, BudgetExhausted: nothing stored and upstream could not be used.
        """
        lookup = self.fetch(svc, ref, force)
        view = self.view(lookup.entry, label)
        return {
            "kind": lookup.entry.kind,
            "key": lookup.entry.key,
            "cache": lookup.provenance.as_dict(),
            **view,
        }


@dataclass(frozen=True)
class RecordSource(Generic[R]):
    """One upstream's records reached by identifier (no request, nothing of the slice's lookups).

    ``name``: the upstream (the ``--kind`` choice, e.g. ``crossref``); ``kind``: the stored kind holding
    its records; ``parse``: identifier -> reference (raises :class:`~syncd.errors.InvalidInput`);
    ``stored``: the stored entry a reference names, no request; ``claims``: the reference when the
    identifier has this upstream's own form, else None (``--kind auto`` asks each source's ``claims``
    before the DOI fallback); ``answer``: how its records are fetched and viewed when the source is
    declared with it at hand (None for a slice's source: its ``kinds_hooks.py`` ``ANSWERS``, read through
    :func:`syncd.registry.record_answer`).
    """

    name: str
    kind: Kind
    parse: Callable[[str], R]
    stored: Callable[[Store, R], StoredEntry | None]
    claims: Callable[[str], R | None] | None = None
    answer: RecordAnswer[R] | None = None
