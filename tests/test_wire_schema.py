"""The published outputSchemas say what the output models say, with nothing a validator walks for nothing.

``syncd.contracts.common.wire_schema`` inlines ``$ref``s and folds ``anyOf: [X, null]`` into ``X``
(issue 15 target 5: the SDK client validates every answer against the listed schema, and each
reference and optional-field ``anyOf`` cost it a walk). These tests compare, for every tool, the
schema the client lists with the pydantic schema of the tool's output model: the same property names
at every depth, the same ``required`` and ``additionalProperties``, the same types (``null`` kept),
and the same verdict on recorded answers and on broken copies of them.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from pydantic import TypeAdapter

from syncd.contracts.common import wire_schema
from syncd.tools.server import TOOLS, build_server

pytestmark = pytest.mark.anyio

RAPTOR = "10.1101/598821"


def _resolve(node: Any, defs: dict[str, Any]) -> Any:
    """``node`` of a pydantic schema with ``$ref`` resolved and ``anyOf: [X, null]`` read as X|null."""
    if isinstance(node, dict) and "$ref" in node:
        return _resolve(defs[node["$ref"].rsplit("/", 1)[1]], defs)
    if isinstance(node, dict) and isinstance(node.get("anyOf"), list) and {"type": "null"} in node["anyOf"]:
        other = [b for b in node["anyOf"] if b != {"type": "null"}]
        if len(other) == 1:
            out = dict(_resolve(other[0], defs))
            t = out.get("type")
            out["type"] = sorted({*(t if isinstance(t, list) else [t]), "null"})
            return out
    return node


def _shape(node: Any, defs: dict[str, Any], depth: int = 0) -> Any:
    """Property names, required, additionalProperties, types and item shapes, to depth 6."""
    node = _resolve(node, defs)
    if not isinstance(node, dict) or depth > 6:
        return None
    t = node.get("type")
    return {
        "type": sorted(t) if isinstance(t, list) else t,
        "required": sorted(node.get("required") or []),
        "additional": node.get("additionalProperties"),
        "properties": {k: _shape(v, defs, depth + 1) for k, v in (node.get("properties") or {}).items()},
        "items": _shape(node.get("items"), defs, depth + 1),
    }


def _walk(node: Any) -> list[Any]:
    out = [node]
    if isinstance(node, dict):
        for v in node.values():
            out += _walk(v)
    elif isinstance(node, list):
        for v in node:
            out += _walk(v)
    return out


async def test_listed_schemas_keep_every_field_without_refs_or_nullable_anyof(cache: Any) -> None:
    """For all tools, the listed outputSchema has the model's fields, required lists, closed objects and
    types at every depth, and contains no ``$ref`` (but the self-referencing Zenodo facet bucket) and no
    ``anyOf`` with a ``null`` branch.
    """
    async with Client(build_server(cache)) as client:
        listed = {t.name: t.output_schema for t in (await client.list_tools()).tools}
    assert set(listed) == {s.name for s in TOOLS}
    for spec in TOOLS:
        model = TypeAdapter(spec.output).json_schema()
        wire = listed[spec.name]
        assert wire is not None
        Draft202012Validator.check_schema(wire)
        assert _shape(wire, wire.get("$defs", {})) == _shape(model, model.get("$defs", {})), spec.name
        nodes = _walk(wire)
        refs = {n["$ref"] for n in nodes if isinstance(n, dict) and "$ref" in n}
        assert refs <= {"#/$defs/FacetBucket"}, (spec.name, refs)
        assert not any(isinstance(n, dict) and {"type": "null"} in (n.get("anyOf") or []) for n in nodes), (
            spec.name
        )
    assert "$ref" not in json.dumps(listed["crossref_get_work"])


async def test_same_verdict_as_the_model_schema_on_answers_and_broken_answers(cache: Any) -> None:
    """A recorded crossref_get_work answer (10.1101/598821, 24 authors) passes both schemas, and each of
    five broken copies (a wrong type deep in an author, an undeclared key in an affiliation, a string
    count, a null required doi in a nested update entry, a list where the cache object goes) fails both.
    """
    spec = next(s for s in TOOLS if s.name == "crossref_get_work")
    model = Draft202012Validator(TypeAdapter(spec.output).json_schema())
    async with Client(build_server(cache)) as client:
        wire = Draft202012Validator(
            next(t.output_schema for t in (await client.list_tools()).tools if t.name == spec.name)
        )
        answer = (await client.call_tool(spec.name, {"doi": RAPTOR})).structured_content
    assert answer["authorCount"] == 24
    assert not list(model.iter_errors(answer)) and not list(wire.iter_errors(answer))

    def broken(change: Any) -> dict[str, Any]:
        a = copy.deepcopy(answer)
        change(a)
        return a

    cases = [
        broken(lambda a: a["authors"][0].update(given=5)),
        broken(lambda a: a["authors"][0].update(affiliation=[{"name": "x", "extra": 1}])),
        broken(lambda a: a.update(authorCount="24")),
        broken(lambda a: a.update(updatedBy=[{"doi": None, "type": "correction", "source": "publisher"}])),
        broken(lambda a: a.update(cache=[])),
    ]
    for case in cases:
        assert list(model.iter_errors(case)), case
        assert list(wire.iter_errors(case)), case


def test_wire_schema_leaves_its_input_alone() -> None:
    """wire_schema returns a new schema; the pydantic schema it was given is unchanged."""
    spec = next(s for s in TOOLS if s.name == "zenodo_search_records")
    schema = TypeAdapter(spec.output).json_schema()
    before = json.dumps(schema, sort_keys=True)
    out = wire_schema(schema)
    assert json.dumps(schema, sort_keys=True) == before
    assert "$defs" in schema and set(out.get("$defs", {})) == {"FacetBucket"}


async def test_a_kept_work_view_is_not_changed_by_what_a_caller_does_with_its_answer(cache: Any) -> None:
    """Warm crossref_get_work answers reuse the work view kept per content hash; emptying a received
    answer's author list does not reach the next answer (same authors, served from the store).
    """
    async with Client(build_server(cache)) as client:
        first = (await client.call_tool("crossref_get_work", {"doi": RAPTOR})).structured_content
        expected = copy.deepcopy(first["authors"])
        first["authors"].clear()
        first["authors"].append({"given": "X"})
        second = (await client.call_tool("crossref_get_work", {"doi": RAPTOR})).structured_content
    assert second["authors"] == expected
    assert second["cache"]["source"] == "store"
