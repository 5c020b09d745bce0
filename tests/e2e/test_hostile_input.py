"""Hostile input: arbitrary strings never raise anything but a declared error, and never corrupt the store."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from syncd.errors import InvalidInput
from syncd.normalize.doi import parse_doi
from syncd.registry import open_services
from syncd.store.repo import Store
from syncd.zenodo.params_id import parse_record_ref
from tests.conftest import examples, make_settings
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server

DOI_REASONS = {
    "invalid_parameter",
    "doi_not_found",
    "upstream_unavailable",
    "malformed_response",
    "rate_limited",
}
RECORD_REASONS = {"invalid_identifier", "record_unavailable", "rate_limited"}

hostile_text = st.one_of(
    st.text(max_size=300),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=50).map(lambda s: "10.1234/" + s),
    st.sampled_from(
        [
            "10.1175/1520-0477(1996)077<0935:WOTWSM>2.0.CO;2",
            "'; DROP TABLE entries; --",
            '"title" OR 1=1 NEAR(',
            "10.1/x\x00y",
            "https://doi.org/10.1002/%253Cbad%253E",
            "zenodo.org/records/" + "9" * 400,
            "10." + "1" * 5000,
            "\u202e10.1101/598821",
            "<script>alert(1)</script>",
        ]
    ),
)


@given(raw=hostile_text)
@settings(max_examples=examples(100, 400), deadline=None)
def test_doi_parser_raises_only_declared_errors(raw: str) -> None:
    """parse_doi either returns a DOI starting 10. or raises InvalidInput(invalid_parameter)."""
    try:
        parsed = parse_doi(raw)
    except InvalidInput as exc:
        assert exc.reason == "invalid_parameter"
    else:
        assert parsed.key.startswith("10.")
        assert parsed.key == "".join(c.lower() if c.isascii() else c for c in parsed.doi)


@given(raw=hostile_text)
@settings(max_examples=examples(100, 400), deadline=None)
def test_record_ref_parser_raises_only_declared_errors(raw: str) -> None:
    """parse_record_ref either returns a digits recid or a DOI, or raises InvalidInput(invalid_identifier)."""
    try:
        ref = parse_record_ref(raw)
    except InvalidInput as exc:
        assert exc.reason == "invalid_identifier"
    else:
        assert (ref.recid is not None and ref.recid.isdigit()) or (ref.doi or "").startswith("10.")


def test_tools_answer_hostile_ids_with_declared_reasons(tmp_path: Path) -> None:
    """Through a real MCP session: hostile ids get a result or a declared reason; the store stays intact."""
    db_url = f"sqlite:///{tmp_path / 'fuzz.db'}"
    with FakeUpstream() as fake:
        store = Store.open(db_url)
        fast = {"per_s": 1000.0, "burst": 1000.0, "in_flight": 8}
        tuned = make_settings(
            fake,
            db_url,
            deadline_s=2.0,
            budget={p: fast for p in ("crossref_single", "zenodo_general", "zenodo_search")},
        )
        cache = open_services(tuned, store)
        seen: list[str] = []

        @given(raw=hostile_text)
        @settings(
            max_examples=examples(25, 100),
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture],
        )
        def run(raw: str) -> None:
            async def go() -> None:
                async with Client(mcp_server(cache)) as client:
                    for tool, arg, reasons in (
                        ("crossref_get_work", {"doi": raw}, DOI_REASONS),
                        ("zenodo_get_record", {"id": raw}, RECORD_REASONS),
                    ):
                        res = await client.call_tool(tool, arg)
                        if res.is_error:
                            sc = res.structured_content
                            assert sc is not None, (tool, raw, res.content[0].text)
                            reason = sc["error"]["data"]["reason"]
                            if reason == "invalid_arguments":  # the input model's refusal (SEP-1303)
                                assert sc["error"]["code"] == -32602
                                seen.append(f"{tool}:invalid_arguments")
                                continue
                            assert reason in reasons, (tool, raw, reason)
                            seen.append(reason)
                        else:
                            assert res.structured_content["cache"]["source"]

            asyncio.run(go())

        run()
        cache.close()
        store.close()
    assert "crossref_get_work:invalid_arguments" in seen
    con = sqlite3.connect(tmp_path / "fuzz.db")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("SELECT count(*) FROM entries WHERE key LIKE '%DROP TABLE%'").fetchone()[0] == 0


@pytest.mark.parametrize("query", ['"unbalanced', "title:*", "NEAR(a b", "a AND OR b", "-", "* ^ :"])
def test_fts_search_neutralises_syntax(store: Store, query: str) -> None:
    """Store.search never lets FTS5 syntax through: odd queries return a list, never an error."""
    assert store.search(query) == []
