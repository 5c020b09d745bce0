"""Models shared by every tool answer: the ``cache`` provenance block and the error envelope."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["CacheInfo", "ErrorData", "ErrorInfo", "Recovery", "WithCache"]


class CacheInfo(BaseModel):
    """Where the answer came from and how fresh it is (DESIGN.md)."""

    source: str = Field(
        description="'store' (fresh, no upstream request), 'upstream' (fetched or confirmed by upstream "
        "in this call) or 'store-stale' (past its lifetime; upstream could not be used)."
    )
    fetched_at: str = Field(description="When this content was first fetched from upstream (ISO 8601 UTC).")
    validated_at: str = Field(description="When upstream last confirmed this content (ISO 8601 UTC).")
    age_s: float = Field(description="Seconds since validated_at.")
    stale: bool = Field(description="True when the answer is past its freshness lifetime.")
    upstream_error: str | None = Field(
        None, description="Reason code of the upstream failure that made this answer come from the store."
    )
    etag: str | None = Field(
        None, description="syncd's validator for this content (a content hash): unchanged content, same etag."
    )


class Recovery(BaseModel):
    """What the caller can do about an error."""

    hint: str = Field(description="One-line recovery hint.")


class ErrorData(BaseModel):
    """Machine-readable error details; extra fields depend on the reason (retry_after_s, doi, ...)."""

    model_config = ConfigDict(extra="allow")

    reason: str = Field(
        description="Declared failure mode, e.g. doi_not_found, invalid_identifier, rate_limited."
    )
    recovery: Recovery | None = Field(None, description="Recovery hint.")
    retryable: bool | None = Field(None, description="Whether retrying the same call may succeed.")


class ErrorInfo(BaseModel):
    """The error envelope of a failed call (``isError: true``)."""

    code: int = Field(description="JSON-RPC style error code (e.g. -32001 NotFound, -32003 RateLimited).")
    message: str = Field(description="Human-readable message.")
    data: ErrorData

    def to_dict(self) -> dict[str, Any]:
        """JSON form without nulls."""
        return self.model_dump(mode="json", exclude_none=True)


def _answer_schema(schema: dict[str, Any]) -> None:
    """A tool's ``outputSchema`` admits all its answers: nothing is required at the top level.

    Success, miss and error answers share no field (an error carries only ``error``), so the
    top-level ``required`` list is dropped; nested objects keep theirs.
    """
    schema.pop("required", None)


class WithCache(BaseModel):
    """Mixin for every tool output: the contract's fields plus ``cache`` provenance and ``error``.

    The published ``outputSchema`` requires no top-level field (see :func:`_answer_schema`), so
    clients that check ``structuredContent`` against it (TypeScript SDK, MCP Inspector) accept the
    error and miss answers too.
    """

    model_config = ConfigDict(json_schema_extra=_answer_schema)

    cache: CacheInfo | None = Field(None, description="Where this answer came from and how fresh it is.")
    error: ErrorInfo | None = Field(None, description="Present when the call failed. Absent on success.")
