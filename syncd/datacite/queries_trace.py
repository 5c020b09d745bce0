"""``datacite_trace_relations``: the relation graph around one DOI, from three sources, local-first.

1. Own metadata: the root's stored record (:func:`syncd.datacite.lookups.get_work`) names its
   related identifiers and related items: an edge root -> each (``sources: ["metadata"]``).
2. Reverse metadata: DataCite records whose ``relatedIdentifiers`` name the root in any of its
   forms (bare DOI, doi.org and dx.doi.org URLs), a cached ``/dois`` page of 10 (100 when more
   match); each matching assertion re-checked pair by pair is an edge record -> root.
3. Event Data: ``/events?doi=<root>`` (a DataCite root: both sides) or ``subj-id=https://doi.org/<root>``
   (another agency's root: outgoing only), the citation family narrowed by ``relation_types``; a
   transient failure degrades to ``coverage.eventData.status: "unavailable"`` with a notice.

Edges keep the asserting side and type exactly; identical (from, to, type) triples merge their
``sources``. ``relation_types`` is read from the traced DOI's side: the root's own assertions pass on
their type, assertions pointing at it on the inverse type. Nodes (root first, then in discovery
order, up to ``max_nodes``) are hydrated from the records DataCite returns for their DOIs (one
``doi:(a OR b ...)`` request per 50, stored as works). The second hop (``depth: 2``) is not expanded
yet: the answer says so.
"""

from __future__ import annotations

import re
from typing import Any

from syncd.datacite import lookups
from syncd.datacite.params import parse_datacite_doi, phrase
from syncd.datacite.rules import WORK_RULES
from syncd.datacite.views import client_of, document, first_title, publication_year
from syncd.datacite.views_reference import CITATION_GROUP, RELATION_TYPES
from syncd.errors import BudgetExhausted, UpstreamError
from syncd.services import Services
from syncd.store.content import document as stored_document
from syncd.upstream.http import current_deadline

__all__ = ["EDGE_CAP", "trace_answer"]

EDGE_CAP = 1_000
"""Most edges returned."""

_DOI_URL = re.compile(r"^https?://(?:dx\.)?doi\.org/", re.IGNORECASE)
_REVERSE_FIELDS = "doi,titles,types,publicationYear,citationCount,versionCount,client,relatedIdentifiers"


def _kebab(relation: str) -> str:
    return re.sub(r"([a-z])([A-Z])", r"\1-\2", relation).lower()


def _pascal(kebab: str) -> str:
    return "".join(p.capitalize() for p in kebab.split("-"))


def _target(value: str, kind: str | None) -> tuple[str, str]:
    """``(id, idType)`` of a related identifier: a DOI (or doi.org URL) as the bare lower-case DOI."""
    text = value.strip()
    if kind == "DOI" or (kind == "URL" and _DOI_URL.match(text)):
        return _DOI_URL.sub("", text).lower(), "DOI"
    return text, kind or "Unknown"


class _Graph:
    """Nodes in discovery order and merged edges, with the caps applied at the end."""

    def __init__(self, root: str) -> None:
        self.nodes: dict[str, dict[str, Any]] = {
            root: {"id": root, "idType": "DOI", "depth": 0, "hydrated": False}
        }
        self.edges: dict[tuple[str, str, str], dict[str, Any]] = {}

    def node(self, ident: str, kind: str) -> None:
        self.nodes.setdefault(ident, {"id": ident, "idType": kind, "depth": 1, "hydrated": False})

    def edge(self, src: str, dst: str, relation: str, source: str, event_source: str | None = None) -> None:
        edge = self.edges.setdefault(
            (src, dst, relation), {"from": src, "to": dst, "relationType": relation, "sources": []}
        )
        if source not in edge["sources"]:
            edge["sources"].append(source)
        if event_source and event_source not in edge.setdefault("eventSources", []):
            edge["eventSources"].append(event_source)


def _admits(relation: str, allowed: set[str] | None, *, inverse: bool) -> bool:
    if allowed is None:
        return True
    if not inverse:
        return relation in allowed
    back = RELATION_TYPES.get(relation, (None, ""))[0]
    return back is not None and back in allowed


