"""Every tool answer checked against the tool's declared ``outputSchema`` (issue 12 item 1).

Clients on the TypeScript SDK (the MCP Inspector, many agents) validate ``structuredContent`` against
the tool's ``outputSchema`` and show only the schema failure when it does not fit. :func:`checking`
wraps ``mcp.Client.call_tool`` so that every answer a test receives (success, miss, each error
reason) is validated with ``jsonschema`` against the schema the same client listed, and against the
full JSON schema of the tool's output model (the contract at every depth: the published schema
spells out only the first levels, ``syncd.contracts.common.wire_schema``); conftest turns it on for
every test.

It also checks each distinct schema against the JSON Schema metaschema once per worker: the SDK client
does it (``Draft202012Validator.check_schema``) for every tool in every new session, 0.1-0.2 s for a
large output schema, which was 72% of the fault matrix's CPU (it opens a session per database per
fault). The schemas every session lists are the same, so the first check of each stands for the rest; a
schema that fails raises every time.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.types import CallToolResult
from pydantic import TypeAdapter

from tests.helpers import every_tool

__all__ = ["checking", "model_errors", "schema_errors"]


def schema_errors(schema: dict[str, Any], content: Any) -> list[str]:
    """The ``jsonschema`` (draft 2020-12) errors of ``content`` against ``schema``, as readable lines."""
    return _errors(Draft202012Validator(schema), content)


def _errors(validator: Draft202012Validator, content: Any) -> list[str]:
    return [
        f"{'/'.join(str(p) for p in err.absolute_path) or '(root)'}: {err.message}"
        for err in sorted(validator.iter_errors(content), key=lambda e: list(e.absolute_path))
    ]


_PUBLISHED: dict[str, tuple[dict[str, Any], Draft202012Validator]] = {}


def _published_validator(name: str, schema: dict[str, Any]) -> Draft202012Validator:
    """A validator of ``schema`` (tool ``name``'s published outputSchema), built once per schema."""
    held = _PUBLISHED.get(name)
    if held is None or held[0] is not schema:
        held = _PUBLISHED[name] = (schema, Draft202012Validator(schema))
    return held[1]


@cache
def _model_validator(name: str) -> Draft202012Validator | None:
    """A validator of tool ``name``'s output model schema (pydantic's, every depth), None for no such tool."""
    spec = next((s for s in every_tool() if s.name == name), None)
    return None if spec is None else Draft202012Validator(TypeAdapter(spec.output).json_schema())


def model_errors(name: str, content: Any) -> list[str]:
    """The errors of ``content`` against tool ``name``'s full output model schema (none for no such tool)."""
    validator = _model_validator(name)
    return [] if validator is None else _errors(validator, content)


_LISTED: dict[str, dict[str, Any] | None] = {}
"""The outputSchema each tool name was listed with, by the first session that listed it. A tool's
published schema is built from its spec alone (the same in every server of this process, whatever its
slices), so later sessions reuse it: one ``tools/list`` per worker for this check instead of one per
session (the fault matrix opens a session per call). The SDK client still lists in each session for
its own check."""


async def _output_schema(client: Client, name: str) -> dict[str, Any] | None:
    """The outputSchema listed for tool ``name`` (listed by the first session that calls it)."""
    if name not in _LISTED:
        _LISTED.update({t.name: t.output_schema for t in (await client.list_tools()).tools})
    return _LISTED.get(name)


_VALID_SCHEMAS: set[str] = set()
"""The schemas (as canonical JSON) that passed the metaschema check in this worker."""
_CHECK_SCHEMA = Draft202012Validator.check_schema


def _check_schema_once(cls: type[Draft202012Validator], schema: Any, *args: Any, **kwargs: Any) -> None:
    """``Draft202012Validator.check_schema``, done once per distinct schema (raises ``SchemaError`` as it)."""
    key = json.dumps([schema, repr(args), repr(kwargs)], sort_keys=True, default=repr)
    if key not in _VALID_SCHEMAS:
        _CHECK_SCHEMA(schema, *args, **kwargs)
        _VALID_SCHEMAS.add(key)


@contextmanager
def checking(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Within the block, ``Client.call_tool`` fails a test whose answer breaks the tool's outputSchema
    (and each distinct schema is checked against the metaschema once, see the module docstring).
    """
    original: Callable[..., Awaitable[CallToolResult]] = Client.call_tool
    monkeypatch.setattr(Draft202012Validator, "check_schema", classmethod(_check_schema_once))

    async def call_tool(self: Client, name: str, *args: Any, **kwargs: Any) -> CallToolResult:
        result = await original(self, name, *args, **kwargs)
        if result.structured_content is not None:
            schema = await _output_schema(self, name)
            if schema is not None:
                errors = _errors(_published_validator(name, schema), result.structured_content)
                assert not errors, f"{name} answer breaks its outputSchema: {errors}"
            errors = model_errors(name, result.structured_content)
            assert not errors, f"{name} answer breaks its output model: {errors}"
        return result

    monkeypatch.setattr(Client, "call_tool", call_tool)
    yield
