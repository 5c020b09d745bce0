"""Settings of the DataCite slice, the Retraction Watch data and the tool sets of the MCP servers.

Re-exported by :mod:`syncd.config`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from syncd.retractions.names import MAX_REMOVED_SHARE

__all__ = ["DataciteSettings", "McpSettings", "RetractionsSettings", "SliceName"]

DAY = 86_400.0
"""Seconds in a day: the Retraction Watch file is replaced at most daily."""


class DataciteSettings(BaseModel):
    """DataCite REST API (``https://api.datacite.org``)."""

    base_url: str = Field("https://api.datacite.org", description="DataCite REST API base URL.")
    mailto: str | None = Field(
        None,
        description="Contact address sent in the User-Agent, as DataCite asks: identified clients get "
        "1,000 requests per 5 minutes instead of 500 (default: crossref.mailto).",
    )


SliceName = Literal["crossref", "zenodo", "datacite", "retractions", "changes"]
"""The tool sets an MCP server may expose (``mcp.slices``): one per upstream slice, the reference index
(``retractions``: ``syncd_cited_by``), plus the change feed."""


class McpSettings(BaseModel):
    """What the MCP servers (``syncd mcp``, the daemon's ``/mcp``) expose."""

    slices: list[SliceName] = Field(
        default_factory=lambda: ["crossref", "zenodo", "datacite", "retractions", "changes"],
        min_length=1,
        description="The tool sets a server lists and answers: crossref, zenodo, datacite, retractions "
        "(syncd_cited_by), changes (syncd_list_changes); default all. A smaller set keeps tools/list "
        "small for an agent.",
    )


class RetractionsSettings(BaseModel):
    """The Retraction Watch data the daemon keeps (``syncd retractions``; issue 23)."""

    source: str | None = Field(
        None,
        description="Where the daemon reads retraction_watch.csv: an https URL, a file, or a directory "
        "holding it (a git checkout the lab pulls). None: only `syncd retractions import` updates it.",
    )
    interval_s: float = Field(
        DAY,
        ge=DAY,
        description="Seconds between two reads of the source (at most daily: the file is replaced once a "
        "working day); an unchanged file (same SHA-256, or a 304 to the ETag) is not parsed again.",
    )
    timeout_s: float = Field(300.0, gt=0, le=3600, description="Seconds a download may take.")
    max_removed_share: float = Field(
        MAX_REMOVED_SHARE,
        ge=0,
        le=1,
        description="Largest share (0..1) of the rows held that a new version may remove; a file "
        "removing more (a cut or wrong download) is refused and the version held is kept "
        "(`syncd retractions import --accept-shrink` imports it deliberately).",
    )
    max_bytes: int = Field(
        512 * 1024 * 1024, gt=0, description="Largest file downloaded (bytes); a bigger one is refused."
    )
