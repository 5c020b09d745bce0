"""The doi.org slice's settings: ``[doi]`` (composed into :class:`~syncd.config.Settings`)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from syncd.slices import SliceSettings, section

__all__ = ["SETTINGS", "DoiSettings", "doi_settings"]


class DoiSettings(BaseModel):
    """doi.org proxy (registration-agency lookups ``/ra/{doi}``)."""

    base_url: str = Field("https://doi.org", description="doi.org base URL.")


SETTINGS = SliceSettings(sections={"doi": DoiSettings})
"""What the doi.org slice adds to the settings (its lifetime is the shared ``ttl.entity``)."""


def doi_settings(settings: BaseModel) -> DoiSettings:
    """The ``[doi]`` section of ``settings``.

    Raises:
        TypeError: the settings were composed without the doi.org slice.
    """
    return section(settings, "doi", DoiSettings)
