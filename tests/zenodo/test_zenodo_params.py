"""Zenodo search parameters are validated before any request (syncd.zenodo.params, pure)."""

from __future__ import annotations

from typing import Any

import pytest

from syncd.errors import InvalidInput
from syncd.zenodo import params as zp

BASE: dict[str, Any] = {
    "query": None,
    "resource_type_": None,
    "file_type": None,
    "license_": None,
    "access_status": None,
    "published_from": None,
    "published_to": None,
    "creator_orcid": None,
    "award": None,
    "sort": None,
    "page": 1,
    "size": 10,
}


def req(**over: Any) -> zp.SearchRequest:
    """The search request for BASE with ``over`` applied."""
    return zp.search_request(**{**BASE, **over})


def test_defaults_and_normalization() -> None:
    """Blank inputs read as unset; sort defaults to newest (bestmatch with a query); values are folded."""
    r = req(query="  ", sort=" ", license_="CC-BY-4.0", access_status="Open", file_type=[".CSV", " "])
    assert (r.query, r.sort, r.license, r.access, r.file_types) == (
        None,
        "newest",
        "cc-by-4.0",
        "open",
        ["csv"],
    )
    assert req(query="ocean heat").sort == "bestmatch"
    assert req(resource_type_="Dataset").types == ["dataset"]
    assert req(published_from="2020", published_to="2020-02").published_from == "2020-01-01"


@pytest.mark.parametrize(
    ("over", "reason"),
    [
        ({"query": "10.5281/zenodo.123"}, "query_is_identifier"),
        ({"query": "a/b"}, "query_syntax"),
        ({"resource_type_": "spaceship"}, "invalid_parameter"),
        ({"file_type": "c$v"}, "invalid_parameter"),
        ({"license_": "no spaces"}, "invalid_parameter"),
        ({"access_status": "secret"}, "invalid_parameter"),
        ({"published_from": "2021", "published_to": "2020"}, "invalid_date_range"),
        ({"creator_orcid": "0000-0002-1825-0098"}, "invalid_parameter"),
        ({"sort": "random"}, "invalid_parameter"),
        ({"page": 1001, "size": 10}, "result_window_exceeded"),
    ],
)
def test_bad_parameters_are_declared_errors(over: dict[str, Any], reason: str) -> None:
    """Each invalid parameter is refused with the contract's reason code, before any request."""
    with pytest.raises(InvalidInput) as err:
        req(**over)
    assert err.value.reason == reason


def test_orcid_check_digit() -> None:
    """A valid ORCID iD passes (URL form too), uppercased; a wrong check digit does not."""
    assert zp.orcid("https://orcid.org/0000-0002-1694-233x") == "0000-0002-1694-233X"
    assert zp.orcid("0000-0002-1825-0097") == "0000-0002-1825-0097"
    with pytest.raises(InvalidInput):
        zp.orcid("0000-0002-1825-0098")
