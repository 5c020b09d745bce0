"""A real HTTP fake of Crossref, Zenodo, doi.org and DataCite, replaying the recorded upstream corpus.

The fake listens on ``127.0.0.1`` (random free port) in a background thread and mounts four services:

* ``fake.crossref_url`` = ``http://127.0.0.1:PORT/crossref`` (Crossref REST API paths),
* ``fake.zenodo_url`` = ``http://127.0.0.1:PORT/zenodo/api`` (Zenodo REST API paths),
* ``fake.doi_url`` = ``http://127.0.0.1:PORT/doi`` (doi.org, only ``/ra/{doi}``),
* ``fake.datacite_url`` = ``http://127.0.0.1:PORT/datacite`` (DataCite: :mod:`tests.fakedatacite`).

Bodies come from ``tests/corpus/`` in the repository (:data:`tests.corpus_path.CORPUS`; override with
``SYNCD_UPSTREAM_CORPUS``, ``--corpus DIR`` or the ``corpus_dir`` argument) and are served byte for byte
with the recorded status and headers, minus the wire headers (``content-encoding``, ``content-length``,
``transfer-encoding``) and hop-by-hop ones. ``Date`` is the current time, ``Content-Length`` is computed.
Recorded rate-limit headers (``x-rate-limit-*``, ``x-ratelimit-*``, ``x-concurrency-limit``, ``x-api-pool``)
are dropped unless ``fake.rate_headers`` is switched on: each recording carries the limits of its own era
and pool (a 2019 polite ``50``, a 2026 public ``5`` with concurrency ``1``), which a client reading them
would take for limits of this fake. With ``fake.crossref_rules`` set (:class:`CrossrefRules`) the fake
enforces Crossref's 2026 limits and announces them on every Crossref answer instead.
Validators (``ETag``/``Last-Modified``) are only sent when ``fake.etags`` / ``fake.last_modified`` is
switched on. Each answer leaves in one write on a keep-alive connection with ``TCP_NODELAY``, so with no
fault injected the fake answers in well under a millisecond (``benchmarks/bench_fake.py``).

Routing (``path`` is relative to the service base, percent-decoded once, ``//`` collapsed, lower-cased for
Crossref and doi.org; the query is compared as a multiset of pairs, ignoring ``mailto`` and
``access_token``), first hit wins:

1. overrides from :meth:`FakeUpstream.set_body` (exact query, then any query), then the cursor walks
   of :meth:`FakeUpstream.serve_cursor_walk` (a scroll of synthetic works, with expiry);
2. :meth:`FakeUpstream.serve_history` for Zenodo ``/records/{id}``;
3. ``Accept`` variants recorded as non-JSON exchanges (Zenodo BibTeX / formatted citation);
4. the recorded request URL (``index.json``, exchange files, a few routes derived from file names or
   ``links.self``), then the same path with the trailing slash toggled; a Crossref query with
   ``sort``/``order`` that no recording has is answered as recorded without them (the items in their
   recorded order: an upstream that does not honour the sort);
5. Crossref cursor chains: a ``cursor`` token equal to a recorded page's ``next-cursor`` gets the next page;
6. Crossref ``/works/{doi}`` from every ``crossref/work/*.json`` by the DOI in the body (URL forms such as
   ``/works/https://doi.org/10.1/x`` and ``doi:`` are accepted), ``/works/{doi}/agency`` synthesised for
   DOIs whose agency is known, ``/works?filter=doi:A,doi:B,...`` (``select`` honoured) as a work list of the
   corpus works named (the others left out, as Crossref does), ``/works?filter=updates:A[,updates:B]``
   (no recording has one) as a work list of the corpus' notice records - recorded ``/works/{doi}``
   bodies and recorded work-list items - whose ``update-to`` names A (or B); Zenodo ``/records/{id}`` from
   ``zenodo/record`` (and ``record-history``, newest preferred) by the id in the body, concept ids
   answer ``302`` to the highest corpus version, ``/records/{id}/versions/latest`` ``302`` to the
   series' newest version the corpus names (a body with ``versions.is_latest`` / legacy ``is_last``
   true, or a legacy ``last_child``; ``404`` when the corpus cannot say), the hits of recorded
   ``/records/{id}/versions`` pages as records too (a versions hit is the whole record), tombstones
   answer ``410``; Zenodo ``/funders`` and ``/awards`` with ``q=identifiers.identifier:"<id>"`` from the
   recorded funder/award entries (``zenodo/funder``, ``zenodo/vocabulary``) carrying that identifier;
   doi.org ``/ra/{doi}[,{doi}...]``;
7. single-record paths (not a collection such as ``/works`` or ``/records``) ignore the query;
8. otherwise the service's real "not found": Crossref ``404 text/plain`` ``Resource not found.``, Zenodo
   ``404`` JSON ``{"status": 404, "message": "The persistent identifier does not exist."}``.
"""

from __future__ import annotations

import contextlib
import email.utils
import hashlib
import itertools
import json
import mimetypes
import os
import re
import socket
import ssl
import struct
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from tests.corpus_path import CORPUS
from tests.fakedatacite import DataciteCorpus

__all__ = [
    "CORPUS_DIR",
    "FAULT_KINDS",
    "SERVICES",
    "CrossrefRules",
    "CursorWalk",
    "FakeUpstream",
    "RecordedRequest",
    "quote_doi",
]

CORPUS_DIR = Path(os.environ.get("SYNCD_UPSTREAM_CORPUS") or CORPUS)
"""Default location of the recorded corpus: ``$SYNCD_UPSTREAM_CORPUS``, else ``tests/corpus/``."""

SERVICES: dict[str, str] = {
    "crossref": "/crossref",
    "zenodo": "/zenodo/api",
    "doi": "/doi",
    "datacite": "/datacite",
}
"""Service name -> mount point on the fake server."""

FAULT_KINDS = frozenset(
    {
        "refuse",
        "reset",
        "hang",
        "slow",
        "status",
        "rate_limit",
        "html",
        "text",
        "empty",
        "truncated",
        "wrong_shape",
        "latency",
        "bad_encoding",
        "redirect_loop",
    }
)
"""Fault kinds accepted by :meth:`FakeUpstream.fault`."""

_WIRE_HEADERS = frozenset(
    {"content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive", "status", "date"}
)
_VALIDATORS = frozenset({"etag", "last-modified"})
_RATE_HEADERS = frozenset(
    {
        "x-rate-limit-limit",
        "x-rate-limit-interval",
        "x-ratelimit-limit",
        "x-ratelimit-interval",
        "x-ratelimit-remaining",
        "x-ratelimit-reset",
        "x-concurrency-limit",
        "x-api-pool",
        "x-rate-limit-type",
    }
)
_IGNORED_QUERY = frozenset({"mailto", "access_token"})
_JSON_CT = "application/json"
_DEFAULT_LAST_MODIFIED = "Mon, 01 Jan 2024 00:00:00 GMT"
_CROSSREF_COLLECTIONS = frozenset(
    {"works", "journals", "funders", "members", "prefixes", "types", "licenses"}
)
_ZENODO_COLLECTIONS = frozenset(
    {"records", "versions", "communities", "funders", "awards", "licenses", "depositions", "subjects"}
)
_URL_DOI = re.compile(r"^(?:https?:/{1,2}(?:dx\.)?doi\.org/|doi:)", re.IGNORECASE)
_RA_LABELS = {"crossref": "Crossref", "datacite": "DataCite", "medra": "mEDRA"}
# doi.org RA for a few well-known non-Crossref prefixes (everything else: corpus, then "does not exist").
_RA_PREFIXES = {
    "10.5281": "DataCite",
    "10.48550": "DataCite",
    "10.6084": "DataCite",
    "10.5061": "DataCite",
    "10.17605": "DataCite",
    "10.1430": "mEDRA",
}
# Files that index.json lacks and whose request URL is not recorded: (file, service, relative URL).
# The URLs are reconstructed from the file names, so they are a best guess at what a client sends.
_DERIVED_ROUTES: tuple[tuple[str, str, str], ...] = (
    ("crossref/work-list/funders-100000001-works_rows-30_cursor-star.json", "crossref",
     "/funders/100000001/works?rows=30&cursor=*"),
    ("crossref/work-list/funders-100000001-works_rows-30_cursor-star.json", "crossref",
     "/funders/10.13039/100000001/works?rows=30&cursor=*"),
    ("crossref/work-list/works_filter-from-created-date-2019-06-01-container-title-Physical-Review-C_cursor-star"
     ".json", "crossref",
     "/works?filter=from-created-date:2019-06-01,container-title:Physical Review C&cursor=*"),
    ("zenodo/versions/records-22705923-versions_page-1_size-3.json", "zenodo",
     "/records/22705923/versions?page=1&size=3"),
    ("zenodo/versions/records-22705923-versions_page-3_size-25_past-end.json", "zenodo",
     "/records/22705923/versions?page=3&size=25"),
    ("zenodo/vocabulary/awards_q-SYMBA_page-1_size-10.json", "zenodo", "/awards?q=SYMBA&page=1&size=10"),
    ("zenodo/vocabulary/communities_q-astronomy_page-1_size-2.json", "zenodo",
     "/communities?q=astronomy&page=1&size=2"),
    ("zenodo/vocabulary/funders_q-wellcome_page-1_size-3.json", "zenodo",
     "/funders?q=wellcome&page=1&size=3"),
    ("zenodo/vocabulary/funders_q-identifiers.identifier-10.13039-100000002_size-1.json", "zenodo",
     "/funders?q=identifiers.identifier:10.13039/100000002&size=1"),
    ("zenodo/vocabulary/funders_q-identifiers.identifier-10.13039-100000002_size-1.json", "zenodo",
     '/funders?q=identifiers.identifier:"10.13039/100000002"&size=1'),
    ("zenodo/search/records_q-doi-10.3897-ap.e134190_all-versions_size-2_new-api.json", "zenodo",
     '/records?q=doi:"10.3897/ap.e134190"&all_versions=true&size=2'),
    ("zenodo/vocabulary/vocabularies-licenses_q-mit_page-1_size-3.json", "zenodo",
     "/vocabularies/licenses?q=mit&page=1&size=3"),
    ("zenodo/search/records_q-climate_size-2_sort-bestmatch_new-api.json", "zenodo",
     "/records?q=climate&size=2&sort=bestmatch"),
    ("zenodo/community/communities-symbaproject.json", "zenodo", "/communities/symbaproject"),
    ("zenodo/funder/funders-01cwqze88.json", "zenodo", "/funders/01cwqze88"),
    ("zenodo/error/funders-0zzzzzz00_404.json", "zenodo", "/funders/0zzzzzz00"),
    ("zenodo/container/records-7614815_files_monthly_shapes_0_20.zip_container.json", "zenodo",
     "/records/7614815/files/monthly_shapes_0_20.zip/container"),
    # syncd's start-up upstream check (syncd.upstream.check) asks these two; no recording has exactly
    # them, so the nearest recorded answers of the same shape serve (a rows=0 work list, a size-1 page)
    ("crossref/work-list/works_query-lagotto_rows-0_facets.json", "crossref", "/works?rows=0"),
    ("zenodo/search/records_sort--mostrecent_size-1.json", "zenodo", "/records?size=1"),
)  # fmt: skip
# Cursor chains: file-name stem -> pages in order (the star page's next-cursor is page 2's cursor ...).
_CURSOR_CHAIN = re.compile(r"^(?P<stem>.+)_cursor-(?P<page>star|page(?P<n>\d+))")

