"""Crossref answers read from the store alone, asking nothing.

The offline work search, a journal by its other ISSN, the updates the change feed recorded of a
stored work. The queries call these instead of reading the store themselves
(tests/core/test_architecture.py: no query module uses the store directly).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from syncd.crossref.lookups import message_of
from syncd.crossref.names import CROSSREF_JOURNAL, CROSSREF_WORK
from syncd.errors import StoreError
from syncd.normalize.changes import NOTICE_TYPES
from syncd.road import policy
from syncd.road.policy import Provenance, iso
from syncd.road.services import Services
from syncd.store.changes import changes_of_entry
from syncd.store.maintenance import iter_entries
from syncd.store.repo import StoredEntry

__all__ = ["SinceStored", "mirror_search", "since_stored", "stored_journal_key"]

_TERM = re.compile(r"\w", re.UNICODE)


def mirror_search(
    svc: Services, text: str, *, offset: int, rows: int
) -> tuple[list[StoredEntry], int, Provenance | None]:
    """Stored works matching any term of ``text`` (FTS5 over title and search text, best first).

    Returns ``(entries, total_local_matches, provenance)``; the provenance is ``store-stale`` with the
    oldest ``validated_at`` of the page (None when nothing matched). Each entry carries its stored list
    line (``summary``) and its body only when it has none (:func:`~syncd.crossref.lookups.line_of`).
    """
    terms = [t for t in text.split() if _TERM.search(t)]
    if not terms:
        return [], 0, None
    entries, total = svc.store.search_page(terms, kind=CROSSREF_WORK, offset=offset, limit=rows, lines=True)
    entries = [e for e in entries if e.status == "ok"]
    if not entries:
        return [], total, None
    prov = policy.from_many((e.fetched_at for e in entries), (e.validated_at for e in entries))
    return entries, total, prov


def stored_journal_key(svc: Services, issn: str) -> str:
    """The key the journal ``issn`` (normalized) is stored under, or ``issn`` when none is stored.

    ``issn`` itself when stored under it, else the key of a stored journal listing it as another ISSN
    (print, electronic or ISSN-L): a journal is stored under the ISSN it was asked by; asked by its
    other ISSN it is answered from the store, no request. Reads the stored journals (a few hundred at
    most) only on a key miss.
    """
    if svc.store.get(CROSSREF_JOURNAL, issn) is not None:
        return issn
    for entry in iter_entries(svc.store, CROSSREF_JOURNAL):
        if entry.status != "ok":
            continue
        message = message_of(entry)
        types = [t.get("value") for t in message.get("issn-type") or [] if isinstance(t, dict)]
        listed = {str(i).upper() for i in [message.get("ISSN-L"), *(message.get("ISSN") or []), *types] if i}
        if issn in listed:
            return entry.key
    return issn


@dataclass(frozen=True)
class SinceStored:
    """One update the change feed recorded of a stored work.

    ``detected_at``: when syncd saw it (ISO 8601, UTC); ``summary``: the change's stored summary
    (:func:`syncd.normalize.changes.summarize_work`: the update types and DOIs it added, ...).
    """

    detected_at: str
    summary: dict[str, Any]


def since_stored(svc: Services, entry_id: int) -> tuple[SinceStored, ...]:
    """The retractions, corrections and other notice-worthy updates recorded of entry ``entry_id``.

    From the change feed (:func:`syncd.store.changes.changes_of_entry`, types
    :data:`~syncd.normalize.changes.NOTICE_TYPES`), oldest first; a store that cannot be read
    gives none (the answer is given without the notice).
    """
    try:
        found = changes_of_entry(svc.store, entry_id, NOTICE_TYPES)
    except StoreError:
        return ()
    return tuple(SinceStored(iso(c.detected_at), c.summary) for c in found)
