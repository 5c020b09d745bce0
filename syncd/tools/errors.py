"""The one place where syncd exceptions become the contracts' MCP error results.

A failed call is a ``CallToolResult`` with ``is_error=True`` whose structured content is
``{"error": {"code", "message", "data": {"reason", "recovery": {"hint"}, "retryable", ...}}}`` and
whose text is the message plus a ``Recovery:`` line. Codes follow the anchors' framework:
NotFound -32001, ServiceUnavailable -32000, RateLimited -32003, Timeout -32004,
ValidationError -32007, SerializationError -32070, InternalError -32603.

Arguments that violate a tool's input schema are not a tool result but the JSON-RPC
invalid-params error -32602 with ``data.reason = "invalid_arguments"`` (anchors.md, "Arguments are
repaired before validation"): :func:`invalid_arguments` builds it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, TextContent
from pydantic import ValidationError

from syncd.contracts.common import ErrorData, ErrorInfo, Recovery
from syncd.errors import (
    BudgetExhausted,
    InvalidInput,
    NotFound,
    StoreError,
    SyncdError,
    UpstreamError,
    UpstreamRateLimited,
    UpstreamRejected,
    UpstreamTimeout,
)
from syncd.store.repo import write_cause

__all__ = [
    "CODES",
    "STORE_CAUSES",
    "client_message",
    "error_result",
    "invalid_arguments",
    "to_error_info",
]

log = logging.getLogger("syncd.tools")

CODES: dict[str, int] = {
    "doi_not_found": -32001,
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
    "upstream_unavailable",
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


def client_message(exc: SyncdError) -> str:
    """The message sent to the client for ``exc``.

    A :class:`~syncd.errors.StoreError`'s message may hold SQL text and file paths: it is logged
    here and replaced by a generic sentence naming the cause (full disk, read-only, locked) when known.
    """
    if not isinstance(exc, StoreError):
        return exc.message
    log.warning("event=store_error_to_client detail=%r", exc.message[:500])
    cause = STORE_CAUSES.get(write_cause(exc))
    tail = f": {cause}" if cause else ""
    return f"the local store could not be read or written{tail} (details in the syncd log)"


def to_error_info(exc: SyncdError, rename: Mapping[str, str] | None = None) -> ErrorInfo:
    """The envelope for ``exc``; ``rename`` maps generic reasons to a tool's declared ones.

    The message never carries SQL or file paths (:func:`client_message`).
    """
    reason = (rename or {}).get(exc.reason, exc.reason)
    code = CODES.get(reason) or _class_code(exc)
    data = ErrorData(
        reason=reason,
        recovery=Recovery(hint=exc.hint),
        retryable=reason in RETRYABLE,
        **{k: v for k, v in exc.data.items() if k not in ("reason", "recovery", "retryable")},
    )
    return ErrorInfo(code=code, message=client_message(exc), data=data)


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
    text = f"Error ({info.data.reason}): {info.message}\nRecovery: {exc.hint}"
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content={"error": info.to_dict()},
        is_error=True,
    )


ARGUMENTS_HINT = "Check the tool's input schema: types, bounds, allowed names and forms."


def invalid_arguments(tool: str, exc: ValidationError) -> MCPError:
    """The JSON-RPC error (-32602) for arguments of ``tool`` that its input model refused.

    ``data`` is the contracts' error data: ``reason`` ``invalid_arguments``, ``recovery.hint``,
    ``retryable`` false, and ``fields`` (the parameters refused). The values themselves are not
    echoed beyond pydantic's message.
    """
    errors = exc.errors(include_url=False, include_input=False)
    fields = sorted({str(err["loc"][0]) for err in errors if err.get("loc")})
    details = "; ".join(
        f"{'.'.join(str(p) for p in err.get('loc', ())) or '(arguments)'}: {err.get('msg')}" for err in errors
    )
    data = ErrorData(
        reason="invalid_arguments",
        recovery=Recovery(hint=ARGUMENTS_HINT),
        retryable=False,
        fields=fields,
    )
    return MCPError(
        code=INVALID_PARAMS,
        message=f"invalid arguments for {tool}: {details}",
        data=data.model_dump(mode="json", exclude_none=True),
    )
