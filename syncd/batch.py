"""Batch revalidation of stored Crossref works through list queries.

Crossref sends no validators, so revalidating a work one by one costs a full ``/works/{doi}`` each.
``/works?filter=doi:A,doi:B,...&select=DOI,indexed&rows=N`` answers the ``indexed`` stamp of up to
``N`` works in one request of the list pool. A work whose stamp equals the stored one
(``upstream_version``) is confirmed: only ``validated_at`` is bumped. Works whose stamp moved, or that
the list did not return, are revalidated singly by :mod:`syncd.refresh`, which stores the new body
only when its content hash changed. With ``k`` changed works out of ``n`` this costs
``ceil(n / GROUP) + k`` requests instead of ``n``.

A DOI that cannot be written into a ``doi:`` filter (:func:`filter_safe`: a comma, which Crossref's
filter parser splits on, or any character outside the suffix set Crossref recommends) never goes
into one: it is revalidated singly. A rejected list request (HTTP 400, 5xx, an unreadable body) is
split in halves by :func:`syncd.refresh.revalidate_crossref`, down to single lookups, so one poison
DOI never stalls the others.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from syncd.crossref.client import CrossrefClient
from syncd.crossref.names import CROSSREF_WORK
from syncd.errors import InvalidInput
from syncd.normalize.doi import parse_doi
from syncd.policy import Tally
from syncd.store.repo import StoredEntry
from syncd.upstream.http import Deadline

__all__ = [
    "GROUP",
    "BatchReport",
    "batch_params",
    "confirmed",
    "eligible",
    "fetch_stamps",
    "filter_safe",
    "halves",
]

log = logging.getLogger("syncd.batch")

GROUP = 50
"""DOIs per list request (keeps the URL well under common 8 KiB limits)."""


@dataclass
class BatchReport(Tally):
    """``list_requests`` + ``single_requests`` sent for ``checked`` works; outcome counts."""

    list_requests: int = 0
    single_requests: int = 0
    stopped: str | None = None

    @property
    def requests(self) -> int:
        """Every upstream request sent."""
        return self.list_requests + self.single_requests

    def as_dict(self) -> dict[str, object]:
        """Plain dict, ``requests`` included."""
        return {**asdict(self), "requests": self.requests}


def eligible(entry: StoredEntry) -> bool:
    """Whether ``entry`` can be confirmed by its ``indexed`` stamp (a stored Crossref work that has one)."""
    return entry.kind == CROSSREF_WORK and entry.status == "ok" and bool(entry.upstream_version)


_FILTER_SAFE = re.compile(r"10\.[0-9]+(?:\.[0-9]+)*/[A-Za-z0-9\-._;()/]+")
"""A DOI Crossref's ``filter=doi:A,doi:B`` parser reads back whole: the suffix characters Crossref
recommends (``a-z A-Z 0-9 - . _ ; ( ) /``). A comma splits the filter list; ``:`` splits name from
value; spaces, ``&``, ``#``, ``+``, ``<>`` and non-ASCII letters are known to be mangled or refused."""


def filter_safe(doi: str) -> bool:
    """Whether ``doi`` can go into a ``doi:`` list filter (else it is looked up alone, ``/works/{doi}``)."""
    return _FILTER_SAFE.fullmatch(doi) is not None


def halves(chunk: Sequence[StoredEntry]) -> list[Sequence[StoredEntry]]:
    """``chunk`` split in two (the first half the smaller one); a rejected batch is retried as these."""
    mid = len(chunk) // 2
    return [chunk[:mid], chunk[mid:]]


def batch_params(dois: Sequence[str]) -> dict[str, str]:
    """Query parameters of one batch request for ``dois`` (each :func:`filter_safe`)."""
    return {"filter": ",".join(f"doi:{d}" for d in dois), "select": "DOI,indexed", "rows": str(len(dois))}


def fetch_stamps(
    crossref: CrossrefClient, chunk: Sequence[StoredEntry], deadline: Deadline
) -> dict[str, str]:
    """The ``indexed`` stamps (DOI key -> ``date-time``) of the works of ``chunk``, in one list request.

    A work whose stamp equals its stored ``upstream_version`` is confirmed (:func:`confirmed`); the
    others (stamp moved, or not returned) need a single revalidation.

    Raises:
        UpstreamError, BudgetExhausted: the list request failed.
    """
    message = crossref.list_works(batch_params([e.doi or e.key for e in chunk]), deadline)
    stamps: dict[str, str] = {}
    for item in message["items"]:
        try:
            key = parse_doi(str(item.get("DOI", ""))).key
        except InvalidInput:
            continue
        stamp = (item.get("indexed") or {}).get("date-time")
        if isinstance(stamp, str):
            stamps[key] = stamp
    return stamps


def confirmed(entry: StoredEntry, stamps: dict[str, str]) -> bool:
    """Whether the list answered ``entry``'s stored ``indexed`` stamp unchanged."""
    return stamps.get(entry.key) == entry.upstream_version
