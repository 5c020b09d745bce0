"""Crossref REST API client (``GET {base}/works/{doi}``), budgeted through :class:`UpstreamHTTP`.

Crossref sends no validators (no ETag, no Last-Modified: SOURCES.md), but any it sends are kept and
replayed. Its 404 is the plain text ``Resource not found.`` (sometimes labelled JSON), so a 404 body
is never parsed. A 200 must be ``{"status": "ok", "message-type": "work", "message": {...}}`` whose
``message.DOI`` is the DOI asked for (ASCII case-insensitive; BC-07), else it is malformed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from syncd import __version__
from syncd.budget import Budget
from syncd.config import Settings
from syncd.errors import MalformedResponse
from syncd.normalize.doi import doi_path_segment
from syncd.upstream.http import Deadline, Response, UpstreamHTTP

__all__ = ["CrossrefClient", "WorkAnswer", "user_agent"]


def _ascii_lower(value: str) -> str:
    return "".join(c.lower() if c.isascii() else c for c in value)


def user_agent(mailto: str | None) -> str:
    """Polite User-Agent: ``syncd/<version> (https://github.com/syncd; mailto:<addr>)``."""
    if mailto:
        return f"syncd/{__version__} (https://pypi.org/project/syncd/; mailto:{mailto})"
    return f"syncd/{__version__} (https://pypi.org/project/syncd/)"


@dataclass(frozen=True)
class WorkAnswer:
    """Crossref's answer for one DOI.

    ``status``: ``ok`` (``message`` and ``text`` = the raw body), ``not_modified`` (304) or
    ``not_found`` (404). ``etag``/``last_modified`` as sent by Crossref (normally None).
    """

    status: str
    message: dict[str, Any] | None
    text: str | None
    etag: str | None
    last_modified: str | None


class CrossrefClient:
    """Crossref client for the ``crossref_single`` pool.

    Args:
        settings: ``crossref.base_url`` and ``crossref.mailto`` are used.
        budget: the shared budget.
        transport: optional httpx transport (tests).
    """

    def __init__(
        self, settings: Settings, budget: Budget, transport: httpx.BaseTransport | None = None
    ) -> None:
        self.http = UpstreamHTTP(
            "crossref",
            settings.crossref.base_url,
            budget,
            headers={"User-Agent": user_agent(settings.crossref.mailto), "Accept": "application/json"},
            transport=transport,
        )

    def close(self) -> None:
        """Close connections."""
        self.http.close()

    def get_work(
        self,
        doi: str,
        deadline: Deadline,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
    ) -> WorkAnswer:
        """``GET /works/{doi}`` (DOI percent-encoded, ``/`` kept) with whatever validators are stored.

        Raises:
            MalformedResponse: the 200 body is not a work, or names another DOI.
            UpstreamError: any other failure (see :meth:`UpstreamHTTP.get`).
            BudgetExhausted: no token before the deadline.
        """
        headers: dict[str, str] = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        resp = self.http.get(
            "crossref_single",
            f"/works/{doi_path_segment(doi)}",
            deadline=deadline,
            headers=headers,
            accept=(200, 304, 404),
            parse_json=(200,),
        )
        return self._answer(doi, resp)

    def get_json(
        self,
        path: str,
        deadline: Deadline,
        *,
        params: dict[str, str] | None = None,
        pool: str = "crossref_list",
        accept: tuple[int, ...] = (200,),
    ) -> Response:
        """GET any Crossref route (``/works?...``, ``/journals/{issn}``, ``/members/{id}``...) in ``pool``.

        ``path`` must already be percent-encoded; ``params`` are encoded by httpx. Single-record routes
        belong to ``crossref_single``, queries/filters/cursors to ``crossref_list``. A 404 (when in
        ``accept``) is returned unparsed: Crossref's 404 is plain text, except a bad cursor.

        Raises:
            UpstreamRejected: HTTP 400 (``exc.body`` holds Crossref's ``validation-failure`` JSON).
            UpstreamError, BudgetExhausted: see :meth:`UpstreamHTTP.get`.
        """
        return self.http.get(pool, path, deadline=deadline, params=params, accept=accept, parse_json=(200,))

    def list_works(self, params: dict[str, str], deadline: Deadline) -> dict[str, Any]:
        """``GET /works?{params}`` in the list pool; returns the ``message`` of a ``work-list`` answer.

        Raises:
            MalformedResponse: the body is not a ``work-list``.
            UpstreamRejected, UpstreamError, BudgetExhausted: see :meth:`get_json`.
        """
        body = self.get_json("/works", deadline, params=params).json
        if not (isinstance(body, dict) and body.get("message-type") == "work-list"):
            raise MalformedResponse("crossref: the answer is not a work list")
        message = body.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("items"), list):
            raise MalformedResponse("crossref: the work list has no items")
        return message

    @staticmethod
    def _answer(doi: str, resp: Response) -> WorkAnswer:
        if resp.status == 404:
            return WorkAnswer("not_found", None, None, None, None)
        etag, last_modified = resp.headers.get("etag"), resp.headers.get("last-modified")
        if resp.status == 304:
            return WorkAnswer("not_modified", None, None, etag, last_modified)
        body = resp.json
        if not (
            isinstance(body, dict)
            and body.get("status") == "ok"
            and body.get("message-type") == "work"
            and isinstance(body.get("message"), dict)
        ):
            raise MalformedResponse("crossref: the answer is not a work record")
        message: dict[str, Any] = body["message"]
        got = message.get("DOI")
        if not isinstance(got, str) or _ascii_lower(got) != _ascii_lower(doi):
            raise MalformedResponse("crossref: the answer is for another DOI", reason="malformed_response")
        return WorkAnswer("ok", message, resp.text, etag, last_modified)