def _own(graph: _Graph, root: str, doc: dict[str, Any], allowed: set[str] | None) -> int:
    count = 0
    for r in doc.get("relatedIdentifiers") or []:
        relation, value = (r or {}).get("relationType"), (r or {}).get("relatedIdentifier")
        if not (isinstance(relation, str) and isinstance(value, str) and value.strip()):
            continue
        if _admits(relation, allowed, inverse=False):
            ident, kind = _target(value, r.get("relatedIdentifierType"))
            graph.node(ident, kind)
            graph.edge(root, ident, relation, "metadata")
            count += 1
    for item in doc.get("relatedItems") or []:
        ident_obj = (item or {}).get("relatedItemIdentifier") or {}
        relation, value = (item or {}).get("relationType"), ident_obj.get("relatedItemIdentifier")
        if (
            isinstance(relation, str)
            and isinstance(value, str)
            and value.strip()
            and _admits(relation, allowed, inverse=False)
        ):
            ident, kind = _target(value, ident_obj.get("relatedItemIdentifierType"))
            graph.node(ident, kind)
            graph.edge(root, ident, relation, "metadata")
            count += 1
    return count


def _reverse(svc: Services, graph: _Graph, root: str, allowed: set[str] | None) -> dict[str, Any]:
    forms = [
        root,
        *(
            f"{p}{root}"
            for p in ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/")
        ),
    ]
    query = "relatedIdentifiers.relatedIdentifier:(" + " OR ".join(phrase(f) for f in forms) + ")"
    if allowed is not None:
        inverses = sorted({RELATION_TYPES[t][0] for t in allowed if RELATION_TYPES.get(t, (None,))[0]})
        query += " AND relatedIdentifiers.relationType:(" + " OR ".join(inverses or ["Other"]) + ")"
    params = {"query": query, "sort": "-created", "page[size]": "10", "fields[dois]": _REVERSE_FIELDS}
    params.update(affiliation="true", publisher="true")
    body = lookups.list_page(svc, "/dois", params).body
    total = int((body.get("meta") or {}).get("total") or 0)
    if total > 10:
        body = lookups.list_page(svc, "/dois", {**params, "page[size]": "100"}).body
    records = [r for r in body.get("data") or [] if isinstance(r, dict)]
    for record in records:
        doc = document({"data": record, "included": []}) or {}
        src = str(doc.get("doi") or doc.get("id") or "").lower()
        for r in doc.get("relatedIdentifiers") or []:
            relation, value = (r or {}).get("relationType"), (r or {}).get("relatedIdentifier")
            if not (isinstance(relation, str) and isinstance(value, str)):
                continue
            if _target(value, r.get("relatedIdentifierType"))[0] == root and _admits(
                relation, allowed, inverse=True
            ):
                graph.node(src, "DOI")
                graph.edge(src, root, relation, "reverse_metadata")
    return {"status": "ok", "total": total, "fetched": len(records)}


def _events(
    svc: Services, graph: _Graph, root: str, datacite: bool, allowed: set[str] | None, include: bool
) -> dict[str, Any]:
    types = [
        t for t in CITATION_GROUP if allowed is None or t in allowed or _admits(t, allowed, inverse=True)
    ]
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
        src = _DOI_URL.sub("", str(a.get("subj-id") or "")).lower()
        dst = _DOI_URL.sub("", str(a.get("obj-id") or "")).lower()
        relation = _pascal(str(a.get("relation-type-id") or ""))
        if not src or not dst or root not in (src, dst):
            continue
        if not _admits(relation, allowed, inverse=dst == root):
            continue
        other = dst if src == root else src
        graph.node(other, "DOI")
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


def _hydrate(svc: Services, nodes: list[dict[str, Any]]) -> None:
    """Fill DOI nodes from the stored records, else one ``doi:(...)`` request per 50 (best effort)."""
    deadline = current_deadline(svc.settings.deadline_s)
    wanted = [n for n in nodes if n["idType"] == "DOI" and n["depth"] > 0]
    missing = [n["id"] for n in wanted if lookups.stored_work(svc.store, n["id"]) is None]
    found: dict[str, dict[str, Any]] = {}
    for i in range(0, len(missing), 50):
        try:
            found.update(svc.upstreams.datacite.get_works(missing[i : i + 50], deadline))
        except (UpstreamError, BudgetExhausted):
            break
    for node in wanted:
        entry = lookups.stored_work(svc.store, node["id"])
        doc = (
            stored_document(entry, WORK_RULES)
            if entry is not None and entry.status == "ok"
            else document(found.get(node["id"]))
        )
        if doc:
            _describe(node, doc)


