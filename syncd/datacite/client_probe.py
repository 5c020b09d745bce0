"""The DataCite client's identity: the contact its User-Agent carries (no base-URL check yet)."""

from __future__ import annotations

from syncd.config import Settings
from syncd.logsetup import mask_email
from syncd.upstream.probe import Identity, Probe

__all__ = ["PROBES", "identity"]

PROBES: tuple[Probe, ...] = ()
"""DataCite's base URL is not checked at start (``syncd cache stats`` asks the three others)."""


def identity(settings: Settings) -> Identity:
    """The masked contact (``datacite.mailto``, else ``crossref.mailto``), else anonymous with the hint."""
    contact = settings.datacite_mailto
    if contact:
        return Identity("datacite", f"mailto:{mask_email(contact)}")
    return Identity(
        "datacite",
        "anonymous",
        "set datacite.mailto (or crossref.mailto): 1,000 requests per 5 minutes instead of 500",
    )
