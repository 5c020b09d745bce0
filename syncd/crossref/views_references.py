"""The reference list of a Crossref work as the reference index keeps it (pure)."""

from __future__ import annotations

from typing import Any

__all__ = ["cited_dois"]


def cited_dois(message: dict[str, Any]) -> tuple[str, ...]:
    """The DOIs a Crossref work ``message`` cites: ``reference[].DOI`` lower-cased, deduplicated, in order.

    The reference index (``work_references``) holds them; a reference without a ``DOI`` (text only)
    is not indexed.
    """
    out: dict[str, None] = {}
    for ref in message.get("reference") or []:
        doi = ref.get("DOI") if isinstance(ref, dict) else None
        if isinstance(doi, str) and doi.strip().startswith("10."):
            out.setdefault(doi.strip().lower()[:1024], None)
    return tuple(out)
