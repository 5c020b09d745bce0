"""The plain facts a retraction verdict is computed from (built by :mod:`syncd.retractions.lookups`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["CrossrefFacts", "Dataset", "NoticeFact", "UpdateFact"]


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
