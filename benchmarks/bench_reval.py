"""Item 5: local cost of revalidating one stored entry when upstream says "unchanged" (a 200 with the
same content, or a 304 to If-None-Match with ``fake.etags = True``), and upstream requests per 1,000
works with batch revalidation (``syncd.batch``)."""

from __future__ import annotations

import contextlib
import importlib.util
import math
import random
import time
from typing import Any

import httpx

from benchmarks.harness import (
    Context,
    NotMeasured,
    Row,
    bench,
    corpus_dois,
    corpus_record_ids,
    fake_upstream,
    median,
    ms,
    pct,
    settings_for,
)


class ReplayTransport(httpx.BaseTransport):
    """Asks the fake once per (URL, If-None-Match) and replays that answer from memory afterwards, so
    a timed revalidation costs syncd's own work only (no socket, no fake server thread)."""

    def __init__(self) -> None:
        self.real = httpx.HTTPTransport()
        self.memo: dict[tuple[str, str | None], tuple[int, list, bytes]] = {}
        self.live = True

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        key = (str(request.url), request.headers.get("if-none-match"))
        hit = self.memo.get(key)
        if hit is None or self.live:
            resp = self.real.handle_request(request)
            resp.read()
            hit = (
                resp.status_code,
                [
                    (k, v)
                    for k, v in resp.headers.multi_items()
                    if k.lower() not in ("content-encoding", "transfer-encoding")
                ],
                resp.content,
            )
            self.memo[key] = hit
        status, headers, body = hit
        return httpx.Response(status, headers=headers, content=body, request=request)


def _fill(cache: Any) -> None:
    from syncd.lookups.crossref import get_work
    from syncd.lookups.zenodo import get_record
    from syncd.normalize.doi import parse_doi
    from syncd.normalize.zenodo_id import parse_record_ref

    for d in corpus_dois():  # misses are fine: only ok entries are measured
        with contextlib.suppress(Exception):
            get_work(cache, parse_doi(d))
    for r in corpus_record_ids():
        with contextlib.suppress(Exception):
            get_record(cache, parse_record_ref(r))


@bench(5, "5", "revalidation", figures=("revalidation cost per entry",))
def revalidation(ctx: Context) -> list[Row]:
    from syncd.cache import Cache
    from syncd.store.repo import Store
    from syncd.upstream.http import Deadline

    fake = ctx.results.get("fake") or ctx.results.setdefault("fake", fake_upstream())
    rounds = 3 if ctx.quick else 10
    url = f"sqlite:///{ctx.workdir / 'reval.db'}"
    store = Store.open(url)
    replay = ReplayTransport()
    local = Cache(settings_for(fake, url), store, transport=replay)
    wire = Cache(settings_for(fake, url), store)
    fake.etags = False
    _fill(local)

    def ok_entries(kind: str) -> list[int]:
        with store.read() as conn:
            return [
                r[0]
                for r in conn.exec_driver_sql("SELECT id FROM entries WHERE kind=? AND status='ok'", (kind,))
            ]

    def measure(cache: Cache, kind: str, n_rounds: int) -> tuple[list[float], dict[str, int]]:
        samples, outcomes = [], {}
        for _ in range(n_rounds):
            for i in ok_entries(kind):
                e = store.get_by_id(i)
                t = time.perf_counter()
                outcome = cache.revalidate(e, Deadline(10))
                samples.append(time.perf_counter() - t)
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
        return samples, outcomes

    rows: list[Row] = []
    for kind in ("crossref_work", "zenodo_record"):
        for etags in (False, True):
            fake.etags = etags
            replay.live = True
            measure(local, kind, 1)  # stores the fake's validators; records every answer
            measure(local, kind, 1)
            replay.live = False
            fake.reset_log()
            e2e, _ = measure(wire, kind, 1)
            conditional = sum(1 for r in fake.requests if r.headers.get("if-none-match"))
            statuses = {s for (u, inm), (s, _, _) in replay.memo.items() if (inm is not None) == etags}
            samples, outcomes = measure(local, kind, rounds)
            label = "304 Not Modified (If-None-Match)" if etags else "200, same content"
            rows.append(
                Row(
                    "5",
                    f"{kind}: local cost per revalidation, upstream answers {label}: median / p95 "
                    f"(answers replayed in-process; through the loopback fake e2e {ms(median(e2e))}, "
                    f"{conditional} conditional requests)",
                    f"{ms(median(samples))} / {ms(pct(samples, 95))}",
                    note=f"outcomes {outcomes}, upstream statuses {sorted(statuses)}",
                )
            )
    fake.etags = False
    local.close()
    wire.close()
    store.close()
    return rows


