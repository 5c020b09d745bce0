"""The Zenodo slice's settings: ``[zenodo]``, ``ttl.zenodo_record``, ``watch.zenodo_*``.

Composed into :class:`~syncd.config.Settings` (:data:`SETTINGS`); read by the slice through
``SECTION.of``. The pools' ``budget.*`` tables come from :mod:`syncd.zenodo.pools`.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr

from syncd.slices import Section, SliceSettings, TtlField

__all__ = ["SECTION", "SETTINGS", "ZenodoSettings"]

DAY = 86_400.0


class ZenodoSettings(BaseModel):
    """Zenodo REST API (``https://zenodo.org/api``)."""

    base_url: str = Field("https://zenodo.org/api", description="Zenodo REST API base URL.")
    token: SecretStr | None = Field(None, description="Zenodo personal access token (never logged).")
    preview_bytes_per_file: int = Field(
        65_536, ge=0, description="File preview bytes kept per file for offline reads (0: keep none)."
    )
    preview_total_bytes: int = Field(
        64 * 1024 * 1024, ge=0, description="Total bytes of kept file previews; least recently read go first."
    )
    unconditional_every: int = Field(
        10,
        ge=1,
        description="Every Nth revalidation of a stored record is sent without If-None-Match: Zenodo's "
        "revision ETag does not change when a newer version is published (1: never conditional).",
    )


SECTION = Section("zenodo", ZenodoSettings)
"""``[zenodo]``: read with ``SECTION.of(settings)``."""

SETTINGS = SliceSettings(
    sections=(SECTION,),
    ttls={"zenodo_record": TtlField(1 * DAY, "Zenodo records (seconds).")},
    watch={
        "zenodo_communities": (list[str], list, "Zenodo community ids."),
        "zenodo_queries": (list[str], list, "Zenodo search queries."),
    },
    tool_set=True,
)
"""What the Zenodo slice adds to the settings."""
