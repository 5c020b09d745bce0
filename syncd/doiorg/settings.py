"""The doi.org slice's settings: ``[doi]`` (composed into :class:`~syncd.config.Settings`)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from syncd.slices import Section, SliceSettings

__all__ = ["SECTION", "SETTINGS", "DoiSettings"]


class DoiSettings(BaseModel):
    """doi.org proxy (registration-agency lookups ``/ra/{doi}``)."""

    base_url: str = Field("https://doi.org", description="doi.org base URL.")


SECTION = Section("doi", DoiSettings)
"""``[doi]``: read with ``SECTION.of(settings)``."""

SETTINGS = SliceSettings(sections=(SECTION,))
"""What the doi.org slice adds to the settings (its lifetime is the shared ``ttl.entity``)."""
