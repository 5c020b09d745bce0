"""Helpers shared by test modules: the MCP server as the application builds it, every tool.

Imported by the test modules (not a conftest: ``tests/schema_check.py``, which the conftest loads,
needs :func:`every_tool` too).
"""

from __future__ import annotations

from typing import Any

from mcp.server.lowlevel import Server

from syncd.registry import mcp_specs, tool_specs
from syncd.tools.params import ToolSpec
from syncd.tools.server import CHANGES_SLICE, Deps, build_server, served_tools


def mcp_server(deps: Deps, *, close_on_exit: bool = False) -> Server[Any]:
    """The MCP server over ``deps`` as ``syncd mcp`` and the daemon build it (``mcp.slices``' tools)."""
    return build_server(deps, *mcp_specs(deps.settings), close_on_exit=close_on_exit)


def every_tool() -> tuple[ToolSpec, ...]:
    """Every tool syncd has (every slice's and the change feed's), in ``tools/list`` order."""
    return served_tools(tool_specs(), (CHANGES_SLICE,))
