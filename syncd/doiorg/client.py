"""doi.org client: which registration agency (RA) holds a DOI (``GET {doi.base_url}/ra/{doi}``).

doi.org answers ``[{"DOI": "10.5281/zenodo.1", "RA": "DataCite"}]``, or ``[{"DOI": ..., "status": "DOI does
not exist"}]`` / ``"Invalid DOI"``, always with HTTP 200. Requests go through the shared budget's ``doi``
pool. No ``mailto`` is sent to doi.org.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from typing import TYPE_CHECKING

from syncd import __version__
from syncd.budget.buckets import Budget
from syncd.doiorg.settings import SECTION
from syncd.errors import MalformedResponse
from syncd.upstream.http import Deadline, UpstreamHTTP

if TYPE_CHECKING:
    import httpx

    from syncd.config import Settings

__all__ = ["DoiClient", "RaAnswer"]


@dataclass(frozen=True)
class RaAnswer:
    """doi.org's answer for one DOI or prefix.

    ``agency`` is the RA's name as doi.org spells it (``Crossref``, ``DataCite``, ``mEDRA``, ``JaLC``...)
    or None; ``status`` is ``ok`` (agency known), ``not_found`` ("DOI does not exist") or ``invalid``.
    ``text`` is the raw body.
    """

    status: str
    agency: str | None
    text: str


class DoiClient:
    """doi.org client for the ``doi`` pool.

    Args:
        settings: ``doi.base_url`` is used.
        budget: the shared budget.
        transport: optional httpx transport (tests).
    """

    def __init__(
        self, settings: Settings, budget: Budget, transport: httpx.BaseTransport | None = None
    ) -> None:
        self.http = UpstreamHTTP(
            "doi",
            SECTION.of(settings).base_url,
            budget,
            headers={"User-Agent": f"syncd/{__version__}", "Accept": "application/json"},
            transport=transport,
            network=settings.network,
        )

    def close(self) -> None:
        """Close connections."""
        self.http.close()

    def ra(self, doi_or_prefix: str, deadline: Deadline) -> RaAnswer:
        """``GET /ra/{doi}``: the registration agency of a DOI (or a bare prefix such as ``10.5281``).

        Raises:
            MalformedResponse: the body is not the documented list shape.
            UpstreamError, BudgetExhausted: see :meth:`UpstreamHTTP.get`.
        """
        resp = self.http.get("doi", "/ra/" + urllib.parse.quote(doi_or_prefix, safe="/"), deadline=deadline)
        body = resp.json
        if not (isinstance(body, list) and body and isinstance(body[0], dict)):
            raise MalformedResponse("doi.org: the RA answer is not a list of objects")
        first = body[0]
        agency = first.get("RA")
        if isinstance(agency, str) and agency.strip():
            return RaAnswer("ok", agency.strip(), resp.text)
        status = str(first.get("status", "")).lower()
        return RaAnswer("invalid" if "invalid" in status else "not_found", None, resp.text)
