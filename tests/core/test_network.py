"""Proxies and certificates (issue 27.4): with only a proxy reachable every tool answers through it;
HTTP(S)_PROXY / NO_PROXY from the environment and an explicit ``network.proxy`` are honoured; a TLS
certificate that cannot be verified is named as such (reason ``upstream_unavailable``, message and hint
naming the certificate, ``SSL_CERT_FILE`` and ``network.ca_bundle``), and ``ca_bundle`` fixes it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import certifi
import httpx
import pytest
from mcp import Client

from syncd.budget.buckets import Budget
from syncd.config import NetworkSettings, Settings
from syncd.crossref.client import CrossrefClient
from syncd.errors import InvalidInput, UpstreamUnavailable
from syncd.registry import POOLS, open_services
from syncd.store.repo import Store
from syncd.upstream.http import Deadline
from syncd.upstream.network import bypasses_proxy, client_options, masked
from tests.conftest import CORPUS, make_settings
from tests.e2e.test_faults_all_tools import TOOLS, _setup
from tests.fakeupstream import FakeUpstream
from tests.helpers import mcp_server
from tests.loopproxy import LoopbackProxy, TlsFiles, make_tls, server_context

RAPTOR = "10.1101/598821"
RAPTOR_TITLE = "Raptor genomes reveal evolutionary signatures of predatory and nocturnal lifestyles"
PROXY_VARS = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy or CA variable of the machine running the tests leaks in."""
    for name in (*PROXY_VARS, "SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def tls(tmp_path: Path) -> TlsFiles:
    return make_tls(tmp_path)


@pytest.fixture
def tls_fake(tls: TlsFiles) -> Iterator[FakeUpstream]:
    with FakeUpstream(CORPUS, tls=server_context(tls)) as server:
        yield server


def _crossref(settings: Settings, store: Store) -> CrossrefClient:
    return CrossrefClient(settings, Budget(store, settings, pools=POOLS))


def test_every_tool_answers_through_the_proxy_when_only_it_reaches_upstream(
    fake: FakeUpstream, tmp_path: Path
) -> None:
    """Base URLs on hosts nobody can resolve (``*.upstream.invalid``) and ``network.proxy`` set: each of
    the 15 tools' corpus-backed calls (the fault matrix's) answers without error, Crossref's title as
    recorded; every request upstream saw came through the proxy, which logged each (absolute-form GETs
    naming the unresolvable hosts); with the proxy gone the same call fails (nothing goes direct).
    """
    _setup(fake)
    hosts = {name: f"{name}.upstream.invalid" for name in ("crossref", "zenodo", "doi")}
    routes = {host: ("127.0.0.1", fake.port) for host in hosts.values()}
    db_url = f"sqlite:///{tmp_path / 'proxy.db'}"
    with LoopbackProxy(routes) as proxy:
        settings = make_settings(
            fake,
            db_url,
            crossref={
                "base_url": f"http://{hosts['crossref']}:{fake.port}/crossref",
                "mailto": "ci@example.org",
            },
            zenodo={"base_url": f"http://{hosts['zenodo']}:{fake.port}/zenodo/api"},
            doi={"base_url": f"http://{hosts['doi']}:{fake.port}/doi"},
            network={"proxy": proxy.url, "trust_env": False},
            deadline_s=5.0,
        )
        store = Store.open(db_url)
        svc = open_services(settings, store)
        try:
            server = mcp_server(svc)

            async def go() -> dict[str, Any]:
                answers = {}
                async with Client(server) as client:
                    for tool, args in TOOLS.items():
                        answers[tool] = await client.call_tool(tool, args)
                return answers

            answers = asyncio.run(go())
        finally:
            svc.close()
            store.close()
    failed = {t: a.content[0].text for t, a in answers.items() if a.is_error}
    assert failed == {}
    assert answers["crossref_get_work"].structured_content["title"] == RAPTOR_TITLE
    assert answers["zenodo_get_record"].structured_content["cache"]["source"] == "upstream"
    assert len(fake.requests) == len(proxy.log) >= 12
    assert all(f.method == "GET" and ".upstream.invalid:" in f.target for f in proxy.log)
    assert {f.target.split("/")[2].split(":")[0] for f in proxy.log} >= {hosts["crossref"], hosts["zenodo"]}
    gone = make_settings(
        fake, db_url, crossref={"base_url": f"http://{hosts['crossref']}:{fake.port}/crossref"}
    )
    store = Store.open(db_url)
    client = _crossref(gone.model_copy(update={"network": NetworkSettings(trust_env=False)}), store)
    try:
        with pytest.raises(UpstreamUnavailable, match="connection failed"):
            client.get_work("10.7554/elife.01567", Deadline(1.0))
    finally:
        client.close()
        store.close()


def test_the_environments_proxy_and_no_proxy_are_honoured(
    fake: FakeUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HTTP_PROXY set: Crossref is reached through it (logged); NO_PROXY naming the host: directly (the
    proxy logs nothing more); ``network.no_proxy`` works the same way with the variable unset; and
    ``trust_env = false`` ignores HTTP_PROXY.
    """
    db_url = f"sqlite:///{tmp_path / 'env.db'}"
    store = Store.open(db_url)
    try:
        with LoopbackProxy() as proxy:
            monkeypatch.setenv("HTTP_PROXY", proxy.url)
            settings = make_settings(fake, db_url)
            client = _crossref(settings, store)
            assert client.get_work(RAPTOR, Deadline(3.0)).status == "ok"
            client.close()
            assert proxy.targets() == [f"{fake.crossref_url}/works/{RAPTOR}"]

            monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.0/8")
            client = _crossref(settings, store)
            assert client.get_work("10.7554/elife.01567", Deadline(3.0)).status == "ok"
            client.close()
            monkeypatch.delenv("NO_PROXY")
            by_setting = settings.model_copy(update={"network": NetworkSettings(no_proxy=["127.0.0.1"])})
            client = _crossref(by_setting, store)
            assert client.get_work("10.1371/journal.pone.0033693", Deadline(3.0)).status == "ok"
            client.close()
            untrusted = settings.model_copy(update={"network": NetworkSettings(trust_env=False)})
            client = _crossref(untrusted, store)
            assert client.get_work("10.1016/j.physletb.2012.08.020", Deadline(3.0)).status == "ok"
            client.close()
            assert len(proxy.log) == 1 and fake.count("/works", service="crossref") == 4
    finally:
        store.close()


def test_a_proxy_that_refuses_is_named(fake: FakeUpstream, tmp_path: Path) -> None:
    """A proxy answering 403 to a CONNECT (https upstream): upstream_unavailable naming the proxy (its
    password masked) and a hint naming network.proxy, HTTPS_PROXY and NO_PROXY; no retry (one CONNECT).
    """
    db_url = f"sqlite:///{tmp_path / 'refused.db'}"
    store = Store.open(db_url)
    with LoopbackProxy() as proxy:
        proxy.refuse = True
        secret_url = proxy.url.replace("http://", "http://lab:s3cret@")
        settings = make_settings(
            fake,
            db_url,
            crossref={"base_url": "https://api.crossref.invalid", "mailto": "ci@example.org"},
            network={"proxy": secret_url},
        )
        client = _crossref(settings, store)
        try:
            with pytest.raises(UpstreamUnavailable) as err:
                client.get_work(RAPTOR, Deadline(3.0))
        finally:
            client.close()
            store.close()
    assert err.value.reason == "upstream_unavailable" and err.value.data["cause"] == "proxy"
    assert "the proxy http://***@127.0.0.1:" in err.value.message and "s3cret" not in err.value.message
    assert "network.proxy" in err.value.hint and "NO_PROXY" in err.value.hint
    assert [(f.method, f.target, f.authorized) for f in proxy.log] == [
        ("CONNECT", "api.crossref.invalid:443", True)
    ]


def test_an_unverifiable_certificate_is_named_and_ca_bundle_fixes_it(
    tls_fake: FakeUpstream, tls: TlsFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Crossref served over TLS by a certificate of a CA the system does not know (an intercepting
    proxy's): upstream_unavailable whose message says the TLS certificate of 127.0.0.1 could not be
    verified (OpenSSL's words), whose hint names SSL_CERT_FILE and network.ca_bundle, tried once (a
    retry cannot fix a certificate); with ``network.ca_bundle`` naming the CA the work is fetched;
    SSL_CERT_FILE does the same.
    """
    db_url = f"sqlite:///{tmp_path / 'tls.db'}"
    store = Store.open(db_url)
    settings = make_settings(tls_fake, db_url)
    try:
        budget = Budget(store, settings, pools=POOLS)
        client = CrossrefClient(settings, budget)
        with pytest.raises(UpstreamUnavailable) as err:
            client.get_work(RAPTOR, Deadline(3.0))
        client.close()
        assert budget.state("crossref_single").failures == 1  # one attempt
        assert err.value.reason == "upstream_unavailable" and err.value.data["cause"] == "certificate"
        assert "the TLS certificate of 127.0.0.1 could not be verified" in err.value.message
        assert "unable to get local issuer certificate" in err.value.message
        assert "SSL_CERT_FILE" in err.value.hint and "network.ca_bundle" in err.value.hint
        assert "certificate" in err.value.hint
        assert tls_fake.count(service="crossref") == 0  # refused at the handshake: no request read

        fixed = settings.model_copy(update={"network": NetworkSettings(ca_bundle=str(tls.ca))})
        client = _crossref(fixed, store)
        answer = client.get_work(RAPTOR, Deadline(3.0))
        client.close()
        assert answer.status == "ok" and answer.message is not None
        assert answer.message["title"] == [RAPTOR_TITLE]

        monkeypatch.setenv("SSL_CERT_FILE", str(tls.ca))
        client = _crossref(settings, store)
        assert client.get_work("10.7554/elife.01567", Deadline(3.0)).status == "ok"
        client.close()
    finally:
        store.close()


def test_https_through_the_proxy_tunnels_with_the_ca_bundle(
    tls_fake: FakeUpstream, tls: TlsFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HTTPS_PROXY set, an https upstream on a host only the proxy resolves: the proxy logs one CONNECT
    to that host, the TLS session inside it is verified against ``network.ca_bundle`` (the certificate
    names 127.0.0.1 and localhost, the URL localhost), and the work is answered.
    """
    db_url = f"sqlite:///{tmp_path / 'tunnel.db'}"
    store = Store.open(db_url)
    try:
        with LoopbackProxy({"localhost": ("127.0.0.1", tls_fake.port)}) as proxy:
            monkeypatch.setenv("HTTPS_PROXY", proxy.url)
            settings = make_settings(
                tls_fake,
                db_url,
                crossref={
                    "base_url": f"https://localhost:{tls_fake.port}/crossref",
                    "mailto": "ci@example.org",
                },
                network={"ca_bundle": str(tls.ca)},
            )
            client = _crossref(settings, store)
            answer = client.get_work(RAPTOR, Deadline(3.0))
            client.close()
        assert answer.status == "ok"
        assert [(f.method, f.target) for f in proxy.log] == [("CONNECT", f"localhost:{tls_fake.port}")]
    finally:
        store.close()


@pytest.mark.parametrize(
    ("host", "patterns", "bypass"),
    [
        ("api.crossref.org", ["crossref.org"], True),
        ("crossref.org", [".crossref.org"], True),
        ("api.crossref.org", [".crossref.org"], True),
        ("notcrossref.org", ["crossref.org"], False),
        ("zenodo.org", ["crossref.org", " ZENODO.ORG "], True),
        ("127.0.0.1", ["127.0.0.0/8"], True),
        ("10.0.0.5", ["127.0.0.0/8", "localhost"], False),
        ("::1", ["::1"], True),
        ("api.crossref.org", ["api.crossref.org:443"], True),
        ("api.crossref.org", ["*"], True),
        ("api.crossref.org", ["", " "], False),
    ],
)
def test_no_proxy_patterns_follow_curls_rules(host: str, patterns: list[str], bypass: bool) -> None:
    """NO_PROXY entries: a domain and its subdomains, a leading dot, case and spaces ignored, CIDR blocks
    and addresses, a port suffix, ``*``.
    """
    assert bypasses_proxy(host, patterns) is bypass


def test_a_bad_proxy_or_ca_bundle_is_invalid_config(tmp_path: Path) -> None:
    """A proxy URL httpx cannot use, or a CA bundle that is not one, is refused as invalid_config when
    the client is built (at start), naming the setting; the credentials never appear in messages.
    """
    with pytest.raises(InvalidInput) as err:
        client_options(NetworkSettings(proxy="ftp://lab:pw@proxy.example:21"), "https://api.crossref.org")
    assert err.value.reason == "invalid_config" and "pw" not in err.value.message
    assert err.value.hint.startswith("Fix the [network] setting named")  # not "Correct the input"
    bad = tmp_path / "not-a-ca.pem"
    bad.write_text("not a certificate\n")
    with pytest.raises(InvalidInput, match=r"network\.ca_bundle") as err:
        client_options(NetworkSettings(ca_bundle=str(bad)), "https://api.crossref.org")
    assert err.value.reason == "invalid_config"
    assert masked("http://u:p@proxy:3128") == "http://***@proxy:3128" and masked(None) == "-"
    options = client_options(NetworkSettings(trust_env=False), "https://api.crossref.org")
    assert options["proxy"] is None and options["trust_env"] is False
    verify = options["verify"]
    assert isinstance(verify, ssl.SSLContext) and verify.verify_mode == ssl.CERT_REQUIRED
    assert isinstance(httpx.Client(**options), httpx.Client)


def test_the_ca_certificates_are_loaded_once_per_process(tmp_path: Path) -> None:
    """Every client built with the same CA source shares one verifying context (loading certifi's
    bundle costs ~45 ms of CPU per client otherwise); a CA file replaced on disk is loaded again, and
    one that cannot be read is refused each time, not remembered.
    """
    first = client_options(NetworkSettings(trust_env=False), "https://api.crossref.org")["verify"]
    again = client_options(NetworkSettings(trust_env=False), "https://zenodo.org")["verify"]
    assert first is again and first.check_hostname
    bundle = tmp_path / "lab-ca.pem"
    shutil.copyfile(certifi.where(), bundle)
    lab = client_options(NetworkSettings(ca_bundle=str(bundle)), "https://api.crossref.org")["verify"]
    assert lab is not first and lab.cert_store_stats()["x509_ca"] > 100
    assert client_options(NetworkSettings(ca_bundle=str(bundle)), "https://zenodo.org")["verify"] is lab
    os.utime(bundle, ns=(1, 1))  # replaced on disk: another modification time
    assert client_options(NetworkSettings(ca_bundle=str(bundle)), "https://zenodo.org")["verify"] is not lab
    bundle.write_text("not a certificate\n")
    for _ in range(2):
        with pytest.raises(InvalidInput, match=r"network\.ca_bundle"):
            client_options(NetworkSettings(ca_bundle=str(bundle)), "https://api.crossref.org")
