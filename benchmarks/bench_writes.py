"""Issue 15, target 4: SQLite write transactions per upstream request, and none on a warm hit.

Every statement any SQLAlchemy engine of the process sends is watched (``before_cursor_execute`` on
``Engine``): a write transaction is a ``BEGIN IMMEDIATE`` (how the store opens every write), or a
data-changing statement outside one (an implicit transaction of its own). For each transaction the
statements it ran are kept, so the table says how many touched the budget, how many stored the answer
and how many wrote nothing. Measured through a real in-memory MCP session: one cold
``crossref_get_work`` (the DOI not stored, the fake upstream answers), then the same call warm;
the same for ``zenodo_get_record``. Upstream requests are counted by the fake. ``Budget.state()`` is
timed while another connection holds the database's write lock.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
import time
from dataclasses import dataclass, field
from typing import Any

from benchmarks.harness import Context, Row, bench, corpus_dois, corpus_record_ids, ms

DML = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)
WRITES = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER)\b", re.IGNORECASE)


@dataclass
class Counter:
    """Write transactions seen on every engine of the process while :attr:`on`."""

    on: bool = False
    transactions: list[list[str]] = field(default_factory=list)
    open: bool = False

    def seen(self, _conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if not self.on:
            return
        head = statement.lstrip()[:20].upper()
        if head.startswith("BEGIN IMMEDIATE") or head.startswith("BEGIN EXCLUSIVE"):
            self.transactions.append([])
            self.open = True
        elif head.startswith(("COMMIT", "ROLLBACK", "END")):
            self.open = False
        elif head.startswith("BEGIN"):
            self.open = False  # a read transaction
        elif self.open:
            self.transactions[-1].append(statement)
        elif DML.match(statement):
            self.transactions.append([statement])  # autocommit write

    def reset(self) -> None:
        self.transactions.clear()
        self.open = False

    def summary(self) -> dict[str, int]:
        """Transactions seen: all, touching the budget, storing content (writes to any other table), empty."""
        t = self.transactions

        def writes(s: list[str]) -> list[str]:
            return [x for x in s if WRITES.match(x)]

        budget = sum(1 for s in t if any("budget" in x.lower() or "breaker" in x.lower() for x in s))
        content = sum(1 for s in t if any(not re.search(r"budget|breaker", x, re.I) for x in writes(s)))
        empty = sum(1 for s in t if not writes(s))
        return {"writes": len(t), "budget": budget, "entries": content, "empty": empty}


@bench(4, "15.4", "write transactions", figures=("SQLite write transactions per upstream request",))
def write_transactions(ctx: Context) -> list[Row]:
    from mcp import Client
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    from benchmarks.bench_warm import open_services
    from syncd.registry import mcp_specs
    from syncd.server.app import build_server

    svc, store, _url = open_services(ctx, "writes.db")
    fake = ctx.results["fake"]
    counter = Counter()
    event.listen(Engine, "before_cursor_execute", counter.seen)
    dois = corpus_dois()[:5]
    recids = corpus_record_ids()[:5]
    calls = [("crossref_get_work", {"doi": d}) for d in dois] + [
        ("zenodo_get_record", {"id": r}) for r in recids
    ]
    seen: dict[str, list[tuple[dict[str, int], dict[str, int], int]]] = {}

    async def session() -> None:
        async with Client(build_server(svc, *mcp_specs(svc.settings))) as client:
            await client.call_tool("crossref_get_work", {"doi": corpus_dois()[-1]})  # first-call set-up
            for tool, args in calls:
                counter.reset()
                before = fake.count()
                counter.on = True
                res = await client.call_tool(tool, args)
                counter.on = False
                requests = fake.count() - before
                cold = counter.summary()
                if res.is_error:
                    continue
                counter.reset()
                counter.on = True
                await client.call_tool(tool, args)
                counter.on = False
                seen.setdefault(tool, []).append((cold, counter.summary(), requests))

    try:
        asyncio.run(session())
    finally:
        event.remove(Engine, "before_cursor_execute", counter.seen)

    # state() while another connection holds the write lock
    db = str(store.engine.url.database)
    holder = sqlite3.connect(db, isolation_level=None, timeout=1)
    holder.execute("BEGIN IMMEDIATE")
    try:
        t = time.perf_counter()
        state = svc.budget.state("crossref_single")
        state_s = time.perf_counter() - t
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    svc.close()
    store.close()

    rows: list[Row] = []
    for tool, samples in seen.items():
        n = len(samples)
        worst = max(samples, key=lambda s: s[0]["writes"] / max(1, s[2]))
        cold, _warm, requests = worst
        bookkeeping = cold["writes"] - cold["entries"]
        per_request = bookkeeping / max(1, requests)
        rows.append(
            Row(
                "15.4",
                f"cold `{tool}` (not stored; the fake answers), worst of {n}: write transactions other than "
                f"storing the answer (of which touching the budget: {cold['budget']}; writing nothing: "
                f"{cold['empty']})",
                str(bookkeeping),
                comparison=f"upstream requests in the call: {requests}",
                ratio=f"{per_request:.1f} per request",
                target="≤ 2 per request (take; release + record)",
                met=per_request <= 2,
            )
        )
        rows.append(
            Row(
                "15.4",
                f"cold `{tool}`: all write transactions, storing the answer included "
                "(entries, validations, concept map)",
                str(cold["writes"]),
                comparison=f"upstream requests {requests}; storing the answer: {cold['entries']}",
                ratio=f"{cold['writes'] / max(1, requests):.1f} per request",
                target="(report)",
                met=None,
            )
        )
        warm_max = max(s[1]["writes"] for s in samples)
        rows.append(
            Row(
                "15.4",
                f"warm `{tool}` (the same {n} calls again): write transactions, most in one call",
                str(warm_max),
                comparison="",
                ratio="",
                target="0",
                met=warm_max == 0,
            )
        )
    rows.append(
        Row(
            "15.4",
            "`Budget.state()` while another connection holds the database's write lock (BEGIN IMMEDIATE)",
            ms(state_s),
            comparison=f"answered: tokens {state.tokens:g}, in flight {state.in_flight}",
            ratio="",
            target="answers without the write lock (< 100 ms)",
            met=state_s < 0.1,
        )
    )
    return rows
