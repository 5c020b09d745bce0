"""Bounded local search, long URLs, forged cursors and store errors shown to clients (issue 17 items 4, 7).

The searches run over an SQLite store filled with 2,000 synthetic works (titles and search text of a
fixed vocabulary), built once per module (one xdist group). No clock is read: a search's cost is its
bounded work (the phrases sent to FTS5, the statements run, the SQLite VM steps counted through the
store's injected deadline clock, read every 10,000 steps), and the deadline is kept on that injected
clock; the speed itself is measured in benchmarks/.
"""

from __future__ import annotations

import base64
import random
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import event

from syncd.config import Settings
from syncd.crossref import lookups as crossref
from syncd.errors import InvalidInput, StoreError
from syncd.registry import open_services
from syncd.store.repo import EntryContent, Store
from syncd.tools.errors import error_result
from syncd.zenodo import params_cursor as zenodo_cursor

pytestmark = pytest.mark.xdist_group("issue17_search")  # the 2,000-work store is built once per module

VOCAB = [f"v{i}" for i in range(4000)]


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """2,000 works, each with "alpha beta" in its title and 100 vocabulary words in its search text."""
    path = tmp_path_factory.mktemp("search") / "search.db"
    store = Store.open(f"sqlite:///{path}", search_max_chars=100_000, search_max_terms=10_000)
    rng = random.Random(17)
    with store.batch():
        for i in range(2000):
            store.put_content(
                EntryContent(
                    "crossref_work",
                    f"10.5555/{i}",
                    "ok",
                    "{}",
                    f"h{i}",
                    title=f"alpha beta w{i}",
                    search_text=" ".join(rng.sample(VOCAB, 100)),
                )
            )
    yield store
    store.close()


class Steps:
    """An injected monotonic clock that stands still and counts its reads (one per 10,000 VM steps)."""

    def __init__(self, tick_s: float = 0.0) -> None:
        self.reads = 0
        self.tick_s = tick_s

    def __call__(self) -> float:
        self.reads += 1
        return self.reads * self.tick_s


@contextmanager
def matches(store: Store) -> Iterator[list[str]]:
    """The FTS5 ``MATCH`` expressions ``store``'s statements send, in order."""
    sent: list[str] = []

    def before(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_rest: Any) -> None:
        if "MATCH" in statement:
            sent.append(str(parameters[0]))

    event.listen(store.engine, "before_cursor_execute", before)
    try:
        yield sent
    finally:
        event.remove(store.engine, "before_cursor_execute", before)


def _phrases(match: str) -> int:
    return len(re.findall(r'"[^"]*"', match))


def test_a_4000_term_query_is_bounded_work(big: Store) -> None:
    """4,000 terms (repeated common words, then 4,000 distinct ones): each search sends one FTS5 phrase
    per distinct term (the repeated words: 2, not 4,002), runs at most 3 MATCH statements, stays within
    5,000,000 SQLite VM steps, and answers the right page (2,000 matches, 20 shown; 5 at most).

    Before: repeated terms were sent once per copy and cost the square of their count in FTS5
    (2,000 copies of "alpha": 10.5 s).
    """
    steps = Steps()
    store = Store.open(
        str(big.engine.url), upgrade=False, search_max_chars=100_000, search_max_terms=10_000, monotonic=steps
    )
    try:
        for terms, distinct in ((["alpha", "Beta", "alpha,"] * 1334, 2), (VOCAB, 4000)):
            steps.reads = 0
            with matches(store) as sent:
                page, total = store.search_page(terms, "crossref_work", 0, 20)
            assert total == 2000 and len(page) == 20
            phrases = [_phrases(m) for m in sent]
            assert 1 <= len(sent) <= 3 and set(phrases) == {distinct}, phrases
            assert steps.reads <= 500, steps.reads  # each read after the first: 10,000 VM steps
            steps.reads = 0
            with matches(store) as sent:
                assert len(store.search(" ".join(terms), limit=5)) <= 5
            assert len(sent) == 1 and _phrases(sent[0]) == distinct
            assert steps.reads <= 500, steps.reads
    finally:
        store.close()


