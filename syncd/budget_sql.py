"""The SQL statements of the shared budget (:mod:`syncd.budget`), each built once.

Each is one compiled, cached statement, run inside the budget's write transactions (take, release)
or its reads.

Tables (migrations 0003 onwards): ``budget_pools`` (a row per pool: bucket, blocks, breaker, the
limits last announced), ``budget_leases`` (the in-flight slots: id, pool, expiry, pid, host) and
``budget_sends`` (one row per request sent: id = its lease's, pool, ``at`` = when it left, epoch s).
"""

from __future__ import annotations

from sqlalchemy import bindparam, delete, select, update

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
