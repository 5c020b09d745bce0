"""Models shared by every tool answer: the ``cache`` provenance block and the error envelope.

Every contract model is built on first use (pydantic ``defer_build``): importing a slice's contracts
(every command does, through its views) builds no validator or schema; a tool's first call or
``tools/list`` does, once per process.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ENVELOPE_FIELDS",
    "NORMALIZED_FROM",
    "CacheInfo",
    "ErrorData",
    "ErrorInfo",
    "Normalized",
    "Recovery",
    "WithCache",
    "note_normalized",
    "wire_depth",
    "wire_item_fields",
    "wire_schema",
]


class CacheInfo(BaseModel):
    """Where the answer came from and how fresh it is (DESIGN.md)."""

    model_config = ConfigDict(defer_build=True)

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
    stored: bool | None = Field(
        None,
        description="false when this upstream answer could not be kept in the local store (absent: stored).",
    )
    store_error: str | None = Field(
        None, description="Reason code of the store failure that kept this answer out of the store."
    )


class Recovery(BaseModel):
    """What the caller can do about an error."""

    model_config = ConfigDict(defer_build=True)

    hint: str = Field(description="One-line recovery hint.")


class ErrorData(BaseModel):
    """Machine-readable error details; extra fields depend on the reason (retry_after_s, doi, ...)."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    reason: str = Field(
        description="Declared failure mode, e.g. doi_not_found, invalid_identifier, rate_limited."
    )
    recovery: Recovery | None = Field(None, description="Recovery hint.")
    retryable: bool | None = Field(None, description="Whether retrying the same call may succeed.")


class ErrorInfo(BaseModel):
    """The error envelope of a failed call (``isError: true``)."""

    model_config = ConfigDict(defer_build=True)

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

    model_config = ConfigDict(json_schema_extra=_answer_schema, defer_build=True)

    cache: CacheInfo | None = Field(None, description="Where this answer came from and how fresh it is.")
    error: ErrorInfo | None = Field(None, description="Present when the call failed. Absent on success.")


class Normalized(BaseModel):
    """Mixin for the answers of tools that take one identifier as people paste it (a DOI, a record id).

    Only those tools carry ``normalized_from``: the others' output schemas stay as the anchors' plus
    ``cache``.
    """

    model_config = ConfigDict(defer_build=True)

    normalized_from: str | None = Field(
        None,
        description="The identifier as written when syncd folded look-alike characters of it (a U+2010-"
        "U+2015 or U+2212 dash, a division slash) for the key it answered. Absent otherwise.",
    )


NORMALIZED_FROM = "normalized_from"
"""The answer field naming the identifier as written when it was folded (:class:`Normalized`)."""


def note_normalized(data: dict[str, Any], written: str | None) -> dict[str, Any]:
    """``data`` with ``normalized_from`` set to ``written`` when the identifier was folded (else as is).

    ``written`` is :attr:`syncd.normalize.doi.ParsedDOI.normalized_from` (or a Zenodo reference's).
    """
    if written is not None:
        data[NORMALIZED_FROM] = written
    return data


_NULL = {"type": "null"}

WIRE_DEPTH = 2
"""Property depth the published ``outputSchema`` spells out (root fields 1, their fields 2).

Below it a value is declared by its type alone (``{"type": "object"}``, ``{"type": "array",
"items": {"type": "object"}}``): every answer still validates, the catalogue stays small and a
client's check stays cheap. Measured on the 15 tools, ``tools/list`` as sent (compact JSON): every
depth with ``$ref``s inlined and every description 160,364 characters; depth 2 with the answer
fields' descriptions 77,141 (a client's check of a 6.5 KB ``zenodo_get_record`` answer 8x faster).
The output models themselves stay the full contract (syncd's tests validate every answer against
them, tests/schema_check.py).
"""

DESCRIBED_DEPTH = 1
"""Property depth whose ``description`` is published: the answer's own fields (the table the
contracts' output schemas show); nested descriptions stay in the models."""

_DROPPED_KEYS = frozenset({"title", "$defs", "examples"})
_SHAPE_KEYS = frozenset({"properties", "required", "additionalProperties", "patternProperties"})
"""What says an object's fields: published only above :data:`WIRE_DEPTH`."""


def wire_depth(model: Any) -> int:
    """The property depth an output model's published schema spells out (:func:`wire_schema`).

    Its ``wire_depth`` class attribute when it declares one (a slice whose nested values add little at
    depth 2, e.g. DataCite's open deposit objects: 1), else :data:`WIRE_DEPTH`.
    """
    depth = getattr(model, "wire_depth", WIRE_DEPTH)
    return depth if isinstance(depth, int) and depth >= 1 else WIRE_DEPTH


