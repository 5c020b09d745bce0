"""Gathering a verdict's inputs: the Crossref record's facts, stored notices, Retraction Watch rows.

:func:`verdicts_for` answers many works at once from what the caller learnt of their Crossref
records (a :class:`Seen` per work: the normalized view and when it was validated, or the reason
there is none) and from the store: one read of the newest Retraction Watch version, one indexed
read of its rows for every DOI and PubMed id, the stored notices named in the records'
``updatedBy`` whose own ``update-to`` names the work, and for a work whose ``updated-by`` and
Retraction Watch rows say nothing, the reverse query's page (:mod:`syncd.retractions.reverse`):
the stored one, or asked through the caller's ``ask`` (``syncd check --deep``). No upstream request
is sent here but through ``ask``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from syncd.crossref.contracts import PublishedDate, Update, WorkView
from syncd.crossref.names import CROSSREF_WORK
from syncd.crossref.rules import WORK_RULES
from syncd.retractions.facts import CrossrefFacts, NoticeFact, ReverseFacts, UpdateFact, update_fact
from syncd.retractions.reverse import stored_reverse
from syncd.retractions.storage import latest_dataset, rows_for
from syncd.retractions.verdict import Verdict, needs_reverse, verdict
from syncd.store.content import document
from syncd.store.repo import Store

__all__ = [
    "MAX_NOTICES",
    "Ask",
    "Seen",
    "crossref_facts",
    "iso_date",
    "verdicts_for",
]

MAX_NOTICES = 20
"""Most stored notices read per work (a record naming more is read for the first ones)."""

Ask = Callable[[list[str]], Mapping[str, ReverseFacts]]
"""``(DOIs) -> DOI -> reverse-query facts``: asks the reverse query (as
:func:`~syncd.retractions.reverse.ask_reverse`)."""


@dataclass(frozen=True)
class Seen:
    """What a caller learnt of one work.

    Its ``doi`` (or ``pmid``), the Crossref ``view`` and when it was ``validated_at`` (epoch s), or
    ``missing``, the reason code there is no view (``doi_not_found``, ``upstream_unavailable``...;
    None with no view: Crossref was not asked). ``agency_seen``: the other registration agency
    (``DataCite``) whose record of the DOI was read, for a DOI Crossref does not hold.
    """

    doi: str | None
    view: WorkView | None = None
    validated_at: float | None = None
    missing: str | None = None
    pmid: str | None = None
    agency_seen: str | None = None


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
            fact = update_fact(raw) if isinstance(raw, dict) else None
            if fact is not None and fact.doi == own:
                out.append(NoticeFact(notice, fact, entry.validated_at))
    return out


def verdicts_for(store: Store, seen: Sequence[Seen], ask: Ask | None = None) -> list[Verdict]:
    """One :class:`~syncd.retractions.verdict.Verdict` per item of ``seen``, in order.

    A work whose ``updated-by`` and Retraction Watch rows say nothing
    (:func:`~syncd.retractions.verdict.needs_reverse`) gets the reverse query: ``ask`` (one call for
    all such works) when given, else its stored page when one is held (no request).

    Raises:
        StoreError: the store cannot be read.
    """
    dataset = latest_dataset(store)
    dois = [s.doi.lower() for s in seen if s.doi]
    pmids = [s.pmid for s in seen if s.pmid]
    rows = rows_for(store, dois, pmids) if dataset is not None else []
    prepared = []
    for s in seen:
        own = s.doi.lower() if s.doi else None
        mine = [
            r.row
            for r in rows
            if (own and r.row.original_doi == own) or (s.pmid and r.row.original_pmid == s.pmid)
        ]
        facts = crossref_facts(s.view, s.validated_at) if s.view is not None else None
        silent = own is not None and needs_reverse(facts, mine)
        prepared.append((s, own, mine, facts, silent))
    silent_dois = [own for _, own, _, _, silent in prepared if silent and own]
    asked = dict(ask(silent_dois)) if ask is not None and silent_dois else {}
    out = []
    for s, own, mine, facts, silent in prepared:
        reverse = None
        if silent and own:
            reverse = asked.get(own) or stored_reverse(store, own)
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
                reverse=reverse,
                agency_seen=s.agency_seen,
            )
        )
    return out
