"""Error text an agent can act on (issue 24 item 4).

Every number of ``error.data`` is in the message too (the rate-limit message and hint say the actual
seconds), messages and hints name the service ("Crossref"), never the budget pool
("crossref_single"), ``retryable`` and the hint agree, database text never reaches a message, and a
Zenodo file the record lists but whose content Zenodo did not serve is ``record_unavailable`` (the
Zenodo tools' name for upstream_unavailable), retryable, never "not found".
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from syncd.errors import (
    BudgetExhausted,
    InvalidInput,
    MalformedResponse,
    NotFound,
    StoreError,
    SyncdError,
    UpstreamError,
    UpstreamOffline,
    UpstreamRateLimited,
    UpstreamRejected,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from syncd.road.services import Services
from syncd.tools.errors import error_result, to_error_info
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server


def test_rate_limit_message_and_hint_say_the_seconds() -> None:
    """A 429 blocking Crossref's single-work pool for 12.5 s: message and hint both say 12.5."""
    exc = UpstreamRateLimited("crossref: rate limited (HTTP 429)", retry_after_s=12.5, pool="crossref_single")
    info = to_error_info(exc)
    assert info.data.retry_after_s == 12.5  # type: ignore[attr-defined]
    assert "12.5" in info.message and "HTTP 429" in info.message
    assert info.data.recovery is not None and "wait 12.5 seconds" in info.data.recovery.hint
    assert "retry_after_s" not in info.message + info.data.recovery.hint


def test_budget_wait_rounded_alike_in_data_and_message() -> None:
    """The shared budget's wait of 3.14159 s is 3.142 in data, in the message and in the hint."""
    info = to_error_info(
        BudgetExhausted("no request token in time", retry_after_s=3.14159, pool="zenodo_search")
    )
    assert info.data.retry_after_s == 3.142  # type: ignore[attr-defined]
    assert "3.142" in info.message
    assert info.data.recovery is not None and "3.142 seconds" in info.data.recovery.hint


@pytest.mark.parametrize(
    ("pool", "service"),
    [
        ("crossref_single", "Crossref"),
        ("crossref_list", "Crossref"),
        ("zenodo_general", "Zenodo"),
        ("doi", "doi.org"),
    ],
)
def test_pool_names_become_services(pool: str, service: str) -> None:
    """The breaker message of each pool names its service, in the text and in data.service."""
    exc = UpstreamOffline(
        f"{pool} is offline after repeated failures", retry_after_s=30.0, pool=pool, service=service
    )
    result = error_result(exc)
    text = result.content[0].text  # type: ignore[union-attr]
    error = (result.structured_content or {})["error"]
    assert error["message"].startswith(f"{service} is offline after repeated failures")
    assert pool not in text.replace(service, "") and pool not in error["message"].replace(service, "")
    assert error["data"]["service"] == service
    assert "30" in error["message"] and "retry after 30 seconds" in error["data"]["recovery"]["hint"]


def test_policy_offline_message_names_the_service() -> None:
    """``upstream (crossref_single) is offline and nothing is stored`` reads ``upstream (Crossref) ...``."""
    info = to_error_info(
        UpstreamOffline(
            "upstream (crossref_single) is offline and nothing is stored",
            pool="crossref_single",
            service="Crossref",
        )
    )
    assert info.message == "upstream (Crossref) is offline and nothing is stored"


def test_http_status_number_in_message() -> None:
    """A number of data the message lacks is appended (status 503 -> ``status 503``)."""
    info = to_error_info(UpstreamUnavailable("zenodo: upstream failing", status=503))
    assert "503" in info.message


HINTS_RETRY = ("retry", "try again")
"""Words of a hint that invites retrying the same call."""


@pytest.mark.parametrize(
    "exc",
    [
        SyncdError("internal error: KeyError"),
        InvalidInput("bad"),
        NotFound("no such"),
        BudgetExhausted("spent", retry_after_s=1.0),
        StoreError("locked"),
        UpstreamError("failed"),
        UpstreamRateLimited("429", retry_after_s=2.0),
        UpstreamUnavailable("503"),
        UpstreamOffline("offline", retry_after_s=5.0),
        UpstreamTimeout("slow"),
        MalformedResponse("not JSON"),
        UpstreamRejected("400"),
        UpstreamError(
            "Zenodo could not list the archive 'a.zip' (upstream_unavailable)", reason="archive_unavailable"
        ),
    ],
    ids=lambda e: f"{type(e).__name__}-{e.reason}",
)
def test_retryable_agrees_with_the_hint(exc: SyncdError) -> None:
    """``retryable`` is true exactly when the hint invites a retry (the archive failure included)."""
    info = to_error_info(exc)
    assert info.data.recovery is not None
    hint = info.data.recovery.hint.lower()
    invites = any(w in hint for w in HINTS_RETRY) and "will not help" not in hint and "unlikely" not in hint
    assert info.data.retryable is invites, (exc.reason, info.data.recovery.hint)


def test_sql_never_in_a_message() -> None:
    """A budget token error wrapping the store's SQLAlchemy text, and a stray driver message, say neither."""
    sql = (
        "(sqlite3.OperationalError) database is locked [SQL: UPDATE budget_state SET tokens=? "
        "WHERE budget_state.pool = ?] (Background on this error at: https://sqlalche.me/e/20/e3q8)"
    )
    for exc in (
        BudgetExhausted(
            f"crossref: no request token: {sql}", reason="store_unavailable", pool="crossref_single"
        ),
        SyncdError(f"internal error: {sql}"),
        StoreError(sql),
    ):
        info = to_error_info(exc)
        assert (
            "SQL" not in info.message and "sqlite3" not in info.message and "budget_state" not in info.message
        )
        assert info.message.startswith("the local store could not be read or written")


CSV_KEY = "Intensivregister_Deutschland_Altersgruppen.csv"


@pytest.mark.anyio
async def test_listed_file_whose_content_404s_is_upstream_not_missing(
    cache: Services, fake: FakeUpstream
) -> None:
    """Record 22917909 lists the CSV; Zenodo answers its content with 404: record_unavailable, retryable,
    the message says the record lists the file and the download failed upstream (never "not found").
    """
    fake.set_body("zenodo", f"/records/22917909/files/{CSV_KEY}/content", {"status": 404}, status=404)
    async with Client(mcp_server(cache)) as client:
        res = await client.call_tool("zenodo_read_file", {"id": "22917909", "key": CSV_KEY})
    error: dict[str, Any] = (res.structured_content or {})["error"]
    assert res.is_error
    assert error["data"]["reason"] == "record_unavailable"
    assert error["data"]["retryable"] is True
    assert f"Zenodo lists {CSV_KEY} in record 22917909" in error["message"]
    assert "not found" not in error["message"].lower() and "never have existed" not in error["message"]
    assert "404" in error["message"]
    assert f"records/22917909/files/{CSV_KEY}/content" in error["data"]["recovery"]["hint"]
