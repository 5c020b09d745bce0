"""The DataCite client's base-URL check and how it identifies itself.

The check: ``GET /dois?page[size]=1`` answers JSON:API with a ``data`` list and a ``meta`` object (the
REST API's DOI search, one record); the identity: the contact its User-Agent carries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from syncd.datacite.settings import contact
from syncd.logsetup import mask_email
from syncd.upstream.probe import Identity, Probe

if TYPE_CHECKING:
    from syncd.config import Settings

__all__ = ["PROBES", "identity"]


def _dois(body: Any) -> bool:
    """True for DataCite's own DOI search answer: JSON with a ``data`` list and a ``meta`` object."""
    if not isinstance(body, dict):
        return False
    return isinstance(body.get("data"), list) and isinstance(body.get("meta"), dict)


PROBES: tuple[Probe, ...] = (Probe("datacite", "datacite", "/dois", _dois, {"page[size]": "1"}),)
"""One DOI search request of one record, paid from the ``datacite`` pool."""


def identity(settings: Settings) -> Identity:
    """The masked contact (``datacite.mailto``, else ``crossref.mailto``), else anonymous with the hint."""
    address = contact(settings)
    if address:
        return Identity("datacite", f"mailto:{mask_email(address)}")
    return Identity(
        "datacite",
        "anonymous",
        "set datacite.mailto (or crossref.mailto): 1,000 requests per 5 minutes instead of 500",
    )