_BC15_HTML = (
    b"<html><body><h1>429 Too Many Requests</h1>\n"
    b"You have sent too many requests in a given amount of time.\n</body></html>\n"
)
_DEFAULT_HTML = (
    b"<!DOCTYPE html>\n<html><head><title>Service maintenance</title></head>\n"
    b"<body><h1>We'll be back soon</h1><p>The service is undergoing maintenance.</p></body></html>\n"
)


# --------------------------------------------------------------------------------------------- data types
@dataclass(frozen=True)
class RecordedRequest:
    """One request as the fake received it.

    ``path`` is the raw path as sent (from the server root, without the query, e.g.
    ``/crossref/works/10.1002%2Fjor.1100150407``); ``query`` maps each parameter to its (last) decoded value;
    header names are lower-cased. ``service`` is ``crossref``/``zenodo``/``doi`` (``""`` outside the mounts)
    and ``service_path`` the percent-decoded path relative to the service base (not lower-cased).
    """

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    service: str = ""
    service_path: str = ""
    body: bytes = b""
    at: float = 0.0
    in_flight: int = 0
    """Requests being answered when this one arrived, itself included (1: it was alone)."""


@dataclass(frozen=True)
class _Canned:
    """A response ready to send (before validator handling)."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    source: str = ""

    def header(self, name: str) -> str | None:
        """Return the first value of header ``name`` (case-insensitive) or None."""
        lname = name.lower()
        for key, value in self.headers:
            if key.lower() == lname:
                return value
        return None


@dataclass
class _Fault:
    kind: str
    path_prefix: str | None
    service: str | None
    remaining: int | None
    params: dict[str, Any]


@dataclass
class _History:
    bodies: list[_Canned]
    served: int = 0


@dataclass
class _Scroll:
    """One open cursor of a :class:`CursorWalk`: its snapshot of works and how far it was read."""

    items: list[dict[str, Any]]
    total: int
    offset: int
    used_at: float


class CursorWalk:
    """A Crossref list route answered from synthetic works by cursor, as Crossref's deep paging does.

    ``cursor=*`` opens a scroll over the works matching the request's ``from-index-date`` (day) filter,
    sorted oldest ``indexed`` first when ``sort=indexed`` (``order=asc``) is asked, else in the order
    given; ``total-results`` is the scroll's size. ``style="scroll"``: every page answers the same
    ``next-cursor`` (an Elasticsearch scroll id, as the recorded ``works_query-widget_cursor-page2.json``
    shows) and the scroll moves on at each request, answered or not; ``"rotating"``: each page answers
    a new token naming its position. After its last page a scroll answers ``items: []`` with the same
    ``next-cursor`` (as ``..._cursor-page3_empty.json``). A cursor not used for ``ttl_s`` seconds
    (``time.time()``, so freezegun moves it), or dropped by :meth:`expire_all`, is refused as
    ``expired``: ``"404"`` the recorded ``resource-failure`` JSON, ``"400"`` a ``validation-failure``
    JSON in the recorded shape, ``"500"`` the recorded ``exception`` JSON, ``"empty"`` a ``200`` with no
    items (the issue-29 upstream). ``refused`` counts the refusals, ``opened`` the scrolls opened.
    """

    def __init__(
        self,
        corpus: _Corpus,
        works: list[dict[str, Any]],
        *,
        style: str = "scroll",
        ttl_s: float = 300.0,
        expired: str = "404",
    ) -> None:
        if style not in ("scroll", "rotating") or expired not in ("404", "400", "500", "empty"):
            raise ValueError(f"unknown style {style!r} or expired answer {expired!r}")
        self.works = works
        self.style, self.ttl_s, self.expired = style, ttl_s, expired
        self.refused = 0
        self.opened = 0
        self._corpus = corpus
        self._scrolls: dict[str, _Scroll] = {}
        self._serial = itertools.count(1)

    def expire_all(self) -> None:
        """Forget every open cursor (as a cluster restart or 5 idle minutes do)."""
        self._scrolls.clear()

    def answer(self, query: Mapping[str, str]) -> _Canned:
        """The answer to one request of the route (``query``: its decoded parameters)."""
        now = time.time()
        rows = int(query.get("rows") or 20)
        token = query.get("cursor") or "*"
        if token == "*":
            scroll = self._open(query, now)
            token = self._token(scroll)
        else:
            found = self._scrolls.get(token)
            if found is None or now - found.used_at > self.ttl_s:
                self._scrolls.pop(token, None)
                self.refused += 1
                return self._refusal(token)
            scroll = found
            if self.style == "rotating":
                del self._scrolls[token]
                token = self._token(scroll)
        page = scroll.items[scroll.offset : scroll.offset + rows]
        scroll.offset += len(page)
        scroll.used_at = now
        message = {
            "facets": {}, "next-cursor": token, "total-results": scroll.total, "items": page,
            "items-per-page": rows, "query": {"start-index": 0, "search-terms": query.get("query")},
        }  # fmt: skip
        body = {"status": "ok", "message-type": "work-list", "message-version": "1.0.0", "message": message}
        return _Canned(200, (("content-type", _JSON_CT),), _json_bytes(body), "cursor walk")

    def _open(self, query: Mapping[str, str], now: float) -> _Scroll:
        since = None
        for clause in (query.get("filter") or "").split(","):
            if clause.startswith("from-index-date:"):
                since = clause.split(":", 1)[1]
        items = [w for w in self.works if since is None or w["indexed"]["date-time"][:10] >= since]
        if query.get("sort") == "indexed":
            items.sort(key=lambda w: w["indexed"]["timestamp"], reverse=query.get("order") == "desc")
        self.opened += 1
        return _Scroll(items, len(items), 0, now)

    def _token(self, scroll: _Scroll) -> str:
        serial = next(self._serial)
        token = f"DnF1ZXJ5VGhlbkZldGNo{serial:08d}" if self.style == "scroll" else f"AoJ{serial:08d}"
        self._scrolls[token] = scroll
        return token

    def _refusal(self, token: str) -> _Canned:
        if self.expired == "404":
            return self._corpus.canned_for_file("crossref/error/resource-failure_bad-cursor.json")
        if self.expired == "500":
            return self._corpus.canned_for_file("crossref/error/exception_cursor-5.json")
        if self.expired == "400":
            invalid = "Cursor specified but it is invalid"
            failure = [{"type": "cursor-invalid", "value": token, "message": invalid}]
            body = {"status": "failed", "message-type": "validation-failure", "message": failure}
            return _Canned(400, (("content-type", _JSON_CT),), _json_bytes(body), "cursor walk")
        total = len(self.works)
        message = {
            "facets": {}, "next-cursor": token, "total-results": total, "items": [], "items-per-page": 20
        }  # fmt: skip
        body = {"status": "ok", "message-type": "work-list", "message-version": "1.0.0", "message": message}
        return _Canned(200, (("content-type", _JSON_CT),), _json_bytes(body), "cursor walk")


@dataclass
class _Request:
    """What the resolver needs to know about one incoming request."""

    method: str
    raw_path: str
    raw_query: str
    headers: dict[str, str]
    body: bytes
    service: str = ""
    raw_rel: str = ""
    npath: str = ""
    qkey: tuple[tuple[str, str], ...] = ()
    query: dict[str, str] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------- helpers
def _norm_path(service: str, raw_rel_path: str) -> str:
    """Percent-decode once, collapse repeated slashes, lower-case for case-insensitive services."""
    path = re.sub(r"/{2,}", "/", unquote(raw_rel_path)) or "/"
    if not path.startswith("/"):
        path = "/" + path
    return path.lower() if service in ("crossref", "doi") else path


def _query_key(raw_query: str) -> tuple[tuple[str, str], ...]:
    """Order-insensitive key of a query string, without the parameters the fake ignores."""
    pairs = parse_qsl(raw_query, keep_blank_values=True)
    return tuple(sorted((k, v) for k, v in pairs if k not in _IGNORED_QUERY))


def _split_target(service: str, url_path_and_query: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """Route key parts of a service-relative ``path?query``."""
    path, _, query = url_path_and_query.partition("?")
    return _norm_path(service, path), _query_key(query)


def _is_collection(service: str, npath: str) -> bool:
    """Whether ``npath`` names a list endpoint whose query matters."""
    segments = [s for s in npath.split("/") if s]
    if not segments:
        return True
    if service == "crossref":
        return segments[-1] in _CROSSREF_COLLECTIONS
    if service == "zenodo":
        return segments[-1] in _ZENODO_COLLECTIONS or (segments[0] == "vocabularies" and len(segments) <= 2)
    return False


def _clean_headers(raw: Mapping[str, Any] | None) -> tuple[tuple[str, str], ...]:
    """Drop wire/hop-by-hop headers; list values become repeated headers."""
    out: list[tuple[str, str]] = []
    for name, value in (raw or {}).items():
        if name.lower() in _WIRE_HEADERS:
            continue
        for item in value if isinstance(value, list) else [value]:
            out.append((name, str(item)))
    return tuple(out)


def _recorded_ts(recorded: str | None) -> float:
    """Sort key from index.json's ``recorded`` (HTTP date or ``file last changed YYYY-MM-DD``)."""
    if not recorded:
        return 0.0
    match = re.search(r"(\d{4}-\d{2}-\d{2})", recorded)
    try:
        if match and "GMT" not in recorded:
            return datetime.fromisoformat(match.group(1)).replace(tzinfo=UTC).timestamp()
        return email.utils.parsedate_to_datetime(recorded).timestamp()
    except (TypeError, ValueError):
        return 0.0


