"""``datacite_trace_relations``: the relation graph around one DOI, one or two hops, local-first.

First hop (:mod:`syncd.datacite.queries_trace_graph` reads each source):

1. Own metadata: the root's stored record (:func:`syncd.datacite.lookups.get_work`) names its
   related identifiers and related items: an edge root -> each (``sources: ["metadata"]``).
2. Reverse metadata: DataCite records naming the root in any of its forms, a cached ``/dois`` page
   of 10 (100 when more match); each matching assertion is an edge record -> root.
3. Event Data: ``/events`` (a DataCite root: both sides; another agency's: outgoing only); a transient
   failure degrades to ``coverage.eventData.status: "unavailable"`` with a notice.

Nodes (root first, then in discovery order, up to ``max_nodes``) are hydrated from the stored works,
else from ``GET /dois?ids=<a>,<b>...&fields[dois]=doi,titles,types,publicationYear,citationCount,
versionCount,client&page[size]=10`` (10 DOIs a request; ``../shared/spec/datacite.md`` §trace step 4):
``ids=`` also answers another agency's DOI with its linking copy (``client: null``), which the
search index behind ``query=doi:"…"`` does not find. A DOI holding a comma (``ids=`` splits on it)
is asked through a ``doi:("…")`` query with the same fields. Each page is a cached list call
(:func:`syncd.datacite.lookups.list_page`); its DataCite records are stored as partial works.

Second hop (``depth: 2``, only when the first hop left room under ``max_nodes`` and the call
deadline has at least :data:`SECOND_HOP_SHARE` of its time left): the first :data:`FRONTIER` (10)
depth-1 nodes DataCite holds, in node order, read local-first (their stored whole records; the
partial or missing ones in one batch request), their own metadata and one reverse page (100) over
all their DOI forms; the new nodes are depth 2 and hydrated in turn. A node met again (a cycle back
to the root, a neighbour shared by two depth-1 nodes) keeps its first depth and the edge triples
merge their sources. A second hop that cannot be read (budget, upstream) leaves the first hop's
answer whole, with a notice. Hydration sends no batch once less than :data:`HYDRATE_SHARE` of the
deadline is left (:data:`SECOND_HOP_SHARE` while a second hop is still to come): those nodes stay
unhydrated and the notice says how many.
"""

from __future__ import annotations

from typing import Any

from syncd.datacite import lookups
from syncd.datacite.params import doi_query, parse_datacite_doi
from syncd.datacite.queries_trace_graph import Graph, event_edges, own_edges, reverse_edges
from syncd.datacite.rules import WORK_RULES
from syncd.datacite.views import client_of, document, first_title, publication_year, stored_body
from syncd.errors import BudgetExhausted, NotFound, UpstreamError
from syncd.road.services import Services
from syncd.store.content import document as stored_document
from syncd.store.repo import StoredEntry
from syncd.upstream.http import Deadline, current_deadline

__all__ = [
    "EDGE_CAP",
    "FRONTIER",
    "HYDRATE_BATCH",
    "HYDRATE_FIELDS",
    "HYDRATE_SHARE",
    "SECOND_HOP_SHARE",
    "hydrate_params",
    "trace_answer",
]

EDGE_CAP = 1_000
"""Most edges returned."""
FRONTIER = 10
"""Most depth-1 DataCite nodes the second hop expands (in node order)."""
SECOND_HOP_SHARE = 20 / 45
"""Share of the call deadline that must be left to start the second hop (the anchor: 25 s of 45 spent)."""
HYDRATE_SHARE = 5 / 45
"""Share of the call deadline that must be left to send a hydration batch (the anchor: 40 s of 45)."""
HYDRATE_BATCH = 10
"""Most DOIs asked in one hydration request (``ids=`` of at most 10, ``page[size]=10``)."""
HYDRATE_FIELDS = "doi,titles,types,publicationYear,citationCount,versionCount,client"
"""``fields[dois]`` of a hydration request: what a node shows, and the client that says DataCite's."""


def _time_left(deadline: Deadline, share: float) -> bool:
    return deadline.remaining() >= share * deadline.seconds


def _whole(entry: StoredEntry | None) -> dict[str, Any] | None:
    """The document of a stored whole record (None: not stored, a miss, or a search page's part)."""
    if entry is None or entry.status != "ok" or lookups.is_partial(entry):
        return None
    return stored_document(entry, WORK_RULES) or None


def hydrate_params(dois: list[str]) -> dict[str, str]:
    """The ``/dois`` parameters hydrating ``dois`` (lower-cased, at most :data:`HYDRATE_BATCH`).

    ``ids=<a>,<b>...`` when no DOI holds a comma, else ``query=doi:("a" OR ...)`` (DataCite's ``ids=``
    splits on commas); both with ``sort=-created``, ``fields[dois]`` = :data:`HYDRATE_FIELDS`,
    affiliations and publisher as objects, ``page[size]=10``.

    Raises:
        ValueError: more than :data:`HYDRATE_BATCH` DOIs.
    """
    if len(dois) > HYDRATE_BATCH:
        raise ValueError(f"at most {HYDRATE_BATCH} DOIs per hydration request")
    lookup = {"query": doi_query(dois)} if any("," in d for d in dois) else {"ids": ",".join(dois)}
    return {
        **lookup,
        "sort": "-created",
        "fields[dois]": HYDRATE_FIELDS,
        "affiliation": "true",
        "publisher": "true",
        "page[size]": str(HYDRATE_BATCH),
    }


