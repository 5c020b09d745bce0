"""What every watch walker shares (no upstream is named here): the report, the stop flag, early ends.

A *walker* walks one watch of its kind (:class:`Walker`, e.g. :func:`syncd.crossref.walk.sync_crossref_query`
for ``crossref_query`` watches); a *DOI walker* (:class:`DoiWalker`) fetches the watched DOIs its
upstream holds. Each upstream slice declares its own in its ``walk.py``; :mod:`syncd.registry` lists
them (:data:`~syncd.registry.WALKERS`, :data:`~syncd.registry.DOI_WALKERS`) and the passes over the
watch lists (:mod:`syncd.passes.sync`) read them there.

A walk's durable position is its ``sync_state`` row (:func:`state_name`), written after every stored
page (:func:`syncd.store.watches.page_done`), so a stop, a shutdown or a crash resumes from the last
stored page. Walkers log under ``syncd.passes.sync`` (the logger ``journalctl`` lines and the docs name).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from syncd.road.services import Services
from syncd.store.repo import Store
from syncd.store.watches import PageVerdict, StoredWatch
from syncd.upstream.http import Deadline

__all__ = [
    "REQUEST_DEADLINE_S",
    "STOP",
    "STOP_REASONS",
    "DoiWalker",
    "PageHook",
    "SyncReport",
    "Walker",
    "WatchType",
    "deadline",
    "ended_early",
    "log_page",
    "state_name",
]

log = logging.getLogger("syncd.sync")

STOP = threading.Event()
"""Set on shutdown (the daemon's SIGTERM): walks stop at the next page boundary, their position saved."""

REQUEST_DEADLINE_S = 60.0
"""Per request: background walks may wait this long for a budget token."""
STOP_REASONS = {"rate_limited", "upstream_unavailable"}
"""Failures that end a pass: the budget is spent or upstream is down (the rest waits)."""

PageHook = Callable[[StoredWatch, int], None]
"""``(watch, pages walked so far)``: called after each stored page (the CLI's progress line)."""


@dataclass
class SyncReport:
    """Counts of one walk: ``requests`` sent, ``stored`` items seen, how many ``changed``/``new``.

    ``complete``: the walk saw every item upstream said there is (or, Zenodo and DOI watches, walked
    every window and group); ``short``: it ended incomplete (its cursors kept expiring; the next pass
    resumes it from its watermark); ``seen`` / ``total``: works the Crossref walk has seen and the
    ``total-results`` upstream answered for it (None for other kinds);
    ``error``: the reason code the walk failed with (its counts are what it did before failing);
    ``stopped``: why a walk ended early without failing; ``not_run``: why a requested watch was not
    walked at all (an earlier walk of the pass hit ``rate_limited`` or ``upstream_unavailable``, or
    ``shutdown``); ``elapsed_s``: seconds the walk took.
    """

    watch_id: int
    kind: str
    mode: str = "full"
    requests: int = 0
    pages: int = 0
    stored: int = 0
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    failed: int = 0
    resumed: bool = False
    complete: bool = False
    short: bool = False
    seen: int | None = None
    total: int | None = None
    stopped: str | None = None
    error: str | None = None
    not_run: str | None = None
    elapsed_s: float = 0.0
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """Plain dict (``--json``, logs)."""
        return asdict(self)

    def count_stored(self, new: bool, changed: bool) -> None:
        """Count one stored item: ``new`` (nothing was stored before), else ``changed`` or unchanged."""
        self.stored += 1
        if new:
            self.new += 1
        elif changed:
            self.changed += 1
        else:
            self.unchanged += 1


class Walker(Protocol):
    """Walks one watch of its kind (full, incremental or resumed) and returns ``report``, filled in place.

    ``now``: epoch seconds the walk starts at (default: the clock); ``on_page``: called after each
    stored page; ``full``: ignore the checkpoint and walk everything again; ``report``: filled in
    place when given, so a caller keeps the counts of a walk that raised.

    Raises:
        UpstreamError, BudgetExhausted: a page could not be had (the position of the last stored page
            stays saved).
        NotFound: the watched route does not exist.
    """

    def __call__(
        self,
        svc: Services,
        watch: StoredWatch,
        *,
        now: float | None = None,
        on_page: PageHook | None = None,
        full: bool = False,
        report: SyncReport | None = None,
    ) -> SyncReport:
        """Walk ``watch``; returns its report."""
        ...


@dataclass(frozen=True)
class DoiWalker:
    """How one upstream fetches the watched DOIs it holds (``doi`` watches).

    ``claims(doi)``: whether the DOI is this upstream's (None: every DOI no other walker claims);
    ``missing(store, doi)``: whether it is not stored yet (stored ones are left to revalidation);
    ``fetch(services, dois, report, now)``: fetch and store the missing ``dois`` (misses stored as
    misses), counting requests and stored items in ``report``; raises
    :class:`~syncd.errors.UpstreamError` / :class:`~syncd.errors.BudgetExhausted` when a
    :data:`STOP_REASONS` failure ends the pass.
    """

    claims: Callable[[str], bool] | None
    missing: Callable[[Store, str], bool]
    fetch: Callable[[Services, Sequence[str], SyncReport, float | None], None]


@dataclass(frozen=True)
class WatchType:
    """How one watch kind of a slice is added and described (each slice declares its own).

    ``kind``: the stored watch kind (``watches.kind``); ``command``: its word in ``syncd watch add``;
    ``from_cli(values, options)``: the specs of one ``syncd watch add`` (its arguments and every
    option by parameter name); ``from_config(watch_settings)``: the specs the ``[watch]`` table of
    the config file lists, one at a time (those before a refused one are added);
    ``describe(spec)``: one line for ``syncd watch ls`` and ``/status``. The spec builders raise
    :class:`~syncd.errors.InvalidInput` (``invalid_parameter``, ``invalid_identifier``) for a watch
    they refuse.
    """

    kind: str
    command: str
    from_cli: Callable[[Sequence[str], Mapping[str, Any]], list[dict[str, Any]]]
    from_config: Callable[[Any], Iterable[dict[str, Any]]]
    describe: Callable[[Mapping[str, Any]], str]


def state_name(watch: StoredWatch) -> str:
    """The ``sync_state`` row of ``watch``."""
    return f"watch:{watch.id}"


def deadline() -> Deadline:
    """The deadline of one background request (:data:`REQUEST_DEADLINE_S`)."""
    return Deadline(REQUEST_DEADLINE_S)


def log_page(watch: StoredWatch, page: int, items: int, new: int) -> None:
    """The per-page progress line of a walk (``page``: its number within the walk, resumed ones counted)."""
    log.info("event=page watch=%d page=%d items=%d new=%d", watch.id, page, items, new)


def ended_early(watch: StoredWatch, report: SyncReport, verdict: PageVerdict) -> SyncReport:
    """A walk ended at a page boundary by ``syncd watch stop``, a shutdown, or ``syncd watch rm``."""
    if verdict is PageVerdict.GONE:
        report.stopped = "watch_removed"
        report.notes.append("watch removed: walk ended")
    elif STOP.is_set():
        report.stopped = "shutdown"
        report.notes.append("stopped for shutdown: resumes from the saved position")
    else:
        report.stopped = "stop_requested"
        report.notes.append("stopped by `syncd watch stop`: the next walk resumes from the saved position")
    log.info("event=walk_ended watch=%d reason=%s pages=%d", watch.id, report.stopped, report.pages)
    return report