def _json_bytes(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


def _to_bytes(body: bytes | str | Any) -> bytes:
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("utf-8")
    return _json_bytes(body)


def _http_date(ts: float | None = None) -> str:
    return email.utils.formatdate(ts if ts is not None else time.time(), usegmt=True)


def _strip_weak(tag: str) -> str:
    tag = tag.strip()
    return tag[2:] if tag[:2] in ("W/", "w/") else tag


def _etag_matches(if_none_match: str, etag: str) -> bool:
    """Weak comparison of an ``If-None-Match`` list against ``etag``."""
    if if_none_match.strip() == "*":
        return True
    wanted = _strip_weak(etag)
    return any(_strip_weak(candidate) == wanted for candidate in if_none_match.split(","))


def _derived_last_modified(body: bytes) -> str:
    """Derive a Last-Modified when none was recorded: the body's own update stamp, else a fixed date."""
    try:
        doc = json.loads(body)
    except ValueError:
        return _DEFAULT_LAST_MODIFIED
    if isinstance(doc, dict):
        stamp = doc.get("updated") or doc.get("modified")
        message = doc.get("message")
        if not stamp and isinstance(message, dict):
            stamp = (message.get("indexed") or {}).get("date-time")
        if isinstance(stamp, str):
            try:
                return _http_date(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp())
            except ValueError:
                pass
    return _DEFAULT_LAST_MODIFIED


# --------------------------------------------------------------------------------------------- corpus
class _Corpus:
    """Routing tables built once from the corpus directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._routes: dict[
            tuple[str, str, tuple[tuple[str, str], ...]], tuple[tuple[int, float], _Canned]
        ] = {}
        self.accept_variants: dict[tuple[str, str, str], _Canned] = {}
        self.cursor_next: dict[str, _Canned] = {}
        self.works: dict[str, _Canned] = {}
        self.records: dict[str, _Canned] = {}
        self.concepts: dict[str, str] = {}
        self.series: dict[str, str] = {}
        self.latest: dict[str, str] = {}
        self.tombstones: dict[str, _Canned] = {}
        self.agencies: dict[str, str] = {}
        self.notices: dict[str, list[dict[str, Any]]] = {}
        self.terms: dict[str, dict[str, Any]] = {}
        self.by_file: dict[str, _Canned] = {}
        self._index: list[dict[str, Any]] = []
        self.crossref_404 = _Canned(404, (("content-type", "text/plain"),), b"Resource not found.")
        self.zenodo_404 = _Canned(
            404,
            (("content-type", _JSON_CT),),
            b'{"status": 404, "message": "The persistent identifier does not exist."}',
        )
        self._load()

    # -- loading
    def canned_for_file(self, rel_file: str, status: int | None = None) -> _Canned:
        """Build the response for a body file: recorded headers when it has them, else a JSON content type."""
        path = Path(rel_file) if Path(rel_file).is_absolute() else self.root / rel_file
        if path.is_relative_to(self.root):
            rel_file = str(path.relative_to(self.root))
        if rel_file in self.by_file and status is None:
            return self.by_file[rel_file]
        headers_path = path.with_name(path.name[: -len(".json")] + ".headers.json")
        headers: tuple[tuple[str, str], ...] = (("content-type", _JSON_CT),)
        rec_status = 200
        if headers_path.exists():
            meta = json.loads(headers_path.read_text(encoding="utf-8"))
            headers = _clean_headers(meta.get("headers"))
            rec_status = int(meta.get("status") or 200)
            if not any(k.lower() == "content-type" for k, _ in headers):
                headers = (*headers, ("content-type", _JSON_CT))
        canned = _Canned(status or rec_status, headers, path.read_bytes(), rel_file)
        if status is None:
            self.by_file[rel_file] = canned
        return canned

    def _add(self, service: str, target: str, canned: _Canned, priority: tuple[int, float]) -> None:
        npath, qkey = _split_target(service, target)
        key = (service, npath, qkey)
        current = self._routes.get(key)
        if current is None or priority > current[0]:
            self._routes[key] = (priority, canned)

    @staticmethod
    def _service_target(service: str, url: str) -> str | None:
        parts = urlsplit(url)
        path = parts.path
        if service == "zenodo":
            if not path.startswith("/api"):
                return None
            path = path[len("/api") :]
        return path + ("?" + parts.query if parts.query else "")

    def _load(self) -> None:
        self._index = json.loads((self.root / "index.json").read_text(encoding="utf-8"))
        for entry in self._index:
            rel_file = entry["file"]
            if rel_file.endswith(".exchange.json"):
                continue  # loaded with every other exchange below
            url = entry.get("url") or ""
            canned = self.canned_for_file(rel_file)
            if canned.status != entry["status"]:
                canned = self.canned_for_file(rel_file, status=entry["status"])
            if " " in url or "..." in url:
                continue  # request URL not recorded exactly
            target = self._service_target(entry["service"], url)
            if target is None:
                continue
            rank = 0 if entry["kind"] == "record-history" else 2
            self._add(entry["service"], target, canned, (rank, _recorded_ts(entry.get("recorded"))))
        self._load_exchanges()
        for rel_file, service, target in _DERIVED_ROUTES:
            if (self.root / rel_file).exists():
                status = 404 if "_404" in rel_file else None  # a recorded miss is served as one
                self._add(service, target, self.canned_for_file(rel_file, status=status), (1, 0.0))
        self._load_self_links()
        self._load_cursor_chains()
        self._load_works()
        self._load_records()
        self._load_terms()
        self.datacite = DataciteCorpus(self.root)

    def _load_terms(self) -> None:
        """Funder and award entries recorded anywhere (vocabulary pages, single funders), by route and id."""
        for route, pattern in (("/funders", "funders*.json"), ("/awards", "awards*.json")):
            for path in sorted(self.root.glob(f"zenodo/*/{pattern}")):
                doc = json.loads(path.read_bytes())
                hits = (doc.get("hits") or {}).get("hits") if isinstance(doc.get("hits"), dict) else [doc]
                for hit in hits or []:
                    if isinstance(hit, dict) and isinstance(hit.get("id"), str):
                        self.terms.setdefault(route, {}).setdefault(hit["id"], hit)

    def _load_exchanges(self) -> None:
        for path in sorted(self.root.glob("*/non-json/*.exchange.json")):
            service = path.parent.parent.name
            doc = json.loads(path.read_text(encoding="utf-8"))
            request = doc.get("request") or {}
            uri = request.get("uri", "")
            if urlsplit(uri).scheme != "https":
                continue  # the recorded http->https 301: the https route is served instead
            target = self._service_target(service, uri)
            if target is None:
                continue
            body = doc.get("body_text", "").encode("utf-8")
            req_headers = {k.lower(): v for k, v in (request.get("headers") or {}).items()}
            accept = req_headers.get("accept", "")
            headers = _clean_headers(doc.get("headers"))
            if not any(k.lower() == "content-type" for k, _ in headers):
                if accept and accept != _JSON_CT:
                    ctype = f"{accept}; charset=utf-8"
                else:
                    guessed = mimetypes.guess_type(target.split("?")[0].removesuffix("/content"))[0]
                    ctype = f"{guessed or 'text/plain'}; charset=utf-8"
                headers = (*headers, ("content-type", ctype))
            if doc["status"] == 206 and "range" in req_headers:
                total = re.search(r"of an? ([\d,]+)-byte", doc.get("_note", ""))
                size = total.group(1).replace(",", "") if total else "*"
                headers = (*headers, ("content-range", f"bytes 0-{len(body) - 1}/{size}"))
            rel_file = str(path.relative_to(self.root))
            canned = _Canned(int(doc["status"]), headers, body, rel_file)
            if accept and accept != _JSON_CT:
                npath, _ = _split_target(service, target)
                self.accept_variants[(service, npath, accept.split(";")[0].strip().lower())] = canned
            else:
                self._add(service, target, canned, (1, 0.0))

    def _load_self_links(self) -> None:
        """Route Zenodo lists, communities and versions pages by their ``links.self`` too (lowest rank)."""
        for kind in ("search", "versions", "vocabulary", "community"):
            for path in sorted(self.root.glob(f"zenodo/{kind}/*.json")):
                if path.name.endswith(".headers.json"):
                    continue
                doc = json.loads(path.read_bytes())
                links = doc.get("links") if isinstance(doc, dict) else None
                self_url = links.get("self") if isinstance(links, dict) else None
                target = self._service_target("zenodo", self_url) if isinstance(self_url, str) else None
                if target is not None:
                    canned = self.canned_for_file(str(path.relative_to(self.root)))
                    self._add("zenodo", target, canned, (0, -1.0))

    def _load_cursor_chains(self) -> None:
        chains: dict[str, list[tuple[int, str]]] = {}
        for path in self.root.glob("crossref/work-list/*.json"):
            if path.name.endswith(".headers.json"):
                continue
            match = _CURSOR_CHAIN.match(path.stem)
            if match:
                order = 1 if match.group("page") == "star" else int(match.group("n"))
                chains.setdefault(match.group("stem"), []).append((order, str(path.relative_to(self.root))))
        for pages in chains.values():
            pages.sort()
            for (_, current), (_, following) in itertools.pairwise(pages):
                message = json.loads((self.root / current).read_bytes()).get("message") or {}
                token = message.get("next-cursor")
                if token:
                    self.cursor_next[token] = self.canned_for_file(following)

    def _load_works(self) -> None:
        for path in sorted(self.root.glob("crossref/work/*.json")):
            if path.name.endswith(".headers.json"):
                continue
            doc = json.loads(path.read_bytes())
            doi = ((doc.get("message") or {}) if "message" in doc else doc).get("DOI")
            if isinstance(doi, str):
                self.works[doi.lower()] = self.canned_for_file(str(path.relative_to(self.root)))
        for path in self.root.glob("crossref/work-agency/*.json"):
            if path.name.endswith(".headers.json"):
                continue
            message = json.loads(path.read_bytes()).get("message") or {}
            agency = (message.get("agency") or {}).get("label")
            if message.get("DOI") and agency:
                self.agencies[message["DOI"].lower()] = agency
        for doi in self.works:
            self.agencies.setdefault(doi, "Crossref")
        self._load_notices()

    def _load_notices(self) -> None:
        """Index the recorded works with an ``update-to`` (work bodies, work-list items) by the DOIs named."""
        seen: set[str] = set()
        paths = [
            *sorted(self.root.glob("crossref/work/*.json")),
            *sorted(self.root.glob("crossref/work-list/*.json")),
        ]
        for path in paths:
            if path.name.endswith(".headers.json"):
                continue
            message = json.loads(path.read_bytes()).get("message") or {}
            items = message.get("items") if isinstance(message.get("items"), list) else [message]
            for item in items:
                if (
                    not isinstance(item, dict)
                    or not item.get("update-to")
                    or not isinstance(item.get("DOI"), str)
                ):
                    continue
                if item["DOI"].lower() in seen:
                    continue
                seen.add(item["DOI"].lower())
                targets = dict.fromkeys(str(u.get("DOI", "")).lower() for u in item["update-to"])
                for target in targets:
                    if target:
                        self.notices.setdefault(target, []).append(item)

    def _load_records(self) -> None:
        ranked: dict[str, tuple[tuple[int, float], _Canned]] = {}
        stamps = {e["file"]: _recorded_ts(e.get("recorded")) for e in self._index}
        versions: dict[str, set[int]] = {}
        for kind, rank in (("record-history", 0), ("record", 1)):
            for path in sorted(self.root.glob(f"zenodo/{kind}/*.json")):
                if path.name.endswith(".headers.json"):
                    continue
                doc = json.loads(path.read_bytes())
                recid = str(doc.get("id", ""))
                if not recid.isdigit():
                    continue
                rel_file = str(path.relative_to(self.root))
                priority = (rank, stamps.get(rel_file, 0.0))
                if recid not in ranked or priority > ranked[recid][0]:
                    ranked[recid] = (priority, self.canned_for_file(rel_file))
                concept = (doc.get("parent") or {}).get("id") or doc.get("conceptrecid")
                if concept:
                    versions.setdefault(str(concept), set()).add(int(recid))
        for path in sorted(self.root.glob("zenodo/versions/*.json")):  # a versions hit is a whole record
            rel_file = str(path.relative_to(self.root))
            for hit in (json.loads(path.read_bytes()).get("hits") or {}).get("hits") or []:
                recid = str(hit.get("id", ""))
                if recid.isdigit() and recid not in ranked:
                    ranked[recid] = (
                        (-1, 0.0),
                        _Canned(200, (("content-type", _JSON_CT),), _json_bytes(hit), rel_file),
                    )
        self.records = {recid: canned for recid, (_, canned) in ranked.items()}
        self.concepts = {
            concept: str(max(ids)) for concept, ids in versions.items() if concept not in self.records
        }
        self._load_latest()

    def _load_latest(self) -> None:
        """What the corpus says each series' newest version is (``/records/{id}/versions/latest``).

        A record or versions hit saying ``versions.is_latest: true`` (legacy ``is_last``) names its
        concept's latest; a legacy ``last_child`` names it too; a concept id without either redirects
        to its highest corpus version (as the concept route does). ``series`` maps each corpus
        version to its concept.
        """
        for recid, canned in self.records.items():
            doc = json.loads(canned.body)
            concept = (doc.get("parent") or {}).get("id") or doc.get("conceptrecid")
            if not concept:
                continue
            self.series[recid] = str(concept)
            chain = ((doc.get("metadata") or {}).get("relations") or {}).get("version") or [{}]
            latest_flag = (doc.get("versions") or {}).get("is_latest", chain[0].get("is_last"))
            last_child = (chain[0].get("last_child") or {}).get("pid_value")
            if latest_flag is True:
                self.latest[str(concept)] = recid
            elif last_child:
                self.latest.setdefault(str(concept), str(last_child))
        for concept, target in self.concepts.items():
            self.latest.setdefault(concept, target)
        for path in self.root.glob("zenodo/error/records-*_410_tombstone.json"):
            recid = path.name.split("-", 1)[1].split("_", 1)[0]
            self.tombstones[recid] = _Canned(
                410, (("content-type", _JSON_CT),), path.read_bytes(), str(path.relative_to(self.root))
            )
        for path in self.root.glob("zenodo/error/records-*_404*.json"):
            if not path.name.endswith(".headers.json"):
                recid = path.name.split("-", 1)[1].split("_", 1)[0]
                canned = self.canned_for_file(str(path.relative_to(self.root)), status=404)
                self._add("zenodo", f"/records/{recid}", canned, (1, 0.0))
        new_404 = self.root / "zenodo/error/records-68358988_404_new-api.json"
        if new_404.exists():
            self.zenodo_404 = self.canned_for_file(str(new_404.relative_to(self.root)), status=404)
        crossref_404 = self.root / "crossref/non-json/works-10.1371-notarealdoi_404_text-plain.exchange.json"
        if crossref_404.exists():
            doc = json.loads(crossref_404.read_text(encoding="utf-8"))
            self.crossref_404 = _Canned(404, _clean_headers(doc["headers"]), doc["body_text"].encode("utf-8"))

    # -- lookups
    def route(self, service: str, npath: str, qkey: tuple[tuple[str, str], ...]) -> _Canned | None:
        """Exact recorded route, then with the trailing slash toggled."""
        for candidate in (npath, npath[:-1] if npath.endswith("/") else npath + "/"):
            hit = self._routes.get((service, candidate, qkey))
            if hit:
                return hit[1]
        return None

    def route_any_query(self, service: str, npath: str) -> _Canned | None:
        """Find a recorded route for ``npath`` regardless of its query (the query-less one preferred)."""
        best: tuple[tuple[int, int, float], _Canned] | None = None
        for (svc, path, qkey), (priority, canned) in self._routes.items():
            if svc == service and path == npath:
                rank = (int(not qkey), *priority)
                if best is None or rank > best[0]:
                    best = (rank, canned)
        return best[1] if best else None

    def ra_for(self, doi: str) -> str | None:
        """Registration agency of a DOI or prefix, as far as the corpus and the prefix table know."""
        doi = doi.lower()
        prefix = doi.split("/", 1)[0]
        if doi in self.agencies:
            return self.agencies[doi]
        if prefix in _RA_PREFIXES:
            return _RA_PREFIXES[prefix]
        if "/" not in doi and any(known.split("/", 1)[0] == doi for known in self.works):
            return "Crossref"
        return None


@lru_cache(maxsize=4)
def _corpus(root: str) -> _Corpus:
    return _Corpus(Path(root))


# --------------------------------------------------------------------------------------------- server
class _Server(ThreadingHTTPServer):
    allow_reuse_address = True
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], owner: FakeUpstream) -> None:
        self.owner = owner
        self.stop_event = threading.Event()
        self.connections: set[socket.socket] = set()
        self.abort: set[socket.socket] = set()
        self.conn_lock = threading.Lock()
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        """Bind without the reverse DNS lookup HTTPServer does."""
        import socketserver

        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Track the connection so that stop() can cut it."""
        with self.conn_lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        """Close a connection; aborted ones are closed with SO_LINGER 0 (TCP RST)."""
        with self.conn_lock:
            self.connections.discard(request)
            abort = request in self.abort
            self.abort.discard(request)
        if abort:
            with contextlib.suppress(OSError):
                request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_request(request)
            return
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet: resets and aborted clients are part of the job."""

    def cut_all(self) -> None:
        """Shut down every open connection (keep-alive ones included)."""
        with self.conn_lock:
            connections = list(self.connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    """One keep-alive connection. Status line, headers and body leave in one buffered write (flushed at
    the end of each request) and ``TCP_NODELAY`` is set: with the stdlib defaults (unbuffered writer,
    Nagle on) the body waited for the client's delayed ACK of the header segment, ~40 ms per request.
    """

    protocol_version = "HTTP/1.1"
    server_version = "fakeupstream"
    timeout = 30
    disable_nagle_algorithm = True
    wbufsize = 1 << 16
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log."""

    def _handle(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        raw_path, _, raw_query = self.path.partition("?")
        request = _Request(
            method=self.command,
            raw_path=raw_path,
            raw_query=raw_query,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
        )
        self.server.owner._serve(self, request)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _handle

    # -- writing helpers used by FakeUpstream._serve
    def write_response(
        self, status: int, headers: Sequence[tuple[str, str]], body: bytes, *, length: int | None = None
    ) -> None:
        """Send status, headers (plus Date unless given, and Content-Length) and the body."""
        self.send_response_only(status)
        for name, value in headers:
            self.send_header(name, value)
        if not any(name.lower() == "date" for name, _ in headers):  # a given Date: a skewed server clock
            self.send_header("Date", _http_date())
        if status != 304:
            self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        if self.command != "HEAD" and status != 304 and body:
            self.wfile.write(body)

    def abort(self) -> None:
        """End this connection with a TCP reset once the handler returns."""
        self.close_connection = True
        with self.server.conn_lock:
            self.server.abort.add(self.connection)

    def finish(self) -> None:
        """Tolerate clients that went away."""
        with contextlib.suppress(OSError):
            super().finish()


class CrossrefRules:
    """Crossref's 2026 rate limits, enforced and announced by the fake (``fake.crossref_rules = rules``).

    Per client (the fake has one): at most ``single`` requests to single-record routes and ``list`` to
    list routes (``/works?...``, ``/journals/{issn}/works``...) in any ``interval_s`` seconds (a sliding
    window), and at most ``concurrency`` Crossref requests in flight, single and list together. The
    first request over any of them is answered ``429`` at once (no grace, no ``Retry-After``), and not
    counted. Every Crossref answer (a 429 too) announces the limits of its kind: ``x-rate-limit-limit``,
    ``x-rate-limit-interval: 1s``, ``x-concurrency-limit``, ``x-api-pool: {pool}-single`` or
    ``{pool}-array``; with ``doubled`` each value is sent as ``"v, v"`` (as seen in 2025). Each admitted
    request takes ``latency_s`` seconds to answer, in flight meanwhile.

    :meth:`change` lowers (or raises) a limit mid-run: the new value is announced at once and enforced
    ``grace_s`` later, since no client can keep a limit it has not been told. Counters: ``answered``,
    ``rejected`` (429s), ``max_in_flight``; ``log`` holds ``(arrival, kind, admitted)`` per request
    (``time.monotonic()``), ``admitted_in_flight`` ``(arrival, requests in flight with it)`` per
    admitted one (the most in flight over any span is the most at one of its admissions) and
    ``refusals`` ``(arrival, kind, "rate" | "concurrency")`` per 429.
    """

    def __init__(
        self,
        *,
        single: int = 10,
        lists: int = 3,
        concurrency: int = 5,
        interval_s: float = 1.0,
        pool: str = "polite",
        doubled: bool = False,
        latency_s: float = 0.0,
    ) -> None:
        self.latency_s = latency_s
        self.announced = {"single": single, "lists": lists, "concurrency": concurrency}
        self.enforced = dict(self.announced)
        self.interval_s = interval_s
        self.pool = pool
        self.doubled = doubled
        self.answered = 0
        self.rejected = 0
        self.max_in_flight = 0
        self.in_flight = 0
        self.log: list[tuple[float, str, bool]] = []
        self.admitted_in_flight: list[tuple[float, int]] = []
        self.refusals: list[tuple[float, str, str]] = []
        self._pending: tuple[float, dict[str, int]] | None = None
        self._lock = threading.Lock()

    def change(self, *, grace_s: float | None = None, **limits: int) -> None:
        """Announce new ``single``/``lists``/``concurrency`` limits now; enforce them ``grace_s`` later.

        ``grace_s`` defaults to two intervals.
        """
        unknown = set(limits) - set(self.announced)
        if unknown:
            raise ValueError(f"unknown limits {sorted(unknown)}")
        with self._lock:
            self.announced.update(limits)
            wait = 2 * self.interval_s if grace_s is None else grace_s
            self._pending = (time.monotonic() + wait, dict(self.announced))

    def admit(self, kind: str) -> bool:
        """Whether a request of ``kind`` (``single``/``lists``) arriving now is within the enforced limits.

        An admitted one is counted in flight until :meth:`done`.
        """
        now = time.monotonic()
        with self._lock:
            if self._pending is not None and now >= self._pending[0]:
                self.enforced = self._pending[1]
                self._pending = None
            recent = sum(
                1 for at, k, ok in reversed(self.log) if ok and k == kind and at > now - self.interval_s
            )
            ok = recent < self.enforced[kind] and self.in_flight < self.enforced["concurrency"]
            self.log.append((now, kind, ok))
            if len(self.log) > 100_000:
                del self.log[:50_000]
            if not ok:
                self.rejected += 1
                self.refusals.append((now, kind, "rate" if recent >= self.enforced[kind] else "concurrency"))
                return False
            self.in_flight += 1
            self.answered += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.admitted_in_flight.append((now, self.in_flight))
            if len(self.admitted_in_flight) > 100_000:
                del self.admitted_in_flight[:50_000]
            return True

    def done(self) -> None:
        """An admitted request has been answered."""
        with self._lock:
            self.in_flight -= 1

    def headers(self, kind: str) -> list[tuple[str, str]]:
        """The rate-limit headers a ``kind`` answer carries (the announced limits)."""
        with self._lock:
            limit, concurrency = self.announced[kind], self.announced["concurrency"]

        def value(v: object) -> str:
            return f"{v}, {v}" if self.doubled else str(v)

        return [
            ("x-rate-limit-limit", value(limit)),
            ("x-rate-limit-interval", value(f"{self.interval_s:g}s")),
            ("x-concurrency-limit", value(concurrency)),
            ("x-api-pool", f"{self.pool}-{'array' if kind == 'lists' else 'single'}"),
        ]


# --------------------------------------------------------------------------------------------- public API
class FakeUpstream:
    """Fake Crossref + Zenodo + doi.org server replaying the recorded corpus; see the module docstring.

    Use as ``with FakeUpstream() as fake:`` or call :meth:`start` / :meth:`stop`. All configuration
    (overrides, faults, validator modes) may change while the server runs; it is guarded by a lock.
    """

    def __init__(
        self,
        corpus_dir: str | os.PathLike[str] | None = None,
        *,
        port: int = 0,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.tls = tls
        """Serve HTTPS with this server context (URLs then start ``https://``); None: plain HTTP."""
        self.corpus = _corpus(str(Path(corpus_dir or CORPUS_DIR).resolve()))
        self.etags = False
        self.last_modified = False
        self.rate_headers = False
        """Replay the recorded rate-limit headers (off: dropped; see the module docstring)."""
        self.crossref_rules: CrossrefRules | None = None
        """Crossref's 2026 limits, enforced and announced (None: no limits, nothing announced)."""
        self.requests: list[RecordedRequest] = []
        self.statuses: Counter[tuple[str, int]] = Counter()
        """Answers sent, by ``(service, status)`` (aborted connections and injected faults not counted)."""
        self.in_flight = 0
        """Requests being answered right now."""
        self.max_in_flight = 0
        """Most requests answered at the same time since start or :meth:`reset_log`."""
        self._lock = threading.RLock()
        self._status_lock = threading.Lock()
        self._overrides: dict[tuple[str, str, tuple[tuple[str, str], ...] | None], _Canned] = {}
        self._histories: dict[str, _History] = {}
        self._walks: dict[str, CursorWalk] = {}
        self._faults: list[_Fault] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._port = port

    # -- lifecycle
    def start(self, port: int | None = None) -> FakeUpstream:
        """Start listening; after a stop() the previous port is reused when it is free."""
        if self._server is not None:
            return self
        wanted = self._port if port is None else port
        try:
            server = _Server(("127.0.0.1", wanted), self)
        except OSError:
            if port is not None:
                raise
            server = _Server(("127.0.0.1", 0), self)
        if self.tls is not None:  # the handshake happens in the connection's thread, at its first read
            server.socket = self.tls.wrap_socket(
                server.socket, server_side=True, do_handshake_on_connect=False
            )
        self._server = server
        self._port = server.server_port
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fakeupstream", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close the listening socket and cut open connections (later connects are refused)."""
        server, thread = self._server, self._thread
        if server is None:
            return
        self._server = self._thread = None
        server.stop_event.set()
        server.shutdown()
        server.server_close()
        server.cut_all()
        if thread is not None:
            thread.join(timeout=5)

    def restart(self, *, timeout_s: float = 2.0) -> None:
        """Stop and start again on the same port (the same URLs), retrying briefly while it is busy."""
        port = self._port
        self.stop()
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.start(port=port)
                return
            except OSError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.05)

    @property
    def running(self) -> bool:
        """Whether the server is listening."""
        return self._server is not None

    def __enter__(self) -> FakeUpstream:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- URLs
    @property
    def port(self) -> int:
        """The TCP port (the last one bound, also while stopped)."""
        return self._port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (``https://`` when serving TLS)."""
        return f"{'https' if self.tls is not None else 'http'}://127.0.0.1:{self._port}"

    @property
    def crossref_url(self) -> str:
        """Base URL to configure as ``crossref.base_url``."""
        return self.base_url + SERVICES["crossref"]

    @property
    def zenodo_url(self) -> str:
        """Base URL to configure as ``zenodo.base_url``."""
        return self.base_url + SERVICES["zenodo"]

    @property
    def datacite_url(self) -> str:
        """Base URL to configure as ``datacite.base_url``."""
        return self.base_url + SERVICES["datacite"]

    @property
    def doi_url(self) -> str:
        """Base URL to configure as ``doi.base_url``."""
        return self.base_url + SERVICES["doi"]

    def url(self, service: str, path: str) -> str:
        """Absolute URL of a service-relative ``path`` (e.g. ``url("zenodo", "/records/1")``)."""
        return self.base_url + SERVICES[service] + path

    # -- request log
    def count(self, path_prefix: str | None = None, service: str | None = None) -> int:
        """Count logged requests (faulted ones included) matching ``service`` and ``path_prefix``.

        ``path_prefix`` matches the raw or decoded path, from the server root (``/crossref/works``) or
        relative to the service base (``/works/10.1002/jor``).
        """
        with self._lock:
            logged = list(self.requests)
        return sum(
            1
            for r in logged
            if (service is None or r.service == service)
            and _prefix_matches(path_prefix, r.path, r.service, r.service_path)
        )

    def reset_log(self) -> None:
        """Forget the logged requests (and the in-flight high-water mark)."""
        with self._lock:
            self.requests.clear()
            self.max_in_flight = self.in_flight

    # -- overrides
    def set_body(
        self,
        service: str,
        path: str,
        body: bytes | str | dict[str, Any] | list[Any],
        status: int = 200,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Serve ``body`` at a service-relative ``path`` (``?query`` optional: then only that query).

        ``dict``/``list`` bodies are JSON-encoded; the content type defaults to ``application/json``.
        With ``etags`` on, the ETag is a hash of the new body unless ``headers`` gives one.
        """
        if service not in SERVICES:
            raise ValueError(f"unknown service {service!r}")
        npath, qkey = _split_target(service, path)
        header_items = dict(headers or {})
        if not any(k.lower() == "content-type" for k in header_items):
            header_items["content-type"] = _JSON_CT
        if not any(k.lower() == "last-modified" for k in header_items):
            header_items["last-modified"] = _http_date()
        canned = _Canned(status, tuple(header_items.items()), _to_bytes(body), "override")
        with self._lock:
            self._overrides[(service, npath, qkey if "?" in path else None)] = canned

    def serve_history(self, recid: str | int, files: Sequence[str | os.PathLike[str]]) -> None:
        """Answer successive requests for Zenodo ``/records/{recid}`` with successive files.

        The last file repeats once the sequence is used up.

        ``files`` are corpus-relative (``zenodo/record-history/records-5244404__2024-01-14.json``) or
        absolute; each is served with its recorded headers when it has a ``.headers.json`` sibling.
        """
        bodies = [self.corpus.canned_for_file(str(f)) for f in files]
        if not bodies:
            raise ValueError("serve_history needs at least one file")
        with self._lock:
            self._histories[str(recid)] = _History(bodies)

    def serve_cursor_walk(
        self,
        path: str,
        works: list[dict[str, Any]],
        *,
        style: str = "scroll",
        ttl_s: float = 300.0,
        expired: str = "404",
    ) -> CursorWalk:
        """Answer the Crossref list route ``path`` (e.g. ``/works``) from ``works`` by cursor.

        ``works`` are Crossref work objects with ``DOI`` and ``indexed`` (``date-time``, ``timestamp``);
        see :class:`CursorWalk` for ``style``, ``ttl_s`` and ``expired``. Returns the walk (its
        ``refused``/``opened`` counts, :meth:`CursorWalk.expire_all`).
        """
        walk = CursorWalk(self.corpus, works, style=style, ttl_s=ttl_s, expired=expired)
        npath, _ = _split_target("crossref", path)
        with self._lock:
            self._walks[npath] = walk
        return walk

    def clear_overrides(self) -> None:
        """Drop every set_body() override, serve_history() sequence and serve_cursor_walk() route."""
        with self._lock:
            self._overrides.clear()
            self._histories.clear()
            self._walks.clear()

    # -- faults
    def fault(
        self,
        kind: str,
        *,
        path_prefix: str | None = None,
        times: int | None = None,
        service: str | None = None,
        **params: Any,
    ) -> None:
        """Inject a fault on matching requests (``times=None``: until clear_faults()).

        Kinds and params: ``refuse`` (``rst=False``), ``reset`` (``fraction=0.5``), ``hang`` (``max_s=30``),
        ``slow`` (``delay_s=0.2``, ``chunk_size=256``), ``status`` (``status=503``, ``body``, ``html=False``,
        ``content_type``, ``headers``, ``retry_after``), ``rate_limit`` (``retry_after`` seconds or HTTP date
        or None, ``html=False``, ``body``, ``headers``), ``html`` / ``text`` (``body``), ``empty``,
        ``truncated`` (``fraction=0.5``), ``wrong_shape`` (``body``), ``latency`` (``delay_s=0.5``),
        ``bad_encoding`` (the normal body labelled ``Content-Encoding: encoding``, default ``gzip``),
        ``redirect_loop`` (``302`` to the same URL).
        """
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {sorted(FAULT_KINDS)}")
        with self._lock:
            self._faults.append(_Fault(kind, path_prefix, service, times, params))

    def clear_faults(self) -> None:
        """Remove every injected fault."""
        with self._lock:
            self._faults.clear()

    # -- request handling (called from handler threads)
    def _serve(self, handler: _Handler, request: _Request) -> None:
        self._classify(request)
        with self._lock:
            self.in_flight += 1
            record = RecordedRequest(
                method=request.method,
                path=request.raw_path,
                query=request.query,
                headers=request.headers,
                service=request.service,
                service_path=unquote(request.raw_rel) if request.service else "",
                body=request.body,
                at=time.time(),
                in_flight=self.in_flight,
            )
            self.requests.append(record)
            fault = self._take_fault(request)
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            rules = self.crossref_rules if request.service == "crossref" else None
        admitted = False
        try:
            if rules is not None:
                kind = "lists" if _is_collection("crossref", request.npath) else "single"
                admitted = rules.admit(kind)
                if not admitted:
                    body = b"Too Many Requests: rate limit exceeded.\n"
                    handler.write_response(429, [("Content-Type", "text/plain"), *rules.headers(kind)], body)
                    self._count(request.service, 429)
                    return
            if fault is None:
                canned = self._respond(request)
                if admitted and rules is not None and rules.latency_s:
                    handler.server.stop_event.wait(rules.latency_s)
                if admitted and rules is not None:  # done once answered: the client may send again
                    admitted = False
                    rules.done()
                self._send(handler, request, canned)
                return
            self._apply_fault(handler, request, fault)
        finally:
            if admitted and rules is not None:
                rules.done()
            with self._lock:
                self.in_flight -= 1

    def _count(self, service: str, status: int) -> None:
        """Count an answer sent (its own lock: never waits on the configuration lock)."""
        with self._status_lock:
            self.statuses[(service, status)] += 1

    def _classify(self, request: _Request) -> None:
        for service, mount in SERVICES.items():
            if request.raw_path == mount or request.raw_path.startswith(mount + "/"):
                request.service = service
                request.raw_rel = request.raw_path[len(mount) :] or "/"
                break
        request.query = dict(parse_qsl(request.raw_query, keep_blank_values=True))
        if request.service:
            request.npath = _norm_path(request.service, request.raw_rel)
            request.qkey = _query_key(request.raw_query)

    def _take_fault(self, request: _Request) -> _Fault | None:
        for fault in self._faults:
            if fault.service is not None and fault.service != request.service:
                continue
            rel = unquote(request.raw_rel) if request.service else ""
            if not _prefix_matches(fault.path_prefix, request.raw_path, request.service, rel):
                continue
            if fault.remaining is not None:
                if fault.remaining <= 0:
                    continue
                fault.remaining -= 1
            return fault
        return None

    def _respond(self, request: _Request) -> _Canned:
        """Resolve a request to a response (validators not yet applied)."""
        service, npath, qkey = request.service, request.npath, request.qkey
        if not service:
            return _Canned(404, (("content-type", "text/plain"),), b"No such service mount.")
        with self._lock:
            hit = self._overrides.get((service, npath, qkey)) or self._overrides.get((service, npath, None))
            if hit is None and service == "zenodo":
                match = re.fullmatch(r"/records/(\d+)", npath)
                history = self._histories.get(match.group(1)) if match else None
                if history is not None:
                    hit = history.bodies[min(history.served, len(history.bodies) - 1)]
                    history.served += 1
            walk = self._walks.get(npath) if service == "crossref" and hit is None else None
            if walk is not None:
                hit = walk.answer(request.query)
        if hit is not None:
            return hit
        accept = request.headers.get("accept", "")
        for media in (m.split(";")[0].strip().lower() for m in accept.split(",") if m.strip()):
            variant = self.corpus.accept_variants.get((service, npath, media))
            if variant is not None:
                return variant
        recorded = self.corpus.route(service, npath, qkey)
        sorted_query = "sort" in request.query or "order" in request.query
        if recorded is None and service == "crossref" and sorted_query:
            unsorted = tuple(pair for pair in qkey if pair[0] not in ("sort", "order"))
            recorded = self.corpus.route(service, npath, unsorted)
        if recorded is not None:
            return recorded
        cursor = request.query.get("cursor")
        if cursor and cursor != "*" and cursor in self.corpus.cursor_next:
            return self.corpus.cursor_next[cursor]
        dynamic = {
            "crossref": self._crossref,
            "zenodo": self._zenodo,
            "doi": self._doi,
            "datacite": self._datacite,
        }[service](request)
        if dynamic is not None:
            return dynamic
        if not _is_collection(service, npath):
            any_query = self.corpus.route_any_query(service, npath)
            if any_query is not None:
                return any_query
        return self.corpus.crossref_404 if service == "crossref" else self._not_found(service)

    def _not_found(self, service: str) -> _Canned:
        if service == "zenodo":
            return self.corpus.zenodo_404
        return _Canned(404, (("content-type", "text/plain"),), b"Not found.")

    def _crossref(self, request: _Request) -> _Canned | None:
        if request.npath.rstrip("/") == "/works":
            listed = self._doi_list(request.query.get("filter", ""), request.query.get("select"))
            if listed is not None:
                return listed
            updates = self._updates_list(request.query.get("filter", ""), request.query.get("rows"))
            if updates is not None:
                return updates
        decoded = re.sub(r"/{2,}", "/", unquote(request.raw_rel))
        match = re.match(r"^/works/(.+)$", decoded, re.IGNORECASE)
        if not match:
            return None
        rest = _URL_DOI.sub("", unquote(request.raw_rel)[len("/works/") :].lstrip("/")).lower()
        if rest.endswith("/agency"):
            doi = rest[: -len("/agency")]
            agency = self.corpus.ra_for(doi) if doi.count("/") >= 1 else None
            if agency is None:
                return None
            message = {
                "DOI": doi,
                "agency": {"id": agency.lower(), "label": _RA_LABELS.get(agency.lower(), agency)},
            }
            body = {
                "status": "ok",
                "message-type": "work-agency",
                "message-version": "1.0.0",
                "message": message,
            }
            return _Canned(200, (("content-type", _JSON_CT),), _json_bytes(body), "synthesised agency")
        return self.corpus.works.get(rest)

    def _doi_list(self, filters: str, select: str | None = None) -> _Canned | None:
        """``/works?filter=doi:A,doi:B,...``: a work list of the corpus works named.

        Crossref leaves a DOI it does not hold out of the list; with ``select`` (``DOI,indexed``, the
        daemon's batch revalidation) each item keeps only the fields named. None when a filter is not
        ``doi:``.
        """
        clauses = [c.strip() for c in filters.split(",") if c.strip()]
        if not clauses or not all(c.lower().startswith("doi:") for c in clauses):
            return None
        items = []
        for doi in dict.fromkeys(c[len("doi:") :].lower() for c in clauses):
            canned = self.corpus.works.get(doi)
            if canned is not None:
                doc = json.loads(canned.body)
                item = doc.get("message") if "message" in doc else doc
                if select:
                    fields = {f.strip() for f in select.split(",")}
                    item = {k: v for k, v in item.items() if k in fields}
                items.append(item)
        message = {"facets": {}, "total-results": len(items), "items": items, "items-per-page": len(items)}
        body = {"status": "ok", "message-type": "work-list", "message-version": "1.0.0", "message": message}
        return _Canned(200, (("content-type", _JSON_CT),), _json_bytes(body), "doi filter list")

    def _updates_list(self, filters: str, rows: str | None) -> _Canned | None:
        """``/works?filter=updates:A,updates:B`` (OR): the corpus' notices whose ``update-to`` names A or B.

        Built from recorded notice bodies (no recording of the filter exists); ``rows`` caps the items,
        ``total-results`` counts them all. None when a filter is not ``updates:``.
        """
        clauses = [c.strip() for c in filters.split(",") if c.strip()]
        if not clauses or not all(c.lower().startswith("updates:") for c in clauses):
            return None
        found: dict[str, dict[str, Any]] = {}
        for doi in dict.fromkeys(c[len("updates:") :].lower() for c in clauses):
            for item in self.corpus.notices.get(doi, []):
                found.setdefault(item["DOI"].lower(), item)
        items = list(found.values())
        shown = items[: int(rows)] if rows and rows.isdigit() else items[:20]
        message = {"facets": {}, "total-results": len(items), "items": shown, "items-per-page": len(shown)}
        body = {"status": "ok", "message-type": "work-list", "message-version": "1.0.0", "message": message}
        return _Canned(200, (("content-type", _JSON_CT),), _json_bytes(body), "updates filter list")

    def _zenodo(self, request: _Request) -> _Canned | None:
        npath = request.npath.rstrip("/")
        by_id = re.fullmatch(r'identifiers\.identifier:"(.+)"', request.query.get("q", ""))
        if npath in self.corpus.terms and by_id:
            wanted = by_id.group(1).lower()
            hits = [
                hit
                for hit in self.corpus.terms[npath].values()
                if any(str(i.get("identifier", "")).lower() == wanted for i in hit.get("identifiers") or [])
            ]
            body = {"hits": {"total": len(hits), "hits": hits[: int(request.query.get("size") or 10)]}}
            return _Canned(200, (("content-type", _JSON_CT),), _json_bytes(body), "recorded vocab entries")
        match = re.fullmatch(r"/records/(\d+)(/versions/latest)?", npath)
        if not match:
            return None
        recid, latest = match.group(1), match.group(2)
        if recid in self.corpus.tombstones and not latest:
            return self.corpus.tombstones[recid]
        target = self.corpus.concepts.get(recid)
        if latest:  # the series' newest version as the corpus knows it; a 404 when it cannot say
            target = self.corpus.latest.get(self.corpus.series.get(recid, recid))
        if target is not None:
            location = f"{self.zenodo_url}/records/{target}"
            return _Canned(302, (("location", location), ("content-type", _JSON_CT)), b"", "concept redirect")
        return None if latest else self.corpus.records.get(recid)

    def _datacite(self, request: _Request) -> _Canned | None:
        """DataCite's record reads and searches (:class:`tests.fakedatacite.DataciteCorpus`)."""
        answer = self.corpus.datacite.answer(request.npath, request.query)
        if answer is None:
            return _Canned(404, (("content-type", _JSON_CT),), self.corpus.datacite.not_found)
        return _Canned(*answer)

    def _doi(self, request: _Request) -> _Canned | None:
        raw = unquote(request.raw_rel)
        if not raw.lower().startswith("/ra/"):
            return None
        answers: list[dict[str, str]] = []
        for doi in (d.strip() for d in raw[len("/ra/") :].split(",")):
            if not doi.startswith("10."):
                answers.append({"DOI": doi, "status": "Invalid DOI"})
                continue
            agency = self.corpus.ra_for(doi)
            answers.append(
                {"DOI": doi, "RA": agency} if agency else {"DOI": doi, "status": "DOI does not exist"}
            )
        return _Canned(200, (("content-type", "application/json;charset=UTF-8"),), _json_bytes(answers), "ra")

    # -- validators
    def _finalize(self, request: _Request, canned: _Canned) -> tuple[int, list[tuple[str, str]], bytes]:
        """Apply the ETag / Last-Modified modes; may turn the answer into a 304."""
        with self._lock:
            rate_headers, rules = self.rate_headers, self.crossref_rules
        headers = [
            (k, v)
            for k, v in canned.headers
            if k.lower() not in _VALIDATORS and (rate_headers or k.lower() not in _RATE_HEADERS)
        ]
        if rules is not None and request.service == "crossref":
            headers += rules.headers("lists" if _is_collection("crossref", request.npath) else "single")
        validated = canned.status == 200 and not _is_collection(request.service, request.npath)
        if not validated:
            return canned.status, headers, canned.body
        with self._lock:
            etags, last_modified = self.etags, self.last_modified
        not_modified = False
        if etags:
            etag = canned.header("etag") or '"' + hashlib.sha256(canned.body).hexdigest()[:32] + '"'
            headers.append(("ETag", etag))
            inm = request.headers.get("if-none-match")
            not_modified = inm is not None and _etag_matches(inm, etag)
        if last_modified:
            stamp = canned.header("last-modified") or _derived_last_modified(canned.body)
            headers.append(("Last-Modified", stamp))
            ims = request.headers.get("if-modified-since")
            if ims and not (etags and "if-none-match" in request.headers):
                with contextlib.suppress(TypeError, ValueError):
                    modified = email.utils.parsedate_to_datetime(stamp)
                    not_modified = modified <= email.utils.parsedate_to_datetime(ims)
        if not_modified:
            return 304, headers, b""
        return canned.status, headers, canned.body

    def _send(self, handler: _Handler, request: _Request, canned: _Canned) -> None:
        status, headers, body = self._finalize(request, canned)
        range_header = request.headers.get("range", "")
        match = re.fullmatch(r"bytes=(\d+)-(\d+)", range_header.strip())
        if status == 206 and match and int(match.group(2)) < len(body):
            start, end = int(match.group(1)), int(match.group(2))
            body = body[start : end + 1]
            total = (canned.header("content-range") or "/*").rsplit("/", 1)[1]
            headers = [(k, v) for k, v in headers if k.lower() != "content-range"]
            headers.append(("Content-Range", f"bytes {start}-{end}/{total}"))
        handler.write_response(status, headers, body)
        self._count(request.service, status)

    # -- faults
    def _apply_fault(self, handler: _Handler, request: _Request, fault: _Fault) -> None:
        params, kind = fault.params, fault.kind
        stop_event = handler.server.stop_event
        if kind == "refuse":
            handler.close_connection = True
            if params.get("rst"):
                handler.abort()
            return
        if kind == "hang":
            stop_event.wait(float(params.get("max_s", 30.0)))
            handler.close_connection = True
            return
        if kind == "latency":
            if stop_event.wait(float(params.get("delay_s", 0.5))):
                handler.close_connection = True
                return
            self._send(handler, request, self._respond(request))
            return
        if kind in ("slow", "reset"):
            status, headers, body = self._finalize(request, self._respond(request))
            handler.send_response_only(status)
            for name, value in headers:
                handler.send_header(name, value)
            handler.send_header("Date", _http_date())
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.flush()  # the headers go out now; the body follows slowly or is cut
            if kind == "reset":
                cut = max(1, int(len(body) * float(params.get("fraction", 0.5)))) if body else 0
                handler.wfile.write(body[:cut])
                handler.wfile.flush()
                handler.abort()
                return
            delay, size = float(params.get("delay_s", 0.2)), max(1, int(params.get("chunk_size", 256)))
            try:
                for start in range(0, len(body), size):
                    if stop_event.wait(delay):
                        handler.close_connection = True
                        return
                    handler.wfile.write(body[start : start + size])
                    handler.wfile.flush()
            except OSError:
                handler.close_connection = True
            return
        status, headers, body = self._fault_response(request, kind, params)
        handler.write_response(status, headers, body)

    def _fault_response(
        self, request: _Request, kind: str, params: Mapping[str, Any]
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        extra = list((params.get("headers") or {}).items())
        if kind == "status":
            code = int(params.get("status", 503))
            reason = HTTPStatus(code).phrase if code in HTTPStatus._value2member_map_ else "Error"
            if params.get("body") is not None:
                body = _to_bytes(params["body"])
                ctype = params.get("content_type") or (
                    _JSON_CT if not isinstance(params["body"], str | bytes) else "text/plain"
                )
            elif params.get("html"):
                body = (
                    f"<html>\r\n<head><title>{code} {reason}</title></head>\r\n<body>\r\n"
                    f"<center><h1>{code} {reason}</h1></center>\r\n</body>\r\n</html>\r\n"
                ).encode()
                ctype = params.get("content_type") or "text/html"
            else:
                body = _json_bytes({"status": "error", "message-type": "exception", "message": reason})
                ctype = params.get("content_type") or _JSON_CT
            headers = [("Content-Type", ctype), *extra]
            if params.get("retry_after") is not None:
                headers.append(("Retry-After", str(params["retry_after"])))
            return code, headers, body
        if kind == "rate_limit":
            if params.get("body") is not None:
                body = _to_bytes(params["body"])
                ctype = _JSON_CT if not isinstance(params["body"], str | bytes) else "text/html"
            elif params.get("html"):
                body, ctype = _BC15_HTML, "text/html"
            else:
                body = _json_bytes({"status": 429, "message": "Too Many Requests"})
                ctype = _JSON_CT
            headers = [("Content-Type", ctype), *extra]
            retry_after = params.get("retry_after")
            if retry_after is not None:
                value = retry_after if isinstance(retry_after, str) else str(int(retry_after))
                headers.append(("Retry-After", value))
            return 429, headers, body
        if kind == "html":
            return (
                200,
                [("Content-Type", "text/html; charset=utf-8"), *extra],
                _to_bytes(params.get("body", _DEFAULT_HTML)),
            )
        if kind == "text":
            body = _to_bytes(params.get("body", "This is not JSON.\n"))
            return 200, [("Content-Type", "text/plain; charset=utf-8"), *extra], body
        if kind == "empty":
            return 200, [("Content-Type", _JSON_CT), *extra], b""
        if kind == "truncated":
            _, _, full = self._finalize(request, self._respond(request))
            if len(full) < 4:
                full = _json_bytes({"status": "ok", "message-type": "work", "message": {"DOI": "10.0/x"}})
            cut = max(1, min(len(full) - 1, int(len(full) * float(params.get("fraction", 0.5)))))
            return 200, [("Content-Type", _JSON_CT), *extra], full[:cut]
        if kind == "bad_encoding":  # a plain body labelled compressed: the client cannot decode it
            _, headers, full = self._finalize(request, self._respond(request))
            kept = [(k, v) for k, v in headers if k.lower() != "content-encoding"]
            return 200, [*kept, ("Content-Encoding", str(params.get("encoding", "gzip"))), *extra], full
        if kind == "redirect_loop":  # 302 to the very URL asked for, forever
            target = request.raw_path + (f"?{request.raw_query}" if request.raw_query else "")
            return 302, [("Location", self.base_url + target), ("Content-Type", _JSON_CT), *extra], b""
        if kind == "wrong_shape":
            default: Any = (
                {"status": "ok", "message-type": "work-list", "message": {"items": []}}
                if request.service == "crossref"
                else []
            )
            return 200, [("Content-Type", _JSON_CT), *extra], _to_bytes(params.get("body", default))
        raise AssertionError(f"unhandled fault kind {kind}")  # pragma: no cover


def _prefix_matches(prefix: str | None, raw_path: str, service: str, service_path: str) -> bool:
    """Whether ``prefix`` starts the raw/decoded full path or the decoded service-relative path."""
    if prefix is None:
        return True
    raw_rel = raw_path[len(SERVICES[service]) :] if service else ""
    candidates = [raw_path, unquote(raw_path), raw_rel, service_path]
    return any(c.startswith(prefix) for c in candidates if c)


def quote_doi(doi: str) -> str:
    """Percent-encode a DOI for a path segment the way syncd is expected to (slashes included)."""
    return quote(doi, safe="")


def main(argv: Sequence[str] | None = None) -> None:
    """Run the fake standalone: ``python -m tests.fakeupstream [--port N]`` (prints the base URLs)."""
    import argparse

    parser = argparse.ArgumentParser(description="Replay the recorded Crossref/Zenodo corpus on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0, help="TCP port (default: a free one)")
    parser.add_argument(
        "--corpus", default=None, help="corpus dir (default: $SYNCD_UPSTREAM_CORPUS, else tests/corpus)"
    )
    args = parser.parse_args(argv)
    fake = FakeUpstream(args.corpus, port=args.port).start()
    print(f"SYNCD_CROSSREF__BASE_URL={fake.crossref_url}")
    print(f"SYNCD_ZENODO__BASE_URL={fake.zenodo_url}")
    print(f"SYNCD_DOI__BASE_URL={fake.doi_url}", flush=True)
    print(f"SYNCD_DATACITE__BASE_URL={fake.datacite_url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        fake.stop()


if __name__ == "__main__":
    main()
