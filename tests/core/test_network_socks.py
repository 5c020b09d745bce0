"""Proxies and certificates as labs have them (issue 42 item 2): a SOCKS proxy from ``ALL_PROXY`` is
used when ``syncd[socks]`` is installed and otherwise refused as ``invalid_config`` naming the variable
and the extra; ``REQUESTS_CA_BUNDLE`` is honoured like ``SSL_CERT_FILE``; a certificate failure is
named as such by the upstream check (``cache stats``, the daemon's start check).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from syncd.budget.buckets import Budget
from syncd.crossref.client import CrossrefClient
from syncd.registry import POOLS, open_services
from syncd.store.repo import Store
from syncd.upstream.http import Deadline
from tests.conftest import CORPUS, make_settings
from tests.core.test_network import PROXY_VARS, RAPTOR, RAPTOR_TITLE
from tests.e2e.test_faults_all_tools import TOOLS, _setup
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server
from tests.loopproxy import TlsFiles, make_tls, server_context
from tests.loopsocks import LoopbackSocks

UPSTREAM_TOOLS = {t: a for t, a in TOOLS.items() if not t.startswith("syncd_")}
"""The tools whose corpus-backed call asks upstream on an empty store (every slice's)."""


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy or CA variable of the machine running the tests leaks in."""
    for name in (*PROXY_VARS, "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def tls(tmp_path: Path) -> TlsFiles:
    return make_tls(tmp_path)


@pytest.fixture
def tls_fake(tls: TlsFiles) -> Iterator[FakeUpstream]:
    with FakeUpstream(CORPUS, tls=server_context(tls)) as server:
        yield server


def _call_all(fake: FakeUpstream, db_url: str, tools: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each tool of ``tools`` called once through the MCP server over a fresh store at ``db_url``."""
    settings = make_settings(fake, db_url, deadline_s=5.0)
    store = Store.open(db_url)
    svc = open_services(settings, store)
    try:
        server = mcp_server(svc)

        async def go() -> dict[str, Any]:
            async with Client(server) as client:
                return {tool: await client.call_tool(tool, args) for tool, args in tools.items()}

        return asyncio.run(go())
    finally:
        svc.close()
        store.close()


def test_socks_proxy_without_the_extra_is_invalid_config_in_every_tool(
    fake: FakeUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ALL_PROXY=socks5://... exported and socksio not importable (the extra not installed): every tool
    that asks upstream (the 14 of Crossref, Zenodo and the batch) answers the declared invalid_config,
    its message naming ALL_PROXY and syncd[socks]; no request reaches upstream, none goes direct.
    """
    _setup(fake)
    monkeypatch.setitem(sys.modules, "socksio", None)  # as if not installed: import socksio fails
    monkeypatch.setenv("ALL_PROXY", "socks5://127.0.0.1:9")
    answers = _call_all(fake, f"sqlite:///{tmp_path / 'socks.db'}", UPSTREAM_TOOLS)
    reasons = {}
    for tool, res in answers.items():
        data = res.structured_content or {}
        error = data.get("error") or {}
        if not error and tool == "crossref_get_works":  # per-DOI answers: each item's error
            error = next(i["error"] for i in data["results"] if i.get("error") and "proxy" in str(i["error"]))
        reasons[tool] = error.get("data", {}).get("reason")
        assert "ALL_PROXY" in error["message"] and "syncd[socks]" in error["message"], (tool, error)
    assert set(reasons.values()) == {"invalid_config"}, reasons
    assert fake.count() == 0


def test_socks_proxy_with_the_extra_carries_the_fetches(fake: FakeUpstream, tmp_path: Path) -> None:
    """With socksio installed (syncd[socks]) and ALL_PROXY naming a loopback SOCKS5 proxy, and the
    upstream base URLs on hosts nobody can resolve (``*.upstream.invalid``): crossref_get_work answers
    the Raptor work's recorded title, and the proxy logged a CONNECT to the Crossref host.
    """
    host = "crossref.upstream.invalid"
    db_url = f"sqlite:///{tmp_path / 'socks.db'}"
    with LoopbackSocks({host: ("127.0.0.1", fake.port)}) as socks:
        settings = make_settings(
            fake,
            db_url,
            crossref={"base_url": f"http://{host}:{fake.port}/crossref", "mailto": "ci@example.org"},
            network={"proxy": None, "trust_env": True},
        )
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("ALL_PROXY", socks.url.replace("socks5://", "socks5h://"))
            store = Store.open(db_url)
            client = CrossrefClient(settings, Budget(store, settings, pools=POOLS))
            try:
                answer = client.get_work(RAPTOR, Deadline(5.0))
            finally:
                client.close()
                store.close()
    assert answer.status == "ok" and answer.message is not None
    assert answer.message["title"] == [RAPTOR_TITLE]
    assert socks.log == [f"{host}:{fake.port}"]
    assert fake.count(service="crossref") == 1


def test_requests_ca_bundle_lets_a_tls_upstream_be_used(
    tls_fake: FakeUpstream, tls: TlsFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Crossref over TLS with a certificate of a test CA: with REQUESTS_CA_BUNDLE naming that CA (and
    no SSL_CERT_FILE), the Raptor work is fetched, its recorded title answered.
    """
    db_url = f"sqlite:///{tmp_path / 'tls.db'}"
    settings = make_settings(tls_fake, db_url)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(tls.ca))
    store = Store.open(db_url)
    client = CrossrefClient(settings, Budget(store, settings, pools=POOLS))
    try:
        answer = client.get_work(RAPTOR, Deadline(3.0))
    finally:
        client.close()
        store.close()
    assert answer.status == "ok" and answer.message is not None
    assert answer.message["title"] == [RAPTOR_TITLE]


def test_the_upstream_check_names_a_certificate_failure(tls_fake: FakeUpstream, tmp_path: Path) -> None:
    """The upstream check (cache stats, the daemon's start) against a TLS upstream whose CA is unknown:
    Crossref's check fails with cause certificate and a hint naming the unverified certificate and
    SSL_CERT_FILE / REQUESTS_CA_BUNDLE / network.ca_bundle, never "base_url may be wrong".
    """
    db_url = f"sqlite:///{tmp_path / 'tls.db'}"
    settings = make_settings(tls_fake, db_url)
    store = Store.open(db_url)
    svc = open_services(settings, store)
    try:
        checks = {c.service: c for c in svc.upstreams.check(settings)}
    finally:
        svc.close()
        store.close()
    crossref = checks["crossref"]
    assert crossref.ok is False and crossref.cause == "certificate"
    assert crossref.hint is not None
    assert (
        "could not be verified" in crossref.hint and "unable to get local issuer certificate" in crossref.hint
    )
    assert "REQUESTS_CA_BUNDLE" in crossref.hint and "network.ca_bundle" in crossref.hint
    assert "may be wrong" not in crossref.hint
