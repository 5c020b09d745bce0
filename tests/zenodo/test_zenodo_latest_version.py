"""Issue 25 kind 3: a version that is not the latest names the newest one (``versions/latest``'s Location).

Corpus: ``zenodo/versions/records-22705923-versions_page-1_size-3.json`` holds 20510517 (scikit-learn
1.9.0, index 46, ``is_latest: false``) of concept 591564, whose latest is 22705923
(``zenodo/record/records-22705923.json``, ``is_latest: true``); ``records-22931068_restricted.json``
is version 28 of concept 22884306, not the latest, and the corpus names no newer version.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from syncd.config import Settings
from syncd.road.services import Services
from tests.conftest import Clock, corpus_json, make_settings
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

pytestmark = pytest.mark.anyio

OLD = "20510517"
LATEST = "22705923"
CONCEPT = "591564"
ROUTE = f"/records/{OLD}/versions/latest"


@pytest.fixture
def settings(fake: FakeUpstream, db_url: str) -> Settings:
    roomy = {"per_s": 1000, "burst": 1000, "in_flight": 8}
    return make_settings(fake, db_url, budget={"zenodo_general": roomy, "zenodo_search": roomy})


@pytest.fixture
async def mcp(cache: Services) -> AsyncIterator[Client]:
    async with Client(mcp_server(cache)) as client:
        yield client


async def structured(client: Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
    res = await client.call_tool(name, args)
    assert res.is_error is False, res.structured_content
    return res.structured_content


async def test_get_record_reads_latest_from_location_without_following(
    mcp: Client, cache: Services, fake: FakeUpstream
) -> None:
    """20510517 says is_latest false: versions/latest is asked once (302, Location .../records/22705923),
    the redirect is not followed (22705923 never fetched), and a repeat asks nothing.
    """
    res = await structured(mcp, "zenodo_get_record", {"id": OLD})
    assert res["record"]["version"] == "1.9.0"
    assert res["record"]["versions"] == {"index": 46, "is_latest": False, "latest_recid": LATEST}
    assert fake.count(ROUTE, service="zenodo") == 1
    assert fake.count(f"/records/{LATEST}", service="zenodo") == 0
    assert cache.store.concept_latest(CONCEPT)[0] == LATEST  # type: ignore[index]
    fake.reset_log()
    again = await structured(mcp, "zenodo_get_record", {"id": OLD})
    assert again["record"]["versions"]["latest_recid"] == LATEST
    assert fake.count(service="zenodo") == 0


async def test_stale_mapping_asks_again_and_answers_stale_when_zenodo_is_down(
    mcp: Client, cache: Services, fake: FakeUpstream, injected_clock: Clock
) -> None:
    """Past ttl.zenodo_record the mapping is asked again; with Zenodo refusing, the stale mapping still
    names 22705923 and the call does not fail.
    """
    await structured(mcp, "zenodo_get_record", {"id": OLD})
    injected_clock.advance(cache.settings.ttl.zenodo_record + 60)
    fake.reset_log()
    await structured(mcp, "zenodo_get_record", {"id": OLD})
    assert fake.count(ROUTE, service="zenodo") == 1
    injected_clock.advance(cache.settings.ttl.zenodo_record + 60)
    fake.fault("refuse", service="zenodo")
    down = await structured(mcp, "zenodo_get_record", {"id": OLD})
    assert down["record"]["versions"]["latest_recid"] == LATEST
    assert down["cache"]["stale"] is True


async def test_latest_unknown_is_left_out_not_a_failure(mcp: Client, fake: FakeUpstream) -> None:
    """22931068 (index 28, not the latest): the corpus names no newer version, versions/latest is a 404;
    the record is answered without latest_recid.
    """
    res = await structured(mcp, "zenodo_get_record", {"id": "22931068"})
    assert res["found"] is True
    assert res["record"]["versions"] == {"index": 28, "is_latest": False}
    assert fake.count("/records/22931068/versions/latest", service="zenodo") == 1


@pytest.mark.parametrize(
    ("status", "location", "expected"),
    [
        (301, f"/api/records/{LATEST}", LATEST),  # a relative Location, a 301
        (302, f"https://zenodo.org/api/records/{LATEST}?x=1#f", LATEST),  # query and fragment ignored
        (302, "https://evil.example/phish", None),  # names no record: left out, never followed
    ],
)
async def test_location_forms(
    mcp: Client, fake: FakeUpstream, status: int, location: str, expected: str | None
) -> None:
    """The record id is the Location path's last ``/records/{id}``; anything else names nothing."""
    fake.set_body("zenodo", ROUTE, b"", status=status, headers={"location": location})
    res = await structured(mcp, "zenodo_get_record", {"id": OLD})
    assert res["record"]["versions"].get("latest_recid") == expected
    assert fake.count("/phish") == 0


async def test_list_versions_past_the_end_names_latest(mcp: Client, fake: FakeUpstream) -> None:
    """Page 3 (size 25) of 20510517's series is past its 47 versions: no hit says which is the latest
    and 20510517 is not, so versions/latest names 22705923.
    """
    past = corpus_json("zenodo/versions/records-22705923-versions_page-3_size-25_past-end.json")
    fake.set_body("zenodo", f"/records/{OLD}/versions?page=3&size=25&sort=version", past)
    res = await structured(mcp, "zenodo_list_versions", {"id": OLD, "page": 3})
    assert (res["versions"], res["total_versions"], res["concept_recid"]) == ([], 47, CONCEPT)
    assert res["latest_recid"] == LATEST
    assert fake.count(ROUTE, service="zenodo") == 1
