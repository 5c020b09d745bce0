"""Gathering a verdict's inputs: the Crossref record's facts, stored notices, Retraction Watch rows.

:func:`verdicts_for` answers many works at once from what the caller learnt of their Crossref
records (a :class:`Seen` per work: the normalized view and when it was validated, or the reason
there is none) and from the store: one read of the newest Retraction Watch version, one indexed
read of its rows for every DOI and PubMed id, and the stored notices named in the records'
``updatedBy`` whose own ``update-to`` names the work. No upstream request is sent here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from syncd.crossref.contracts import PublishedDate, Update, WorkView
from syncd.crossref.lookups_batch import WorkItem
from syncd.crossref.names import CROSSREF_WORK
from syncd.crossref.rules import WORK_RULES
from syncd.crossref.views import work_view
from syncd.errors import MalformedResponse, NotFound
from syncd.retractions.facts import CrossrefFacts, NoticeFact, UpdateFact
from syncd.retractions.storage import latest_dataset, rows_for
from syncd.retractions.verdict import Verdict, verdict
from syncd.services import Services
from syncd.store.content import document
from syncd.store.repo import Store

__all__ = ["MAX_NOTICES", "Seen", "crossref_facts", "iso_date", "seen_of", "verdicts_for", "work_verdicts"]

MAX_NOTICES = 20
"""Most stored notices read per work (a record naming more is read for the first ones)."""


@dataclass(frozen=True)
class Seen:
    """What a caller learnt of one work.

    Its ``doi`` (or ``pmid``), the Crossref ``view`` and when it was ``validated_at`` (epoch s), or
    ``missing``, the reason code there is no view (``doi_not_found``, ``upstream_unavailable``...;
    None with no view: Crossref was not asked).
    """

    doi: str | None
    view: WorkView | None = None
    validated_at: float | None = None
    missing: str | None = None
    pmid: str | None = None


def iso_date(date: PublishedDate | None) -> str | None:
    """Crossref date parts as ISO 8601 (``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``), None without a date."""
    if date is None:
        return None
    parts = [f"{date.year:04d}"] + [f"{p:02d}" for p in (date.month, date.day) if p]
    return "-".join(parts)


def _fact(u: Update) -> UpdateFact:
    return UpdateFact(u.type, u.doi.lower(), u.source, iso_date(u.updated), u.recordId)


def crossref_facts(view: WorkView, validated_at: float | None) -> CrossrefFacts:
    """The verdict's view of a Crossref work (``doi``, ``title``, ``updatedBy``, ``updateTo``)."""
    return CrossrefFacts(
        doi=view.doi.lower(),
        title=view.title,
        updated_by=tuple(_fact(u) for u in view.updatedBy or []),
        update_to=tuple(_fact(u) for u in view.updateTo or []),
        validated_at=validated_at,
    )


def _raw_fact(u: dict[str, object]) -> UpdateFact | None:
    doi, kind = u.get("DOI"), u.get("type")
    if not isinstance(doi, str) or not isinstance(kind, str):
        return None
    parts = ((u.get("updated") or {}).get("date-parts") or [[None]])[0]  # type: ignore[union-attr]
    date = "-".join(f"{p:02d}" if i else f"{p:04d}" for i, p in enumerate(parts) if isinstance(p, int))
    record = u.get("record-id")
    source = u.get("source")
    return UpdateFact(
        kind,
        doi.lower(),
        source if isinstance(source, str) else None,
        date or None,
        record if isinstance(record, str) else None,
    )


def stored_notices(store: Store, work_doi: str, notice_dois: Sequence[str]) -> list[NoticeFact]:
    """Stored notices among ``notice_dois`` whose ``update-to`` names ``work_doi`` (their own entries)."""
    own = work_doi.lower()
    out = []
    for notice in list(dict.fromkeys(d.lower() for d in notice_dois if d.lower() != own))[:MAX_NOTICES]:
        entry = store.get(CROSSREF_WORK, notice)
        if entry is None or entry.status != "ok":
            continue
        try:
            message = document(entry, WORK_RULES)
        except ValueError:
            continue
        for raw in message.get("update-to") or []:
            fact = _raw_fact(raw) if isinstance(raw, dict) else None
            if fact is not None and fact.doi == own:
                out.append(NoticeFact(notice, fact, entry.validated_at))
    return out


def verdicts_for(store: Store, seen: Sequence[Seen]) -> list[Verdict]:
    """One :class:`~syncd.retractions.verdict.Verdict` per item of ``seen``, in order (store reads only).

    Raises:
        StoreError: the store cannot be read.
    """
    dataset = latest_dataset(store)
    dois = [s.doi.lower() for s in seen if s.doi]
    pmids = [s.pmid for s in seen if s.pmid]
    rows = rows_for(store, dois, pmids) if dataset is not None else []
    out = []
    for s in seen:
        own = s.doi.lower() if s.doi else None
        mine = [
            r.row
            for r in rows
            if (own and r.row.original_doi == own) or (s.pmid and r.row.original_pmid == s.pmid)
        ]
        facts = crossref_facts(s.view, s.validated_at) if s.view is not None else None
        notices = (
            stored_notices(store, own, [u.doi for u in s.view.updatedBy or []]) if own and s.view else []
        )
        out.append(
            verdict(
                doi=own,
                pmid=s.pmid,
                crossref=facts,
                crossref_missing=s.missing,
                notices=notices,
                rw_rows=mine,
                dataset=dataset,
            )
        )
    return out


def seen_of(item: WorkItem) -> Seen | None:
    """What a ``crossref_get_works`` batch item learnt of its work (None: the input is not a DOI)."""
    if item.parsed is None:
        return None
    if item.lookup is not None and item.lookup.entry.status == "ok":
        entry = item.lookup.entry
        try:
            view = work_view(document(entry, WORK_RULES), offset=0, limit=1)
        except (ValueError, MalformedResponse):
            return Seen(item.parsed.key, missing="malformed_response")
        return Seen(item.parsed.key, view, entry.validated_at)
    if isinstance(item.error, NotFound) or (
        item.lookup is not None and item.lookup.entry.status == "not_found"
    ):
        return Seen(item.parsed.key, missing="doi_not_found")
    return Seen(
        item.parsed.key, missing=item.error.reason if item.error is not None else "upstream_unavailable"
    )


def work_verdicts(svc: Services, items: Sequence[WorkItem]) -> list[Verdict | None]:
    """The verdict of each batch item (:func:`seen_of`; None for an input that is not a DOI), in order.

    Raises:
        StoreError: the store cannot be read.
    """
    seen = [seen_of(i) for i in items]
    found = iter(verdicts_for(svc.store, [s for s in seen if s is not None]))
    return [next(found) if s is not None else None for s in seen]
