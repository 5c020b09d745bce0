"""One cheap request per upstream to tell a working base URL from a wrong one (issue 12 item 5).

The daemon at start and ``syncd cache stats`` call :func:`check_upstreams` (unless the setting
``check_upstreams_at_start`` is false). Each service is asked once, through the shared budget like any
request, and its answer must have the service's own shape:

========  ==========================  ============  =================================================
service   request                     pool          expected answer
========  ==========================  ============  =================================================
crossref  ``GET /works?rows=0``       crossref_list JSON ``{"message-type": "work-list", ...}``
zenodo    ``GET /records?size=1``     zenodo_search JSON with ``hits``
doi       ``GET /ra/10.1000``         doi           a JSON list of objects
========  ==========================  ============  =================================================

A pool that is offline (breaker open) or blocked by a 429 is not asked (``skipped``), nor is any
when the store is read-only (no budget can be taken). Each result is logged as one line
``event=upstream_check service=crossref ok=true status=200 ms=84`` (a failure at WARNING, with the
hint that the base URL may be wrong).
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from typing import Any

from syncd.budget import Budget
from syncd.errors import BudgetExhausted, SyncdError, UpstreamError
from syncd.upstream.http import Deadline, UpstreamHTTP

__all__ = ["CHECKS", "UpstreamCheck", "check_upstreams"]

log = logging.getLogger("syncd.upstream")


@dataclass(frozen=True)
class UpstreamCheck:
    """The result of one check.

    ``ok`` is True (the service's own answer), False (failed: ``reason``, ``hint``) or None
    (``skipped``: ``offline``, ``blocked``, ``rate_limited``, ``store_read_only``, or the store's
    error reason when the budget could not be written). ``status`` is the
    HTTP status when one came back, ``ms`` the time the request took (milliseconds).
    """

    service: str
    base_url: str
    ok: bool | None
    status: int | None = None
    ms: float | None = None
    reason: str | None = None
    hint: str | None = None
    skipped: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain dict (``cache stats --json``)."""
        return asdict(self)


@dataclass(frozen=True)
class _Probe:
    service: str
    setting: str
    pool: str
    path: str
    params: dict[str, str]


CHECKS = (
    _Probe("crossref", "crossref.base_url", "crossref_list", "/works", {"rows": "0"}),
    _Probe("zenodo", "zenodo.base_url", "zenodo_search", "/records", {"size": "1"}),
    _Probe("doi", "doi.base_url", "doi", "/ra/10.1000", {}),
)
"""The request of each service (see the module docstring)."""


def _own_shape(service: str, body: Any) -> bool:
    """True when a 200 body has ``service``'s own shape."""
    if service == "crossref":
        return isinstance(body, dict) and body.get("message-type") == "work-list"
    if service == "zenodo":
        return isinstance(body, dict) and isinstance(body.get("hits"), dict)
    return isinstance(body, list) and bool(body) and isinstance(body[0], dict)


def _wrong_url_hint(probe: _Probe, base_url: str) -> str:
    return f"{probe.setting} may be wrong ({base_url}), or the service is down"


def _check_one(probe: _Probe, http: UpstreamHTTP, base_url: str, deadline_s: float) -> UpstreamCheck:
    state = http.budget.state(probe.pool)
    now = http.budget.clock()
    if state.offline(now):
        return UpstreamCheck(probe.service, base_url, None, skipped="offline")
    if state.blocked_for(now) > 0:
        return UpstreamCheck(probe.service, base_url, None, skipped="blocked")
    start = time.monotonic()
    try:
        resp = http.get(
            probe.pool, probe.path, deadline=Deadline(deadline_s), params=probe.params, accept=(200, 404)
        )
    except BudgetExhausted:
        return UpstreamCheck(probe.service, base_url, None, skipped="rate_limited")
    except UpstreamError as exc:
        ms = round((time.monotonic() - start) * 1000, 1)
        status = exc.data.get("status")
        return UpstreamCheck(
            probe.service,
            base_url,
            False,
            status=status if isinstance(status, int) else None,
            ms=ms,
            reason=exc.reason,
            hint=_wrong_url_hint(probe, base_url),
        )
    except SyncdError as exc:  # the store could not record the take (disk full, lock held)
        return UpstreamCheck(probe.service, base_url, None, skipped=exc.reason)
    ms = round((time.monotonic() - start) * 1000, 1)
    if resp.status == 200 and _own_shape(probe.service, resp.json):
        return UpstreamCheck(probe.service, base_url, True, status=200, ms=ms)
    return UpstreamCheck(
        probe.service,
        base_url,
        False,
        status=resp.status,
        ms=ms,
        reason="unexpected_answer",
        hint=_wrong_url_hint(probe, base_url),
    )


def check_upstreams(
    clients: dict[str, tuple[UpstreamHTTP, str]],
    budget: Budget,
    deadline_s: float,
    *,
    read_only: bool = False,
) -> list[UpstreamCheck]:
    """Ask each service once (see the module docstring) and log one line per service.

    Args:
        clients: service name -> (its HTTP client, its configured base URL).
        budget: the shared budget (the clients' own).
        deadline_s: the most one check may take (seconds), budget wait included.
        read_only: the store is read-only: nothing is asked, every check is ``skipped``.

    Returns:
        One :class:`UpstreamCheck` per service, in :data:`CHECKS` order. Never raises for an upstream
        failure (it is the result).
    """
    results = []
    for probe in CHECKS:
        http, base_url = clients[probe.service]
        if read_only:
            result = UpstreamCheck(probe.service, base_url, None, skipped="store_read_only")
        else:
            result = _check_one(probe, http, base_url, deadline_s)
        results.append(result)
        if result.ok is False:
            log.warning(
                "event=upstream_check service=%s ok=false status=%s ms=%s reason=%s base_url=%s hint=%r",
                result.service,
                result.status,
                result.ms,
                result.reason,
                base_url,
                result.hint,
            )
        elif result.ok:
            log.info(
                "event=upstream_check service=%s ok=true status=%d ms=%s", result.service, 200, result.ms
            )
        else:
            log.info("event=upstream_check service=%s skipped=%s", result.service, result.skipped)
    return results
