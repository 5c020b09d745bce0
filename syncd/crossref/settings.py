"""The Crossref slice's settings: ``[crossref]``, ``ttl.crossref_work``, ``[[watch.crossref]]``.

Composed into :class:`~syncd.config.Settings` (:data:`SETTINGS`); read by the slice through
``SECTION.of``. The pools' ``budget.*`` tables come from :mod:`syncd.crossref.pools`.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from syncd.slices import Section, SliceSettings, TtlField

__all__ = ["SECTION", "SETTINGS", "CrossrefSettings", "CrossrefWatchSettings"]

DAY = 86_400.0


class CrossrefSettings(BaseModel):
    """Crossref REST API (``https://api.crossref.org``)."""

    base_url: str = Field("https://api.crossref.org", description="Crossref REST API base URL.")
    mailto: str | None = Field(
        None,
        description="Contact address sent in the User-Agent; puts syncd in Crossref's polite pool.",
    )


class CrossrefWatchSettings(BaseModel):
    """One watched Crossref query (``[[watch.crossref]]``): filters/query on a works route."""

    route: str | None = Field(
        None, description="Works route, e.g. /journals/1932-6203/works (default /works)."
    )
    filter: list[str] = Field(default_factory=list, description="Crossref filters, name:value.")
    query: str | None = Field(None, description="Free-text query.")
    orcid: str | None = None
    funder: str | None = None
    issn: str | None = None
    member: str | None = None
    rows: int | None = Field(1000, ge=1, le=1000, description="Page size of the cursor walk.")


SECTION = Section("crossref", CrossrefSettings)
"""``[crossref]``: read with ``SECTION.of(settings)``."""

SETTINGS = SliceSettings(
    sections=(SECTION,),
    ttls={"crossref_work": TtlField(7 * DAY, "Crossref works (seconds).")},
    watch={"crossref": (list[CrossrefWatchSettings], list, "Watched Crossref queries.")},
    tool_set=True,
)
"""What the Crossref slice adds to the settings."""
