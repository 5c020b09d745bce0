"""Offline answers from the reference index: who in the mirror cites a DOI, which cited works are retracted.

Crossref's public API has no cited-by list; syncd answers from the reference lists of the works it
holds (:mod:`syncd.store.references`, kept in step with every write), always with the coverage: how
many stored works have an indexed reference list. :func:`rebuild_index` indexes the works stored
before the index existed (``syncd cited-by --rebuild``). No upstream request is sent here.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select

from syncd.crossref.names import CROSSREF_WORK
from syncd.crossref.rules import WORK_RULES
from syncd.crossref.views import work_view
from syncd.crossref.views_references import reference_dois
from syncd.errors import MalformedResponse
from syncd.retractions.lookups import Seen, verdicts_for
from syncd.retractions.verdict import Verdict
from syncd.road.services import Services
from syncd.store.content import document
from syncd.store.models import Entry
from syncd.store.references import Citing, cited_by, cites_of, citing_among, coverage, write_cites
from syncd.store.repo import Store
from syncd.store.watches import get_sync_state, save_sync_state

__all__ = [
    "COVERAGE_NOTE",
    "FLAGGED",
    "INDEX_STATE",
    "CitedBy",
    "CitedProblem",
    "Rebuilt",
    "cited_by_answer",
    "cited_by_lookup",
    "cited_problems",
    "citing_watched",
    "rebuild_index",
    "stored_verdicts",
]

INDEX_STATE = "references"
"""``sync_state`` row of the last :func:`rebuild_index` (``checkpoint = {"rebuilt_at", "works"}``)."""
FLAGGED = ("retracted", "expression_of_concern")
"""Verdict severities ``check --cited`` and the ``cites_retracted`` alert report."""
COVERAGE_NOTE = (
    "Answered from the reference lists of the works stored here; Crossref's public API has no cited-by "
    "list, so works not stored (or deposited without references) are not counted."
)


@dataclass(frozen=True)
class CitedBy:
    """Stored works citing ``doi``, with the index's coverage.

    ``works`` (at most the limit asked) of ``total``; ``indexed`` works have a reference list in the
    index, out of ``stored`` Crossref works; ``rebuilt_at`` (epoch s) when the whole store was last
    indexed (None: only works stored since the index exists).
    """

    doi: str
    works: list[Citing]
    total: int
    indexed: int
    stored: int
    rebuilt_at: float | None

    def as_dict(self, iso: Any) -> dict[str, Any]:
        """JSON form (``iso`` formats epoch seconds)."""
        data: dict[str, Any] = {
            "doi": self.doi,
            "total": self.total,
            "returned": len(self.works),
            "works": [
                {
                    "doi": w.doi or w.key,
                    **({"title": w.title} if w.title else {}),
                    **({"selfCitation": True} if (w.doi or w.key).lower() == self.doi else {}),
                }
                for w in self.works
            ],
            "coverage": {"indexedWorks": self.indexed, "storedWorks": self.stored, "note": COVERAGE_NOTE},
        }
        if self.rebuilt_at:
            data["coverage"]["rebuiltAt"] = iso(self.rebuilt_at)
        if self.rebuilt_at is None:
            data["coverage"]["notice"] = (
                "Works stored before the reference index existed are not indexed until "
                "`syncd cited-by --rebuild` runs."
            )
        return data


def cited_by_lookup(svc: Services, doi: str, limit: int = 50) -> CitedBy:
    """:func:`cited_by_answer` over the services' store (the ``syncd_cited_by`` tool's lookup)."""
    return cited_by_answer(svc.store, doi, limit)


def cited_by_answer(store: Store, doi: str, limit: int = 50) -> CitedBy:
    """The stored works citing ``doi`` (lower-cased match), with the index's coverage.

    Raises:
        StoreError: the store cannot be read.
    """
    with store.read() as conn:
        works, total = cited_by(conn, doi, limit)
        indexed = coverage(conn)
        stored = conn.execute(
            select(func.count()).select_from(Entry).where(Entry.kind == CROSSREF_WORK, Entry.status == "ok")
        ).scalar_one()
    state = get_sync_state(store, INDEX_STATE)
    rebuilt = (state.checkpoint or {}).get("rebuilt_at") if state is not None else None
    return CitedBy(
        doi.lower(), works, total, indexed, int(stored), rebuilt if isinstance(rebuilt, float) else None
    )


@dataclass(frozen=True)
class Rebuilt:
    """What :func:`rebuild_index` did: ``works`` indexed, ``junk`` reference DOIs skipped as not DOIs."""

    works: int
    junk: int


def rebuild_index(store: Store, batch: int = 500, now: float | None = None) -> Rebuilt:
    """Index the reference list of every stored Crossref work (the ones stored before the index too).

    Returns the works read and the reference "DOIs" skipped as junk
    (:func:`syncd.crossref.views_references.reference_dois`). Raises StoreError when the store fails.
    """
    last, works, junk = 0, 0, 0
    while True:
        with store.read() as conn:
            ids = [
                r[0]
                for r in conn.execute(
                    select(Entry.id)
                    .where(Entry.kind == CROSSREF_WORK, Entry.status == "ok", Entry.id > last)
                    .order_by(Entry.id)
                    .limit(batch)
                )
            ]
        if not ids:
            break
        pairs = []
        for entry_id in ids:
            entry = store.get_by_id(entry_id)
            if entry is None or entry.status != "ok":
                continue
            try:
                cites, skipped = reference_dois(document(entry, WORK_RULES))
            except ValueError:
                continue
            pairs.append((entry_id, cites))
            junk += skipped
        with store.write() as conn:
            for entry_id, cites in pairs:
                write_cites(conn, entry_id, cites)
        works += len(pairs)
        last = ids[-1]
    now = time.time() if now is None else now
    save_sync_state(store, INDEX_STATE, checkpoint={"rebuilt_at": now, "works": works, "junk": junk}, now=now)
    return Rebuilt(works, junk)


def stored_verdicts(store: Store, dois: Sequence[str]) -> dict[str, Verdict]:
    """Verdicts of ``dois`` from what the store holds (their stored records, Retraction Watch rows).

    A DOI not stored is judged on the Retraction Watch data alone (Crossref not asked).
    """
    seen = []
    for doi in dict.fromkeys(d.lower() for d in dois):
        entry = store.get(CROSSREF_WORK, doi)
        view = None
        if entry is not None and entry.status == "ok":
            try:
                view = work_view(document(entry, WORK_RULES), offset=0, limit=1)
            except (ValueError, MalformedResponse):
                view = None
        if view is not None and entry is not None:
            seen.append(Seen(doi, view, entry.validated_at))
        else:
            seen.append(Seen(doi, missing="doi_not_found" if entry is not None else None))
    return {s.doi or "": v for s, v in zip(seen, verdicts_for(store, seen), strict=True)}


@dataclass(frozen=True)
class CitedProblem:
    """A work cited by ``citing`` whose verdict is retracted or an expression of concern."""

    citing: str
    cited: str
    verdict: Verdict
    signals: list[dict[str, Any]] = field(default_factory=list)


def cited_problems(store: Store, citing: Sequence[str]) -> tuple[dict[str, list[CitedProblem]], int]:
    """For each stored work of ``citing`` (DOIs), the works it cites that are retracted or concerned.

    Returns the problems by citing DOI (a DOI not stored is absent) and how many of ``citing`` are held
    with an indexed reference list.
    """
    cites: dict[str, list[str]] = {}
    for doi in dict.fromkeys(d.lower() for d in citing):
        entry = store.get(CROSSREF_WORK, doi)
        if entry is not None and entry.status == "ok":
            with store.read() as conn:
                cites[doi] = cites_of(conn, entry.id)
    verdicts = stored_verdicts(store, [c for cs in cites.values() for c in cs])
    out: dict[str, list[CitedProblem]] = {}
    for doi, cited in cites.items():
        out[doi] = [
            CitedProblem(doi, c, verdicts[c], [s.as_dict() for s in verdicts[c].signals])
            for c in cited
            if verdicts[c].severity in FLAGGED
        ]
    return out, sum(1 for c in cites.values() if c)


def citing_watched(store: Store, cited: Sequence[str], watched: set[str]) -> list[Citing]:
    """The stored works citing any of ``cited`` whose DOI is in ``watched`` (lower-cased DOIs)."""
    with store.read() as conn:
        return [c for c in citing_among(conn, cited) if (c.doi or c.key).lower() in watched]
