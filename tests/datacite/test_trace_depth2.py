"""``datacite_trace_relations`` with ``depth: 2``: the second hop, local-first, inside the node cap and the
call deadline, cycles and duplicates merged (records from the recorded ``/dois?page[size]=5`` page).
"""

from __future__ import annotations

from typing import Any

from freezegun import freeze_time
from mcp.types import TextContent

from syncd.datacite.queries_trace import trace_answer
from syncd.datacite.tools import TOOLS, trace_relations
from syncd.road.services import Services
from syncd.tools.fit import answer_size, fit_answer
from tests.datacite.upstream import Recorded, recorded_json

_PAGE = "work-list/dois_page-size-5_page-1.json"
ROOT = "10.5281/zenodo.3520062"
VERSION = "10.5281/zenodo.3520063"
ISBN = "978-83-7683-181-7"


def _record(doi: str) -> dict[str, Any]:
    page = recorded_json(_PAGE)
    record = next(r for r in page["data"] if r["attributes"]["doi"] == doi)
    return {"data": [record], "included": page["included"][:1], "meta": {"total": 1}, "links": {}}


def _naming(doi: str) -> Any:
    """A matcher of the reverse query whose first phrase is ``doi`` (the DOIs it is asked about)."""
    return lambda path, params: (
        path == "/dois"
        and params.get("query", "").startswith(f'relatedIdentifiers.relatedIdentifier:("{doi}"')
    )


def _serve(upstream: Recorded, *, second_status: int = 200) -> None:
    upstream.add_work(ROOT, _record(ROOT))
    upstream.add_work(VERSION, _record(VERSION))
    upstream.add_list(_naming(ROOT), {**_record(VERSION), "meta": {"total": 1}})
    upstream.add_list(_naming(VERSION), {**_record(ROOT), "meta": {"total": 1}}, second_status)
    upstream.add_list(lambda path, params: path == "/events", {"data": [], "meta": {"total": 0}, "links": {}})


def _edges(data: dict[str, Any]) -> dict[tuple[str, str, str], list[str]]:
    return {(e["from"], e["relationType"], e["to"]): e["sources"] for e in data["edges"]}


def test_depth_two_reads_the_version_s_relations_and_merges_the_cycle_back_to_the_root(
    dc: Services, upstream: Recorded
) -> None:
    """Root 10.5281/zenodo.3520062 HasVersion 10.5281/zenodo.3520063 (and IsIdenticalTo the ISBN
    978-83-7683-181-7); the second hop reads 3520063's own record (IsVersionOf the root, IsIdenticalTo
    the same ISBN) and the records naming it (the root, HasVersion): no depth-2 node (every target
    was met already, the root stays depth 0), four edges whose sources merge both directions; 5
    requests the first time (root, reverse, events, the version's whole record, the second reverse),
    none the second time (every page and record answered from the store).
    """
    _serve(upstream)
    data = trace_answer(dc, ROOT, 2, None, True, 50)
    assert [(n["id"], n["idType"], n["depth"]) for n in data["nodes"]] == [
        (ROOT, "DOI", 0),
        (ISBN, "ISBN", 1),
        (VERSION, "DOI", 1),
    ]
    assert _edges(data) == {
        (ROOT, "IsIdenticalTo", ISBN): ["metadata"],
        (ROOT, "HasVersion", VERSION): ["metadata", "reverse_metadata"],
        (VERSION, "IsVersionOf", ROOT): ["reverse_metadata", "metadata"],
        (VERSION, "IsIdenticalTo", ISBN): ["metadata"],
    }
    assert data["coverage"]["reverseMetadata"]["secondHop"] == {
        "total": 1,
        "fetched": 1,
        "expanded": 1,
        "ownEdges": 2,
    }
    version = data["nodes"][2]
    assert version["isDataCiteDoi"] is True and version["repositoryId"] == "cern.zenodo"
    assert version["title"].startswith("Między zagrodą a boiskiem")
    assert "notice" not in data and "truncated" not in data
    assert len(upstream.calls) == 5
    again = trace_answer(dc, ROOT, 2, None, True, 50)
    assert _edges(again) == _edges(data) and len(upstream.calls) == 5


def test_depth_two_with_relation_types_reads_each_hop_from_its_own_side(
    dc: Services, upstream: Recorded
) -> None:
    """relation_types=[HasVersion]: on the first hop the root's own HasVersion passes and the version's
    IsVersionOf of the root passes as HasVersion's inverse; on the second hop, read from the version's
    side, its own IsVersionOf/IsIdenticalTo and the root's HasVersion of it (inverse IsVersionOf)
    do not: no source is added there and the ISBN is never reached.
    """
    _serve(upstream)
    data = trace_answer(dc, ROOT, 2, ["HasVersion"], False, 50)
    assert [n["id"] for n in data["nodes"]] == [ROOT, VERSION]
    assert _edges(data) == {
        (ROOT, "HasVersion", VERSION): ["metadata"],
        (VERSION, "IsVersionOf", ROOT): ["reverse_metadata"],
    }
    assert data["coverage"]["reverseMetadata"]["secondHop"]["ownEdges"] == 0


