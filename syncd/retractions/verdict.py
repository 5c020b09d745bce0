"""One retraction verdict from every signal (pure: facts in, verdict out).

Signals, each kept with its source, notice DOI, date and record id:

- the Crossref record's ``updated-by`` entries (``source`` ``retraction-watch`` or ``publisher``);
  a publisher entry naming a DOI the record also lists in ``update-to`` is a back-link between a
  notice and its work, not an update of this record (the Lancet paper 10.1016/s0140-6736(20)31180-6
  lists its notices both ways), and an erratum-type entry whose DOI is a retraction notice of the
  work is part of that retraction (10.1016/j.apsusc.2007.01.131) - as in
  :func:`syncd.crossref.views_flags.update_flags`;
- stored notice records whose ``update-to`` names the work (:class:`~syncd.retractions.facts.NoticeFact`),
  except a publisher link the work's own ``update-to`` names back (two-way links, as above);
- the notices the reverse query ``/works?filter=updates:{doi}`` found
  (:class:`~syncd.retractions.facts.ReverseFacts`, consulted when the record's ``updated-by`` and the
  Retraction Watch data say nothing, :func:`needs_reverse`), with the same two-way rule; a notice
  already named by another Crossref signal is not listed twice;
- the imported Retraction Watch rows of the work (by DOI or PubMed id);
- the title: ``RETRACTED:``, ``RETRACTED ARTICLE:``, ``WITHDRAWN:``, ``Notice of Retraction``,
  ``Expression of Concern:`` - only for a record that is not itself a notice for another work
  (a notice is titled ``Retraction: <the work's title>``).

Levels: retraction, withdrawal, removal, partial retraction -> ``retracted``; expression of
concern -> ``expression_of_concern``; correction, erratum, corrigendum, addendum, clarification
-> ``corrected`` (an erratum is never a retraction); reinstatement -> ``reinstated``. A
reinstatement dated on or after every retraction lifts them (they stay listed, ``lifted``); the
severity is the most severe level left (:data:`~syncd.retractions.names.SEVERITIES`). A retraction
whose notice DOI is the work's own (IEEE's "Notice of Retraction" replacing the paper) is a
retract-and-replace: ``replaced``. No signal: ``none_found`` when the Crossref record (or, for a DOI
of another registration agency, that agency's record) was seen;
``unknown`` with the reason when it was not (upstream down, budget spent, not at Crossref and not in
Retraction Watch) - "not found" never reads as clean.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from syncd.retractions.csvfile import RetractionWatchRow
from syncd.retractions.facts import CrossrefFacts, Dataset, NoticeFact, ReverseFacts
from syncd.retractions.names import (
    SEVERITIES,
    SOURCE_CROSSREF_PUBLISHER,
    SOURCE_CROSSREF_RW,
    SOURCE_NOTICE,
    SOURCE_REVERSE,
    SOURCE_RW_DATA,
    SOURCE_TITLE,
    Severity,
)

__all__ = [
    "LEVELS",
    "Signal",
    "Verdict",
    "level_of",
    "needs_reverse",
    "notice_targets",
    "title_signal",
    "verdict",
]

LEVELS: dict[str, Severity] = {
    **dict.fromkeys(("retraction", "withdrawal", "removal", "partial_retraction"), "retracted"),
    "expression_of_concern": "expression_of_concern",
    **dict.fromkeys(
        ("correction", "corrected", "erratum", "corrigendum", "addendum", "clarification"), "corrected"
    ),
    "reinstatement": "reinstated",
}
"""Update type (normalized) -> the severity it supports; other types (new_version...) support none."""

RETRACTION_WATCH = "retraction-watch"
_TITLE = (
    (
        re.compile(r"^\s*(?:retracted|withdrawn)(?:\s+article)?\s*[:\-\u2013\u2014]", re.IGNORECASE),
        "retraction",
    ),
    (re.compile(r"^\s*notice\s+of\s+retraction\b", re.IGNORECASE), "retraction"),
    (
        re.compile(r"^\s*expression\s+of\s+concern\s*[:\-\u2013\u2014]", re.IGNORECASE),
        "expression_of_concern",
    ),
)


def _norm(kind: str) -> str:
    return kind.strip().lower().replace("-", "_").replace(" ", "_")


def level_of(kind: str) -> Severity | None:
    """The severity an update type supports (:data:`LEVELS`; any spelling), None for none."""
    return LEVELS.get(_norm(kind))


@dataclass(frozen=True)
class Signal:
    """One piece of evidence for a verdict.

    ``source`` (:mod:`syncd.retractions.names` ``SOURCE_*``), ``type`` (normalized update type or
    nature), its ``level``, the ``notice_doi``, ``date`` (ISO 8601), Retraction Watch ``record_id``;
    ``lifted`` when a later reinstatement lifted it.
    """

    source: str
    type: str
    level: Severity
    notice_doi: str | None = None
    date: str | None = None
    record_id: str | None = None
    lifted: bool = False

    def as_dict(self) -> dict[str, Any]:
        """JSON form: ``source``, ``type``, ``level``, ``noticeDoi``, ``date``, ``recordId``, ``lifted``."""
        data = {
            "source": self.source,
            "type": self.type,
            "level": self.level,
            "noticeDoi": self.notice_doi,
            "date": self.date,
            "recordId": self.record_id,
            "lifted": self.lifted or None,
        }
        return {k: v for k, v in data.items() if v is not None}


@dataclass(frozen=True)
class Verdict:
    """The retraction verdict of one work.

    ``severity`` (:data:`~syncd.retractions.names.SEVERITIES`); ``signals`` supporting it (and the
    lifted ones); ``reason`` why it is ``unknown`` (None otherwise); ``replaced``: retracted and
    replaced under the same DOI; ``crossref``: ``seen``, ``not_found`` or ``unseen`` (the record could
    not be read), ``crossref_validated_at`` when the record answered was last confirmed (epoch s);
    ``dataset`` the Retraction Watch version consulted (None: none imported); ``reverse`` what the
    reverse query said (None: not consulted); ``notes`` for people.
    """

    doi: str | None
    pmid: str | None
    severity: Severity
    signals: tuple[Signal, ...] = ()
    reason: str | None = None
    replaced: bool = False
    crossref: str = "seen"
    crossref_validated_at: float | None = None
    dataset: Dataset | None = None
    reverse: ReverseFacts | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def as_dict(self, iso: Any = None) -> dict[str, Any]:
        """JSON form (camelCase; ``iso`` formats epoch seconds, e.g. :func:`syncd.road.policy.iso`)."""
        when = iso or (lambda t: t)
        rw = None
        if self.dataset is not None:
            d = self.dataset
            rw = {"sha256": d.sha256, "rows": d.rows, "importedAt": when(d.imported_at), "source": d.source}
            if d.commit:
                rw["commit"] = d.commit
        rests = {
            "crossref": self.crossref,
            "crossrefValidatedAt": when(self.crossref_validated_at) if self.crossref_validated_at else None,
            "retractionWatch": rw,
            "updatesQuery": _reverse_dict(self.reverse, when) if self.reverse is not None else None,
        }
        data = {
            "severity": self.severity,
            "signals": [s.as_dict() for s in self.signals],
            "reason": self.reason,
            "replaced": self.replaced or None,
            "restsOn": {k: v for k, v in rests.items() if v is not None},
            "notes": list(self.notes) or None,
        }
        return {k: v for k, v in data.items() if v is not None}


def _reverse_dict(reverse: ReverseFacts, when: Any) -> dict[str, Any]:
    data = {
        "state": reverse.state,
        "notices": len(reverse.notices),
        "total": reverse.total,
        "validatedAt": when(reverse.validated_at) if reverse.validated_at else None,
    }
    return {k: v for k, v in data.items() if v is not None}


def title_signal(title: str | None) -> Signal | None:
    """The signal a title prefix gives (``RETRACTED:``, ``Notice of Retraction``, ...), None without one."""
    for pattern, kind in _TITLE:
        if title and pattern.match(title):
            level = LEVELS[kind]
            return Signal(SOURCE_TITLE, kind, level)
    return None


def notice_targets(facts: CrossrefFacts) -> list[str]:
    """The other works this record is an update notice for.

    ``update-to`` DOIs other than its own that Retraction Watch asserted, or that its ``updated-by``
    does not list back (the Lancet paper lists its notices both ways, as publisher entries: not a notice).
    """
    own = facts.doi.lower()
    back = {u.doi.lower() for u in facts.updated_by}
    return sorted(
        {u.doi.lower() for u in facts.update_to if u.source == RETRACTION_WATCH or u.doi.lower() not in back}
        - {own}
    )


def _crossref_signals(facts: CrossrefFacts) -> list[Signal]:
    own = facts.doi.lower()
    targets = {u.doi.lower() for u in facts.update_to} - {own}
    kept = [u for u in facts.updated_by if u.source == RETRACTION_WATCH or u.doi.lower() not in targets]
    kept += [u for u in facts.update_to if u.doi.lower() == own]  # an update recorded in place
    retraction_notices = {u.doi.lower() for u in kept if level_of(u.type) == "retracted"}
    out = []
    for u in kept:
        level = level_of(u.type)
        if level is None or (level == "corrected" and u.doi.lower() in retraction_notices):
            continue
        source = SOURCE_CROSSREF_RW if u.source == RETRACTION_WATCH else SOURCE_CROSSREF_PUBLISHER
        out.append(Signal(source, _norm(u.type), level, u.doi.lower(), u.date, u.record_id))
    if not notice_targets(facts):
        titled = title_signal(facts.title)
        if titled is not None:
            out.append(titled)
    return out


def _notice_signals(
    own: str | None, notices: Sequence[NoticeFact], back: set[str], source: str = SOURCE_NOTICE
) -> list[Signal]:
    """Signals of the notices naming ``own`` (stored ones, or ``source`` the reverse query's).

    A notice the work's own ``update-to`` names (``back``) is a two-way publisher link, kept only when
    Retraction Watch asserted it.
    """
    out = []
    for n in notices:
        level = level_of(n.update.type)
        if level is None or (own and n.update.doi.lower() != own):
            continue
        if n.notice_doi.lower() in back and n.update.source != RETRACTION_WATCH:
            continue
        out.append(
            Signal(
                source,
                _norm(n.update.type),
                level,
                n.notice_doi.lower(),
                n.update.date,
                n.update.record_id,
            )
        )
    return out


def _rw_signals(rows: Sequence[RetractionWatchRow]) -> list[Signal]:
    out = []
    for r in rows:
        level = level_of(r.nature)
        if level is not None:
            out.append(Signal(SOURCE_RW_DATA, r.nature, level, r.notice_doi, r.notice_date, r.record_id))
    return out


def needs_reverse(crossref: CrossrefFacts | None, rw_rows: Sequence[RetractionWatchRow]) -> bool:
    """Whether the reverse query is worth asking: nothing else names a notice of the work.

    True when the record's own ``updated-by`` (and updates recorded in place) give no level and no
    Retraction Watch row names the work (a title prefix alone does not count: it names no notice).
    """
    if _rw_signals(rw_rows):
        return False
    if crossref is None:
        return True
    return not any(s.source != SOURCE_TITLE for s in _crossref_signals(crossref))


def _reverse_signals(
    own: str | None, reverse: ReverseFacts | None, back: set[str], known: list[Signal]
) -> list[Signal]:
    if reverse is None or not reverse.notices:
        return []
    named = {(s.notice_doi, s.type) for s in known if s.source != SOURCE_RW_DATA}
    found = _notice_signals(own, reverse.notices, back, SOURCE_REVERSE)
    return [s for s in found if (s.notice_doi, s.type) not in named]


def _lift(signals: list[Signal]) -> list[Signal]:
    """Mark retraction signals lifted by a reinstatement dated on or after all of them."""
    reinstated = [s.date or "9999" for s in signals if s.level == "reinstated"]
    if not reinstated:
        return signals
    latest_retraction = max((s.date or "" for s in signals if s.level == "retracted"), default="")
    if max(reinstated) < latest_retraction:
        return signals
    return [replace(s, lifted=True) if s.level == "retracted" else s for s in signals]


def _unique(signals: list[Signal]) -> list[Signal]:
    seen: set[tuple[str, str, str | None, str | None]] = set()
    out = []
    for s in signals:
        key = (s.source, s.type, s.notice_doi, s.record_id)
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out


def verdict(
    *,
    doi: str | None,
    pmid: str | None = None,
    crossref: CrossrefFacts | None = None,
    crossref_missing: str | None = None,
    notices: Sequence[NoticeFact] = (),
    rw_rows: Sequence[RetractionWatchRow] = (),
    dataset: Dataset | None = None,
    reverse: ReverseFacts | None = None,
    agency_seen: str | None = None,
) -> Verdict:
    """The verdict of the work ``doi`` (or PubMed id ``pmid``) from every signal (module docstring).

    Args:
        doi: the work's DOI (any case; None: known by PubMed id only).
        pmid: its PubMed id, when known.
        crossref: the Crossref record's facts; None when it could not be read.
        crossref_missing: why there is no record: ``doi_not_found`` (Crossref holds none), another
            reason code (``upstream_unavailable``, ``budget_exhausted``...), or None (not asked).
        notices: stored notices whose ``update-to`` names ``doi``.
        rw_rows: the Retraction Watch rows of the work (by DOI or PubMed id).
        dataset: the Retraction Watch version ``rw_rows`` come from (None: nothing imported).
        reverse: what the reverse query ``filter=updates:{doi}`` said (None: not consulted).
        agency_seen: the other registration agency (``DataCite``) whose record of ``doi`` was read
            when Crossref holds none: the work was seen there, so no signal means ``none_found``.
    """
    own = doi.lower() if doi else None
    signals: list[Signal] = []
    notes: list[str] = []
    if crossref is not None:
        signals += _crossref_signals(crossref)
        targets = notice_targets(crossref)
        if targets:
            notes.append(f"this record is an update notice for {', '.join(targets)}")
    back = {u.doi.lower() for u in crossref.update_to} if crossref is not None else set()
    signals += _notice_signals(own, notices, back)
    signals += _reverse_signals(own, reverse, back, signals)
    signals += _rw_signals(rw_rows)
    signals = _lift(_unique(signals))
    replaced = any(s.level == "retracted" and not s.lifted and own and s.notice_doi == own for s in signals)
    if replaced:
        notes.append("retracted and replaced under the same DOI: the record now is the retraction notice")
    if reverse is not None and not reverse.answered:
        notes.append(f"the reverse query filter=updates:{own} could not be asked ({reverse.state})")
    if dataset is None:
        notes.append("no Retraction Watch data imported: Crossref's record alone was consulted")
    state = (
        "seen" if crossref is not None else ("not_found" if crossref_missing == "doi_not_found" else "unseen")
    )
    if crossref is None and crossref_missing is None:
        state = "not_asked"
    active = {s.level for s in signals if not s.lifted}
    severity: Severity | None = next((s for s in SEVERITIES if s in active), None)
    reason = None
    if severity is None:
        if crossref is not None:
            severity = "none_found"
        elif agency_seen is not None and own:
            severity = "none_found"
            notes.append(
                f"registered with {agency_seen}, whose record was seen: Crossref holds no record to "
                "carry a retraction, so only the Retraction Watch data could name one"
            )
        else:
            severity = "unknown"
            reason = _unknown_reason(state, crossref_missing, dataset, doi, pmid)
    return Verdict(
        doi=own,
        pmid=pmid,
        severity=severity,
        signals=tuple(signals),
        reason=reason,
        replaced=bool(replaced),
        crossref=state,
        crossref_validated_at=crossref.validated_at if crossref is not None else None,
        dataset=dataset,
        reverse=reverse,
        notes=tuple(notes),
    )


def _unknown_reason(
    state: str, missing: str | None, dataset: Dataset | None, doi: str | None, pmid: str | None
) -> str:
    rw = "not in Retraction Watch" if dataset is not None else "no Retraction Watch data imported"
    if doi is None and pmid is None:
        return "the entry names no DOI and no PubMed id: nothing to look up"
    if state == "not_found":
        return f"not at Crossref and {rw}"
    if state == "not_asked":
        if doi is None:
            return f"no DOI to ask Crossref and PubMed id {pmid} {rw}"
        return f"Crossref not asked and {rw}"
    return f"the Crossref record could not be read ({missing}) and {rw}"