@bench(5.5, "5", "batch revalidation", figures=("upstream requests per 1,000 works with batch revalidation",))
def batch_revalidation(ctx: Context) -> list[Row]:
    if importlib.util.find_spec("syncd.batch") is None:
        raise NotMeasured("batch revalidation (syncd/batch.py) is not built yet")
    batch = importlib.import_module("syncd.batch")
    if not hasattr(batch, "revalidate_crossref"):
        raise NotMeasured("syncd.batch has no revalidate_crossref(cache, entries) yet")
    from benchmarks.batchwrite import put_many
    from benchmarks.corpusgen import make_work, pools
    from syncd.cache import Cache
    from syncd.lookups.crossref import work_content
    from syncd.store.repo import Store

    fake = ctx.results.get("fake") or ctx.results.setdefault("fake", fake_upstream())
    n = 1000
    group = getattr(batch, "GROUP", 50)
    p = pools()
    works = [make_work(900_000_000 + i, seed=3, p=p) for i in range(n)]
    rows: list[Row] = []
    for changed_share in (0.0, 0.05):
        url = f"sqlite:///{ctx.workdir / f'batch-{changed_share}.db'}"
        store = Store.open(url)
        put_many(store, [work_content(w["DOI"].lower(), w, None) for w in works])
        cache = Cache(settings_for(fake, url), store)
        entries = [store.get("crossref_work", w["DOI"].lower()) for w in works]
        rng = random.Random(1)
        moved = {w["DOI"].lower() for w in works if rng.random() < changed_share}
        fake.clear_overrides()
        for i in range(0, n, group):
            chunk = entries[i : i + group]
            items = []
            for e in chunk:
                stamp = e.upstream_version if e.key not in moved else "2099-01-01T00:00:00Z"
                items.append({"DOI": e.doi or e.key, "indexed": {"date-time": stamp}})
            q = httpx.QueryParams(batch.batch_params([e.doi or e.key for e in chunk]))
            fake.set_body(
                "crossref",
                f"/works?{q}",
                {
                    "status": "ok",
                    "message-type": "work-list",
                    "message": {"items": items, "total-results": len(items)},
                },
            )
        for w in works:
            if w["DOI"].lower() in moved:
                fake.set_body(
                    "crossref", f"/works/{w['DOI']}", {"status": "ok", "message-type": "work", "message": w}
                )
        fake.reset_log()
        t = time.perf_counter()
        report = batch.revalidate_crossref(cache, entries)
        el = time.perf_counter() - t
        sent = fake.count(service="crossref")
        rows.append(
            Row(
                "5",
                f"batch revalidation of {n:,} stored works, {changed_share:.0%} with a moved "
                "`indexed` stamp: upstream requests per 1,000 works (one-by-one: 1,000; "
                f"{el / n * 1000:.2f} ms local+loopback per work)",
                f"{sent * 1000 / n:,.0f}",
                f"ceil(1000/{group}) + changed = {math.ceil(n / group) + len(moved)}",
                sent <= math.ceil(n / group) + len(moved),
                note=f"report: checked {report.checked}, unchanged {report.unchanged}, "
                f"changed {report.changed}, "
                f"failed {report.failed}, stopped {report.stopped}",
            )
        )
        fake.clear_overrides()
        cache.close()
        store.close()
    return rows
