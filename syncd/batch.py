"""Batch revalidation of stored Crossref works through list queries.

Crossref sends no validators, so revalidating a work one by one costs a full ``/works/{doi}`` each.
``/works?filter=doi:A,doi:B,...&select=DOI,indexed&rows=N`` answers the ``indexed`` stamp of up to
``N`` works in one request of the list pool. A work whose stamp equals the stored one
(``upstream_version``) is confirmed: only ``validated_at`` is bumped. Works whose stamp moved, or that
the list did not return, are revalidated singly (``Cache.revalidate``), which stores the new body
only when its content hash changed. With ``k`` changed works out of ``n`` this costs
``ceil(n / GROUP) + k`` requests instead of ``n``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

from syncd.cache import CROSSREF_WORK, Cache
from syncd.errors import BudgetExhausted, InvalidInput, UpstreamError
from syncd.normalize.doi import parse_doi
from syncd.store.repo import StoredEntry
from syncd.upstream.http import Deadline

__all__ = ["GROUP", "BatchReport", "batch_params", "eligible", "revalidate_crossref"]

log = logging.getLogger("syncd.batch")

GROUP = 50
"""DOIs per list request (keeps the URL well under common 8 KiB limits)."""


@dataclass
class BatchReport:
    """``list_requests`` + ``single_requests`` sent for ``checked`` works; outcome counts."""

    checked: int = 0
    unchanged: int = 0
    changed: int = 0
    failed: int = 0
    list_requests: int = 0
    single_requests: int = 0
    failures: dict[str, int] = field(default_factory=dict)
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


def batch_params(dois: Sequence[str]) -> dict[str, str]:
    """Query parameters of one batch request for ``dois``."""
    return {"filter": ",".join(f"doi:{d}" for d in dois), "select": "DOI,indexed", "rows": str(len(dois))}


def revalidate_crossref(
    cache: Cache,
    entries: Sequence[StoredEntry],
    *,
    group: int = GROUP,
    deadline_s: float = 60.0,
    on_entry: Callable[[StoredEntry, str], None] | None = None,
) -> BatchReport:
    """Revalidate stored Crossref works in groups of ``group`` (see the module docstring).

    Stops early (``stopped``) when the budget is spent or the list pool is offline; the rest waits
    for the next sweep.
    """
    report = BatchReport()
    todo = [e for e in entries if eligible(e)]
    for i in range(0, len(todo), group):
        chunk = todo[i : i + group]
        try:
            message = cache.crossref.list_works(
                batch_params([e.doi or e.key for e in chunk]), Deadline(deadline_s)
            )
        except (UpstreamError, BudgetExhausted) as exc:
            report.list_requests += 1
            report.stopped = exc.reason
            log.info("event=batch_stopped reason=%s", exc.reason)
            break
        report.list_requests += 1
        stamps: dict[str, str] = {}
        for item in message["items"]:
            try:
                key = parse_doi(str(item.get("DOI", ""))).key
            except InvalidInput:
                continue
            stamp = (item.get("indexed") or {}).get("date-time")
            if isinstance(stamp, str):
                stamps[key] = stamp
        for entry in chunk:
            report.checked += 1
            if stamps.get(entry.key) == entry.upstream_version:
                cache.store.mark_validated(entry.id)
                outcome = "unchanged"
            else:
                outcome = cache.revalidate(entry, Deadline(deadline_s))
                report.single_requests += 1
            if outcome == "unchanged":
                report.unchanged += 1
            elif outcome == "changed":
                report.changed += 1
            else:
                report.failed += 1
                reason = outcome.partition(":")[2]
                report.failures[reason] = report.failures.get(reason, 0) + 1
            if on_entry is not None:
                on_entry(entry, outcome)
            if outcome == "failed:rate_limited":
                report.stopped = "rate_limited"
                break
        if report.stopped:
            break
    log.info(
        "event=batch_revalidate checked=%d unchanged=%d changed=%d failed=%d list_requests=%d "
        "single_requests=%d",
        report.checked, report.unchanged, report.changed, report.failed, report.list_requests,
        report.single_requests,
    )  # fmt: skip
    return report
