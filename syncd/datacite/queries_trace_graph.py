"""The relation graph of ``datacite_trace_relations`` and the three sources that fill it (one hop each).

:class:`Graph` holds the nodes in discovery order (a node keeps the depth it was first met at, so a
cycle back to the root or to a depth-1 node adds no node) and the edges merged by their
``(from, to, relationType)`` triple (``sources`` and ``eventSources`` joined, never duplicated).
The sources, each read from one DOI's side (``relation_types`` passes the DOI's own assertions on
their type and assertions pointing at it on the inverse type):

* :func:`own_edges`: a record's ``relatedIdentifiers`` and ``relatedItems`` (``sources: ["metadata"]``);
* :func:`reverse_edges`: the DataCite records whose ``relatedIdentifiers`` name one of the DOIs in any
  of its forms (bare, doi.org and dx.doi.org URLs), one ``/dois`` list page (cached as a
  ``datacite_search`` page), each assertion re-checked pair by pair (``reverse_metadata``);
* :func:`event_edges`: DataCite Event Data (``/events``), the citation family (``event_data``).

Pure but for the list pages :func:`reverse_edges` and :func:`event_edges` read through
:func:`syncd.datacite.lookups.list_page` (local-first, the ``datacite`` pool).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from syncd.datacite import lookups
from syncd.datacite.params import phrase
from syncd.datacite.views import document
from syncd.datacite.views_reference import CITATION_GROUP, RELATION_TYPES
from syncd.errors import BudgetExhausted, UpstreamError
from syncd.road.services import Services

__all__ = ["DOI_FORMS", "Graph", "admits", "event_edges", "own_edges", "reverse_edges", "target"]

DOI_URL = re.compile(r"^https?://(?:dx\.)?doi\.org/", re.IGNORECASE)
DOI_FORMS = ("", "https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/")
"""The prefixes under which a record may name a DOI in ``relatedIdentifiers`` (bare first)."""
_REVERSE_FIELDS = "doi,titles,types,publicationYear,citationCount,versionCount,client,relatedIdentifiers"


def _kebab(relation: str) -> str:
    return re.sub(r"([a-z])([A-Z])", r"\1-\2", relation).lower()


def _pascal(kebab: str) -> str:
    return "".join(p.capitalize() for p in kebab.split("-"))


def target(value: str, kind: str | None) -> tuple[str, str]:
    """``(id, idType)`` of a related identifier: a DOI (or doi.org URL) as the bare lower-case DOI."""
    text = value.strip()
    if kind == "DOI" or (kind == "URL" and DOI_URL.match(text)):
        return DOI_URL.sub("", text).lower(), "DOI"
    return text, kind or "Unknown"


class Graph:
    """Nodes in discovery order (``id -> node``) and merged edges (``(from, to, type) -> edge``)."""

    def __init__(self, root: str) -> None:
        self.nodes: dict[str, dict[str, Any]] = {
            root: {"id": root, "idType": "DOI", "depth": 0, "hydrated": False}
        }
        self.edges: dict[tuple[str, str, str], dict[str, Any]] = {}

    def node(self, ident: str, kind: str, depth: int = 1) -> None:
        """Add a node met at ``depth`` (0-2); one already met keeps its first depth."""
        self.nodes.setdefault(ident, {"id": ident, "idType": kind, "depth": depth, "hydrated": False})

    def edge(self, src: str, dst: str, relation: str, source: str, event_source: str | None = None) -> None:
        """Add the assertion ``src -relation-> dst`` read from ``source`` (a known triple merges sources)."""
        edge = self.edges.setdefault(
            (src, dst, relation), {"from": src, "to": dst, "relationType": relation, "sources": []}
        )
        if source not in edge["sources"]:
            edge["sources"].append(source)
        if event_source and event_source not in edge.setdefault("eventSources", []):
            edge["eventSources"].append(event_source)


def admits(relation: str, allowed: set[str] | None, *, inverse: bool) -> bool:
    """Whether ``relation_types`` (``allowed``, None: all) admits an assertion, read from the traced side.

    ``inverse``: the assertion points at the traced DOI, so its inverse type is what is filtered.
    """
    if allowed is None:
        return True
    if not inverse:
        return relation in allowed
    back = RELATION_TYPES.get(relation, (None, ""))[0]
    return back is not None and back in allowed


def own_edges(graph: Graph, src: str, doc: dict[str, Any], allowed: set[str] | None, depth: int = 1) -> int:
    """Edges ``src`` -> each related identifier and identified related item of ``doc``; how many."""
    count = 0
    pairs: list[tuple[Any, Any, Any]] = []
    for r in doc.get("relatedIdentifiers") or []:
        r = r if isinstance(r, dict) else {}
        pairs.append((r.get("relationType"), r.get("relatedIdentifier"), r.get("relatedIdentifierType")))
    for item in doc.get("relatedItems") or []:
        item = item if isinstance(item, dict) else {}
        ident = item.get("relatedItemIdentifier")
        ident = ident if isinstance(ident, dict) else {}
        pairs.append(
            (
                item.get("relationType"),
                ident.get("relatedItemIdentifier"),
                ident.get("relatedItemIdentifierType"),
            )
        )
    for relation, value, kind in pairs:
        if not (isinstance(relation, str) and isinstance(value, str) and value.strip()):
            continue
        if admits(relation, allowed, inverse=False):
            ident, id_type = target(value, kind if isinstance(kind, str) else None)
            if ident == src:
                continue  # a record naming itself is no relation
            graph.node(ident, id_type, depth)
            graph.edge(src, ident, relation, "metadata")
            count += 1
    return count


def reverse_query(dois: Sequence[str], allowed: set[str] | None) -> str:
    """The ``/dois`` query of the records naming any of ``dois`` (every form), narrowed by the inverses."""
    forms = [f"{p}{d}" for d in dois for p in DOI_FORMS]
    query = "relatedIdentifiers.relatedIdentifier:(" + " OR ".join(phrase(f) for f in forms) + ")"
    if allowed is not None:
        inverses = sorted({back for t in allowed if (back := RELATION_TYPES.get(t, (None, ""))[0])})
        query += " AND relatedIdentifiers.relationType:(" + " OR ".join(inverses or ["Other"]) + ")"
    return query


def reverse_edges(
    svc: Services,
    graph: Graph,
    dois: Sequence[str],
    allowed: set[str] | None,
    *,
    depth: int = 1,
    sizes: tuple[int, ...] = (10, 100),
) -> dict[str, Any]:
    """Edges record -> DOI from the records naming any of ``dois``; ``{status, total, fetched}``.

    ``sizes``: the page sizes tried in turn while more match than the page held (the root: 10, then
    100; the second hop: one page of 100).

    Raises:
        UpstreamError, BudgetExhausted: the page could not be had (nothing stored answers it).
    """
    params = {
        "query": reverse_query(dois, allowed),
        "sort": "-created",
        "fields[dois]": _REVERSE_FIELDS,
        "affiliation": "true",
        "publisher": "true",
    }
    body: dict[str, Any] = {}
    total = 0
    for size in sizes:
        body = lookups.list_page(svc, "/dois", {**params, "page[size]": str(size)}).body
        total = int((body.get("meta") or {}).get("total") or 0)
        if total <= size:
            break
    wanted = set(dois)
    records = [r for r in body.get("data") or [] if isinstance(r, dict)]
    for record in records:
        doc = document({"data": record, "included": []}) or {}
        src = str(doc.get("doi") or doc.get("id") or "").lower()
        for r in doc.get("relatedIdentifiers") or []:
            relation, value = (r or {}).get("relationType"), (r or {}).get("relatedIdentifier")
            if not (src and isinstance(relation, str) and isinstance(value, str)):
                continue
            named = target(value, r.get("relatedIdentifierType"))[0]
            if named in wanted and named != src and admits(relation, allowed, inverse=True):
                graph.node(src, "DOI", depth)
                graph.edge(src, named, relation, "reverse_metadata")
    return {"status": "ok", "total": total, "fetched": len(records)}


def event_edges(
    svc: Services, graph: Graph, root: str, datacite: bool, allowed: set[str] | None, include: bool
) -> dict[str, Any]:
    """Edges from DataCite Event Data around ``root``: ``coverage.eventData`` (a failure: ``unavailable``)."""
    types = [t for t in CITATION_GROUP if allowed is None or t in allowed or admits(t, allowed, inverse=True)]
    if not include:
        return {"status": "skipped", "detail": "include_event_data is false."}
    if not types:
        return {"status": "skipped", "detail": "No citation relation type is admitted by relation_types."}
    params = {"relation-type-id": ",".join(_kebab(t) for t in types), "page[size]": "100"}
    params.update({"doi": root} if datacite else {"subj-id": f"https://doi.org/{root}"})
    try:
        body = lookups.list_page(svc, "/events", params).body
    except (UpstreamError, BudgetExhausted) as exc:
        return {"status": "unavailable", "detail": f"Event Data did not answer ({exc.reason})."}
    kept = 0
    rows = [e for e in body.get("data") or [] if isinstance(e, dict)]
    for event in rows:
        a = event.get("attributes") or {}
        src = DOI_URL.sub("", str(a.get("subj-id") or "")).lower()
        dst = DOI_URL.sub("", str(a.get("obj-id") or "")).lower()
        relation = _pascal(str(a.get("relation-type-id") or ""))
        if not src or not dst or root not in (src, dst) or src == dst:
            continue
        if not admits(relation, allowed, inverse=dst == root):
            continue
        graph.node(dst if src == root else src, "DOI")
        graph.edge(src, dst, relation, "event_data", a.get("source-id"))
        kept += 1
    meta = body.get("meta") or {}
    scope = "both_sides" if datacite else "outgoing_to_datacite"
    return {
        "status": "ok",
        "scope": scope,
        "total": int(meta.get("total") or 0),
        "fetched": len(rows),
        "kept": kept,
    }
