"""Zenodo REST API client: ``GET {base}/records/{id}`` (RDM JSON), any JSON route, file bytes.

An external DOI is found through a stored search page (:func:`syncd.zenodo.lookups.find_doi`), not
here, so the hit it answers with is kept as the record.

A concept record id answers with a redirect to its latest version, which is followed; the caller
compares the returned record's ``parent.id`` with the id it asked for. 403 (restricted), 404 and
410 (a tombstone body) are outcomes, not errors. Zenodo's weak ``ETag: W/"<revision>"`` is kept and
sent back as ``If-None-Match``; it does not track content, so "changed" is decided by the content
hash (DESIGN.md "Freshness").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from syncd import __version__
from syncd.budget.buckets import Budget
from syncd.errors import MalformedResponse
from syncd.upstream.http import Deadline, Response, UpstreamHTTP
from syncd.upstream.identity import foreign_not_found, is_zenodo_not_found
from syncd.zenodo.settings import SECTION

if TYPE_CHECKING:
    import httpx

    from syncd.config import Settings

__all__ = ["LEGACY_JSON", "RDM_JSON", "ZENODO_WINDOW_S", "BytesAnswer", "RecordAnswer", "ZenodoClient"]

RDM_JSON = "application/vnd.inveniordm.v1+json"
LEGACY_JSON = "application/json"
"""The ``Accept`` file endpoints and vocabularies need (the RDM one gets a 406 there)."""
LATEST_LOCATION_RE = re.compile(r"/records/(\d{1,20})/?$")
"""The record id at the end of the ``Location`` path of ``/records/{id}/versions/latest``."""
ZENODO_WINDOW_S = 60.0
"""The window of Zenodo's ``X-RateLimit-Limit`` (seconds): Flask-Limiter reports its shortest limit,
per minute (guest 60 or 133, 100 with a token, searches 30)."""


@dataclass(frozen=True)
class BytesAnswer:
    """A file read.

    ``status`` (200, 206, 403, 404, 416), the raw ``data`` (at most the cap), the ``content-type``
    and the total file size from ``Content-Range`` (None when not sent).
    """

    status: int
    data: bytes
    content_type: str | None
    total_size: int | None


@dataclass(frozen=True)
class RecordAnswer:
    """Zenodo's answer for one record id.

    ``status``: ``ok`` (``body`` parsed, ``text`` raw), ``not_modified`` (304), ``restricted`` (403),
    ``not_found`` (404) or ``gone`` (410; ``body`` = the tombstone JSON when readable).
    """

    status: str
    body: dict[str, Any] | None
    text: str | None
    etag: str | None
    last_modified: str | None


class ZenodoClient:
    """Zenodo client for the ``zenodo_general`` and ``zenodo_search`` pools.

    Args:
        settings: ``zenodo.base_url`` and ``zenodo.token`` are used (the token only as a header).
        budget: the shared budget.
        transport: optional httpx transport (tests).
    """

    def __init__(
        self, settings: Settings, budget: Budget, transport: httpx.BaseTransport | None = None
    ) -> None:
        headers = {"User-Agent": f"syncd/{__version__} (https://pypi.org/project/syncd/)"}
        if SECTION.of(settings).token is not None:
            headers["Authorization"] = f"Bearer {SECTION.of(settings).token.get_secret_value()}"
        self.base_url = SECTION.of(settings).base_url
        self.http = UpstreamHTTP(
            "zenodo",
            SECTION.of(settings).base_url,
            budget,
            headers=headers,
            transport=transport,
            network=settings.network,
            rate_window_s=ZENODO_WINDOW_S,
        )

    def _own_not_found(self, resp: Response) -> None:
        """Raise unless a 404 body is Zenodo's own JSON (a wrong ``zenodo.base_url`` is no miss).

        Raises:
            UpstreamUnavailable: the 404 came from something else than Zenodo.
        """
        if resp.status == 404 and not is_zenodo_not_found(resp.text):
            raise foreign_not_found("zenodo", "zenodo.base_url", self.base_url, resp.text)

    def close(self) -> None:
        """Close connections."""
        self.http.close()

    def get_record(self, recid: str, deadline: Deadline, *, etag: str | None = None) -> RecordAnswer:
        """``GET /records/{recid}`` with ``Accept: application/vnd.inveniordm.v1+json``.

        Raises:
            MalformedResponse: a 200 body that is not a record.
            UpstreamUnavailable: a 404 whose body is not Zenodo's own (``zenodo.base_url`` may be wrong).
            UpstreamError: any other failure (see :meth:`UpstreamHTTP.get`).
            BudgetExhausted: no token before the deadline.
        """
        headers = {"Accept": RDM_JSON}
        if etag:
            headers["If-None-Match"] = etag
        resp = self.http.get(
            "zenodo_general",
            f"/records/{recid}",
            deadline=deadline,
            headers=headers,
            accept=(200, 304, 403, 404, 410),
            parse_json=(200,),
        )
        etag_out, last_modified = resp.headers.get("etag"), resp.headers.get("last-modified")
        if resp.status == 410:
            try:
                tomb = json.loads(resp.text)
            except ValueError:
                tomb = None
            return RecordAnswer("gone", tomb if isinstance(tomb, dict) else None, resp.text, None, None)
        self._own_not_found(resp)
        if resp.status in (403, 404):
            return RecordAnswer("restricted" if resp.status == 403 else "not_found", None, None, None, None)
        if resp.status == 304:
            return RecordAnswer("not_modified", None, None, etag_out, last_modified)
        body = resp.json
        if not (isinstance(body, dict) and ("id" in body or "recid" in body) and "metadata" in body):
            raise MalformedResponse("zenodo: the answer is not a record")
        return RecordAnswer("ok", body, resp.text, etag_out, last_modified)

    def latest_version(self, recid: str, deadline: Deadline) -> str | None:
        """The newest version's record id of ``recid``'s series (``GET /records/{recid}/versions/latest``).

        The redirect is not followed (zenodo_general pool): Zenodo answers 302 (or 301) whose
        ``Location`` ends in ``/records/{latest}`` (query and fragment ignored, relative or absolute).
        None for Zenodo's own 404 (no such record) and for a redirect whose ``Location`` names no
        record id (logged by the caller; never followed elsewhere).

        Raises:
            UpstreamUnavailable: a 404 whose body is not Zenodo's own (``zenodo.base_url`` may be wrong).
            UpstreamError, BudgetExhausted: see :meth:`UpstreamHTTP.get` (any other status included).
        """
        resp = self.http.get(
            "zenodo_general",
            f"/records/{recid}/versions/latest",
            deadline=deadline,
            headers={"Accept": RDM_JSON},
            accept=(301, 302, 303, 307, 308, 404),
            parse_json=(),
            follow=False,
        )
        self._own_not_found(resp)
        if resp.status == 404:
            return None
        path = urlsplit(resp.headers.get("location", "")[:2048]).path
        found = LATEST_LOCATION_RE.search(path)
        return found.group(1) if found else None

    def get_json(
        self,
        path: str,
        deadline: Deadline,
        *,
        params: dict[str, str] | None = None,
        pool: str = "zenodo_general",
        accept: tuple[int, ...] = (200,),
        accept_header: str = RDM_JSON,
        parse_json: tuple[int, ...] = (200,),
    ) -> Response:
        """GET any Zenodo API route (``/records/{id}/versions``, ``/communities/{x}``...) in ``pool``.

        ``path`` must already be percent-encoded (file keys one segment at a time). Searches
        (``/records?q=``) belong to ``zenodo_search``, everything else to ``zenodo_general``. File
        endpoints refuse the RDM ``Accept`` (406): pass ``accept_header="application/json"`` there.

        Raises:
            UpstreamUnavailable: a 404 (when accepted) whose body is not Zenodo's own.
            UpstreamError, BudgetExhausted: see :meth:`UpstreamHTTP.get`.
        """
        resp = self.http.get(
            pool,
            path,
            deadline=deadline,
            params=params,
            headers={"Accept": accept_header},
            accept=accept,
            parse_json=parse_json,
        )
        self._own_not_found(resp)
        return resp

    def search(self, params: dict[str, str], deadline: Deadline) -> dict[str, Any]:
        """``GET /records?{params}`` in the ``zenodo_search`` pool; returns the body (``hits``, ...).

        Raises:
            MalformedResponse: the body has no ``hits.hits`` list.
            UpstreamError, BudgetExhausted: see :meth:`UpstreamHTTP.get`.
        """
        body = self.get_json("/records", deadline, params=params, pool="zenodo_search").json
        hits = body.get("hits") if isinstance(body, dict) else None
        if not (isinstance(hits, dict) and isinstance(hits.get("hits"), list)):
            raise MalformedResponse("zenodo: the search answer has no hits list")
        return body

    def read_bytes(
        self,
        path: str,
        deadline: Deadline,
        *,
        start: int | None = None,
        length: int,
    ) -> BytesAnswer:
        """GET a file route (``.../files/{key}/content`` or ``.../container/{member}``) as bytes.

        With ``start``, sends ``Range: bytes=start-(start+length-1)`` and expects a 206 (a 200 is
        tolerated: the body is read from its start and cut at ``start + length``). Reading stops after
        the bytes needed, so a whole file is never downloaded. 403, 404 and 416 are outcomes.

        Raises:
            UpstreamError, BudgetExhausted: see :meth:`UpstreamHTTP.get`.
        """
        headers = {"Accept": LEGACY_JSON}
        if start is not None:
            headers["Range"] = f"bytes={start}-{start + length - 1}"
        resp = self.http.get(
            "zenodo_general",
            path,
            deadline=deadline,
            headers=headers,
            accept=(200, 206, 403, 404, 416),
            parse_json=(),
            max_bytes=length + (start or 0),
        )
        raw = resp.content
        total: int | None = None
        content_range = resp.headers.get("content-range", "")
        if "/" in content_range:
            tail = content_range.rsplit("/", 1)[1].strip()
            total = int(tail) if tail.isdigit() else None
        if resp.status == 200 and start:
            raw = raw[start : start + length]
        elif resp.status in (200, 206):
            raw = raw[:length]
        else:
            raw = b""
        return BytesAnswer(resp.status, raw, resp.headers.get("content-type"), total)
