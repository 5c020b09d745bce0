"""How an identifier reaches one upstream's records (``syncd cache show/get/refresh/evict``); no kind named.

Each upstream slice that holds records declares one :class:`RecordSource` (Crossref works by DOI,
Zenodo records by id, DOI or URL); the composition root lists them (:data:`syncd.registry.RECORD_SOURCES`)
and says which source an identifier belongs to (:func:`syncd.registry.resolve_record`). The command
line parses with it, calls one of its methods and prints; it never branches on the upstream.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from syncd.cache import Lookup
from syncd.kinds import Kind
from syncd.store.repo import Store, StoredEntry

__all__ = ["Fetch", "RecordSource", "View"]

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
class RecordSource(Generic[R]):
    """One upstream's records reached by identifier.

    ``name``: the upstream (the ``--kind`` choice, e.g. ``crossref``); ``kind``: the stored kind holding
    its records; ``parse``: identifier -> reference (raises :class:`~syncd.errors.InvalidInput`);
    ``claims``: the reference when the identifier has this upstream's own form, else None (``--kind
    auto`` asks each source's ``claims`` before the DOI fallback); ``stored``: the stored entry a
    reference names, no request; ``fetch`` (:data:`Fetch`) and ``view`` (:data:`View`).
    """

    name: str
    kind: Kind
    parse: Callable[[str], R]
    stored: Callable[[Store, R], StoredEntry | None]
    fetch: Fetch[R]
    view: View
    claims: Callable[[str], R | None] | None = None

    def answer(self, svc: Any, ref: R, label: str, *, force: bool = False) -> dict[str, Any]:
        """``syncd cache get``: the record local-first as ``{"kind", "key", "cache", **view}``.

        ``svc``: the :class:`~syncd.services.Services` bundle; ``label``: the identifier as given (named
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
