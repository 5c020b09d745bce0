"""A lone surrogate in upstream JSON (issue 14.4) is repaired at the edge: U+FFFD, never a failure."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client

from syncd.budget.buckets import Budget
from syncd.config import Settings
from syncd.crossref.client import CrossrefClient
from syncd.registry import POOLS
from syncd.road.services import Services
from syncd.store.maintenance import verify
from syncd.store.repo import Store
from syncd.upstream.http import Deadline
from syncd.upstream.valid_text import REPLACEMENT, has_escaped_surrogate, valid_unicode
from tests.corpus_path import CORPUS
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

RAPTOR = "10.1101/598821"


def _raptor_with_bad_title() -> str:
    """The recorded Raptor work, its title replaced by one with an unpaired high surrogate escape."""
    body = json.loads((CORPUS / "crossref" / "work" / "10.1101_598821.json").read_text(encoding="utf-8"))
    body["message"]["title"] = ["TITLE_PLACEHOLDER"]
    return json.dumps(body).replace("TITLE_PLACEHOLDER", "Bad \\ud835 title")


@pytest.fixture
def client(fake: FakeUpstream, tmp_path: Path) -> Iterator[CrossrefClient]:
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'syncd.db'}",
        crossref={"base_url": fake.crossref_url, "mailto": "ci@example.org"},
    )
    store = Store.open(settings.database_url)
    c = CrossrefClient(settings, Budget(store, settings, pools=POOLS))
    yield c
    c.close()
    store.close()


def test_valid_unicode_repairs_values_and_keys_and_leaves_pairs() -> None:
    """Unpaired surrogates in values and keys become U+FFFD; a real pair (an emoji) is untouched."""
    parsed = json.loads('{"a": ["x\\ud835y"], "\\udc00k": 1, "ok": "\\ud83d\\ude00"}')
    fixed, count = valid_unicode(parsed)
    assert count == 2
    assert fixed == {"a": [f"x{REPLACEMENT}y"], f"{REPLACEMENT}k": 1, "ok": "\U0001f600"}
    json.dumps(fixed, ensure_ascii=False).encode("utf-8")  # encodable now
    assert valid_unicode({"a": "plain"}) == ({"a": "plain"}, 0)
    assert has_escaped_surrogate(b'"\\uD835"') and not has_escaped_surrogate(b'"\\u00e9"')


def test_work_with_a_lone_surrogate_is_read_with_a_replacement_character(
    client: CrossrefClient, fake: FakeUpstream
) -> None:
    """/works/{doi} with a lone surrogate escape in its title: status ok, U+FFFD in its place, valid text."""
    fake.set_body("crossref", f"/works/{RAPTOR}", _raptor_with_bad_title())
    answer = client.get_work(RAPTOR, Deadline(5))
    assert answer.status == "ok"
    assert answer.message is not None and answer.message["title"] == [f"Bad {REPLACEMENT} title"]
    assert answer.text is not None
    answer.text.encode("utf-8")
    assert json.loads(answer.text)["message"]["title"] == [f"Bad {REPLACEMENT} title"]
    assert len(answer.message["author"]) == 24  # the rest of the record is intact


@pytest.mark.anyio
async def test_lone_surrogate_through_the_tool_is_answered_stored_and_searchable(
    cache: Services, fake: FakeUpstream
) -> None:
    """crossref_get_work on a body whose title holds a lone surrogate escape: the answer carries the title
    with U+FFFD (no internal_error), the work is stored, and a second call is answered from the store.
    """
    fake.set_body("crossref", f"/works/{RAPTOR}", _raptor_with_bad_title())
    async with Client(mcp_server(cache)) as client:
        first = await client.call_tool("crossref_get_work", {"doi": RAPTOR})
        second = await client.call_tool("crossref_get_work", {"doi": RAPTOR})
    assert not first.is_error, first.structured_content
    assert first.structured_content["title"] == f"Bad {REPLACEMENT} title"
    assert first.structured_content["authorCount"] == 24
    assert second.structured_content["cache"]["source"] == "store"
    assert fake.count("/works", service="crossref") == 1
    assert verify(cache.store).ok
