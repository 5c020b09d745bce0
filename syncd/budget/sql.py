"""The SQL statements of the shared budget (:mod:`syncd.budget.buckets`), each built once.

Each is one compiled, cached statement, run inside the budget's write transactions (take, release)
or its reads.

Tables (migrations 0003 onwards): ``budget_pools`` (a row per pool: bucket, blocks, breaker, the
limits last announced; a declared pool's row is made by its first take, :func:`create_rows`),
``budget_leases`` (the in-flight slots: id, pool, expiry, pid, host) and
``budget_sends`` (one row per request sent: id = its lease's, pool, ``at`` = when it left, epoch s).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, bindparam, delete, select, update

from syncd.store.dialect import insert_many_ignore
from syncd.store.models import BudgetLease, BudgetPool, BudgetSend

__all__ = [
    "DELETE_LEASE",
    "DELETE_SEND",
    "GROUP_LEASES",
    "INSERT_LEASE",
    "INSERT_SEND",
    "IN_FLIGHT_SENDS",
    "LEASES",
    "POOLS",
    "ROWS",
    "ROWS_LOCKED",
    "ROW_LOCKED",
    "SENDS",
    "SENT_AT",
    "WINDOW",
    "create_rows",
]

POOLS = BudgetPool.__table__
LEASES = BudgetLease.__table__
SENDS = BudgetSend.__table__

ROWS = select(POOLS).where(POOLS.c.pool.in_(bindparam("members", expanding=True))).order_by(POOLS.c.pool)
ROWS_LOCKED = ROWS.with_for_update()
ROW_LOCKED = select(POOLS).where(POOLS.c.pool == bindparam("pool")).with_for_update()
GROUP_LEASES = select(LEASES.c.id, LEASES.c.pool, LEASES.c.expires_at, LEASES.c.pid, LEASES.c.host).where(
    LEASES.c.pool.in_(bindparam("members", expanding=True))
)
WINDOW = (
    select(SENDS.c.at)
    .where(
        SENDS.c.pool == bindparam("pool"),
        SENDS.c.at > bindparam("since"),
        SENDS.c.at <= bindparam("until"),
    )
    .order_by(SENDS.c.at.desc())
    .limit(bindparam("most"))
)
IN_FLIGHT_SENDS = select(SENDS.c.at).where(
    SENDS.c.id.in_(bindparam("ids", expanding=True)), SENDS.c.at <= bindparam("since")
)
SENT_AT = (
    update(SENDS)
    .where(SENDS.c.id == bindparam("lease_id"), SENDS.c.at < bindparam("sent_at"))
    .values(at=bindparam("sent_at"))
)
INSERT_LEASE = LEASES.insert()
INSERT_SEND = SENDS.insert()
DELETE_LEASE = delete(LEASES).where(LEASES.c.id == bindparam("lease_id"))
DELETE_SEND = delete(SENDS).where(SENDS.c.id == bindparam("lease_id"))


def create_rows(conn: Connection, pools: Sequence[str]) -> None:
    """Create the ``budget_pools`` rows of ``pools`` (declared pools the budget did not find), in ``conn``.

    ``INSERT ... ON CONFLICT DO NOTHING`` (:func:`~syncd.store.dialect.insert_many_ignore`), so takers
    racing to create the same row make one and none fails: on PostgreSQL the second insert waits for
    the first's commit, then does nothing; on SQLite ``BEGIN IMMEDIATE`` serializes them. A row is
    made as the migrations made theirs (0003, 0012): ``tokens = 0`` refilled from the epoch, so the
    first take finds the bucket full at the configured burst; no block, breaker closed, counters 0.
    """
    rows = [
        {
            "pool": p,
            "tokens": 0.0,
            "updated_at": 0.0,
            "blocked_until": 0.0,
            "failures": 0,
            "offline_until": 0.0,
        }
        for p in pools
    ]
    insert_many_ignore(conn, POOLS, rows)
