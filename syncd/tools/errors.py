"""The one place where syncd exceptions become the contracts' MCP error results.

A failed call is a ``CallToolResult`` with ``is_error=True`` whose structured content is
``{"error": {"code", "message", "data": {"reason", "recovery": {"hint"}, "retryable", ...}}}`` and
whose text is the message plus a ``Recovery:`` line. Codes follow the anchors' framework:
NotFound -32001, ServiceUnavailable -32000, RateLimited -32003, Timeout -32004,
ValidationError -32007, SerializationError -32070, InternalError -32603.

Arguments that violate a tool's input schema are a tool execution error too (SEP-1303, final in
protocol 2025-11-25): ``isError: true`` with ``data.reason = "invalid_arguments"``, ``data.fields`` (the
arguments refused) and code -32602 inside the envelope, so the client hands the message to the model,
which can correct the call. :func:`invalid_arguments` builds the exception; a JSON-RPC -32602 error
is kept for protocol-level problems (an unknown tool, resource or prompt; a hostile stdio frame).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from mcp.types import INVALID_PARAMS, CallToolResult, TextContent
from pydantic import ValidationError

from syncd.contracts.common import ErrorData, ErrorInfo, Recovery
from syncd.errors import (
    BudgetExhausted,
    InvalidInput,
    MalformedResponse,
    NotFound,
    StoreError,
    SyncdError,
    UpstreamError,
    UpstreamRateLimited,
    UpstreamRejected,
    UpstreamTimeout,
    seconds_text,
)
from syncd.store.repo import write_cause

__all__ = [
    "CODES",
    "STORE_CAUSES",
    "client_message",
    "error_result",
    "invalid_arguments",
    "public_names",
    "retryable",
    "to_error_info",
]

log = logging.getLogger("syncd.tools")

CODES: dict[str, int] = {
    "doi_not_found": -32001,
    "doi_unconfirmed": -32000,
    "not_found": -32001,
    "not_on_zenodo": -32001,
    "upstream_unavailable": -32000,
    "record_unavailable": -32000,
    "store_unavailable": -32000,
    "rate_limited": -32003,
    "request_timeout": -32004,
    "malformed_response": -32070,
    "invalid_arguments": INVALID_PARAMS,
    "invalid_parameter": -32007,
    "invalid_identifier": -32007,
    "invalid_cursor": -32007,
    "internal_error": -32603,
}
RETRYABLE = {
    "doi_unconfirmed",
    "upstream_unavailable",
    "archive_unavailable",
    "record_unavailable",
    "rate_limited",
    "request_timeout",
    "store_unavailable",
}


STORE_CAUSES = {
    "disk_full": "the disk holding it is full",
    "read_only": "it is read-only for this process",
    "locked": "another process held its write lock past the deadline",
}
"""Named causes of a store failure, as told to clients (never the SQL or the file path)."""


_SQL = re.compile(
    r"\[SQL:|\(Background on this error|sqlite3\.|psycopg|\bSELECT\b.+\bFROM\b|\bINSERT INTO\b|"
    r"\bUPDATE\b.+\bSET\b|\bDELETE FROM\b|\bCREATE (?:TABLE|INDEX)\b",
    re.IGNORECASE | re.DOTALL,
)
"""Text of a database driver or statement; a message matching it is never sent to a client."""

_WAIT_KEYS = {"retry_after_s": "retry after {} s"}
"""How a number of ``error.data`` is written into the message when the message lacks it."""


def _store_sentence(exc: SyncdError) -> str:
    log.warning("event=store_error_to_client reason=%s detail=%r", exc.reason, exc.message[:500])
    cause = STORE_CAUSES.get(write_cause(exc))
    tail = f": {cause}" if cause else ""
    return f"the local store could not be read or written{tail} (details in the syncd log)"


def public_names(text: str, pool: object = None, service: object = None) -> str:
    """``text`` with the budget pool ``pool`` named by its ``service`` (``crossref_single`` -> ``Crossref``).

    The error's data carry both (the budget, the HTTP layer and the road put the service of the pool
    the slice declared beside it: :meth:`syncd.budget.pools.Pools.service`). A pool name holding ``_`` is
    replaced wherever it stands as a word; a short one (doi.org's ``doi``) only where it stands for the
    pool (``upstream (doi)``, ``doi is ...``), never inside other text about DOIs.
    """
    if not (isinstance(pool, str) and pool and isinstance(service, str) and service):
        return text
    if "_" in pool:
        return re.sub(rf"\b{re.escape(pool)}\b", lambda _m: service, text)
    short = re.compile(rf"^{re.escape(pool)}\b|\({re.escape(pool)}\)")
    return short.sub(lambda m: service if m.group(0) == pool else f"({service})", text)


def _numbers_in(message: str, data: Mapping[str, Any]) -> str:
    """``message`` with each number of ``data`` it does not show yet appended (``retry after 12.5 s``)."""
    extra = []
    for key, value in data.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        text = seconds_text(value) if isinstance(value, float) else str(value)
        if re.search(rf"(?<![\d.]){re.escape(text)}(?![\d])", message):
            continue
        extra.append(_WAIT_KEYS.get(key, f"{key} {{}}").format(text))
    return f"{message} ({'; '.join(extra)})" if extra else message


def client_message(exc: SyncdError) -> str:
    """The message sent to the client for ``exc``: public names, no SQL, no file paths.

    A :class:`~syncd.errors.StoreError` (or any ``store_unavailable`` error, e.g. a request token
    the budget could not write) may hold SQL text and file paths: it is logged here and replaced by
    a sentence naming the cause (full disk, read-only, locked) when known. Any other message that
    reads like database text is replaced the same way. The error's budget pool is named by its service
    (:func:`public_names`).
    """
    if isinstance(exc, StoreError) or exc.reason == "store_unavailable" or _SQL.search(exc.message):
        return _store_sentence(exc)
    return public_names(exc.message, exc.data.get("pool"), exc.data.get("service"))


def to_error_info(exc: SyncdError, rename: Mapping[str, str] | None = None) -> ErrorInfo:
    """The envelope for ``exc``; ``rename`` maps generic reasons to a tool's declared ones.

    The message never carries SQL or file paths (:func:`client_message`) and shows every number of
    ``data`` (a float rounded to 3 decimals, in ``data`` too); the hint names services, not pools,
    and ``retryable`` says what the hint says (:func:`retryable`).
    """
    reason = (rename or {}).get(exc.reason, exc.reason)
    code = CODES.get(reason) or _class_code(exc)
    extra = {
        k: round(v, 3) if isinstance(v, float) else v
        for k, v in exc.data.items()
        if k not in ("reason", "recovery", "retryable")
    }
    pool, service = extra.get("pool"), extra.get("service")
    data = ErrorData(
        reason=reason,
        recovery=Recovery(hint=public_names(exc.hint, pool, service)),
        retryable=retryable(exc, reason),
        **extra,
    )
    message = _numbers_in(
        client_message(exc), {k: v for k, v in extra.items() if k not in ("pool", "service", "retryAfter")}
    )
    return ErrorInfo(code=code, message=message, data=data)


def retryable(exc: SyncdError, reason: str) -> bool:
    """Whether the same call may succeed later.

    True for a declared transient reason, or a failed upstream exchange (network, 5xx, timeout, an
    archive listing) that is neither a malformed body nor a rejection.
    """
    if reason in RETRYABLE:
        return True
    return isinstance(exc, UpstreamError) and not isinstance(exc, MalformedResponse | UpstreamRejected)


def _class_code(exc: SyncdError) -> int:
    """Default code for reasons not in CODES, from the exception's place in the tree."""
    if isinstance(exc, InvalidInput | UpstreamRejected):
        return -32007
    if isinstance(exc, NotFound):
        return -32001
    if isinstance(exc, BudgetExhausted | UpstreamRateLimited):
        return -32003
    if isinstance(exc, UpstreamTimeout):
        return -32004
    if isinstance(exc, UpstreamError):
        return -32000
    return -32603


def error_result(exc: Exception, rename: Mapping[str, str] | None = None) -> CallToolResult:
    """A tool error result for any exception (unexpected ones are logged and become internal_error)."""
    if not isinstance(exc, SyncdError):
        log.exception("event=tool_internal_error error=%s", exc.__class__.__name__)
        exc = SyncdError(f"internal error: {exc.__class__.__name__}")
    info = to_error_info(exc, rename)
    hint = info.data.recovery.hint if info.data.recovery else exc.hint
    text = f"Error ({info.data.reason}): {info.message}\nRecovery: {hint}"
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content={"error": info.to_dict()},
        is_error=True,
    )


ARGUMENTS_HINT = "Check the tool's input schema: types, bounds, allowed names and forms."


def invalid_arguments(tool: str, exc: ValidationError) -> InvalidInput:
    """The refusal of arguments of ``tool`` that its input model refused (answered as a tool error).

    Its envelope (:func:`error_result`) carries code -32602, ``reason`` ``invalid_arguments``,
    ``recovery.hint``, ``retryable`` false and ``fields`` (the arguments refused, sorted); the message
    names each refused argument with pydantic's reason. The values themselves are not echoed beyond
    pydantic's message.
    """
    errors = exc.errors(include_url=False, include_input=False)
    fields = sorted({str(err["loc"][0]) for err in errors if err.get("loc")})
    details = "; ".join(
        f"{'.'.join(str(p) for p in err.get('loc', ())) or '(arguments)'}: {err.get('msg')}" for err in errors
    )
    return InvalidInput(
        f"invalid arguments for {tool}: {details}",
        reason="invalid_arguments",
        hint=ARGUMENTS_HINT,
        fields=fields,
    )
