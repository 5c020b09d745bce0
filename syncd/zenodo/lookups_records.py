"""How the cache commands fetch and view a Zenodo record (:class:`~syncd.road.records.RecordAnswer`).

The source itself (record id, concept id, DOI or URL) is :data:`syncd.zenodo.kinds.RECORDS`.
``syncd cache get`` answers the ``zenodo_get_record`` view (:func:`syncd.zenodo.views.record_view`).
"""

from __future__ import annotations

from typing import Any

from syncd.road.local_first import Lookup
from syncd.road.records import RecordAnswer
from syncd.road.services import Services
from syncd.store.content import document
from syncd.store.repo import StoredEntry
from syncd.zenodo.lookups import get_record
from syncd.zenodo.lookups_fetch import miss_error
from syncd.zenodo.params_id import RecordRef
from syncd.zenodo.views import record_view

__all__ = ["ANSWER", "record_answer"]


def _fetch(svc: Services, ref: RecordRef, force: bool) -> Lookup:
    return get_record(svc, ref, force=force)


def record_answer(entry: StoredEntry, label: str) -> dict[str, Any]:
    """The record view of a stored ``zenodo_record`` entry as JSON.

    Raises:
        NotFound: the entry is a miss (``record_not_found``, ``record_deleted``, ``record_restricted``),
            its message naming ``label``.
    """
    if entry.status != "ok":
        raise miss_error(entry, label)
    return record_view(document(entry)).model_dump(mode="json", exclude_none=True)


ANSWER: RecordAnswer[RecordRef] = RecordAnswer(fetch=_fetch, view=record_answer)
"""A Zenodo record local-first (:func:`~syncd.zenodo.lookups.get_record`) and its record view."""
