"""The one exception family of syncd, mapped once to the contracts' ``reason`` codes.

Every failure a tool, the daemon or the CLI can meet is one of these. Each class carries the
contract ``reason`` it stands for (``error.data.reason`` in a tool result) and a ``data`` dict of
extra fields for that envelope (``retry_after_s``, ``agency``, ...)::

    SyncdError                      base; ``reason`` = "internal_error"
    ├── InvalidInput                bad tool/CLI input, refused before any request
    │                               (reason chosen per call: invalid_parameter, invalid_identifier,
    │                               invalid_cursor, ...)
    ├── NotFound                    upstream says the thing does not exist (doi_not_found, ...)
    ├── BudgetExhausted             the shared request budget has no token for this pool in time
    │                               (rate_limited; ``retry_after_s``)
    ├── StoreError                  the local SQLite store failed (store_unavailable)
    │   └── StoreUnreachable        the lab database (PostgreSQL) cannot be reached: nothing stored
    └── UpstreamError               an upstream call failed; nothing was written
        ├── UpstreamRateLimited     HTTP 429 (rate_limited; ``retry_after_s``)
        ├── UpstreamUnavailable     connection refused/reset, 5xx, HTML or empty body
        │   │                       (upstream_unavailable)
        │   └── UpstreamOffline     the pool's breaker is open: upstream skipped
        ├── UpstreamTimeout         no complete answer within the deadline (request_timeout)
        ├── MalformedResponse       2xx whose body is not the JSON shape expected
        │                           (malformed_response)
        └── UpstreamRejected        upstream refused the request as invalid, HTTP 400
                                    (invalid_parameter)

The tool layer (``syncd.tools.errors``) turns any of these into the MCP error envelope; a tool may
rename an upstream reason where its contract declares another (Zenodo's ``record_unavailable``).
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "BudgetExhausted",
    "InvalidInput",
    "MalformedResponse",
    "NotFound",
    "StoreError",
    "StoreUnreachable",
    "SyncdError",
    "UpstreamError",
    "UpstreamOffline",
    "UpstreamRateLimited",
    "UpstreamRejected",
    "UpstreamTimeout",
    "UpstreamUnavailable",
    "fill_hint",
    "seconds_text",
]


class SyncdError(Exception):
    """Base of every syncd error.

    Attributes:
        reason: the contract ``reason`` code (``error.data.reason``).
        data: extra JSON-serialisable fields for ``error.data`` (never secrets, never raw bodies).
        hint: one-line recovery hint for the caller.
    """

    default_reason: ClassVar[str] = "internal_error"
    default_hint: ClassVar[str] = (
        "This is a fault in syncd, not in the call: report it with the syncd logs (the same call is "
        "unlikely to succeed until it is fixed)."
    )

    def __init__(
        self,
        message: str,
        *,
        reason: str | None = None,
        hint: str | None = None,
        **data: Any,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.reason: str = reason or self.default_reason
        self.hint = hint or self.default_hint
        self.data: dict[str, Any] = {k: v for k, v in data.items() if v is not None}
        self.body: Any = None
        """The upstream error body, parsed (UpstreamRejected: Crossref's validation-failure JSON).

        For callers that map upstream rejections to declared reasons; never sent to clients as is.
        """

    @property
    def hint(self) -> str:
        """The recovery hint, with the wait of ``data["retry_after_s"]`` written in (:func:`fill_hint`)."""
        return fill_hint(self._hint, self.data)

    @hint.setter
    def hint(self, value: str) -> None:
        self._hint = value


WAIT_PLACEHOLDER = "{retry_after_s}"
"""Stands in a hint for the wait in seconds (``data["retry_after_s"]``), filled by :func:`fill_hint`."""


def seconds_text(value: float) -> str:
    """A wait as a message shows it: at most 3 decimals, no trailing zeros (``12.5``, ``3``)."""
    return f"{value:.3f}".rstrip("0").rstrip(".")


def fill_hint(hint: str, data: dict[str, Any]) -> str:
    """``hint`` with :data:`WAIT_PLACEHOLDER` replaced by the wait in ``data`` ("a few" when unknown)."""
    if WAIT_PLACEHOLDER not in hint:
        return hint
    wait = data.get("retry_after_s")
    text = (
        seconds_text(float(wait)) if isinstance(wait, int | float) and not isinstance(wait, bool) else "a few"
    )
    return hint.replace(WAIT_PLACEHOLDER, text)


class InvalidInput(SyncdError):
    """Input refused before any upstream request (reason given per call)."""

    default_reason = "invalid_parameter"
    default_hint = "Correct the input; it was refused before any request was made."


class NotFound(SyncdError):
    """Upstream (or the stored miss) says the identifier does not exist."""

    default_reason = "not_found"
    default_hint = "Check the identifier; it may never have existed or be held elsewhere."


class BudgetExhausted(SyncdError):
    """No request token for the pool within the call's deadline.

    ``data["retry_after_s"]`` holds the wait in seconds until a token is available.
    """

    default_reason = "rate_limited"
    default_hint = "The shared request budget is spent; retry after {retry_after_s} seconds."


class StoreError(SyncdError):
    """The local store could not be read or written."""

    default_reason = "store_unavailable"
    default_hint = (
        "Retry shortly (another process may hold the store's write lock); if it persists, check that "
        "the database file is readable and writable (syncd cache stats)."
    )


class StoreUnreachable(StoreError):
    """A write the lab database (PostgreSQL) could not take because it cannot be reached.

    Attributes:
        content: what was to be stored (an :class:`~syncd.store.repo.EntryContent` of what upstream
            answered), so the caller can still answer it, unstored; None for other writes.
    """

    default_hint = (
        "The lab database cannot be reached; answers come from upstream, not stored, until it is back "
        "(tried again every 30 s)."
    )

    def __init__(self, message: str, *, content: Any = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.content = content


class UpstreamError(SyncdError):
    """An upstream call failed. Nothing was written to the store."""

    default_reason = "upstream_unavailable"
    default_hint = "Upstream could not be used; retry later."


class UpstreamRateLimited(UpstreamError):
    """HTTP 429. ``data["retry_after_s"]`` is the wait that blocks the pool for every process."""

    default_reason = "rate_limited"
    default_hint = "Upstream is rate limiting; wait {retry_after_s} seconds before retrying."


class UpstreamUnavailable(UpstreamError):
    """Network failure, 5xx, an HTML page or an empty body where JSON was expected."""

    default_reason = "upstream_unavailable"
    default_hint = "Upstream is unreachable or failing; retry later."


class UpstreamOffline(UpstreamUnavailable):
    """The pool's circuit breaker is open after repeated failures; upstream was not called."""

    default_hint = (
        "Upstream is marked offline after repeated failures; retry after {retry_after_s} seconds, "
        "when one probe request may reopen it."
    )


class UpstreamTimeout(UpstreamError):
    """No complete response within the deadline (seconds), or HTTP 408/504."""

    default_reason = "request_timeout"
    default_hint = "Upstream did not answer in time; retry later."


class MalformedResponse(UpstreamError):
    """A 2xx response whose body is not valid JSON of the expected shape."""

    default_reason = "malformed_response"
    default_hint = "Upstream sent a body that is not the expected JSON; retrying will not help now."


class UpstreamRejected(UpstreamError):
    """Upstream refused the request as invalid (HTTP 400 validation failure)."""

    default_reason = "invalid_parameter"
    default_hint = "Upstream rejected the parameters; correct them."