def test_a_search_is_interrupted_at_the_deadline(big: Store) -> None:
    """A search that would outlast the call's deadline stops there with reason request_timeout: at the
    first deadline check (its clock read when it starts and once after 10,000 VM steps; the injected
    clock moves 1 s a read, past the 10 ms left).
    """
    steps = Steps(tick_s=1.0)
    store = Store.open(
        str(big.engine.url), upgrade=False, search_max_chars=100_000, search_max_terms=10_000, monotonic=steps
    )
    try:
        with store.waits_within(lambda: 0.01), pytest.raises(StoreError) as err:
            store.search_page(VOCAB, "crossref_work", 0, 20)
    finally:
        store.close()
    assert err.value.reason == "request_timeout"
    assert steps.reads == 2


def test_queries_past_the_bounds_are_refused(tmp_path: Path) -> None:
    """Default bounds: more than 2,000 characters or 256 distinct terms is refused, invalid_parameter."""
    store = Store.open(f"sqlite:///{tmp_path / 'b.db'}")
    try:
        with pytest.raises(InvalidInput) as err:
            store.search("x" * 2001)
        assert err.value.reason == "invalid_parameter"
        with pytest.raises(InvalidInput):
            store.search_page([f"t{i}" for i in range(257)], "crossref_work")
        assert store.search(" ".join(["same"] * 300)) == []  # 300 copies are one distinct term
    finally:
        store.close()


def test_a_url_past_8_kb_is_refused_before_sending(tmp_path: Path) -> None:
    """A 9,000-character Crossref query: invalid_parameter before any budget or request (was sent)."""
    sent: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(str(request.url))
        return httpx.Response(500)

    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'u.db'}",
        crossref={"base_url": "https://api.crossref.test", "mailto": "ci@example.org"},
        zenodo={"base_url": "https://zenodo.test/api"},
        doi={"base_url": "https://doi.test"},
    )
    store = Store.open(settings.database_url)
    svc = open_services(settings, store, transport=httpx.MockTransport(handler))
    try:
        with pytest.raises(InvalidInput) as err:
            crossref.list_page(svc, "/works", {"query": "x" * 9000, "rows": "20"})
        assert err.value.reason == "invalid_parameter" and "8192" in err.value.message
        assert sent == []
    finally:
        svc.close()
        store.close()


def _forged(offset_json: str) -> str:
    """A cursor whose checksum is right (the salt ships with syncd) and whose offset is ``offset_json``."""
    payload = f'{{"f":"description","h":"x","o":{offset_json},"r":"1"}}'.encode()
    check = zenodo_cursor._sum(payload).encode()
    return base64.urlsafe_b64encode(payload + b"." + check).decode().rstrip("=")


def test_the_forger_reproduces_a_real_cursor() -> None:
    """The forging helper builds exactly what encode_cursor issues for offset 0 (so the checksum holds)."""
    real = zenodo_cursor.encode_cursor(zenodo_cursor.CursorState("1", "x", "description", None, 0))
    assert _forged("0") == real and zenodo_cursor.decode_cursor(real).offset == 0


@pytest.mark.parametrize("offset", ["1e400", "99999999999999999999999", "-1", "true", '"3"'])
def test_a_forged_zenodo_cursor_is_invalid_cursor(offset: str) -> None:
    """Forged positions (float overflow, huge, negative, bool, string) are invalid_cursor, never internal."""
    with pytest.raises(InvalidInput) as err:
        zenodo_cursor.decode_cursor(_forged(offset))
    assert err.value.reason == "invalid_cursor"


def test_store_errors_reach_clients_without_sql_or_paths() -> None:
    """A store_unavailable result names the cause, never the SQL text or the database path."""
    exc = StoreError(
        "store write failed: OperationalError: (sqlite3.OperationalError) database or disk is full "
        "[SQL: UPDATE validations SET last_error=? WHERE validations.entry_id = ?] /var/lib/syncd/syncd.db"
    )
    result = error_result(exc)
    text = result.content[0].text  # type: ignore[union-attr]
    error = (result.structured_content or {})["error"]
    for shown in (text, error["message"]):
        assert "SQL" not in shown and "UPDATE" not in shown and "/var/lib" not in shown
        assert "disk" in shown and "full" in shown
    assert error["data"]["reason"] == "store_unavailable"