def _describe(node: dict[str, Any], doc: dict[str, Any]) -> None:
    client = client_of(doc)
    node.update(hydrated=True, isDataCiteDoi=client is not None)
    extra = {
        "title": first_title(doc),
        "resourceTypeGeneral": (doc.get("types") or {}).get("resourceTypeGeneral"),
        "publicationYear": publication_year(doc.get("publicationYear")),
        "repositoryId": client.get("repositoryId") if client else None,
        "citationCount": doc.get("citationCount") if isinstance(doc.get("citationCount"), int) else None,
        "versionCount": doc.get("versionCount") if isinstance(doc.get("versionCount"), int) else None,
    }
    node.update({k: v for k, v in extra.items() if v is not None})


_ROOT_COUNTS = (
    "citationCount",
    "referenceCount",
    "versionCount",
    "versionOfCount",
    "partCount",
    "partOfCount",
)


def _root(root: str, node: dict[str, Any], doc: dict[str, Any] | None) -> dict[str, Any]:
    """The ``root`` block: the DOI, whether DataCite holds it, and its title, type, year, repository."""
    out: dict[str, Any] = {"doi": root, "isDataCiteDoi": doc is not None and client_of(doc) is not None}
    out.update(
        {k: node[k] for k in ("title", "resourceTypeGeneral", "publicationYear", "repositoryId") if k in node}
    )
    return out


def trace_answer(
    svc: Services,
    doi: str,
    depth: int,
    relation_types: list[str] | None,
    include_event_data: bool,
    max_nodes: int,
) -> dict[str, Any]:
    """``datacite_trace_relations``' structured content (see the module docstring).

    Raises:
        InvalidInput: ``invalid_doi``.
        UpstreamError, BudgetExhausted: the root or the reverse query could not be read.
    """
    root = parse_datacite_doi(doi).key
    allowed = set(relation_types) if relation_types else None
    lookup = lookups.get_work(svc, parse_datacite_doi(doi))
    graph = _Graph(root)
    held = lookup.entry.status == "ok"
    doc = stored_document(lookup.entry, WORK_RULES) if held else {}
    notices: list[str] = []
    own = _own(graph, root, doc, allowed) if held else 0
    if not held:
        notices.append(
            f"DataCite holds no public record of {root} (see datacite_get_work): only what others "
            "assert is shown."
        )
    coverage: dict[str, Any] = {"ownMetadata": {"status": "ok" if held else "not_datacite", "edgeCount": own}}
    coverage["reverseMetadata"] = _reverse(svc, graph, root, allowed)
    coverage["eventData"] = _events(svc, graph, root, held, allowed, include_event_data)
    if coverage["eventData"]["status"] == "unavailable":
        notices.append("Event Data did not answer: its citations are missing.")
    nodes = list(graph.nodes.values())
    data: dict[str, Any] = {}
    if len(nodes) > max_nodes:
        data.update(truncated=True, shown=max_nodes, cap=max_nodes)
        notices.append(
            f"{len(nodes) - 1:,} related identifiers found; {max_nodes - 1:,} fit max_nodes "
            "(raise it, up to 100)."
        )
        nodes = nodes[:max_nodes]
    _hydrate(svc, nodes)
    root_node = nodes[0]
    if held:
        _describe(root_node, doc)
    kept = {n["id"] for n in nodes}
    edges = [e for e in graph.edges.values() if e["from"] in kept and e["to"] in kept]
    if len(edges) > EDGE_CAP:
        data.update(truncated=True, edgesFound=len(edges))
        edges = edges[:EDGE_CAP]
    if not edges:
        notices.append(
            "No relation was found in the sources read"
            + (" for the relation types given." if allowed else ".")
        )
    if depth == 2:
        notices.append("The second hop is not expanded by syncd yet: trace a depth-1 node to go further.")
    data["root"] = _root(root, root_node, doc if held else None)
    if held:
        data["rootCounts"] = {k: int(doc.get(k) or 0) for k in _ROOT_COUNTS}
    data.update(nodes=nodes, edges=edges, coverage=coverage)
    if notices:
        data["notice"] = " ".join(notices)
    data["cache"] = lookup.provenance.as_dict()
    return data
