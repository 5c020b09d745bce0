"""The DataCite slice's settings: ``[datacite]``, ``ttl.datacite``, ``watch.datacite_queries``.

Composed into :class:`~syncd.config.Settings` (:data:`SETTINGS`); read by the slice through
``SECTION.of`` and :func:`contact`. The pool's ``budget.datacite`` comes from
:mod:`syncd.datacite.pools`.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from syncd.slices import Section, SliceSettings, TtlField

__all__ = ["SECTION", "SETTINGS", "DataciteSettings", "contact"]

DAY = 86_400.0


class DataciteSettings(BaseModel):
    """DataCite REST API (``https://api.datacite.org``)."""

    base_url: str = Field("https://api.datacite.org", description="DataCite REST API base URL.")
    mailto: str | None = Field(
        None,
        description="Contact address sent in the User-Agent, as DataCite asks: identified clients get "
        "1,000 requests per 5 minutes instead of 500 (default: crossref.mailto).",
    )


SECTION = Section("datacite", DataciteSettings)
"""``[datacite]``: read with ``SECTION.of(settings)``."""

SETTINGS = SliceSettings(
    sections=(SECTION,),
    ttls={"datacite": TtlField(1 * DAY, "DataCite works (seconds).")},
    watch={"datacite_queries": (list[str], list, "DataCite search queries.")},
    tool_set=True,
)
"""What the DataCite slice adds to the settings."""


def contact(settings: BaseModel) -> str | None:
    """The contact address sent to DataCite: ``datacite.mailto``, else ``crossref.mailto`` (or None).

    ``crossref.mailto`` is read when the settings hold a ``[crossref]`` section with one.
    """
    crossref = getattr(settings, "crossref", None)
    return SECTION.of(settings).mailto or getattr(crossref, "mailto", None) or None