def test_a_full_first_hop_leaves_no_room_for_the_second_and_says_so(dc: Services, upstream: Recorded) -> None:
    """max_nodes=3 is filled by the first hop (root, ISBN, version): no second-hop request, the answer
    flagged truncated (shown 3, cap 3) with the reason, the first hop's edges only.
    """
    _serve(upstream)
    data = trace_answer(dc, ROOT, 2, None, True, 3)
    assert (data["truncated"], data["shown"], data["cap"]) == (True, 3, 3)
    assert "second hop was not expanded: the first hop filled max_nodes (3)" in data["notice"]
    assert "secondHop" not in data["coverage"]["reverseMetadata"]
    assert len(upstream.calls) == 3  # root, reverse, events
    assert (VERSION, "IsIdenticalTo", ISBN) not in _edges(data)


def test_the_second_hop_is_skipped_when_the_call_deadline_runs_short(
    dc: Services, upstream: Recorded
) -> None:
    """The first reverse page takes 3 s of the 5 s call deadline (the frozen clock moved by the
    upstream): less than 20/45 of it is left, so no second-hop request is sent and the notice says why.
    """
    _serve(upstream)
    with freeze_time("2026-12-01 12:00:00") as frozen:
        slow = _naming(ROOT)

        def ticking(path: str, params: dict[str, str]) -> bool:
            if slow(path, params):
                frozen.tick(3.0)
                return True
            return False

        upstream.lists[0] = (ticking, upstream.lists[0][1], 200)
        data = trace_answer(dc, ROOT, 2, None, True, 50)
    assert "The second hop was not expanded: the call's time budget ran short." in data["notice"]
    assert len(upstream.calls) == 3 and "secondHop" not in data["coverage"]["reverseMetadata"]


def test_a_second_hop_that_fails_leaves_the_first_hop_whole(dc: Services, upstream: Recorded) -> None:
    """The second reverse page answers HTTP 500 on every attempt: the first hop's nodes and edges are
    answered, with a notice naming the failure, instead of an error.
    """
    _serve(upstream, second_status=500)
    data = trace_answer(dc, ROOT, 2, None, True, 50)
    assert "The second hop could not be read (upstream_unavailable)" in data["notice"]
    assert (ROOT, "HasVersion", VERSION) in _edges(data)
    assert "secondHop" not in data["coverage"]["reverseMetadata"]


def test_a_depth_two_answer_over_the_size_budget_is_cut_with_a_continuation(
    dc: Services, upstream: Recorded
) -> None:
    """The four-edge depth-2 answer under a budget its edges do not fit in: edges are cut first (the
    answer then fits), flagged truncated, and the notice says how many stay and which calls show the
    rest; never a silent cut.
    """
    _serve(upstream)
    spec = next(s for s in TOOLS if s.name == "datacite_trace_relations")
    whole = trace_relations(dc, ROOT, depth=2)
    text = "".join(c.text for c in whole.content if isinstance(c, TextContent))
    full = answer_size(text, whole.structured_content)
    budget = full - 50
    fitted = fit_answer(spec.fit, whole, {"doi": ROOT, "depth": 2}, budget)
    data = fitted.structured_content
    assert data is not None
    fitted_text = "".join(c.text for c in fitted.content if isinstance(c, TextContent))
    assert answer_size(fitted_text, data) <= budget
    assert len(data["edges"]) < 4 and data["truncated"] is True
    assert f"Edges cut to {len(data['edges'])} of 4 to fit the answer size" in data["notice"]
    assert "lower max_nodes, narrow relation_types or trace a node on its own" in data["notice"]
    assert len(data["nodes"]) == 3


def test_the_second_hop_adds_depth_two_nodes_up_to_max_nodes(dc: Services, upstream: Recorded) -> None:
    """10.15468/efb17f, which DataCite holds no record of, is named by the GBIF download
    10.15468/dl.msish2 (References, found by the reverse query): the second hop reads that download's
    whole record and adds the 17 other datasets it References as depth-2 nodes; max_nodes=10 keeps the
    root, the download and the first 8 of them (flagged truncated, the notice counting every hop), and
    only the edges between kept nodes; depth-2 DOIs DataCite does not answer stay unhydrated.
    """
    root, download = "10.15468/efb17f", "10.15468/dl.msish2"
    upstream.add_work(download, _record(download))
    upstream.add_list(_naming(root), {**_record(download), "meta": {"total": 1}})
    upstream.add_list(_naming(download), {"data": [], "included": [], "meta": {"total": 0}, "links": {}})
    data = trace_answer(dc, root, 2, None, False, 10)
    nodes = data["nodes"]
    assert [(n["id"], n["depth"]) for n in nodes[:3]] == [(root, 0), (download, 1), ("10.15468/ab3s5x", 2)]
    assert len(nodes) == 10 and {n["depth"] for n in nodes[2:]} == {2}
    assert (data["truncated"], data["shown"], data["cap"]) == (True, 10, 10)
    assert "18 related identifiers found (1 in the first hop); 9 fit max_nodes" in data["notice"]
    assert data["coverage"]["reverseMetadata"]["secondHop"] == {
        "total": 0,
        "fetched": 0,
        "expanded": 1,
        "ownEdges": 18,
    }
    kept = {n["id"] for n in nodes}
    assert all(e["from"] in kept and e["to"] in kept for e in data["edges"])
    assert _edges(data)[(download, "References", root)] == ["reverse_metadata", "metadata"]
    assert len(data["edges"]) == 9 and not any(n["hydrated"] for n in nodes[2:])
    assert nodes[1]["hydrated"] is True and nodes[1]["repositoryId"] == "gbif.gbif"
