"""Crossref's ``filter=doi:A,doi:B,...`` list requests: which DOIs fit in one, and its parameters (pure).

Used by the batch revalidation (:mod:`syncd.crossref.lookups_revalidate`), the batch lookup
(:mod:`syncd.crossref.lookups_batch`) and the DOI watches (:mod:`syncd.crossref.walk`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["GROUP", "batch_params", "filter_safe"]

GROUP = 50
"""DOIs per list request (keeps the URL well under common 8 KiB limits)."""

_FILTER_SAFE = re.compile(r"10\.[0-9]+(?:\.[0-9]+)*/[A-Za-z0-9\-._;()/]+")
"""A DOI Crossref's ``filter=doi:A,doi:B`` parser reads back whole: the suffix characters Crossref
recommends (``a-z A-Z 0-9 - . _ ; ( ) /``). A comma splits the filter list; ``:`` splits name from
value; spaces, ``&``, ``#``, ``+``, ``<>`` and non-ASCII letters are known to be mangled or refused."""


def filter_safe(doi: str) -> bool:
    """Whether ``doi`` can go into a ``doi:`` list filter (else it is looked up alone, ``/works/{doi}``)."""
    return _FILTER_SAFE.fullmatch(doi) is not None


def batch_params(dois: Sequence[str]) -> dict[str, str]:
    """Query parameters of one stamp request (``/works``) for ``dois``, each :func:`filter_safe`.

    ``filter=doi:A,doi:B,...``, ``select=DOI,indexed`` and ``rows`` the number of DOIs.
    """
    return {"filter": ",".join(f"doi:{d}" for d in dois), "select": "DOI,indexed", "rows": str(len(dois))}
