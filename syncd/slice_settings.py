"""Settings of the DataCite slice and of what the MCP servers expose (re-exported by :mod:`syncd.config`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

__all__ = ["DataciteSettings", "McpSettings", "SliceName"]


class DataciteSettings(BaseModel):
    """DataCite REST API (``https://api.datacite.org``)."""

    base_url: str = Field("https://api.datacite.org", description="DataCite REST API base URL.")
    mailto: str | None = Field(
        None,
        description="Contact address sent in the User-Agent, as DataCite asks: identified clients get "
        "1,000 requests per 5 minutes instead of 500 (default: crossref.mailto).",
    )


SliceName = Literal["crossref", "zenodo", "datacite", "changes"]
"""The tool sets an MCP server may expose (``mcp.slices``): one per upstream slice, plus the change feed."""


class McpSettings(BaseModel):
    """What the MCP servers (``syncd mcp``, the daemon's ``/mcp``) expose."""

    slices: list[SliceName] = Field(
        default_factory=lambda: ["crossref", "zenodo", "datacite", "changes"],
        min_length=1,
        description="The tool sets a server lists and answers: crossref, zenodo, datacite, changes "
        "(syncd_list_changes); default all. A smaller set keeps tools/list small for an agent.",
    )
