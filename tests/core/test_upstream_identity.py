"""A wrong base URL is no "not found" (issue 12.5): only the service's own 404 body is a miss."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from syncd.budget.buckets import Budget
from syncd.config import Settings
from syncd.crossref.client import CrossrefClient
from syncd.errors import UpstreamUnavailable
from syncd.registry import POOLS
from syncd.store.repo import Store
from syncd.upstream.http import Deadline
from syncd.upstream.identity import is_crossref_not_found, is_zenodo_not_found
from syncd.zenodo.client import ZenodoClient
from tests.corpus_path import CORPUS
from tests.fakeupstream import FakeUpstream

NGINX_404 = "<html><head><title>404 Not Found</title></head><body><center>nginx</center></body></html>"


@pytest.fixture
def parts(fake: FakeUpstream, tmp_path: Path) -> Iterator[tuple[Settings, Store, Budget]]:
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'syncd.db'}",
        crossref={"base_url": fake.base_url + "/crossrefx", "mailto": "ci@example.org"},
        zenodo={"base_url": fake.base_url + "/zenodo/apix"},
        doi={"base_url": fake.doi_url},
    )
    store = Store.open(settings.database_url)
    yield settings, store, Budget(store, settings, pools=POOLS)
    store.close()


def test_recorded_404_bodies_are_recognised() -> None:
    """Crossref's plain-text 404 and every recorded Zenodo JSON 404 are the services' own; nginx's is not."""
    assert is_crossref_not_found("Resource not found.")
    assert not is_crossref_not_found(NGINX_404)
    zenodo_404s = sorted((CORPUS / "zenodo" / "error").glob("*_404*.json"))
    zenodo_404s = [p for p in zenodo_404s if not p.name.endswith(".headers.json")]
    assert len(zenodo_404s) >= 3
    for path in zenodo_404s:
        assert is_zenodo_not_found(path.read_text(encoding="utf-8")), path.name
    assert not is_zenodo_not_found(NGINX_404)
    assert not is_zenodo_not_found("Resource not found.")


def test_crossref_404_from_a_wrong_base_url_is_upstream_unavailable(
    parts: tuple[Settings, Store, Budget], fake: FakeUpstream
) -> None:
    """Raptor's DOI and member 98 through a mistyped base URL: upstream_unavailable naming the setting."""
    settings, _store, budget = parts
    client = CrossrefClient(settings, budget)
    try:
        with pytest.raises(UpstreamUnavailable) as err:
            client.get_work("10.1101/598821", Deadline(30))  # the claim is the reason, not the time
        assert err.value.reason == "upstream_unavailable"
        assert "crossref.base_url may be wrong" in err.value.hint
        assert "No such service mount." in err.value.message
        with pytest.raises(UpstreamUnavailable):
            client.get_entity("/members/98", "member", Deadline(30))
    finally:
        client.close()


def test_crossref_own_404_is_still_a_miss(fake: FakeUpstream, tmp_path: Path) -> None:
    """With the right base URL, Crossref's own 404 for an unknown DOI stays the not_found outcome."""
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'syncd.db'}",
        crossref={"base_url": fake.crossref_url, "mailto": "ci@example.org"},
    )
    store = Store.open(settings.database_url)
    client = CrossrefClient(settings, Budget(store, settings, pools=POOLS))
    try:
        assert client.get_work("10.9999/no-such-work", Deadline(30)).status == "not_found"
    finally:
        client.close()
        store.close()


def test_zenodo_404_from_a_wrong_base_url_is_upstream_unavailable(
    parts: tuple[Settings, Store, Budget],
) -> None:
    """Record 5244404 through a mistyped Zenodo base URL: upstream_unavailable, not record not found."""
    settings, _store, budget = parts
    client = ZenodoClient(settings, budget)
    try:
        with pytest.raises(UpstreamUnavailable) as err:
            client.get_record("5244404", Deadline(30))
        assert "zenodo.base_url may be wrong" in err.value.hint
    finally:
        client.close()


def test_trimmed_zenodo_404_is_zenodo_own() -> None:
    """Issue 25 item 5: ``{"status": 404}`` (message trimmed) is Zenodo's own miss; HTML, text, a list,
    a boolean or another status are not.
    """
    assert is_zenodo_not_found('{"status": 404}')
    assert is_zenodo_not_found('{"status":404,"message":"PID does not exist."}')
    assert not is_zenodo_not_found('{"status": 500}')
    assert not is_zenodo_not_found('{"status": "404"}')
    assert not is_zenodo_not_found('{"status": 404, "message": 7}')
    assert not is_zenodo_not_found("[404]")
    assert not is_zenodo_not_found(NGINX_404)


def test_zenodo_record_with_a_trimmed_404_is_not_found(fake: FakeUpstream, tmp_path: Path) -> None:
    """Record 68358988 answered 404 with the trimmed body ``{"status": 404}``: the not_found outcome,
    not upstream_unavailable.
    """
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'syncd.db'}", zenodo={"base_url": fake.zenodo_url}
    )
    fake.set_body("zenodo", "/records/68358988", {"status": 404}, status=404)
    store = Store.open(settings.database_url)
    client = ZenodoClient(settings, Budget(store, settings, pools=POOLS))
    try:
        assert client.get_record("68358988", Deadline(30)).status == "not_found"
    finally:
        client.close()
        store.close()
