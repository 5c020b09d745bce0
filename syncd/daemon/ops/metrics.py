"""``/metrics``: the Prometheus text format (``prometheus_client``) of the store, the budget and the jobs.

:class:`StoreCollector` reads the store at scrape time (:func:`syncd.daemon.ops.facts.read_facts`): nothing
is counted twice or kept in memory, and every process sharing the store is covered (the budget's
request and 429 counters are written by each process's requests, migration 0011). The daemon's own
jobs (sweeps, walks, alerts, answers by source) are instruments of its
:class:`~syncd.daemon.ops.activity.Activity`. Both sit in the activity's registry; :func:`render` writes it.

Families read at scrape time (``pool``, ``kind``, ``status``, ``type`` labels):

======================================================  ==========================================
``syncd_store_up``                                      1 when the store could be read
``syncd_entries{kind,status}``                          stored entries
``syncd_entries_stale{kind,status}``                    of those, past their lifetime
``syncd_database_size_bytes``                           size of the database
``syncd_budget_requests_total{pool}``                   requests that reached upstream (counter)
``syncd_budget_rate_limited_total{pool}``               429 answers among them (counter)
``syncd_budget_tokens{pool}``, ``..._burst``            tokens in the bucket now, bucket size
``syncd_budget_rate_per_second{pool}``                  effective refill rate (requests/s)
``syncd_budget_in_flight{pool}``, ``..._limit``         requests under way, the concurrency limit
``syncd_budget_blocked_seconds{pool}``                  seconds left of a 429 block or pause
``syncd_budget_offline{pool}``                          1 while the breaker is open
``syncd_budget_announced_limit{pool}``                  requests per interval upstream announced
``syncd_budget_announced_interval_seconds{pool}``       that interval
``syncd_budget_announced_in_flight{pool}``              concurrency upstream announced
``syncd_budget_announced_remaining{pool}``              requests left in upstream's window (Zenodo)
``syncd_budget_window_sends{pool}``                     requests sent in the announced window
``syncd_watches{kind}``                                 watches
``syncd_watch_last_success_timestamp_seconds{watch,kind}``  last successful walk (epoch s)
``syncd_change_feed_last_id``                           id of the newest change (grows with each)
``syncd_change_feed_changes{type}``                     changes kept in the feed, per type
``syncd_alerts_pending``                                watched alerting changes not yet alerted
======================================================  ==========================================
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector

from syncd.daemon.ops.activity import Activity
from syncd.daemon.ops.facts import Facts, read_facts
from syncd.errors import SyncdError
from syncd.road.services import Services

__all__ = ["StoreCollector", "register", "render"]

log = logging.getLogger("syncd.daemon.ops")


def _gauge(name: str, doc: str, labels: list[str] | None = None) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, labels=labels)


def _entries(facts: Facts) -> Iterator[GaugeMetricFamily]:
    entries = _gauge("syncd_entries", "Stored entries, by kind and status.", ["kind", "status"])
    stale = _gauge("syncd_entries_stale", "Stored entries past their lifetime.", ["kind", "status"])
    for row in facts.entries:
        labels = [str(row["kind"]), str(row["status"])]
        entries.add_metric(labels, float(row["entries"]))  # type: ignore[arg-type]
        stale.add_metric(labels, float(row["stale"]))  # type: ignore[arg-type]
    yield entries
    yield stale
    if facts.database_size_bytes is not None:
        size = _gauge("syncd_database_size_bytes", "Size of the database (bytes).")
        size.add_metric([], float(facts.database_size_bytes))
        yield size


def _budget(facts: Facts) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
    requests = CounterMetricFamily(
        "syncd_budget_requests",
        "Requests that reached upstream, every process of the store.",
        labels=["pool"],
    )
    refused = CounterMetricFamily(
        "syncd_budget_rate_limited", "Requests upstream answered 429, every process.", labels=["pool"]
    )
    gauges = {
        "tokens": _gauge("syncd_budget_tokens", "Tokens in the pool's bucket now.", ["pool"]),
        "burst": _gauge("syncd_budget_burst", "Size of the pool's bucket (effective).", ["pool"]),
        "per_s": _gauge("syncd_budget_rate_per_second", "Effective refill rate (requests/s).", ["pool"]),
        "in_flight": _gauge("syncd_budget_in_flight", "Requests of the pool under way.", ["pool"]),
        "in_flight_limit": _gauge("syncd_budget_in_flight_limit", "Concurrency limit (effective).", ["pool"]),
        "blocked_for_s": _gauge(
            "syncd_budget_blocked_seconds", "Seconds left of a 429 block or pause.", ["pool"]
        ),
        "offline": _gauge("syncd_budget_offline", "1 while the pool's breaker is open.", ["pool"]),
        "failures": _gauge("syncd_budget_failures", "Consecutive connection failures.", ["pool"]),
        "window_sends": _gauge(
            "syncd_budget_window_sends", "Requests sent in the announced window.", ["pool"]
        ),
    }
    announced = {
        "announced_limit": _gauge(
            "syncd_budget_announced_limit", "Requests per interval upstream last announced.", ["pool"]
        ),
        "announced_interval_s": _gauge(
            "syncd_budget_announced_interval_seconds", "The announced limit's interval.", ["pool"]
        ),
        "announced_in_flight": _gauge(
            "syncd_budget_announced_in_flight", "Concurrent requests upstream announced.", ["pool"]
        ),
        "announced_remaining": _gauge(
            "syncd_budget_announced_remaining", "Requests left in upstream's window, as announced.", ["pool"]
        ),
    }
    for p in facts.pools:
        requests.add_metric([p.pool], float(p.requests_total))
        refused.add_metric([p.pool], float(p.rate_limited_total))
        for field, family in gauges.items():
            family.add_metric([p.pool], float(getattr(p, field)))
        for field, family in announced.items():
            value = getattr(p, field)
            if value is not None:
                family.add_metric([p.pool], float(value))
    yield requests
    yield refused
    yield from gauges.values()
    yield from announced.values()


def _watches_and_feed(facts: Facts) -> Iterator[GaugeMetricFamily]:
    per_kind = _gauge("syncd_watches", "Watches, by kind.", ["kind"])
    for kind, n in sorted(Counter(w.kind for w in facts.watches).items()):
        per_kind.add_metric([kind], float(n))
    yield per_kind
    last = _gauge(
        "syncd_watch_last_success_timestamp_seconds",
        "Last successful walk of a watch (epoch s).",
        ["watch", "kind"],
    )
    for w in facts.watches:
        if w.last_success_at is not None:
            last.add_metric([str(w.id), w.kind], w.last_success_at)
    yield last
    latest = _gauge("syncd_change_feed_last_id", "Id of the newest change recorded (grows with each change).")
    latest.add_metric([], float(facts.changes_latest_id))
    yield latest
    by_type = _gauge("syncd_change_feed_changes", "Changes kept in the feed, by type.", ["type"])
    for change_type, n in facts.changes_by_type.items():
        by_type.add_metric([change_type], float(n))
    yield by_type
    if facts.alerts_pending is not None:
        pending = _gauge("syncd_alerts_pending", "Watched alerting changes the alert pass has not reached.")
        pending.add_metric([], float(facts.alerts_pending))
        yield pending


class StoreCollector(Collector):
    """A ``prometheus_client`` collector reading the store and the budget of ``svc`` at each scrape.

    A store that cannot be read yields ``syncd_store_up 0`` (and is logged once per failing scrape),
    never a failed scrape.
    """

    def __init__(self, svc: Services) -> None:
        self.svc = svc

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        """The families of the module docstring, read now."""
        up = _gauge("syncd_store_up", "1 when the store could be read for this scrape.")
        try:
            facts = read_facts(self.svc)
        except SyncdError as exc:
            log.warning("event=metrics_store_unreadable reason=%s", exc.reason)
            facts = None
        except Exception:  # a bug must not fail the scrape: logged with its traceback, store_up 0
            log.exception("event=metrics_store_unreadable reason=internal_error")
            facts = None
        if facts is None:
            up.add_metric([], 0.0)
            yield up
            return
        up.add_metric([], 1.0)
        yield up
        yield from _entries(facts)
        yield from _budget(facts)
        yield from _watches_and_feed(facts)


def register(activity: Activity, svc: Services) -> None:
    """Add a :class:`StoreCollector` over ``svc`` to ``activity``'s registry."""
    activity.registry.register(StoreCollector(svc))


def render(activity: Activity, accept: str = "") -> tuple[bytes, str]:
    """The registry of ``activity`` and its ``Content-Type``, in the format the scraper's ``accept`` asks.

    The Prometheus text format unless the ``Accept`` header asks for OpenMetrics
    (``prometheus_client``'s own negotiation). Reads the store: run it off the event loop.
    """
    encoder, content_type = choose_encoder(accept)
    return encoder(activity.registry), content_type
