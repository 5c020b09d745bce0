"""One cheap request per upstream to tell a working base URL from a wrong one (issue 12 item 5).

The daemon at start and ``syncd cache stats`` call :func:`check_upstreams` (unless the setting
``check_upstreams_at_start`` is false). Each service is asked once, through the shared budget like any
request, and its answer must have the service's own shape. Each slice declares its probe beside its
client (:class:`~syncd.upstream.probe.Probe`, ``syncd/<slice>/client_probe.py``), handed down by the
composition root (:data:`syncd.registry.PROBES`); today's:

========  ==========================  ============  =================================================
service   request                     pool          expected answer
========  ==========================  ============  =================================================
crossref  ``GET /works?rows=0``       crossref_list JSON ``{"message-type": "work-list", ...}``
zenodo    ``GET /records?size=1``     zenodo_search JSON with ``hits``
doi       ``GET /ra/10.1000``         doi           a JSON list of objects
datacite  ``GET /dois?page[size]=1``  datacite      JSON with a ``data`` list and a ``meta`` object
========  ==========================  ============  =================================================

A pool that is offline (breaker open) or blocked by a 429 is not asked (``skipped``), nor is any
when the store is read-only (no budget can be taken). Each result is logged as one line
``event=upstream_check service=crossref ok=true status=200 ms=84`` (a failure at WARNING, with the
hint that the base URL may be wrong; a TLS certificate that could not be verified, or a proxy that
refused, is named as such with its fix instead). A client that cannot be built from the
``[network]`` settings (a CA bundle that holds no certificate, a proxy httpx cannot use, a SOCKS
proxy without the ``syncd[socks]`` extra) fails its check with reason ``invalid_config`` and the
setting named in the hint.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from syncd.budget.buckets import Budget
from syncd.errors import BudgetExhausted, InvalidInput, SyncdError, UpstreamError
from syncd.upstream.http import Deadline, UpstreamHTTP
from syncd.upstream.probe import Probe

__all__ = ["Probe", "UpstreamCheck", "check_upstreams"]

log = logging.getLogger("syncd.upstream")


@dataclass(frozen=True)
class UpstreamCheck:
    """The result of one check.

    ``ok`` is True (the service's own answer), False (failed: ``reason``, ``hint``) or None
    (``skipped``: ``offline``, ``blocked``, ``rate_limited``, ``store_read_only``, or the store's
    error reason when the budget could not be written). ``cause`` is ``certificate`` (the TLS
    certificate could not be verified) or ``proxy`` (the proxy refused) when that is what failed,
    with the hint naming the fix. ``status`` is the
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
    cause: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain dict (``cache stats --json``)."""
        return asdict(self)


NAMED_CAUSES = frozenset({"certificate", "proxy"})
"""Failures a check names as such (the TLS certificate not verified, the proxy refusing), with the
request's own hint (``SSL_CERT_FILE``, ``REQUESTS_CA_BUNDLE``, ``network.ca_bundle``; the proxy
settings), instead of "base_url may be wrong"."""


def _wrong_url_hint(probe: Probe, base_url: str) -> str:
    return f"{probe.setting} may be wrong ({base_url}), or the service is down"


def _check_one(probe: Probe, http: UpstreamHTTP, base_url: str, deadline_s: float) -> UpstreamCheck:
    state = http.budget.state(probe.pool)
    now = http.budget.clock()
    if state.offline(now):
        return UpstreamCheck(probe.service, base_url, None, skipped="offline")
    if state.blocked_for(now) > 0:
        return UpstreamCheck(probe.service, base_url, None, skipped="blocked")
    start = time.monotonic()
    try:
        resp = http.get(
            probe.pool,
            probe.path,
            deadline=Deadline(deadline_s),
            params=dict(probe.params),
            accept=(200, 404),
        )
    except BudgetExhausted:
        return UpstreamCheck(probe.service, base_url, None, skipped="rate_limited")
    except UpstreamError as exc:
        ms = round((time.monotonic() - start) * 1000, 1)
        status = exc.data.get("status")
        cause = exc.data.get("cause")
        named = cause in NAMED_CAUSES  # not the base URL's fault: say what failed, and its fix
        return UpstreamCheck(
            probe.service,
            base_url,
            False,
            status=status if isinstance(status, int) else None,
            ms=ms,
            reason=exc.reason,
            hint=f"{exc.message}. {exc.hint}" if named else _wrong_url_hint(probe, base_url),
            cause=str(cause) if named else None,
        )
    except InvalidInput as exc:  # the client cannot be built: a CA bundle or proxy setting (invalid_config)
        return UpstreamCheck(probe.service, base_url, False, reason=exc.reason, hint=exc.message)
    except SyncdError as exc:  # the store could not record the take (disk full, lock held)
        return UpstreamCheck(probe.service, base_url, None, skipped=exc.reason)
    ms = round((time.monotonic() - start) * 1000, 1)
    if resp.status == 200 and probe.own_shape(resp.json):
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
    probes: Sequence[Probe],
    *,
    read_only: bool = False,
) -> list[UpstreamCheck]:
    """Ask each service once (see the module docstring) and log one line per service.

    Args:
        clients: service name -> (its HTTP client, its configured base URL).
        budget: the shared budget (the clients' own).
        deadline_s: the most one check may take (seconds), budget wait included.
        probes: the services' probes, as the slices declare them (:data:`syncd.registry.PROBES`); a
            probe of a service ``clients`` does not hold is left out.
        read_only: the store is read-only: nothing is asked, every check is ``skipped``.

    Returns:
        One :class:`UpstreamCheck` per probed service, in ``probes`` order. Never raises for an upstream
        failure (it is the result).
    """
    results = []
    for probe in probes:
        if probe.service not in clients:
            continue
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
