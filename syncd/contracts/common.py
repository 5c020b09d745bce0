"""Models shared by every tool answer: the ``cache`` provenance block and the error envelope."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["CacheInfo", "ErrorData", "ErrorInfo", "Recovery", "WithCache", "wire_schema"]


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


_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})
"""Keywords whose value maps names to subschemas (the names are not keywords)."""

_NULL = {"type": "null"}


def _nullable(schema: dict[str, Any]) -> dict[str, Any] | None:
    """``schema`` that also admits ``null``, as one node, or None when it cannot be said without anyOf."""
    if any(k in schema for k in ("anyOf", "oneOf", "allOf", "const", "$ref")) or "type" not in schema:
        return None
    kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    out = {**schema, "type": [*kinds, "null"] if "null" not in kinds else kinds}
    if "enum" in schema and None not in schema["enum"]:
        out["enum"] = [*schema["enum"], None]
    return out


def wire_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The ``outputSchema`` a client receives for the pydantic ``schema`` of an output model.

    Same fields, types, nesting, ``required`` and ``additionalProperties`` and descriptions, but
    nothing a validating client walks for nothing: every ``$ref`` into ``$defs`` is inlined (the SDK
    client's ``jsonschema`` resolves a reference on every visit), an optional field's
    ``anyOf: [X, {type: null}]`` becomes ``X`` with ``null`` added to its ``type`` (one node
    instead of three), and pydantic's generated ``title`` and ``default: null`` annotations go.
    A definition that refers to itself (directly or not) stays a ``$ref`` into the kept ``$defs``.
    Measured on a 4.6 KB ``crossref_get_work`` answer with ``jsonschema`` 4.26: 600 -> 300 µs.
    The input is not modified.
    """
    defs: dict[str, Any] = schema.get("$defs") or {}
    kept: dict[str, Any] = {}

    def walk(node: Any, path: tuple[str, ...], root: bool = False) -> Any:
        if isinstance(node, list):
            return [walk(x, path) for x in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            if name in path:  # recursive: keep the reference
                kept[name] = defs[name]
                return {k: walk(v, path) for k, v in node.items()}
            inlined = walk(defs[name], (*path, name))
            extra = {k: walk(v, path) for k, v in node.items() if k not in ("$ref", "title", "default")}
            return {**inlined, **extra}
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$defs" or (key == "title" and not root) or (key == "default" and value is None):
                continue
            if key in _SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {name: walk(sub, path) for name, sub in value.items()}
            else:
                out[key] = walk(value, path)
        branches = out.get("anyOf")
        if isinstance(branches, list) and len(branches) == 2 and _NULL in branches:
            other = branches[1 - branches.index(_NULL)]
            merged = _nullable(other) if isinstance(other, dict) else None
            if merged is not None:
                rest = {k: v for k, v in out.items() if k != "anyOf"}
                out = {**merged, **rest}
        return out

    result = walk(schema, (), root=True)
    while set(kept) - set(result.get("$defs", {})):  # recursive definitions, walked once each
        result["$defs"] = {n: walk(d, (n,)) for n, d in kept.items()}
    return result
