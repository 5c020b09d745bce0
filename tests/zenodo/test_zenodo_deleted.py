"""Issue 14 case 5: a Zenodo record deleted after it was stored keeps its last metadata by the tombstone."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from urllib.parse import urlencode

import pytest
from click.testing import CliRunner, Result
from mcp import Client

from syncd.cli import cli
from syncd.config import Settings
from syncd.registry import KINDS, open_services
from syncd.road import policy
from syncd.road.services import Services
from syncd.store.repo import Store
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.conftest import corpus_json
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

RECID = "5244404"
TITLE = "The Origins of SARS-CoV-2: A Critical Review"
DAY = 86_400.0


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), obj={})


@pytest.fixture
def deleted(env: Settings, fake: FakeUpstream) -> Iterator[Services]:  # noqa: F811
    """Record 5244404 stored from its 200, then answered 410 with a spam tombstone and refreshed."""
    assert run("cache", "get", f"10.5281/zenodo.{RECID}").exit_code == 0
    tomb = corpus_json("zenodo/error/records-22705918_410_tombstone.json")
    fake.set_body("zenodo", f"/records/{RECID}", tomb, status=410)
    refreshed = run("cache", "refresh", RECID, "--json")
    assert refreshed.exit_code == 0, refreshed.output
    assert json.loads(refreshed.stdout)["changed"] == 1
    store = Store.open(env.database_url)
    svc = open_services(env, store)
    yield svc
    svc.close()
    store.close()


@pytest.mark.anyio
async def test_deleted_record_answers_found_false_with_reason_and_last_known_copy(
    deleted: Services, fake: FakeUpstream
) -> None:
    """zenodo_get_record of the deleted record: found false, miss_kind deleted, tombstone reason spam,
    and last_known holding the stored title and DOI, marked as not current; no request (stored miss).
    """
    fake.reset_log()
    async with Client(mcp_server(deleted)) as client:
        res = await client.call_tool("zenodo_get_record", {"id": RECID})
    data = res.structured_content
    assert (data["found"], data["miss_kind"], data["tombstone"]["removal_reason"]) == (
        False,
        "deleted",
        "spam",
    )
    known = data["last_known"]
    assert known["record"]["title"] == TITLE and known["record"]["doi"] == f"10.5281/zenodo.{RECID}"
    assert "not current" in known["note"] and known["stored_at"].endswith("Z")
    assert "Last known metadata" in res.content[0].text
    assert fake.count(service="zenodo") == 0


def test_cache_show_keeps_title_and_deleted_ids_are_rechecked_weekly(deleted: Services) -> None:
    """`cache show` of the deleted record gives status gone with its title and DOI; it is stale for the
    sweep only after ttl.deleted (7 days), not after the hourly miss lifetime; `cache verify` is clean.
    """
    shown = json.loads(run("cache", "show", RECID, "--json").stdout)
    assert (shown["status"], shown["title"], shown["doi"]) == ("gone", TITLE, f"10.5281/zenodo.{RECID}")
    assert shown["ttl_s"] == 7 * DAY
    ttls = policy.ttls(deleted.settings.ttl, KINDS.values(), background=True)
    now = time.time()
    assert [e.key for e in deleted.store.stale(policy.staleness(ttls, now + 2 * 3600), 10)] == []
    assert [e.key for e in deleted.store.stale(policy.staleness(ttls, now + 8 * DAY), 10)] == [RECID]
    assert json.loads(run("cache", "verify", "--json").stdout)["ok"] is True


CONCEPT = "591564"
LIVE = "22705923"


@pytest.mark.anyio
@pytest.mark.parametrize("given", [CONCEPT, f"10.5281/zenodo.{CONCEPT}"])
async def test_concept_whose_route_is_gone_falls_back_to_the_latest_live_version(
    cache: Services, fake: FakeUpstream, given: str
) -> None:
    """Concept 591564 (or its concept DOI) answered 410 by the concept route: the versions search finds
    the newest live version 22705923, answered found true, resolved_from concept_to_latest, with a notice
    saying the concept route answered 410; a second call is served from the store with no request.
    """
    fake.set_body(
        "zenodo",
        f"/records/{CONCEPT}",
        corpus_json("zenodo/error/records-22705918_410_tombstone.json"),
        status=410,
    )
    live = corpus_json(f"zenodo/record/records-{LIVE}.json")
    live["versions"] = {"is_latest": False, "index": 47}  # v48 was the latest, and it is deleted
    params = urlencode({"q": f"parent.id:{CONCEPT}", "allversions": "true", "sort": "version", "size": "5"})
    fake.set_body("zenodo", f"/records?{params}", {"hits": {"hits": [live], "total": 1}, "links": {}})
    async with Client(mcp_server(cache)) as client:
        data = (await client.call_tool("zenodo_get_record", {"id": given})).structured_content
        assert (data["found"], data["resolved_from"], data["record"]["recid"]) == (
            True,
            "concept_to_latest",
            LIVE,
        )
        assert f"concept route for {CONCEPT} answered 410" in data["notice"]
        fake.reset_log()
        again = (await client.call_tool("zenodo_get_record", {"id": given})).structured_content
    assert again["record"]["recid"] == LIVE and fake.count(service="zenodo") == 0


@pytest.mark.anyio
async def test_missing_record_id_stays_a_miss(cache: Services, fake: FakeUpstream) -> None:
    """A record id that is no concept (404, and the versions search lists nothing) stays found: false."""
    async with Client(mcp_server(cache)) as client:
        data = (await client.call_tool("zenodo_get_record", {"id": "999999999999"})).structured_content
    assert (data["found"], data["miss_kind"]) == (False, "not_found")
