"""The plain facts a retraction verdict is computed from (built by :mod:`syncd.retractions.lookups`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["CrossrefFacts", "Dataset", "NoticeFact", "ReverseFacts", "UpdateFact", "update_fact"]


@dataclass(frozen=True)
class Dataset:
    """One imported Retraction Watch version (:class:`~syncd.store.models.RetractionDataset`).

    ``imported_at`` epoch s,

    ``sha256`` of the file, ``rows`` in it, ``source`` path or URL, git ``commit`` (None: not a
    checkout), rows ``added``/``changed``/``removed`` against the version before, ``skipped`` rows.
    """

    id: int
    sha256: str
    rows: int
    source: str
    commit: str | None
    imported_at: float
    added: int
    changed: int
    removed: int
    skipped: int

    def as_dict(self) -> dict[str, Any]:
        """JSON form (field names as above)."""
        return asdict(self)


@dataclass(frozen=True)
class UpdateFact:
    """One Crossref ``updated-by`` / ``update-to`` entry.

    ``type`` as deposited (any spelling), the other side's ``doi`` (lower-cased), ``source``
    (``publisher``, ``retraction-watch`` or None), ``date`` (ISO 8601, possibly ``YYYY`` or
    ``YYYY-MM``), Retraction Watch ``record_id``.
    """

    type: str
    doi: str
    source: str | None = None
    date: str | None = None
    record_id: str | None = None


def update_fact(raw: dict[str, Any]) -> UpdateFact | None:
    """One deposited ``update-to`` / ``updated-by`` object as an :class:`UpdateFact` (None: no DOI or type).

    Reads ``DOI``, ``type``, ``source``, ``updated.date-parts``, ``record-id``.
    """
    doi, kind = raw.get("DOI"), raw.get("type")
    if not isinstance(doi, str) or not isinstance(kind, str):
        return None
    updated = raw.get("updated")
    parts = (updated.get("date-parts") or [[None]])[0] if isinstance(updated, dict) else None
    date = "-".join(f"{p:02d}" if i else f"{p:04d}" for i, p in enumerate(parts or []) if isinstance(p, int))
    source, record = raw.get("source"), raw.get("record-id")
    return UpdateFact(
        kind,
        doi.lower(),
        source if isinstance(source, str) else None,
        date or None,
        record if isinstance(record, str) else None,
    )


@dataclass(frozen=True)
class CrossrefFacts:
    """What the Crossref record of a work says and when it was last confirmed upstream.

    From ``message.DOI``, ``title[0]``, ``updated-by``, ``update-to``; ``validated_at`` epoch s.
    """

    doi: str
    title: str | None
    updated_by: tuple[UpdateFact, ...] = ()
    update_to: tuple[UpdateFact, ...] = ()
    validated_at: float | None = None


@dataclass(frozen=True)
class NoticeFact:
    """A stored notice record whose ``update-to`` names the work: the notice's DOI and that entry."""

    notice_doi: str
    update: UpdateFact
    validated_at: float | None = None


@dataclass(frozen=True)
class ReverseFacts:
    """What the reverse query ``GET /works?filter=updates:{doi}`` says of a work.

    Crossref's notices whose ``update-to`` names it (:mod:`syncd.retractions.reverse`).
    ``state``: ``asked`` (answered now or from its stored page within ``ttl.search``), ``stored``
    (a stored page read without asking, any age), or the reason code it could not be asked
    (``upstream_unavailable``, ``rate_limited``...). ``notices`` the entries naming the work,
    ``total`` Crossref's ``total-results``, ``validated_at`` when the page was last confirmed (epoch s);
    ``requested``: a request was sent for it in this call.
    """

    state: str
    notices: tuple[NoticeFact, ...] = ()
    total: int | None = None
    validated_at: float | None = None
    requested: bool = False

    @property
    def answered(self) -> bool:
        """Whether a page was read (asked or stored), not a failure."""
        return self.state in ("asked", "stored")
