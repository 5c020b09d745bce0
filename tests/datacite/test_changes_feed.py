"""The change feed's ``kind`` filter over a recorded DataCite change (``syncd_list_changes``).

The KNB package 10.5063/f1m61h5x is stored from its recorded ``/dois`` body, retitled at DataCite and
revalidated: the feed holds its ``title`` change, and ``kind`` keeps or drops it by its source.
"""

from __future__ import annotations

from typing import Any

from syncd.config import McpSettings
from syncd.datacite import lookups
from syncd.datacite.tools import get_work
from syncd.passes import refresh
from syncd.registry import CHANGE_SOURCES, change_sources, open_services
from syncd.road.services import Services
from syncd.server.changes import TOOLS, ListChangesArgs
from tests.datacite.upstream import Recorded

KNB = "10.5063/f1m61h5x"
RETITLED = "A retitled KNB package"
(TOOL,) = TOOLS


def _record_a_datacite_change(dc: Services, upstream: Recorded) -> None:
    """Store the KNB package, retitle it upstream and revalidate it: one ``title`` change."""
    upstream.add_work(KNB)
    get_work(dc, KNB)
    upstream.works[KNB]["data"][0]["attributes"]["titles"][0]["title"] = RETITLED
    entry = lookups.stored_work(dc, KNB)
    assert entry is not None
    assert refresh.revalidate(dc, entry).result.name == "CHANGED"


def _changes(svc: Services, **args: Any) -> dict[str, Any]:
    """The tool's answer to ``args`` as a client's call reaches it: through its input model."""
    result = TOOL.run(svc, TOOL.parse({"since": "1h", **args}))
    assert result.structured_content is not None
    return result.structured_content


def test_kind_datacite_lists_a_datacite_change_and_crossref_does_not(
    dc: Services, upstream: Recorded
) -> None:
    """kind=datacite returns the KNB package's title change (its DOI, new title, type ``title``);
    kind=crossref and kind=zenodo return none; all returns it (before, datacite was no choice at all).
    """
    _record_a_datacite_change(dc, upstream)
    datacite = _changes(dc, kind="datacite")
    assert [(c["kind"], c["doi"], c["types"], c["title"]) for c in datacite["changes"]] == [
        ("datacite_work", KNB, ["title"], RETITLED)
    ]
    assert _changes(dc, kind="crossref")["count"] == 0
    assert _changes(dc, kind="zenodo")["count"] == 0
    assert [c["doi"] for c in _changes(dc, kind="all")["changes"]] == [KNB]


def test_the_published_choices_are_the_registrys_change_sources() -> None:
    """The inputSchema's ``kind`` is a string whose enum is registry.CHANGE_SOURCES (datacite among them),
    and the input model accepts ``" DataCite "`` as ``datacite``.
    """
    schema = ListChangesArgs.model_json_schema()["properties"]["kind"]
    assert schema["type"] == "string"
    assert schema["enum"] == list(CHANGE_SOURCES) == ["crossref", "zenodo", "datacite", "agency", "all"]
    assert ListChangesArgs.model_validate({"kind": " DataCite "}).kind == "datacite"


def test_a_source_of_a_slice_not_served_is_an_invalid_parameter(dc: Services, upstream: Recorded) -> None:
    """On a server serving only Zenodo and the feed, kind=datacite is refused with reason
    invalid_parameter naming the choices it has (zenodo, agency, all); kind=zenodo and kind=agency answer.
    """
    _record_a_datacite_change(dc, upstream)
    assert list(change_sources(["zenodo", "changes"])) == ["zenodo", "agency", "all"]
    settings = dc.settings.model_copy(update={"mcp": McpSettings(slices=["zenodo", "changes"])})
    zenodo_only = open_services(settings, dc.store, transport=upstream.transport())
    try:
        refused = TOOL.run(zenodo_only, TOOL.parse({"kind": "datacite"}))
        assert refused.is_error and refused.structured_content is not None
        error = refused.structured_content["error"]
        assert error["data"]["reason"] == "invalid_parameter"
        assert "zenodo, agency, all" in error["message"]
        assert _changes(zenodo_only, kind="zenodo")["count"] == 0
        assert _changes(zenodo_only, kind="agency")["count"] == 0
        assert _changes(zenodo_only, kind="all")["count"] == 1
    finally:
        zenodo_only.close()
