"""The DataCite service of the loopback fake (:mod:`tests.fakeupstream`), from the recorded corpus.

Mounted at ``fake.datacite_url`` (``http://127.0.0.1:PORT/datacite``). What it answers:

* ``GET /dois?query=doi:"<doi>"`` (or ``doi:("a" OR "b" ...)``): a list page of the recorded records
  of those DOIs (``datacite/work/*.json``, each ``GET /dois/{doi}`` body's ``data`` with its
  included client, and the full list-endpoint records of ``datacite/work-list/``), newest recording
  first; DOIs it does not hold are left out, as DataCite does;
* ``GET /dois?ids=<a>,<b>`` (trace hydration): the same held records of those DOIs, case-insensitive,
  in the order asked, cut to ``fields[dois]`` when given (``included`` only with ``include``);
* ``GET /dois?query=[(<q>) AND ]updated:[A TO B]&page[cursor]=...`` (a watch's window walk): the held
  records whose ``attributes.updated`` lies in ``[A, B]`` (and whose ``client`` is ``client-id`` when
  given; ``q`` other than ``*`` must appear in the record's JSON text, case-insensitive), by
  ``created`` ascending, ``page[size]`` per page, ``links.next`` carrying a cursor token (unpadded
  base64 of ``<created>,<doi>`` of the page's last row, as DataCite's) while rows are left. The
  corpus is shared by every fake of a process: a test changing a held record (``records[doi]``, to
  stand for DataCite's copy changing) restores it (``monkeypatch.setitem``);
* ``GET /dois`` with another query: the recorded glacier search page when the query holds the word
  ``glacier`` (its recorded ``meta.page`` set to the page asked), else an empty page;
* ``GET /repositories``: the recorded ``ids=`` page when ``ids`` is given, else the glacier search page;
* ``GET /events``: the recorded Event Data of 10.5061/dryad.8515 for ``doi=10.5061/dryad.8515``, else none;
* content negotiation ``GET /dois/{mime}/{doi}`` is served from the recorded exchanges by the fake's
  exchange routing, and from the recorded negotiated bodies ``datacite/citation/<type>-<subtype>_<doi>``
  (the DOI's first ``/`` written ``-``); anything else is DataCite's recorded 404 body.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

__all__ = ["DataciteCorpus"]

_PHRASE = re.compile(r'"((?:[^"\\]|\\.)+)"')
_WINDOW = re.compile(r"^(?:\((?P<q>.*)\) AND )?updated:\[(?P<a>\S+) TO (?P<b>\S+)\]$")
_JSON = (("content-type", "application/json; charset=utf-8"),)


Held = dict[str, tuple[list[dict[str, Any]], list[Any]]]
"""DOI -> its records and the clients they include."""


def ids_page(query: dict[str, str], held: Held) -> dict[str, Any]:
    """DataCite's ``ids=a,b`` page over ``held`` (DOI -> its records and their included clients): the
    records of the comma-separated ids (case-insensitive, in the order asked, unknown ones dropped), cut
    to ``fields[dois]`` when given (attributes and relationships of those names; ``client`` is a
    relationship), ``included`` only with ``include``, at most ``page[size]`` (25).
    """
    ids = [d.strip().lower() for d in query["ids"].split(",") if d.strip()]
    fields = set(query["fields[dois]"].split(",")) if "fields[dois]" in query else None
    data: list[dict[str, Any]] = []
    included: list[Any] = []
    for doi in dict.fromkeys(ids):
        if doi not in held:
            continue
        records, clients = held[doi]
        for record in records:
            if fields is not None:
                record = {
                    **record,
                    "attributes": {k: v for k, v in record["attributes"].items() if k in fields},
                    "relationships": {
                        k: v for k, v in (record.get("relationships") or {}).items() if k in fields
                    },
                }
            data.append(record)
        if "include" in query:
            included += [c for c in clients if c not in included]
    size = int(query.get("page[size]") or 25)
    return {"data": data[:size], "included": included, "meta": {"total": len(data)}, "links": {}}


class DataciteCorpus:
    """The recorded DataCite records and pages under ``root/datacite`` (absent: every answer is a 404)."""

    def __init__(self, root: Path) -> None:
        base = root / "datacite"
        self.records: dict[str, tuple[dict[str, Any], list[Any]]] = {}
        self.not_found = (
            b'{"errors":[{"status":"404","title":"The resource you are looking for doesn\'t exist."}]}'
        )
        self.negotiated: dict[str, bytes] = {}
        if not base.exists():
            self.search = self.repositories = self.repository_ids = self.events = None
            return
        for path in sorted(base.glob("work/*.json")):
            if path.name.endswith(".headers.json"):
                continue
            body = json.loads(path.read_bytes())
            self._keep(body["data"], body.get("included") or [])
        for path in sorted(base.glob("work-list/*.json")):
            body = json.loads(path.read_bytes())
            for record in body.get("data") or []:
                if "titles" in (record.get("attributes") or {}) and "creators" in record["attributes"]:
                    self._keep(record, body.get("included") or [], replace=False)
        self.search = json.loads(
            (base / "work-list/dois_query-glacier_size-3_fields_include-client.json").read_bytes()
        )
        self.repositories = json.loads(
            (base / "repository-list/repositories_query-glacier_size-3.json").read_bytes()
        )
        self.repository_ids = json.loads(
            (base / "repository-list/repositories_ids-ethz.wgms-dryad.dryad_query-ignored.json").read_bytes()
        )
        self.events = json.loads(
            (base / "event-list/events_doi-10.5061-dryad.8515_citation-types.json").read_bytes()
        )
        error = base / "error/dois_10.4124_05f6c379-dd68-4cdb-880d-33d3e9576d52_1_404.json"
        self.not_found = error.read_bytes()
        for path in sorted(base.glob("citation/*.json")):  # <type>-<subtype>_<doi, / as ->.json
            mime, _, doi = path.stem.partition("_")
            kind, _, subtype = mime.partition("-")
            self.negotiated[f"/dois/{kind}/{subtype}/{doi.replace('-', '/', 1)}".lower()] = path.read_bytes()

    def _keep(self, record: dict[str, Any], included: list[Any], *, replace: bool = True) -> None:
        doi = str((record.get("attributes") or {}).get("doi") or record.get("id") or "").lower()
        if doi and (replace or doi not in self.records):
            self.records[doi] = (record, included)

    def answer(
        self, npath: str, query: dict[str, str]
    ) -> tuple[int, tuple[tuple[str, str], ...], bytes] | None:
        """``(status, headers, body)`` for a DataCite request, or None for the fake's other routes."""
        if npath == "/dois":
            return 200, _JSON, json.dumps(self._dois(query)).encode()
        if npath.lower() in self.negotiated:
            kind = npath.split("/")[2] + "/" + npath.split("/")[3]
            return 200, (("content-type", f"{kind}; charset=utf-8"),), self.negotiated[npath.lower()]
        if npath == "/events" and self.events is not None:
            recorded = query.get("doi") == "10.5061/dryad.8515"
            body = self.events if recorded else {"data": [], "meta": {"total": 0}, "links": {}}
            return 200, _JSON, json.dumps(body).encode()
        if npath == "/repositories" and self.repositories is not None:
            body = self.repository_ids if "ids" in query else self.repositories
            return 200, _JSON, json.dumps(body).encode()
        return None

    def _ids(self, query: dict[str, str]) -> dict[str, Any]:
        """An ``ids=a,b`` page of the held records (:func:`ids_page`)."""
        return ids_page(query, {doi: ([record], clients) for doi, (record, clients) in self.records.items()})

    def _dois(self, query: dict[str, str]) -> dict[str, Any]:
        if "ids" in query:
            return self._ids(query)
        q = query.get("query", "")
        if q.startswith("doi:"):
            dois = [d.replace('\\"', '"').replace("\\\\", "\\").lower() for d in _PHRASE.findall(q)]
            hits = [self.records[d] for d in dict.fromkeys(dois) if d in self.records]
            included: list[Any] = []
            for _, clients in hits:
                included += [c for c in clients if c not in included]
            return {
                "data": [r for r, _ in hits],
                "included": included,
                "meta": {"total": len(hits)},
                "links": {},
            }
        window = _WINDOW.match(q)
        if window is not None:
            return self._window(window.group("q") or "*", window.group("a"), window.group("b"), query)
        page = int(query.get("page[number]") or 1)
        if "glacier" in q.lower() and self.search is not None:
            return {**self.search, "meta": {**self.search["meta"], "page": page}}
        return {"data": [], "included": [], "meta": {"total": 0, "totalPages": 0, "page": page}, "links": {}}

    def _window(self, q: str, start: str, end: str, query: dict[str, str]) -> dict[str, Any]:
        """One cursor page of the held records updated in ``[start, end]`` (see the module docstring)."""

        def instant(value: str) -> str:
            return value.replace(".000Z", "Z")

        client = query.get("client-id")
        rows = sorted(
            (
                (r, inc)
                for r, inc in self.records.values()
                if instant(start) <= instant(str(r["attributes"].get("updated") or "")) <= instant(end)
                and (
                    client is None
                    or (r.get("relationships") or {}).get("client", {}).get("data", {}).get("id") == client
                )
                and (q == "*" or q.lower() in json.dumps(r).lower())
            ),
            key=lambda pair: (
                pair[0]["attributes"].get("created") or "",
                pair[0]["attributes"]["doi"].lower(),
            ),
        )
        total = len(rows)
        token = query.get("page[cursor]", "1")
        if token != "1":
            after = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
            rows = [
                p
                for p in rows
                if f"{p[0]['attributes'].get('created')},{p[0]['attributes']['doi'].lower()}" > after
            ]
        size = int(query.get("page[size]") or 25)
        page, left = rows[:size], rows[size:]
        included: list[Any] = []
        for _, clients in page:
            included += [c for c in clients if c not in included]
        links: dict[str, str] = {}
        if page and left:
            last = page[-1][0]["attributes"]
            mark = f"{last.get('created')},{last['doi'].lower()}".encode()
            cursor = base64.urlsafe_b64encode(mark).decode().rstrip("=")
            links["next"] = f"https://api.datacite.org/dois?page%5Bcursor%5D={cursor}&page%5Bsize%5D={size}"
        return {"data": [r for r, _ in page], "included": included, "meta": {"total": total}, "links": links}
