"""Issue 14 case 6: Zenodo's revision ETag never keeps a superseded version claiming is_latest forever."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from syncd.config import Settings
from syncd.passes.refresh import revalidate
from syncd.registry import open_services
from syncd.road.services import Services
from syncd.store.maintenance import verify
from syncd.store.repo import Store
from tests.conftest import corpus_json, make_settings
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

V1 = "22705923"
V2 = "22705999"
CONCEPT = "591564"
ETAG = {"etag": 'W/"4"'}


@pytest.fixture
def svc(fake: FakeUpstream, db_url: str) -> Iterator[Services]:
    """Services whose every 3rd record revalidation is unconditional; the fake sends ETags."""
    fake.etags = True
    settings: Settings = make_settings(
        fake, db_url, zenodo={"base_url": fake.zenodo_url, "unconditional_every": 3}
    )
    store = Store.open(settings.database_url)
    services = open_services(settings, store)
    yield services
    services.close()
    store.close()


def _version(recid: str, index: int, latest: bool) -> dict[str, Any]:
    body = copy.deepcopy(corpus_json(f"zenodo/record/records-{V1}.json"))
    body["id"] = recid
    body["versions"] = {"is_latest": latest, "index": index}
    return body


async def _is_latest(svc: Services, recid: str) -> tuple[bool | None, str]:
    async with Client(mcp_server(svc)) as client:
        res = (await client.call_tool("zenodo_get_record", {"id": recid})).structured_content
    return res["record"]["versions"].get("is_latest"), res["cache"]["source"]


@pytest.mark.anyio
async def test_every_third_revalidation_is_unconditional(svc: Services, fake: FakeUpstream) -> None:
    """v1 stored with ETag W/"4"; Zenodo then says is_latest false under the same ETag (a 304 to a
    conditional GET). With zenodo.unconditional_every 3 the first 2 revalidations send If-None-Match
    (304, still latest) and the 3rd does not: it reads is_latest false.
    """
    fake.set_body("zenodo", f"/records/{V1}", _version(V1, 47, True), headers=ETAG)
    assert await _is_latest(svc, V1) == (True, "upstream")
    fake.set_body("zenodo", f"/records/{V1}", _version(V1, 47, False), headers=ETAG)
    fake.reset_log()
    outcomes = []
    for _ in range(3):
        entry = svc.store.get("zenodo_record", V1)
        assert entry is not None
        outcomes.append(str(revalidate(svc, entry)))
    conditional = [bool(r.headers.get("if-none-match")) for r in fake.requests if r.service == "zenodo"]
    assert conditional == [True, True, False]
    assert outcomes == ["unchanged", "unchanged", "changed"]
    assert (await _is_latest(svc, V1))[0] is False
    assert verify(svc.store).ok


@pytest.mark.anyio
async def test_a_newer_version_seen_makes_the_stored_one_not_latest(
    svc: Services, fake: FakeUpstream
) -> None:
    """v1 (index 47) stored as latest; fetching v2 (index 48, same concept) makes v1, answered from the
    store with no request, say is_latest false; its ETag is dropped so the next revalidation is whole.
    """
    fake.set_body("zenodo", f"/records/{V1}", _version(V1, 47, True), headers=ETAG)
    fake.set_body("zenodo", f"/records/{V2}", _version(V2, 48, True), headers={"etag": 'W/"1"'})
    assert await _is_latest(svc, V1) == (True, "upstream")
    assert await _is_latest(svc, V2) == (True, "upstream")
    fake.reset_log()
    assert await _is_latest(svc, V1) == (False, "store")
    assert fake.count(service="zenodo") == 0
    stored = svc.store.get("zenodo_record", V1)
    assert stored is not None and stored.etag is None and stored.concept_key == CONCEPT
    assert verify(svc.store).ok
    assert svc.store.concept_latest(CONCEPT) is not None and svc.store.concept_latest(CONCEPT)[0] == V2  # type: ignore[index]
