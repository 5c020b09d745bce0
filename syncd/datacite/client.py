"""DataCite REST API client (``{datacite.base_url}/dois``, ``/repositories``, content negotiation).

Every request goes through the shared budget's ``datacite`` pool (1,000 requests per 5 minutes when
identified, 500 anonymous: :mod:`syncd.datacite.pools`). DataCite counts a client as
identified when its User-Agent holds an e-mail address, so the contact (``datacite.mailto``, else
``crossref.mailto``) is sent there, ``mailto:`` inside the parentheses, and never in a URL.

A record is read through the list endpoint, ``GET /dois?query=doi:"<doi>"&include=client&
affiliation=true&publisher=true&page[size]=1`` (``../shared/spec/datacite.md`` §2): ``GET /dois/{doi}``
inlines every citing DOI and a base64 XML copy (1.2 MB for the most-cited dataset). DataCite sends no
``Last-Modified``, no 304 and, since June 2026, no ETag: nothing is sent back conditionally.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from syncd import __version__
from syncd.budget.buckets import Budget
from syncd.datacite.params import doi_query
from syncd.datacite.pools import DATACITE
from syncd.datacite.settings import SECTION, contact
from syncd.datacite.views import stored_body
from syncd.errors import MalformedResponse, NotFound, UpstreamRejected
from syncd.upstream.http import Deadline, Response, UpstreamHTTP

if TYPE_CHECKING:
    import httpx

    from syncd.config import Settings

__all__ = [
    "POOL",
    "RECORD_PARAMS",
    "DataciteClient",
    "ListAnswer",
    "RenderAnswer",
    "parse_error",
    "user_agent",
]

POOL = DATACITE.name
"""The budget pool of every DataCite request (:data:`syncd.datacite.pools.DATACITE`)."""

RECORD_PARAMS = {"sort": "-created", "include": "client", "affiliation": "true", "publisher": "true"}
"""Sent with every record read: the newest copy first, its client, affiliations and publisher as objects."""

BATCH_MAX = 50
"""Most DOIs asked in one ``query=doi:(a OR b ...)`` request (revalidation in batches)."""


def user_agent(mailto: str | None) -> str:
    """``syncd/<version> (https://pypi.org/project/syncd/; mailto:<addr>)``; no mailto part without one."""
    if mailto:
        return f"syncd/{__version__} (https://pypi.org/project/syncd/; mailto:{mailto})"
    return f"syncd/{__version__} (https://pypi.org/project/syncd/)"


@dataclass(frozen=True)
class ListAnswer:
    """A ``/dois`` or ``/repositories`` list answer: the parsed ``body`` and its ``text`` as received."""

    body: dict[str, Any]
    text: str


@dataclass(frozen=True)
class RenderAnswer:
    """A content-negotiation answer: HTTP ``status`` (200, 204, 400, 404) and the body ``text``."""

    status: int
    text: str


def _records(body: Any) -> list[dict[str, Any]]:
    """The ``data`` list of a list answer.

    Raises:
        MalformedResponse: the body is not ``{"data": [...]}``.
    """
    if not (isinstance(body, dict) and isinstance(body.get("data"), list)):
        raise MalformedResponse("datacite: the answer is not a list of records")
    return [d for d in body["data"] if isinstance(d, dict)]


def _doi_of(record: dict[str, Any]) -> str:
    attributes = record.get("attributes")
    doi = attributes.get("doi") if isinstance(attributes, dict) else None
    return doi.lower() if isinstance(doi, str) else ""


class DataciteClient:
    """DataCite client for the ``datacite`` pool.

    Args:
        settings: ``datacite.base_url`` and the contact (:attr:`~syncd.config.Settings.datacite_mailto`).
        budget: the shared budget.
        transport: optional httpx transport (tests).
    """

    def __init__(
        self, settings: Settings, budget: Budget, transport: httpx.BaseTransport | None = None
    ) -> None:
        self.http = UpstreamHTTP(
            "datacite",
            SECTION.of(settings).base_url,
            budget,
            headers={"User-Agent": user_agent(contact(settings)), "Accept": "application/json"},
            transport=transport,
            network=settings.network,
            rate_window_s=300.0,
        )

    def close(self) -> None:
        """Close connections."""
        self.http.close()

    def get_list(self, route: str, params: Mapping[str, str], deadline: Deadline) -> ListAnswer:
        """``GET {route}`` (``/dois``, ``/repositories``) with ``params``: a JSON:API list answer.

        Raises:
            NotFound: ``not_found``, HTTP 404 (DataCite answered: the resource does not exist there,
                ``{"errors": [{"status": "404", ...}]}``); never reported as DataCite unreachable.
            UpstreamRejected: HTTP 400 (``body`` holds DataCite's error object: ``parse_exception``,
                ``token_mgr_error``, ``failed to parse date field``).
            MalformedResponse: the body is not ``{"data": [...]}``.
            UpstreamError, BudgetExhausted: see :meth:`UpstreamHTTP.get`.
        """
        resp = self.http.get(POOL, route, deadline=deadline, params=dict(params), accept=(200, 404))
        if resp.status == 404:
            raise NotFound(
                f"DataCite answered HTTP 404 for {route}: no such resource",
                hint="Check the identifier or the datacite.base_url setting; DataCite itself answered.",
                status=404,
            )
        _records(resp.json)
        return ListAnswer(resp.json, resp.text)

    def get_works(self, dois: list[str], deadline: Deadline) -> dict[str, dict[str, Any]]:
        """The stored form of each record of ``dois`` (lower-cased) DataCite holds; at most 50 per call.

        One request, ``query=doi:"a"`` or ``doi:("a" OR "b" ...)``; a DOI missing from the answer is
        not public at DataCite (or another agency's). The newest copy of a DOI wins (``sort=-created``).

        Raises:
            ValueError: more than :data:`BATCH_MAX` DOIs.
            MalformedResponse, UpstreamError, BudgetExhausted: see :meth:`get_list`.
        """
        if len(dois) > BATCH_MAX:
            raise ValueError(f"at most {BATCH_MAX} DOIs per request")
        wanted = {d.lower() for d in dois}
        params = {"query": doi_query(dois), **RECORD_PARAMS, "page[size]": str(max(1, len(dois)))}
        answer = self.get_list("/dois", params, deadline)
        included = answer.body.get("included")
        found: dict[str, dict[str, Any]] = {}
        for record in _records(answer.body):
            doi = _doi_of(record)
            if doi in wanted and doi not in found:
                found[doi] = stored_body(record, included if isinstance(included, list) else None)
        return found

    def render(
        self, mime: str, doi: str, deadline: Deadline, params: Mapping[str, str] | None = None
    ) -> RenderAnswer:
        """``GET /dois/{mime}/{doi}``: DataCite's rendering of ``doi`` as ``mime`` (the MIME unencoded).

        Raises:
            UpstreamError, BudgetExhausted: see :meth:`UpstreamHTTP.get` (5xx after the retries).
        """
        path = f"/dois/{mime}/" + urllib.parse.quote(doi, safe="")
        resp: Response = self.http.get(
            POOL,
            path,
            deadline=deadline,
            params=dict(params or {}),
            headers={"Accept": mime},
            accept=(200, 204, 400, 404),
            parse_json=(),
        )
        return RenderAnswer(resp.status, resp.text)


def parse_error(exc: UpstreamRejected) -> str | None:
    """DataCite's query-syntax message of a 400 (``parse_exception: ...``), or None for another 400."""
    body = exc.body
    errors = body.get("errors") if isinstance(body, dict) else None
    titles: list[str] = []
    if isinstance(errors, dict):
        titles.append(str(errors.get("title", "")))
    elif isinstance(errors, list):
        titles += [str(e.get("title", "")) for e in errors if isinstance(e, dict)]
    for title in titles:
        if any(m in title for m in ("parse_exception", "token_mgr_error", "failed to parse")):
            return title
    return None
