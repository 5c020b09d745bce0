"""The toy slice's MCP tool: ``toy_get_note``."""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict, Field

from syncd.contracts.common import WithCache
from syncd.road.services import Services
from syncd.tools.errors import error_result
from syncd.tools.fit import Fit, plain
from syncd.tools.params import ToolArgs, ToolSpec
from tests.toyslice.slice import get_note, note_data

__all__ = ["TOOLS"]


class NoteArgs(ToolArgs):
    """``toy_get_note`` input."""

    note_id: str = Field(min_length=1, max_length=64, pattern=r"^[a-z0-9-]+$", description="The note's id.")


class NoteView(WithCache):
    """``toy_get_note`` output."""

    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(None, description="The note's id.")
    title: str | None = Field(None, description="Its title.")
    text: str | None = Field(None, description="Its text.")


def render(data: dict[str, Any]) -> str:
    """One line: the title and the text."""
    return f"{data.get('title')}: {data.get('text')}"


def toy_get_note(services: Services, note_id: str) -> CallToolResult:
    """Get a toy note by id, from the local store first."""
    try:
        stored, provenance = get_note(services, note_id)
        data = {**note_data(stored), "cache": provenance.as_dict()}
    except Exception as exc:
        return error_result(exc)
    return CallToolResult(content=[TextContent(type="text", text=render(data))], structured_content=data)


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "toy_get_note",
        "Get a toy note",
        NoteArgs,
        NoteView,
        toy_get_note,
        ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=True),
        Fit((), plain(render)),
    ),
)