def wire_item_fields(model: Any) -> bool:
    """Whether an output model's published lists spell out their items' fields (:func:`wire_schema`).

    Its ``wire_item_fields`` class attribute when it declares one, else True. A model declaring
    False publishes every list by its items' type alone (``{"type": "array", "items": {"type":
    "object"}}``): a client's check then walks each item once instead of each of its fields, so its
    cost follows the answer's length, not length times item fields (``crossref_get_work``: up to 25
    authors a page of up to 6 fields each; the client's check of a recorded warm answer took about
    0.6 ms with the items' fields, 0.35 ms without, benchmarks/bench_warm.py). Lists of scalars keep
    their item type either way; the output model stays the whole contract the server checks.
    """
    fields = getattr(model, "wire_item_fields", True)
    return fields if isinstance(fields, bool) else True


ENVELOPE_FIELDS = frozenset({"error"})
"""Root fields every tool shares whose shape is published to :data:`WIRE_DEPTH` whatever the model's
:func:`wire_depth` (the error envelope ``{code, message, data}`` a client checks)."""


def wire_schema(schema: dict[str, Any], depth: int = WIRE_DEPTH, item_fields: bool = True) -> dict[str, Any]:
    """The ``outputSchema`` a client receives for the pydantic ``schema`` of an output model.

    One self-contained, portable node tree a validator walks once:

    - every ``$ref`` into ``$defs`` is inlined (recursion ends at ``depth``, default
      :data:`WIRE_DEPTH`; :func:`wire_depth` of the model; :data:`ENVELOPE_FIELDS` always to
      :data:`WIRE_DEPTH`), so no
      ``$defs`` is published and nothing is repeated beyond what the kept depth shows;
    - an optional field's ``anyOf: [X, {type: null}]`` becomes ``X``: syncd never sends ``null``
      (answers are dumped with ``exclude_none``; an absent field is how "none" is said), so no
      ``type`` array and no ``null`` branch is published (the Inspector's portability lint and
      clients mapping schemas onto an OpenAPI subset reject those);
    - fields, ``required``, ``additionalProperties``, enums and item types are kept to
      :data:`WIRE_DEPTH`; below it a value keeps only its ``type`` (and an array its items' type);
      with ``item_fields`` False (:func:`wire_item_fields` of the model) an array's items keep only
      their type (and enum) at every depth;
    - a field's ``description`` is kept to :data:`DESCRIBED_DEPTH` (the model's and the item
      models' docstrings are not: the tool's description and the field's say it); pydantic's
      ``title``, ``examples`` and ``default: null`` go.

    Every answer valid against ``schema`` without ``null`` values is valid against the result. The
    input is not modified.
    """
    defs: dict[str, Any] = schema.get("$defs") or {}

    def resolve(node: Any) -> Any:
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            target = defs[node["$ref"].removeprefix("#/$defs/")]
            node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return node

    def non_null(node: Any) -> Any:
        branches = node.get("anyOf") if isinstance(node, dict) else None
        if not isinstance(branches, list) or _NULL not in branches:
            return node
        rest = [b for b in branches if b != _NULL]
        others = {k: v for k, v in node.items() if k != "anyOf"}
        if len(rest) == 1:
            return {**resolve(rest[0]), **others}
        return {**others, "anyOf": rest}

    def walk(node: Any, level: int, field: bool = False, limit: int = depth) -> Any:
        node = non_null(resolve(node))
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROPPED_KEYS or (key == "default" and value is None):
                continue
            if key == "description":
                if field and level <= DESCRIBED_DEPTH:
                    out[key] = value
            elif key in _SHAPE_KEYS and level >= limit:
                continue
            elif key == "properties":
                out[key] = {
                    name: walk(
                        sub,
                        level + 1,
                        True,
                        max(limit, WIRE_DEPTH) if level == 0 and name in ENVELOPE_FIELDS else limit,
                    )
                    for name, sub in value.items()
                }
            elif key == "additionalProperties" and isinstance(value, dict):
                out[key] = walk(value, level + 1, False, limit)
            elif key == "items" and isinstance(value, dict):
                out[key] = walk(value, level if item_fields else limit, False, limit)
            elif key == "anyOf" and isinstance(value, list):
                out[key] = [walk(b, level, False, limit) for b in value]
            else:
                out[key] = value
        return out

    return walk(schema, 0)
