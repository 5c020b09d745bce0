"""The retraction verdicts of a works batch: what ``crossref_get_works`` and ``syncd check`` give per item.

:func:`work_verdicts` reads what each batch item learnt of its work (:func:`seen_of`) and asks
:func:`syncd.retractions.lookups.verdicts_for` for the verdicts (the stored Retraction Watch rows, the
stored notices, the title; the reverse query when ``deep``). The composition root hands it to every
:class:`~syncd.road.services.Services` bundle (:data:`syncd.road.services.Verdicts`), so the Crossref
batch gives a verdict per item without importing this slice.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import partial

from syncd.crossref.lookups import line_of
from syncd.crossref.lookups_batch import WorkItem
from syncd.crossref.views import work_view
from syncd.crossref.views_lines import item_fields
from syncd.errors import MalformedResponse, NotFound
from syncd.retractions.lookups import Seen, verdicts_for
from syncd.retractions.reverse import ask_reverse
from syncd.retractions.verdict import Verdict
from syncd.road.services import Services

__all__ = ["seen_of", "work_verdicts"]


def seen_of(item: WorkItem) -> Seen | None:
    """What a ``crossref_get_works`` batch item learnt of its work (None: the input is not a DOI)."""
    if item.parsed is None:
        return None
    if item.lookup is not None and item.lookup.entry.status == "ok":
        entry = item.lookup.entry
        try:
            view = work_view(item_fields(line_of(entry)), offset=0, limit=1)  # doi, title, updates
        except (ValueError, MalformedResponse):
            return Seen(item.parsed.key, missing="malformed_response")
        return Seen(item.parsed.key, view, entry.validated_at)
    if isinstance(item.error, NotFound) or (
        item.lookup is not None and item.lookup.entry.status == "not_found"
    ):
        return Seen(item.parsed.key, missing="doi_not_found", agency_seen=_agency_seen(item))
    return Seen(
        item.parsed.key,
        missing=item.error.reason if item.error is not None else "upstream_unavailable",
        agency_seen=_agency_seen(item),
    )


def _agency_seen(item: WorkItem) -> str | None:
    """The registration agency (``DataCite``) whose record of the item's DOI was read, else None."""
    record = item.agency_record or {}
    return str(record["agency"]) if record.get("found") and record.get("agency") else None


def work_verdicts(
    svc: Services,
    items: Sequence[WorkItem],
    *,
    pmids: Sequence[str | None] | None = None,
    deep: bool = False,
) -> list[Verdict | None]:
    """The verdict of each batch item (:func:`seen_of`; None for an input that is not a DOI), in order.

    ``pmids``: the PubMed id known for each item (same order), matched to Retraction Watch rows too.
    ``deep``: ask the reverse query (within the budget) for the works whose ``updated-by`` and
    Retraction Watch rows say nothing; otherwise only stored reverse pages are read.

    Raises:
        StoreError: the store cannot be read.
    """
    seen = [seen_of(i) for i in items]
    if pmids is not None:
        seen = [
            dataclasses.replace(s, pmid=pmid) if s is not None and pmid else s
            for s, pmid in zip(seen, pmids, strict=True)
        ]
    ask = partial(ask_reverse, svc) if deep else None
    found = iter(verdicts_for(svc.store, [s for s in seen if s is not None], ask))
    return [next(found) if s is not None else None for s in seen]
