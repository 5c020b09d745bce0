"""The Retraction Watch slice's settings: ``[retractions]``, composed into :class:`~syncd.config.Settings`."""

from __future__ import annotations

from pydantic import BaseModel, Field

from syncd.retractions.names import MAX_REMOVED_SHARE
from syncd.slices import Section, SliceSettings

__all__ = ["SECTION", "SETTINGS", "RetractionsSettings"]

DAY = 86_400.0
"""Seconds in a day: the Retraction Watch file is replaced at most daily."""


class RetractionsSettings(BaseModel):
    """The Retraction Watch data the daemon keeps (``syncd retractions``)."""

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


SECTION = Section("retractions", RetractionsSettings)
"""``[retractions]``: read with ``SECTION.of(settings)``."""

SETTINGS = SliceSettings(sections=(SECTION,), tool_set=True)
"""What the Retraction Watch slice adds to the settings."""