def _batches(dois: list[str]) -> list[list[str]]:
    """``dois`` in requests of at most :data:`HYDRATE_BATCH`: the comma-free ones, then those with a comma."""
    plain = [d for d in dois if "," not in d]
    comma = [d for d in dois if "," in d]
    return [
        part[i : i + HYDRATE_BATCH] for part in (plain, comma) for i in range(0, len(part), HYDRATE_BATCH)
    ]


def _hydrated_docs(page: dict[str, Any], wanted: set[str]) -> dict[str, dict[str, Any]]:
    """The flattened record of each wanted DOI a hydration page answers (the first, newest, copy)."""
    included = page.get("included") if isinstance(page.get("included"), list) else None
    docs: dict[str, dict[str, Any]] = {}
    for record in page.get("data") or []:
        attributes = record.get("attributes") if isinstance(record, dict) else None
        doi = attributes.get("doi") if isinstance(attributes, dict) else None
        key = doi.lower() if isinstance(doi, str) else ""
        if key in wanted and key not in docs:
            docs[key] = document(stored_body(record, included)) or {}
    return docs


def _hydrate(svc: Services, nodes: list[dict[str, Any]], deadline: Deadline, share: float) -> int:
    """Fill the DOI nodes not yet hydrated from the stored works, else ``ids=`` requests of 10 DOIs.

    Best effort: no batch once less than ``share`` of the deadline is left, nor after a failed one.
    A DOI the answers leave out stays unhydrated. Returns how many DOI nodes stay unhydrated for want
    of time.
    """
    wanted = [n for n in nodes if n["idType"] == "DOI" and n["depth"] > 0 and not n["hydrated"]]
    docs: dict[str, dict[str, Any]] = {}
    missing: list[str] = []
    for node in wanted:
        entry = lookups.stored_work(svc, node["id"])
        if entry is None:
            missing.append(node["id"])
        elif entry.status == "ok":
            docs[node["id"]] = stored_document(entry, WORK_RULES) or {}
    missing = list(dict.fromkeys(missing))
    batches = _batches(missing)
    late = 0
    for i, batch in enumerate(batches):
        if not _time_left(deadline, share):
            late = sum(len(b) for b in batches[i:])
            break
        try:
            page = lookups.list_page(svc, "/dois", hydrate_params(batch), deadline)
        except (NotFound, UpstreamError, BudgetExhausted):
            break
        docs.update(_hydrated_docs(page.body, set(batch)))
    for node in wanted:
        if node["id"] in docs:
            _describe(node, docs[node["id"]])
    return late


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


def _frontier_docs(svc: Services, frontier: list[str], deadline: Deadline) -> dict[str, dict[str, Any]]:
    """The whole records of the frontier DOIs: stored ones as they are, the others in one request.

    Raises:
        UpstreamError, BudgetExhausted: the batch request failed.
    """
    docs = {d: doc for d in frontier if (doc := _whole(lookups.stored_work(svc, d))) is not None}
    asked = [d for d in frontier if d not in docs]
    if asked:
        for key, entry in lookups.fetch_works(svc, asked, deadline).items():
            if (doc := _whole(entry)) is not None:
                docs[key] = doc
    return docs


def _second_hop(
    svc: Services, graph: Graph, frontier: list[str], allowed: set[str] | None, deadline: Deadline
) -> dict[str, Any]:
    """Expand ``frontier`` (depth-1 DataCite DOIs): their own metadata and one reverse page.

    New nodes are depth 2. Returns ``coverage.reverseMetadata.secondHop``: ``{total, fetched,
    expanded, ownEdges}``.

    Raises:
        UpstreamError, BudgetExhausted: a record batch or the reverse page could not be had.
    """
    docs = _frontier_docs(svc, frontier, deadline)
    own = sum(own_edges(graph, d, docs[d], allowed, depth=2) for d in frontier if d in docs)
    reverse = reverse_edges(svc, graph, frontier, allowed, depth=2, sizes=(100,))
    return {
        "total": reverse["total"],
        "fetched": reverse["fetched"],
        "expanded": len(frontier),
        "ownEdges": own,
    }


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


