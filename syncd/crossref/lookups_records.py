"""How the cache commands fetch and view a Crossref work (:class:`~syncd.road.records.RecordAnswer`).

The source itself, by DOI, is :data:`syncd.crossref.kinds.RECORDS`.

``syncd cache get`` answers the ``crossref_get_work`` view of the work
(:func:`syncd.crossref.views.work_view`)
with its ``flags`` (retracted, corrected, expression of concern) as ``crossref_get_works`` computes them.
"""

from __future__ import annotations

from typing import Any

from syncd.crossref.lookups import get_work
from syncd.crossref.rules import WORK_RULES
from syncd.crossref.views import work_view
from syncd.crossref.views_flags import update_flags
from syncd.normalize.doi import ParsedDOI
from syncd.road.local_first import Lookup
from syncd.road.records import RecordAnswer
from syncd.road.services import Services
from syncd.store.content import document
from syncd.store.repo import StoredEntry

__all__ = ["ANSWER", "work_answer"]


def _fetch(svc: Services, doi: ParsedDOI, force: bool) -> Lookup:
    return get_work(svc, doi, force=force)


def work_answer(entry: StoredEntry, label: str) -> dict[str, Any]:
    """The work view of a stored ``crossref_work`` entry as JSON, with its ``flags`` when it has any.

    ``label`` is unused (a Crossref miss raises in :func:`~syncd.crossref.lookups.get_work` already).

    Raises:
        MalformedResponse: the stored body is not a work the view can read.
    """
    work = work_view(document(entry, WORK_RULES))
    view: dict[str, Any] = work.model_dump(mode="json", exclude_none=True)
    flags = update_flags(work.doi, work.updatedBy, work.updateTo)
    if flags:
        view["flags"] = flags
    return view


ANSWER: RecordAnswer[ParsedDOI] = RecordAnswer(fetch=_fetch, view=work_answer)
"""A Crossref work local-first (:func:`~syncd.crossref.lookups.get_work`) and its work view."""
