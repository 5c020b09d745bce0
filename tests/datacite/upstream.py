"""A strict DataCite + doi.org upstream over the recorded corpus, at the ``httpx.MockTransport`` seam.

Routes answer only the requests the slice is meant to send (origin, path and query predicate);
a content-negotiation path nothing was set for is DataCite's recorded 404; anything else is a 599 the
test sees as a failure. Bodies are the recorded ones in
``tests/corpus/datacite/`` (``SOURCES.md`` says what is exact and what the fixture author trimmed).
A recorded ``GET /dois/{doi}`` body (``work/``) answers the list read ``GET /dois?query=doi:"<doi>"``
as the one record of a list page: ``{"data": [data], "included": included, "meta": {"total": 1}}``
(the same record in the list endpoint's envelope; §7.2 of the contract asks both to read alike).
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Callable
from typing import Any

import httpx

from tests.corpus_path import CORPUS
from tests.fakedatacite import ids_page

__all__ = ["DATACITE", "DOI_ORG", "Recorded", "recorded_json"]

DATACITE = "https://api.datacite.org"
DOI_ORG = "https://doi.org"
_DOI_PHRASE = re.compile(r'^doi:"(.+)"$')
_DOI_BATCH = re.compile(r"^doi:\((.+)\)$")
_PHRASE = re.compile(r'"((?:[^"\\]|\\.)+)"')


def recorded_json(rel: str) -> Any:
    """A recorded DataCite body, parsed (``rel`` under ``tests/corpus/datacite/``)."""
    return json.loads((CORPUS / "datacite" / rel).read_text(encoding="utf-8"))


def _work_file(doi: str) -> str:
    return "work/" + doi.replace("/", "_") + ".json"


def as_list_page(body: dict[str, Any]) -> dict[str, Any]:
    """A recorded single-record body in the list endpoint's envelope (one record)."""
    return {"data": [body["data"]], "included": body.get("included", []), "meta": {"total": 1}, "links": {}}


class Recorded:
    """The upstream: ``works`` (DOI -> list-page body), ``ra`` (DOI -> doi.org body), counters, a switch.

    A batch read ``query=doi:("a" OR "b" ...)`` is answered from ``works`` too (the records held, in
    the order asked; the others left out, as DataCite does), and so is an ``ids=a,b`` read
    (:meth:`_ids`: ``fields[dois]`` applied, a linking copy served as held).
    ``down``: every request fails with a connection error (upstream unreachable); ``doi_org_down``:
    only doi.org's do. ``calls`` lists
    ``(host, path, params)`` of each request answered.
    """

    def __init__(self) -> None:
        self.works: dict[str, dict[str, Any]] = {}
        self.ra: dict[str, Any] = {}
        self.lists: list[tuple[Callable[[str, dict[str, str]], bool], Any, int]] = []
        self.renders: dict[tuple[str, str], tuple[int, str]] = {}
        self.calls: list[tuple[str, str, dict[str, str]]] = []
        self.user_agents: list[str] = []
        self.down = False
        self.doi_org_down = False
        self.throttled: dict[str, str] | None = None
        """When set, every DataCite request answers 429 with these headers (e.g. ``Retry-After``) and
        the body the anchor's tests construct (no 429 has ever been recorded)."""

    def add_work(self, doi: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """Serve ``doi``'s record: ``body`` (a list page) or its recorded ``work/`` body as a list page."""
        page = body if body is not None else as_list_page(recorded_json(_work_file(doi)))
        self.works[doi.lower()] = page
        return page

    def add_ra(self, doi: str, rel: str) -> None:
        """Answer doi.org ``/ra/{doi}`` with the recorded ``ra/`` file ``rel``."""
        self.ra[doi] = recorded_json(rel)

    def add_list(self, match: Callable[[str, dict[str, str]], bool], body: Any, status: int = 200) -> None:
        """Answer a list request (``path``, ``params``) that ``match`` accepts with ``body``."""
        self.lists.append((match, body, status))

    def transport(self) -> httpx.MockTransport:
        """The ``httpx`` transport of this upstream."""
        return httpx.MockTransport(self._answer)

    def _answer(self, request: httpx.Request) -> httpx.Response:
        if self.down:
            raise httpx.ConnectError("upstream down", request=request)
        url = request.url
        params = dict(url.params)
        self.calls.append((url.host, url.path, params))
        self.user_agents.append(request.headers.get("user-agent", ""))
        if url.host == "doi.org" and self.doi_org_down:
            raise httpx.ConnectError("doi.org down", request=request)
        if url.host == "doi.org" and url.path.startswith("/ra/"):
            doi = urllib.parse.unquote(url.raw_path.decode().split("?")[0][len("/ra/") :])
            if doi in self.ra:
                return httpx.Response(200, json=self.ra[doi])
            return httpx.Response(200, json=[{"DOI": doi, "status": "DOI does not exist"}])
        if url.host != "api.datacite.org":
            return httpx.Response(599)
        if self.throttled is not None:
            too_many = {"errors": [{"status": "429", "title": "Too Many Requests"}]}
            return httpx.Response(429, json=too_many, headers=self.throttled)
        if url.path == "/dois" and "query" in params and _DOI_PHRASE.match(params["query"]):
            doi = _DOI_PHRASE.match(params["query"]).group(1).replace('\\"', '"').lower()  # type: ignore[union-attr]
            page = self.works.get(doi, {"data": [], "included": [], "meta": {"total": 0}, "links": {}})
            return httpx.Response(200, json=page)
        if url.path == "/dois" and "ids" in params:
            return httpx.Response(200, json=self._ids(params))
        batch = _DOI_BATCH.match(params.get("query", "")) if url.path == "/dois" else None
        if batch is not None:
            pages = [
                self.works[d.lower()] for d in _PHRASE.findall(batch.group(1)) if d.lower() in self.works
            ]
            data = [r for page in pages for r in page["data"]]
            included = [c for page in pages for c in page.get("included", [])]
            body = {"data": data, "included": included, "meta": {"total": len(data)}, "links": {}}
            return httpx.Response(200, json=body)
        for match, body, status in self.lists:
            if match(url.path, params):
                return httpx.Response(status, json=body)
        key = (url.raw_path.decode().split("?")[0], url.query.decode())
        if key in self.renders:
            status, text = self.renders[key]
            return httpx.Response(status, text=text)
        if url.path.startswith(("/dois/text/", "/dois/application/")):  # content negotiation not held
            return httpx.Response(404, text=(CORPUS / "datacite/error/negotiation_404.json").read_text())
        return httpx.Response(599)

    def _ids(self, params: dict[str, str]) -> dict[str, Any]:
        """DataCite's ``ids=`` page: the held records of the comma-separated ids (case-insensitive, in
        the order asked, unknown ones dropped), cut to ``fields[dois]`` when given (attributes and
        relationships of those names; ``client`` is a relationship), ``included`` only with ``include``.
        """
        held = {doi: (work["data"], work.get("included", [])) for doi, work in self.works.items()}
        return ids_page(params, held)

    def add_render(self, exchange: str) -> tuple[str, str]:
        """Serve the recorded content-negotiation exchange ``non-json/<exchange>``; its ``(path, query)``."""
        recorded = recorded_json(f"non-json/{exchange}")
        url = httpx.URL(recorded["request"]["uri"])
        key = (url.raw_path.decode().split("?")[0], url.query.decode())
        self.renders[key] = (int(recorded["status"]), str(recorded["body_text"]))
        return key
