"""Crossref REST API client (``GET {base}/works/{doi}``), budgeted through :class:`UpstreamHTTP`.

Crossref sends no validators (no ETag, no Last-Modified: SOURCES.md), but any it sends are kept and
replayed. Its 404 is the plain text ``Resource not found.`` (sometimes labelled JSON), so a 404 body
is never parsed. A 200 must be ``{"status": "ok", "message-type": "work", "message": {...}}`` whose
``message.DOI`` is the DOI asked for (ASCII case-insensitive; BC-07), else it is malformed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from syncd import __version__
from syncd.budget.buckets import Budget
from syncd.crossref.settings import SECTION
from syncd.errors import MalformedResponse, UpstreamRejected, UpstreamUnavailable
from syncd.normalize.doi import doi_path_segment
from syncd.upstream.http import Deadline, Response, UpstreamHTTP
from syncd.upstream.identity import foreign_not_found, is_crossref_not_found

if TYPE_CHECKING:
    import httpx

    from syncd.config import Settings

__all__ = [
    "CrossrefClient",
    "EntityAnswer",
    "ListAnswer",
    "WorkAnswer",
    "rejection_error",
    "user_agent",
]


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


@dataclass(frozen=True)
class EntityAnswer:
    """Crossref's answer for one single-record route (``/journals/{issn}``, ``/members/{id}``...).

    ``status``: ``ok`` (``message`` and ``text`` = the raw body) or ``not_found`` (404).
    """

    status: str
    message: dict[str, Any] | None
    text: str | None


@dataclass(frozen=True)
class ListAnswer:
    """A Crossref list answer (``work-list``, ``journal-list``, ``funder-list``).

    ``message`` holds ``items``, ``total-results``, optional ``next-cursor`` and ``facets``; ``text`` is
    the raw body. ``status`` is ``not_found`` when the parent of a sub-resource (``/journals/{issn}/works``)
    does not exist (plain-text 404).
    """

    status: str
    message: dict[str, Any] | None
    text: str | None


_REJECTION_HINTS = {
    "unknown_filter": "Use a filter key Crossref lists for /works (hyphenated: from-pub-date, has-abstract).",
    "sort_cursor_conflict": "Publication-date sorts cannot be walked by cursor: use offset paging, or sort "
    "by created/deposited/indexed for a cursor walk.",
    "invalid_cursor": 'The cursor expired or is unknown (Crossref keeps them ~5 minutes): restart with "*".',
    "invalid_parameter": "Correct the rejected parameter value; it was refused by Crossref.",
}
_VALID_FILTERS = re.compile(r"Valid filters for this route are:\s*(.+)$", re.IGNORECASE | re.DOTALL)


def rejection_error(exc: UpstreamRejected | UpstreamUnavailable) -> UpstreamRejected:
    """Map Crossref's rejection body (``exc.body``) to the declared reason: the one place for it.

    ``message[].type`` -> reason: ``filter-not-available`` -> ``unknown_filter`` (with ``suggestion``, the
    hyphenated key, when Crossref's own valid-filter list contains it), ``sort-criteria-incompatible-with-
    cursor`` -> ``sort_cursor_conflict``, ``cursor-invalid`` -> ``invalid_cursor``, anything else (or an
    unparseable body) -> ``invalid_parameter``. The error carries ``rejected: [{type, value}]``; Crossref's
    raw body is never relayed.
    """
    body = exc.body if isinstance(exc.body, dict) else {}
    items = (
        [m for m in body.get("message") or [] if isinstance(m, dict)]
        if isinstance(body.get("message"), list)
        else []
    )
    rejected = [{"type": str(m.get("type", "")), "value": str(m.get("value", ""))} for m in items]
    types = {r["type"] for r in rejected}
    suggestion: str | None = None
    if "filter-not-available" in types:
        reason = "unknown_filter"
        for m in items:
            if m.get("type") != "filter-not-available":
                continue
            value = str(m.get("value", ""))
            hyphenated = value.replace("_", "-").replace(".", "-") if "_" in value else None
            listed = _VALID_FILTERS.search(str(m.get("message", "")))
            valid = {v.strip() for v in listed.group(1).split(",")} if listed else set()
            if hyphenated and (hyphenated in valid or not valid):
                suggestion = hyphenated
        names = ", ".join(r["value"] for r in rejected if r["type"] == "filter-not-available")
        message = f"Crossref does not know the filter {names!r}"
        if suggestion:
            message += f"; did you mean {suggestion!r}?"
    elif "sort-criteria-incompatible-with-cursor" in types:
        reason = "sort_cursor_conflict"
        message = "Crossref refuses a publication-date sort together with a cursor"
    elif "cursor-invalid" in types:
        reason = "invalid_cursor"
        message = "Crossref did not recognise the cursor token (expired or malformed)"
    else:
        reason = "invalid_parameter"
        shown = "; ".join(f"{r['type']}: {r['value']}" for r in rejected) or "unparseable rejection body"
        message = f"Crossref rejected the request ({shown})"
    return UpstreamRejected(
        message,
        reason=reason,
        hint=_REJECTION_HINTS[reason],
        rejected=rejected or None,
        suggestion=suggestion,
    )


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
        section = SECTION.of(settings)
        self.base_url = section.base_url
        self.http = UpstreamHTTP(
            "crossref",
            section.base_url,
            budget,
            headers={"User-Agent": user_agent(section.mailto), "Accept": "application/json"},
            transport=transport,
            network=settings.network,
            rate_window_s=1.0,
            expected_api_pool="polite" if section.mailto else None,
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
            UpstreamUnavailable: a 404 whose body is not Crossref's own (``crossref.base_url`` may be wrong).
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

    def get_entity(self, path: str, message_type: str, deadline: Deadline) -> EntityAnswer:
        """GET a single-record Crossref route in the ``crossref_single`` pool.

        GET a single-record route (``/journals/{issn}``, ``/funders/{id}``, ``/members/{id}``,
        ``/prefixes/{p}``) in the ``crossref_single`` pool; ``path`` already percent-encoded.

        Raises:
            MalformedResponse: the 200 body is not ``{"status": "ok", "message-type": message_type}``.
            UpstreamRejected: HTTP 400, mapped by :func:`rejection_error`.
            UpstreamError, BudgetExhausted: see :meth:`UpstreamHTTP.get`.
        """
        try:
            resp = self.get_json(path, deadline, pool="crossref_single", accept=(200, 404))
        except UpstreamRejected as exc:
            raise rejection_error(exc) from exc
        if resp.status == 404:
            self._own_not_found(resp)
            return EntityAnswer("not_found", None, None)
        body = resp.json
        if not (
            isinstance(body, dict)
            and body.get("message-type") == message_type
            and isinstance(body.get("message"), dict)
        ):
            raise MalformedResponse(f"crossref: the answer is not a {message_type} record")
        return EntityAnswer("ok", body["message"], resp.text)

    def get_list(
        self, path: str, params: Mapping[str, str], list_type: str, deadline: Deadline
    ) -> ListAnswer:
        """GET a Crossref list route in the ``crossref_list`` pool.

        GET a list route (``/works``, ``/journals``, ``/funders``, ``/journals/{issn}/works``...) in the
        ``crossref_list`` pool.

        A 404 whose JSON body says ``cursor-invalid`` is a rejection (``invalid_cursor``); any other 404
        (plain text: the parent of a sub-resource does not exist) is ``status="not_found"``.

        Raises:
            UpstreamRejected: HTTP 400 or a bad cursor, mapped by :func:`rejection_error`.
            MalformedResponse: the body is not a ``list_type`` with an ``items`` list.
            UpstreamError, BudgetExhausted: see :meth:`UpstreamHTTP.get`.
        """
        try:
            resp = self.get_json(path, deadline, params=dict(params), accept=(200, 404))
        except UpstreamRejected as exc:
            raise rejection_error(exc) from exc
        if resp.status == 404:
            rejected = UpstreamRejected("crossref: 404 on a list route", status=404)
            try:
                rejected.body = json.loads(resp.text)
            except ValueError:
                rejected.body = None
            if isinstance(rejected.body, dict) and rejected.body.get("message-type") == "resource-failure":
                raise rejection_error(rejected)
            self._own_not_found(resp)
            return ListAnswer("not_found", None, None)
        body = resp.json
        if not (isinstance(body, dict) and body.get("message-type") == list_type):
            raise MalformedResponse(f"crossref: the answer is not a {list_type}")
        message = body.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("items"), list):
            raise MalformedResponse(f"crossref: the {list_type} has no items")
        return ListAnswer("ok", message, resp.text)

    def _own_not_found(self, resp: Response) -> None:
        """Raise unless a 404 body is Crossref's own (a wrong ``crossref.base_url`` is no miss).

        Raises:
            UpstreamUnavailable: the 404 came from something else than Crossref.
        """
        if not is_crossref_not_found(resp.text):
            raise foreign_not_found("crossref", "crossref.base_url", self.base_url, resp.text)

    def _answer(self, doi: str, resp: Response) -> WorkAnswer:
        if resp.status == 404:
            self._own_not_found(resp)
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
