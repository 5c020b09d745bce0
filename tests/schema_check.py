"""Every tool answer checked against the tool's declared ``outputSchema`` (issue 12 item 1).

Clients on the TypeScript SDK (the MCP Inspector, many agents) validate ``structuredContent`` against
the tool's ``outputSchema`` and show only the schema failure when it does not fit. :func:`checking`
wraps ``mcp.Client.call_tool`` so that every answer a test receives (success, miss, each error
reason) is validated with ``jsonschema`` against the schema the same client listed, and against the
full JSON schema of the tool's output model (the contract at every depth: the published schema
spells out only the first levels, ``syncd.contracts.common.wire_schema``); conftest turns it on for
every test.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.types import CallToolResult
from pydantic import TypeAdapter

from syncd.tools.server import TOOLS

__all__ = ["checking", "model_errors", "schema_errors"]


def schema_errors(schema: dict[str, Any], content: Any) -> list[str]:
    """The ``jsonschema`` (draft 2020-12) errors of ``content`` against ``schema``, as readable lines."""
    validator = Draft202012Validator(schema)
    return [
        f"{'/'.join(str(p) for p in err.absolute_path) or '(root)'}: {err.message}"
        for err in sorted(validator.iter_errors(content), key=lambda e: list(e.absolute_path))
    ]


@cache
def _model_validator(name: str) -> Draft202012Validator | None:
    """A validator of tool ``name``'s output model schema (pydantic's, every depth), None for no such tool."""
    spec = next((s for s in TOOLS if s.name == name), None)
    return None if spec is None else Draft202012Validator(TypeAdapter(spec.output).json_schema())


def model_errors(name: str, content: Any) -> list[str]:
    """The errors of ``content`` against tool ``name``'s full output model schema (none for no such tool)."""
    validator = _model_validator(name)
    if validator is None:
        return []
    return [
        f"{'/'.join(str(p) for p in err.absolute_path) or '(root)'}: {err.message}"
        for err in sorted(validator.iter_errors(content), key=lambda e: list(e.absolute_path))
    ]


_LISTED: dict[int, tuple[weakref.ref[Client], dict[str, dict[str, Any] | None]]] = {}
"""Each client session's listed outputSchemas by tool name (by ``id``, held while the client lives),
fetched once a session (syncd's tools are fixed for a server's life): one ``tools/list`` per session
instead of one per call."""


async def _output_schema(client: Client, name: str) -> dict[str, Any] | None:
    """The outputSchema ``client`` lists for tool ``name`` (listed once per client session)."""
    held = _LISTED.get(id(client))
    listed = held[1] if held is not None and held[0]() is client else None
    if listed is None or name not in listed:
        listed = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        key = id(client)
        _LISTED[key] = (weakref.ref(client, lambda _r: _LISTED.pop(key, None)), listed)
    return listed.get(name)


@contextmanager
def checking(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Within the block, ``Client.call_tool`` fails a test whose answer breaks the tool's outputSchema."""
    original: Callable[..., Awaitable[CallToolResult]] = Client.call_tool

    async def call_tool(self: Client, name: str, *args: Any, **kwargs: Any) -> CallToolResult:
        result = await original(self, name, *args, **kwargs)
        if result.structured_content is not None:
            schema = await _output_schema(self, name)
            if schema is not None:
                errors = schema_errors(schema, result.structured_content)
                assert not errors, f"{name} answer breaks its outputSchema: {errors}"
            errors = model_errors(name, result.structured_content)
            assert not errors, f"{name} answer breaks its output model: {errors}"
        return result

    monkeypatch.setattr(Client, "call_tool", call_tool)
    yield
