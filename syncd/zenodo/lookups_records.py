"""Zenodo records as the cache commands reach them by id, DOI or URL (:class:`~syncd.records.RecordSource`).

``--kind auto`` gives an identifier to Zenodo when it names a Zenodo record (digits, ``zenodo.N``, a
Zenodo DOI, a zenodo.org or doi.org link to one); any other DOI is left to the DOI fallback.
``syncd cache get`` answers the ``zenodo_get_record`` view (:func:`syncd.zenodo.views.record_view`).
"""

from __future__ import annotations

from typing import Any

from syncd.cache import Lookup
from syncd.errors import InvalidInput
from syncd.records import RecordSource
from syncd.services import Services
from syncd.store.content import document
from syncd.store.repo import StoredEntry
from syncd.zenodo.lookups import get_record
from syncd.zenodo.lookups_fetch import RECORD, miss_error, stored_record
from syncd.zenodo.params_id import RecordRef, parse_record_ref
from syncd.zenodo.views import record_view

__all__ = ["RECORDS", "claims_record", "record_answer"]


def claims_record(ident: str) -> RecordRef | None:
    """The reference of ``ident`` when it names a Zenodo record (it parses to a record id), else None."""
    try:
        ref = parse_record_ref(ident)
    except InvalidInput:
        return None
    return ref if ref.recid is not None else None


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


RECORDS: RecordSource[RecordRef] = RecordSource(
    name="zenodo",
    kind=RECORD,
    parse=parse_record_ref,
    stored=stored_record,
    fetch=_fetch,
    view=record_answer,
    claims=claims_record,
)
"""Zenodo records by record id, concept id, DOI or zenodo.org / doi.org URL."""
