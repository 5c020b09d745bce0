"""The reference list of a Crossref work as the reference index keeps it (pure)."""

from __future__ import annotations

from typing import Any

from syncd.errors import InvalidInput
from syncd.normalize.doi import parse_doi

__all__ = ["MAX_REFERENCE_DOI", "cited_dois", "reference_dois"]

MAX_REFERENCE_DOI = 300
"""Longest reference DOI indexed (characters): a longer ``reference[].DOI`` is a deposit error."""


def reference_dois(message: dict[str, Any]) -> tuple[tuple[str, ...], int]:
    """The DOIs a Crossref work ``message`` cites, and how many ``reference[].DOI`` values are junk.

    Each ``reference[].DOI`` goes through the tools' DOI parser (:func:`syncd.normalize.doi.parse_doi`):
    a doi.org URL or ``doi:`` form is unwrapped, the key lower-cased; a value that is no DOI (spaces, a
    control character such as NUL, no ``10.`` prefix) or longer than :data:`MAX_REFERENCE_DOI` is
    counted and skipped. Deduplicated, in order. A reference without a ``DOI`` (text only) is neither.
    """
    out: dict[str, None] = {}
    junk = 0
    for ref in message.get("reference") or []:
        raw = ref.get("DOI") if isinstance(ref, dict) else None
        if raw is None:
            continue
        if not isinstance(raw, str):
            junk += 1
            continue
        try:
            key = parse_doi(raw).key
        except InvalidInput:
            junk += 1
            continue
        if len(key) > MAX_REFERENCE_DOI:
            junk += 1
            continue
        out.setdefault(key, None)
    return tuple(out), junk


def cited_dois(message: dict[str, Any]) -> tuple[str, ...]:
    """The DOIs a Crossref work ``message`` cites (:func:`reference_dois` without the junk count).

    The reference index (``work_references``) holds them.
    """
    return reference_dois(message)[0]
