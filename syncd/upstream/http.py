"""One budgeted, bounded HTTP GET: budget token -> request -> classification -> bounded retries.

Every upstream request of syncd goes through :meth:`UpstreamHTTP.get`. Each attempt takes one lease
of the shared budget (a token and an in-flight slot: one write transaction), sends the request with a
timeout cut to the call's deadline, and releases the lease once the response is read and its
connection is back or closed, recording what upstream did in the same write (answered, connection
failure or timeout for the breaker, a 429's block, the limits its rate-limit headers announce,
:mod:`syncd.upstream.limits`): two write transactions per attempt. Every failure becomes a typed
:mod:`syncd.errors` exception, whatever httpx raised (:meth:`UpstreamHTTP._exchange`: a timeout is
``request_timeout``; a body that cannot be decoded ``malformed_response``; a redirect loop, a TLS
certificate that cannot be verified, a proxy that refuses, any other httpx error
``upstream_unavailable``, each with its own message); transient failures (connection errors, 5xx,
408/504, 429 with a wait that fits) are retried with exponential backoff that honours
``Retry-After``, through tenacity. A 429 blocks the pool for every process, for at most
``budget.max_block_s``; an HTTP-date ``Retry-After`` is measured against the response's own ``Date``
(the server's clock). Proxies and CA certificates follow ``[network]`` and the environment
(:mod:`syncd.upstream.network`).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from syncd import __version__
from syncd.budget.buckets import Announcement, Budget, Lease, Outcome
from syncd.errors import (
    BudgetExhausted,
    InvalidInput,
    MalformedResponse,
    StoreError,
    UpstreamError,
    UpstreamOffline,
    UpstreamRateLimited,
    UpstreamRejected,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from syncd.upstream.deadline import Deadline, call_deadline, current_deadline
from syncd.upstream.limits import parse_retry_after, read_announcement
from syncd.upstream.network import (
    CERTIFICATE_HINT,
    PROXY_HINT,
    certificate_failure,
    masked,
    proxy_for,
    proxy_origin,
    socks_check,
    ssl_verify,
)
from syncd.upstream.valid_text import has_escaped_surrogate, valid_unicode

if TYPE_CHECKING:
    import httpx
    from tenacity import RetryCallState, Retrying

    from syncd.config import NetworkSettings

__all__ = [
    "DEFAULT_RETRY_AFTER_S",
    "Deadline",
    "Response",
    "UpstreamHTTP",
    "call_deadline",
    "current_deadline",
    "parse_retry_after",
]

log = logging.getLogger("syncd.upstream")

DEFAULT_RETRY_AFTER_S = 5.0
"""Seconds a pool is blocked after a 429 that names no wait (Crossref sends no Retry-After)."""
MAX_URL_BYTES = 8192
"""Longest request URL sent upstream (bytes); longer requests are refused before sending."""
MAX_ATTEMPTS = 3
MAX_REDIRECTS = 5
"""Most redirects followed in one request (a Zenodo concept record needs one); more is a redirect loop.
Each hop is a request upstream the budget did not pay for, so the bound is low."""
NO_RETRY_CAUSES = frozenset({"redirect_loop", "certificate", "proxy", "unsupported_url"})
"""``data["cause"]`` of failures a retry within the same call cannot change."""


@dataclass(frozen=True)
class Response:
    """An upstream answer whose status was accepted by the caller.

    ``json`` is the parsed body (None for a 304 or a status whose body is not read), ``text`` the
    body as received (decoded), ``content`` its raw bytes (cut at ``max_bytes`` when the caller set
    one), ``headers`` the response headers (lowercased names), ``url`` the final URL after redirects.
    """

    status: int
    json: Any
    text: str
    headers: Mapping[str, str]
    url: str
    content: bytes = b""


def _json_or_none(body: bytes) -> Any:
    """The body parsed as JSON, or None (kept on the exception for callers, never sent to clients)."""
    try:
        return json.loads(body) if body.strip() else None
    except (ValueError, UnicodeDecodeError):
        return None


def _looks_like_html(body: bytes, content_type: str) -> bool:
    head = body[:512].lstrip().lower()
    return "html" in content_type or head.startswith((b"<!doctype", b"<html", b"<"))


class UpstreamHTTP:
    """Budgeted GETs against one upstream service.

    Args:
        name: the service name used in logs and errors (``crossref``, ``zenodo``, ``doi``).
        base_url: the service base URL (e.g. ``https://api.crossref.org``).
        budget: the shared budget.
        headers: headers sent with every request (User-Agent, Authorization).
        transport: an httpx transport (tests may inject one); default: the network, through the proxy
            and with the CA certificates ``network`` names (:func:`~syncd.upstream.network.client_options`).
        network: proxy and certificate settings (default: the environment's, ``[network]`` defaults).
        rate_window_s: the interval (seconds) of an announced limit sent without one (Crossref 1 s,
            Zenodo's per-minute window 60 s).
        expected_api_pool: the ``x-api-pool`` prefix this client should be served from (``polite``
            when Crossref's ``mailto`` is set); another one is logged once as a warning.

    Raises:
        InvalidInput: the proxy cannot be used (reason ``invalid_config``; the CA certificates are read
            with the first request, :attr:`client`).
    """

    def __init__(
        self,
        name: str,
        base_url: str,
        budget: Budget,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        *,
        network: NetworkSettings | None = None,
        rate_window_s: float = 1.0,
        expected_api_pool: str | None = None,
    ) -> None:
        self.name = name
        self.budget = budget
        self.rate_window_s = rate_window_s
        self.expected_api_pool = expected_api_pool
        self._unrecorded: set[str] = set()
        self._said: dict[str, tuple[Any, ...]] = {}
        self._pool_warned = False
        self._base_url = base_url.rstrip("/")
        self._headers = {"User-Agent": f"syncd/{__version__}", **(headers or {})}
        self._transport = transport
        self._network = network
        self.proxy: str | None = proxy_for(network, base_url) if transport is None else None
        self._proxy_origin = proxy_origin(network, base_url) if self.proxy else ""
        self._client: httpx.Client | None = None
        self._client_lock = threading.Lock()

    @property
    def client(self) -> httpx.Client:
        """The connection pool, made on first use (through :attr:`proxy`, with ``network``'s CAs).

        Making it loads the CA bundle (~0.1 s of CPU per upstream), which a command or a server start
        that sends this upstream no request never pays.

        Raises:
            InvalidInput: the CA certificates cannot be used, or the proxy is a SOCKS proxy and the
                ``syncd[socks]`` extra is not installed (reason ``invalid_config``).
        """
        import httpx  # loaded by the first request (syncd.lazy.LAZY): a store-only command never pays it

        with self._client_lock:
            if self._client is None:
                socks_check(self.proxy, self._proxy_origin)
                transport = self._transport or httpx.HTTPTransport(
                    retries=0, proxy=self.proxy, verify=ssl_verify(self._network), trust_env=False
                )
                self._client = httpx.Client(
                    base_url=self._base_url,
                    headers=self._headers,
                    transport=transport,
                    follow_redirects=True,
                    max_redirects=MAX_REDIRECTS,
                    timeout=httpx.Timeout(10.0),
                )
            return self._client

    def close(self) -> None:
        """Close the connection pool (if one was made)."""
        with self._client_lock:
            if self._client is not None:
                self._client.close()

    def _check_url(self, path: str, params: Mapping[str, str] | None) -> None:
        """Refuse a request whose URL would exceed :data:`MAX_URL_BYTES` (or that httpx cannot build).

        Raises:
            InvalidInput: reason ``invalid_parameter``, before any budget token or request.
        """
        import httpx

        try:
            url_bytes = len(str(self.client.build_request("GET", path, params=params).url).encode())
        except httpx.InvalidURL as exc:  # e.g. one component alone past httpx's own limit (64 KiB)
            url_bytes = len(path.encode()) + sum(len(str(v).encode()) for v in (params or {}).values())
            if url_bytes <= MAX_URL_BYTES:
                raise InvalidInput(
                    f"{self.name}: the request URL cannot be built: {exc}", reason="invalid_parameter"
                ) from None
        if url_bytes > MAX_URL_BYTES:
            raise InvalidInput(
                f"{self.name}: the request URL would be {url_bytes} bytes; at most {MAX_URL_BYTES} are sent",
                reason="invalid_parameter",
                hint="Shorten the query, filters or cursor.",
            )

    def get(
        self,
        pool: str,
        path: str,
        *,
        deadline: Deadline,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        accept: tuple[int, ...] = (200,),
        parse_json: tuple[int, ...] = (200,),
        max_bytes: int | None = None,
        follow: bool = True,
    ) -> Response:
        """GET ``path`` within ``deadline`` through the budget of ``pool``.

        Args:
            pool: budget pool name.
            path: path under the base URL, already percent-encoded.
            deadline: the call's deadline; no attempt starts or waits past it.
            params: query parameters (encoded by httpx).
            headers: extra request headers (``If-None-Match``, ``Accept``...).
            accept: statuses returned to the caller as outcomes (e.g. 404, 410, 304).
            parse_json: accepted statuses whose body must be JSON.
            max_bytes: stop reading the body after this many bytes (file previews); None reads it all.
            follow: follow redirects; False answers a 3xx as is (in ``accept``; ``Location`` in headers).

        Raises:
            BudgetExhausted: no token before the deadline (reason ``store_unavailable`` when the budget
                could not be written in time: the stored copy is then answered stale).
            UpstreamOffline: the pool's breaker is open.
            UpstreamRateLimited: 429 (the pool is blocked for every process).
            UpstreamTimeout: no complete answer in time, or 408/504.
            UpstreamUnavailable: connection failure (``data["cause"]``: ``certificate`` when the TLS
                certificate could not be verified, ``proxy`` when the proxy refused, ``redirect_loop``
                past :data:`MAX_REDIRECTS`), 5xx, HTML or empty body, any other httpx failure.
            MalformedResponse: a body that is not valid JSON, or cannot be decoded (a wrong
                ``Content-Encoding``).
            UpstreamRejected: HTTP 400 or another status not in ``accept``.
            InvalidInput: reason ``invalid_parameter``, the URL would exceed :data:`MAX_URL_BYTES` or
                cannot be built (refused before any budget or request).
        """
        self._check_url(path, params)

        def attempt() -> Response:
            try:
                lease = self.budget.acquire(pool, max_wait_s=deadline.remaining())
            except StoreError as exc:  # the budget's row could not be written in time: no token
                raise BudgetExhausted(
                    f"{self.name}: no request token: {exc.message}",
                    reason="store_unavailable",
                    pool=pool,
                    service=self.budget.pools.service(pool),
                ) from exc
            outcome, block_s, sent = Outcome.NOT_SENT, 0.0, False
            announced: Announcement | None = None
            sent_at: float | None = None
            try:
                if deadline.expired():
                    raise UpstreamTimeout(f"{self.name}: deadline reached before the request", deadline=True)
                sent, sent_at = True, self.budget.clock()  # the send is dated by when it left
                status, hdrs, body, url = self._exchange(path, deadline, params, headers, max_bytes, follow)
                outcome = Outcome.ANSWERED
                announced = self._announced(pool, hdrs)
                if status == 429:
                    block_s = self._block_for(pool, hdrs)
            except UpstreamTimeout:
                outcome = Outcome.TIMED_OUT if sent else Outcome.NOT_SENT
                raise
            except (UpstreamUnavailable, MalformedResponse):
                outcome = Outcome.FAILED
                raise
            finally:  # the response is read and its connection back in the pool or closed
                self._release(lease, outcome, block_s, announced, sent_at)
            return self._classify(pool, status, hdrs, body, url, accept, parse_json, block_s)

        return self._retrying(deadline)(attempt)

    def _retrying(self, deadline: Deadline) -> Retrying:
        """The retry loop (tenacity) of one :meth:`get` within ``deadline`` (tenacity loaded on first use)."""
        from tenacity import Retrying, retry_if_exception, stop_after_attempt

        return Retrying(
            stop=stop_after_attempt(MAX_ATTEMPTS),
            retry=retry_if_exception(lambda e: self._retryable(e, deadline)),
            wait=lambda state: min(self._wait(state), max(0.0, deadline.remaining() - 0.05)),
            sleep=self.budget.sleep,  # the budget's wait (time.sleep unless injected)
            reraise=True,
        )

    def _announced(self, pool: str, hdrs: Mapping[str, str]) -> Announcement | None:
        """The limits an answer's headers announce (:func:`~syncd.upstream.limits.read_announcement`).

        A change from what this process last saw for ``pool`` is logged (``event=limits_announced``);
        an ``x-api-pool`` outside :attr:`expected_api_pool` is warned about once per process.
        """
        said = read_announcement(hdrs, default_interval_s=self.rate_window_s, now=self.budget.clock())
        if said is None:
            return None
        key = (said.limit, said.interval_s, said.in_flight, said.api_pool)
        if self._said.get(pool) != key:
            self._said[pool] = key
            log.info(
                "event=limits_announced service=%s pool=%s limit=%s interval_s=%s in_flight=%s api_pool=%s",
                self.name,
                pool,
                said.limit if said.limit is not None else "-",
                f"{said.interval_s:g}" if said.interval_s is not None else "-",
                said.in_flight if said.in_flight is not None else "-",
                said.api_pool or "-",
            )
        expected = self.expected_api_pool
        if expected and said.api_pool and not said.api_pool.startswith(expected) and not self._pool_warned:
            self._pool_warned = True
            log.warning(
                "event=api_pool service=%s expected=%s got=%s hint=%r",
                self.name,
                expected,
                said.api_pool,
                f"{self.name} serves these requests from its {said.api_pool} pool (lower limits); "
                "check that crossref.mailto is a real address",
            )
        return said

    def _release(
        self,
        lease: Lease,
        outcome: Outcome,
        block_s: float,
        announced: Announcement | None = None,
        sent_at: float | None = None,
    ) -> None:
        """Release ``lease`` with ``outcome``; a store that cannot be written loses the bookkeeping only.

        ``sent_at``: when the request left (epoch s; None when it was not sent). The answer already
        read is never lost to it: the lease then expires at its deadline plus margin, and one warning
        is logged per cause (not per call).
        """
        try:
            self.budget.release(lease, outcome, block_s=block_s, announced=announced, sent_at=sent_at)
        except StoreError as exc:
            cause = ": ".join(str(exc).split(": ")[:2])  # e.g. "store write failed: OperationalError"
            if cause not in self._unrecorded:
                self._unrecorded.add(cause)
                log.warning(
                    "event=budget_not_recorded service=%s pool=%s outcome=%s cause=%r",
                    self.name,
                    lease.pool,
                    outcome.value,
                    cause,
                )

    @staticmethod
    def _retryable(exc: BaseException, deadline: Deadline) -> bool:
        if isinstance(exc, UpstreamOffline) or not isinstance(exc, UpstreamError):
            return False
        if isinstance(exc, MalformedResponse | UpstreamRejected):
            return False
        if isinstance(exc, UpstreamTimeout) and exc.data.get("deadline"):
            return False
        if exc.data.get("cause") in NO_RETRY_CAUSES:
            return False
        if 400 <= int(exc.data.get("status", 0) or 0) < 500:
            return False  # an unexpected 4xx answer will not change on retry
        wait = float(exc.data.get("retry_after_s", 0.0) or 0.0)
        return deadline.remaining() > max(wait, 0.05)

    @staticmethod
    def _wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        retry_after = float(getattr(exc, "data", {}).get("retry_after_s", 0.0) or 0.0)
        backoff = min(4.0, 0.25 * 2 ** (state.attempt_number - 1))
        return max(retry_after, backoff)

    def _exchange(
        self,
        path: str,
        deadline: Deadline,
        params: Mapping[str, str] | None,
        headers: Mapping[str, str] | None,
        max_bytes: int | None,
        follow_redirects: bool = True,
    ) -> tuple[int, dict[str, str], bytes, str]:
        """Send the GET and read the whole answer (status, lowercased headers, body, final URL).

        Returns only once the response is closed (its connection back in the pool or closed).

        Raises:
            UpstreamTimeout: no complete answer in time.
            MalformedResponse: the body cannot be decoded (reason ``malformed_response``).
            UpstreamUnavailable: the connection failed or broke, or any other httpx failure
                (:meth:`_failure`).
        """
        import httpx

        remaining = max(deadline.remaining(), 0.001)
        timeout = httpx.Timeout(remaining)
        started = time.monotonic()
        answered: httpx.Response | None = None
        try:
            with self.client.stream(
                "GET",
                path,
                params=params,
                headers=headers,
                timeout=timeout,
                follow_redirects=follow_redirects,
            ) as resp:
                answered = resp
                body = self._read_body(resp, deadline, max_bytes)
        except httpx.TimeoutException as exc:
            raise UpstreamTimeout(
                f"{self.name}: no answer within {remaining:.1f} s", deadline=deadline.expired()
            ) from exc
        except (httpx.HTTPError, httpx.StreamError, httpx.InvalidURL, httpx.CookieConflict) as exc:
            raise self._failure(exc, answered) from exc  # every exception httpx declares
        hdrs = {k.lower(): v for k, v in resp.headers.items()}
        log.debug(
            "event=upstream_get service=%s status=%s path=%s elapsed_s=%.3f",
            self.name,
            resp.status_code,
            path,
            time.monotonic() - started,
        )
        return resp.status_code, hdrs, body, str(resp.url)

    def _failure(self, exc: Exception, answered: httpx.Response | None) -> UpstreamError:
        """The declared error of an httpx failure (any httpx exception; see :meth:`get`'s Raises)."""
        import httpx

        kind = exc.__class__.__name__
        if isinstance(exc, httpx.DecodingError):
            encoding = answered.headers.get("content-encoding", "-") if answered is not None else "-"
            return MalformedResponse(
                f"{self.name}: the answer's body cannot be decoded (Content-Encoding: {encoding[:40]!r})",
                cause="decoding",
            )
        if isinstance(exc, httpx.TooManyRedirects):
            return UpstreamUnavailable(
                f"{self.name}: more than {MAX_REDIRECTS} redirects (a redirect loop)",
                hint="Upstream redirects in a loop; check the base URL, or retry later.",
                cause="redirect_loop",
            )
        if isinstance(exc, httpx.ProxyError):
            return UpstreamUnavailable(
                f"{self.name}: the proxy {masked(self.proxy)} failed the request ({kind}: {str(exc)[:120]})",
                hint=PROXY_HINT,
                cause="proxy",
            )
        if isinstance(exc, httpx.ConnectError):
            detail = certificate_failure(exc)
            if detail is not None:
                host = self.client.base_url.host
                return UpstreamUnavailable(
                    f"{self.name}: the TLS certificate of {host} could not be verified ({detail[:120]})",
                    hint=CERTIFICATE_HINT,
                    cause="certificate",
                )
        if isinstance(exc, httpx.UnsupportedProtocol):
            return UpstreamUnavailable(
                f"{self.name}: the URL scheme is not supported ({str(exc)[:120]})",
                hint="Check the service's base_url setting (http:// or https://).",
                cause="unsupported_url",
            )
        via = f" via the proxy {masked(self.proxy)}" if self.proxy else ""
        if isinstance(exc, httpx.TransportError | httpx.StreamError):
            return UpstreamUnavailable(f"{self.name}: connection failed{via} ({kind})")
        return UpstreamUnavailable(f"{self.name}: HTTP failure{via} ({kind})")

    def _block_for(self, pool: str, hdrs: Mapping[str, str]) -> float:
        """Seconds a 429 blocks ``pool``: its ``Retry-After`` (default 5 s) cut to ``max_block_s``; logged."""
        raw, date = hdrs.get("retry-after"), hdrs.get("date")
        asked = parse_retry_after(raw, date=date)
        wait = DEFAULT_RETRY_AFTER_S if asked is None else asked
        applied = min(wait, self.budget.settings.budget.max_block_s)
        log.warning(
            "event=rate_limited service=%s pool=%s retry_after=%r date=%r wait_s=%.1f capped=%s",
            self.name,
            pool,
            raw,
            date,
            applied,
            "yes" if applied < wait else "no",
        )
        return applied

    def _classify(
        self,
        pool: str,
        status: int,
        hdrs: dict[str, str],
        body: bytes,
        url: str,
        accept: tuple[int, ...],
        parse_json: tuple[int, ...],
        block_s: float,
    ) -> Response:
        """Turn an answer into a :class:`Response` or the typed error its status and body mean."""
        ctype = hdrs.get("content-type", "").lower()
        if status == 429:
            raise UpstreamRateLimited(
                f"{self.name}: rate limited (HTTP 429)",
                retry_after_s=round(block_s, 3),
                pool=pool,
                service=self.budget.pools.service(pool),
            )
        if status in (408, 504):
            raise UpstreamTimeout(f"{self.name}: upstream timed out (HTTP {status})")
        if status >= 500:
            raise UpstreamUnavailable(f"{self.name}: upstream error (HTTP {status})", status=status)
        if status not in accept:
            if status == 400:
                rejected = UpstreamRejected(f"{self.name}: request rejected (HTTP 400)", status=status)
                rejected.body = _json_or_none(body)
                raise rejected
            unexpected = UpstreamUnavailable(f"{self.name}: unexpected HTTP {status}", status=status)
            unexpected.body = _json_or_none(body)
            raise unexpected

        text = body.decode("utf-8", errors="replace")
        parsed: Any = None
        if status in parse_json:
            if not body.strip():
                raise UpstreamUnavailable(f"{self.name}: empty body (HTTP {status})")
            if _looks_like_html(body, ctype):
                raise UpstreamUnavailable(f"{self.name}: an HTML page instead of JSON (HTTP {status})")
            try:
                parsed = json.loads(body)
            except (ValueError, UnicodeDecodeError) as exc:
                raise MalformedResponse(f"{self.name}: body is not valid JSON (HTTP {status})") from exc
            if has_escaped_surrogate(body):
                parsed, repaired = valid_unicode(parsed)
                if repaired:  # store what was parsed, repaired, so every later read is valid text too
                    log.warning("event=invalid_text pool=%s url=%s repaired=%d", pool, url, repaired)
                    text = json.dumps(parsed, ensure_ascii=False)
        return Response(status=status, json=parsed, text=text, headers=hdrs, url=url, content=body)

    @staticmethod
    def _read_body(
        resp: httpx.Response, deadline: Deadline, max_bytes: int | None = None, limit: int = 64 * 1024 * 1024
    ) -> bytes:
        """Read the body within ``deadline``; stop quietly at ``max_bytes``, fail past ``limit`` bytes."""
        import httpx

        chunks: list[bytes] = []
        size = 0
        for chunk in resp.iter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if max_bytes is not None and size >= max_bytes:
                return b"".join(chunks)[:max_bytes]
            if size > limit:
                raise httpx.RemoteProtocolError(f"body larger than {limit} bytes")
            if deadline.expired():
                raise httpx.ReadTimeout("deadline reached while reading the body")
        return b"".join(chunks)