class _Trace:
    """One call's state: the graph, the coverage, the notices and the enrichment so far."""

    def __init__(self, svc: Services, root: str, allowed: set[str] | None, max_nodes: int) -> None:
        self.svc, self.root, self.allowed, self.max_nodes = svc, root, allowed, max_nodes
        self.graph = Graph(root)
        self.coverage: dict[str, Any] = {}
        self.notices: list[str] = []
        self.data: dict[str, Any] = {}
        self.late = 0
        self.deadline = current_deadline(svc.settings.deadline_s)

    def kept_nodes(self) -> list[dict[str, Any]]:
        """The nodes within ``max_nodes`` (discovery order); marks the answer truncated when some are left."""
        nodes = list(self.graph.nodes.values())
        if len(nodes) > self.max_nodes:
            self.data.update(truncated=True, shown=self.max_nodes, cap=self.max_nodes)
        return nodes[: self.max_nodes]

    def second_hop(self, share_after: float) -> None:
        """Expand the first :data:`FRONTIER` depth-1 DataCite nodes when room and time allow."""
        first = self.kept_nodes()
        if len(self.graph.nodes) >= self.max_nodes:
            self.data.update(truncated=True, shown=self.max_nodes, cap=self.max_nodes)
            self.notices.append(
                f"The second hop was not expanded: the first hop filled max_nodes ({self.max_nodes:,})."
            )
            return
        candidates = [n["id"] for n in first if n["depth"] == 1 and n.get("isDataCiteDoi")]
        frontier = candidates[:FRONTIER]
        if not frontier:
            self.coverage["reverseMetadata"]["secondHop"] = {"total": 0, "fetched": 0, "expanded": 0}
            return
        if not _time_left(self.deadline, SECOND_HOP_SHARE):
            self.notices.append("The second hop was not expanded: the call's time budget ran short.")
            return
        try:
            hop = _second_hop(self.svc, self.graph, frontier, self.allowed, self.deadline)
        except (UpstreamError, BudgetExhausted) as exc:
            self.notices.append(f"The second hop could not be read ({exc.reason}): the first hop is shown.")
            return
        self.coverage["reverseMetadata"]["secondHop"] = hop
        if len(candidates) > FRONTIER:
            self.notices.append(
                f"{len(candidates) - FRONTIER:,} more depth-1 DataCite nodes were not expanded (the "
                f"second hop reads the first {FRONTIER}): trace one of them to go further."
            )
        self.late += _hydrate(self.svc, self.kept_nodes(), self.deadline, share_after)


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
        UpstreamError, BudgetExhausted: the root or the first hop's reverse query could not be read.
    """
    parsed = parse_datacite_doi(doi)
    root = parsed.key
    t = _Trace(svc, root, set(relation_types) if relation_types else None, max_nodes)
    lookup = lookups.get_work(svc, parsed, t.deadline)
    held = lookup.entry.status == "ok"
    doc = (stored_document(lookup.entry, WORK_RULES) or {}) if held else {}
    own = own_edges(t.graph, root, doc, t.allowed) if held else 0
    if not held:
        t.notices.append(
            f"DataCite holds no public record of {root} (see datacite_get_work): only what others "
            "assert is shown."
        )
    t.coverage["ownMetadata"] = {"status": "ok" if held else "not_datacite", "edgeCount": own}
    t.coverage["reverseMetadata"] = reverse_edges(svc, t.graph, [root], t.allowed)
    t.coverage["eventData"] = event_edges(svc, t.graph, root, held, t.allowed, include_event_data)
    if t.coverage["eventData"]["status"] == "unavailable":
        t.notices.append("Event Data did not answer: its citations are missing.")
    found_first = len(t.graph.nodes)
    t.late = _hydrate(svc, t.kept_nodes(), t.deadline, SECOND_HOP_SHARE if depth == 2 else HYDRATE_SHARE)
    if depth == 2:
        t.second_hop(HYDRATE_SHARE)
    nodes = t.kept_nodes()
    if len(t.graph.nodes) > max_nodes:
        t.notices.append(
            f"{len(t.graph.nodes) - 1:,} related identifiers found ({found_first - 1:,} in the first hop); "
            f"{max_nodes - 1:,} fit max_nodes (raise it, up to 100, or narrow relation_types)."
        )
    if t.late:
        t.notices.append(f"{t.late:,} nodes were left unhydrated by the call's time budget.")
    if held:
        _describe(nodes[0], doc)
    kept = {n["id"] for n in nodes}
    edges = [e for e in t.graph.edges.values() if e["from"] in kept and e["to"] in kept]
    if len(edges) > EDGE_CAP:
        t.data.update(truncated=True, edgesFound=len(edges))
        t.notices.append(
            f"{len(edges):,} edges found between the nodes shown; the first {EDGE_CAP:,} are listed."
        )
        edges = edges[:EDGE_CAP]
    if not edges:
        t.notices.append(
            "No relation was found in the sources read"
            + (" for the relation types given." if t.allowed else ".")
        )
    t.data["root"] = _root(root, nodes[0], doc if held else None)
    if held:
        t.data["rootCounts"] = {k: int(doc.get(k) or 0) for k in _ROOT_COUNTS}
    t.data.update(nodes=nodes, edges=edges, coverage=t.coverage)
    if t.notices:
        t.data["notice"] = " ".join(t.notices)
    t.data["cache"] = lookup.provenance.as_dict()
    return t.data
