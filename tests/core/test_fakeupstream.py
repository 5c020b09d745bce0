"""Tests of the fake upstream itself: real HTTP on loopback, httpx as the client, corpus values asserted."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from email.utils import formatdate
from pathlib import Path

import httpx
import pytest

from tests.corpus_path import CORPUS
from tests.fakeupstream import CORPUS_DIR, FakeUpstream, _Handler, quote_doi

JOR_DOI = "10.1002/jor.1100150407"
JOR_TITLE = (
    "Growth hormone secretagogue increases muscle strength during remobilization after canine hindlimb"
    " immobilization"
)
ORIGINS_TITLE = "The Origins of SARS-CoV-2: A Critical Review"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeUpstream]:
    with FakeUpstream() as server:
        yield server


@pytest.fixture(autouse=True)
def _clean(fake: FakeUpstream) -> Iterator[None]:
    fake.clear_faults()
    fake.clear_overrides()
    fake.reset_log()
    fake.etags = fake.last_modified = False
    yield
    fake.clear_faults()
    fake.clear_overrides()
    fake.etags = fake.last_modified = False


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=3.0) as c:
        yield c


def _corpus_bytes(rel: str) -> bytes:
    return (CORPUS_DIR / rel).read_bytes()


# ------------------------------------------------------------------------------------------- routing
def test_crossref_work_by_encoded_and_plain_doi(fake: FakeUpstream, client: httpx.Client) -> None:
    """A work answers the same recorded bytes whether the DOI slash is %2F-encoded, plain, or upper-cased."""
    expected = _corpus_bytes("crossref/work/10.1002_jor.1100150407.json")
    for path in (f"/works/{quote_doi(JOR_DOI)}", f"/works/{JOR_DOI}", f"/works/{JOR_DOI.upper()}"):
        response = client.get(fake.crossref_url + path)
        assert response.status_code == 200
        assert response.content == expected
        assert response.json()["message"]["title"] == [JOR_TITLE]
        assert response.headers["content-length"] == str(len(expected))


def test_crossref_recorded_headers_replayed_minus_wire_headers(
    fake: FakeUpstream, client: httpx.Client
) -> None:
    """Recorded rate-limit headers are replayed when switched on (and dropped by default); gzip
    Content-Encoding and the wire Content-Length are not.
    """
    assert "x-rate-limit-limit" not in client.get(f"{fake.crossref_url}/works/{JOR_DOI}").headers
    fake.rate_headers = True
    response = client.get(f"{fake.crossref_url}/works/{JOR_DOI}")
    assert response.headers["x-rate-limit-limit"] == "10"
    assert response.headers["x-concurrency-limit"] == "3"
    assert response.headers["x-api-pool"] == "polite"
    assert "content-encoding" not in response.headers
    assert response.headers["content-length"] != "3733"  # the recorded compressed size
    assert "etag" not in response.headers and "last-modified" not in response.headers


def test_crossref_work_missing_from_index_found_by_body_doi(fake: FakeUpstream, client: httpx.Client) -> None:
    """Raw fixture works without index entry or headers are served by their body DOI as application/json."""
    response = client.get(f"{fake.crossref_url}/works/{quote_doi('10.1038/s41586-020-2649-2')}")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json()["message"]["title"] == ["Array programming with NumPy"]


def test_crossref_sici_doi_and_url_form(fake: FakeUpstream, client: httpx.Client) -> None:
    """A SICI DOI with ()[];: resolves when fully encoded; a doi.org URL form resolves to its work."""
    sici = "10.1890/0012-9658(2006)87[2832:TIOPMA]2.0.CO;2"
    response = client.get(f"{fake.crossref_url}/works/{quote_doi(sici)}")
    assert response.status_code == 200
    assert response.json()["message"]["DOI"] == sici.lower()
    url_form = client.get(f"{fake.crossref_url}/works/https://doi.org/10.1101/598821")
    assert url_form.json()["message"]["DOI"] == "10.1101/598821"


def test_crossref_list_query_order_insensitive_and_mailto_ignored(
    fake: FakeUpstream, client: httpx.Client
) -> None:
    """A list query matches the recording in any parameter order and with an extra mailto."""
    response = client.get(
        f"{fake.crossref_url}/works", params={"rows": "2", "mailto": "x@example.org", "query": "ecology"}
    )
    assert response.status_code == 200
    assert response.content == _corpus_bytes("crossref/work-list/works_query-ecology_rows-2.json")
    other = client.get(f"{fake.crossref_url}/works", params={"rows": "3", "query": "ecology"})
    assert other.status_code == 404  # list queries need an exact recorded query


def test_crossref_unknown_work_is_plain_text_404(fake: FakeUpstream, client: httpx.Client) -> None:
    """An unknown DOI answers 404 text/plain 'Resource not found.' as Crossref does."""
    response = client.get(f"{fake.crossref_url}/works/10.9999/does-not-exist")
    assert response.status_code == 404
    assert response.headers["content-type"] == "text/plain"
    assert response.text == "Resource not found."


def test_crossref_recorded_errors(fake: FakeUpstream, client: httpx.Client) -> None:
    """Recorded error exchanges replay: the 400 singleton-with-query and the HTML 504 on a facet query."""
    bad = client.get(f"{fake.crossref_url}/works/10.1371/journal.pone.0033693?query.author=carl+boettiger")
    assert bad.status_code == 400
    assert bad.json()["message-type"] == "validation-failure"
    plain = client.get(f"{fake.crossref_url}/works/10.1371/journal.pone.0033693?select=DOI")
    assert plain.status_code == 200  # any other query on a single-record path is ignored
    cursor = client.get(f"{fake.crossref_url}/works?cursor=5")
    assert cursor.status_code == 500
    assert cursor.headers["exception-name"].startswith("class ")


def test_crossref_cursor_chain(fake: FakeUpstream, client: httpx.Client) -> None:
    """Following next-cursor walks star -> page2 -> page3 of a recorded cursor chain."""
    url = f"{fake.crossref_url}/funders/10.13039/100000001/works"
    first = client.get(url, params={"rows": "30", "cursor": "*"}).json()["message"]
    second = client.get(url, params={"rows": "30", "cursor": first["next-cursor"]}).json()["message"]
    third = client.get(url, params={"rows": "30", "cursor": second["next-cursor"]}).json()["message"]
    dois = [item["DOI"] for page in (first, second, third) for item in page["items"]]
    assert len(dois) == 90 and len(set(dois)) == 90
    assert third["next-cursor"] != second["next-cursor"]


def test_crossref_agency_recorded_and_synthesised(fake: FakeUpstream, client: httpx.Client) -> None:
    """/works/{doi}/agency replays recordings (mEDRA) and answers Crossref for other corpus works."""
    medra = client.get(f"{fake.crossref_url}/works/10.1430/8105/agency").json()
    assert medra["message"]["agency"] == {"id": "medra", "label": "mEDRA"}
    corpus = client.get(f"{fake.crossref_url}/works/{quote_doi(JOR_DOI)}/agency").json()
    assert corpus["message"]["agency"]["id"] == "crossref"


def test_zenodo_record_title_and_headers(fake: FakeUpstream, client: httpx.Client) -> None:
    """A Zenodo record answers its newest recorded body, Zenodo rate headers (when switched on), and no
    ETag by default.
    """
    fake.rate_headers = True
    response = client.get(f"{fake.zenodo_url}/records/5244404")
    assert response.status_code == 200
    assert response.content == _corpus_bytes("zenodo/record/records-5244404.json")
    assert response.json()["metadata"]["title"] == ORIGINS_TITLE
    assert response.headers["x-ratelimit-limit"] == "133"
    assert response.headers["retry-after"] == "60"
    assert "etag" not in response.headers


def test_zenodo_concept_id_redirects_to_latest_version(fake: FakeUpstream, client: httpx.Client) -> None:
    """A concept record id answers 302 to the highest corpus version; following it yields that record."""
    response = client.get(f"{fake.zenodo_url}/records/5075887")
    assert response.status_code == 302
    assert response.headers["location"] == f"{fake.zenodo_url}/records/5244404"
    followed = client.get(f"{fake.zenodo_url}/records/5075887", follow_redirects=True)
    assert followed.json()["id"] == 5244404
    latest = client.get(f"{fake.zenodo_url}/records/591564/versions/latest")
    assert latest.headers["location"].endswith("/zenodo/api/records/22705923")


def test_zenodo_tombstone_and_unknown(fake: FakeUpstream, client: httpx.Client) -> None:
    """A deleted record answers 410 with its tombstone; an unknown id 404 with the new-platform JSON."""
    gone = client.get(f"{fake.zenodo_url}/records/22705918")
    assert gone.status_code == 410
    assert gone.json()["tombstone"]["removal_reason"] == {"id": "spam"}
    missing = client.get(f"{fake.zenodo_url}/records/123456789")
    assert missing.status_code == 404
    assert missing.json() == {"status": 404, "message": "The persistent identifier does not exist."}


def test_zenodo_search_versions_and_citation(fake: FakeUpstream, client: httpx.Client) -> None:
    """Searches match their recorded query, versions pages by links.self, citations by Accept."""
    search = client.get(
        f"{fake.zenodo_url}/records",
        params={"q": 'title:"Frictionless Data Test"', "size": "2", "page": "1"},
    )
    assert search.status_code == 200
    assert search.content == _corpus_bytes("zenodo/search/records_title_size-2_page-1_new-api.json")
    versions = client.get(f"{fake.zenodo_url}/records/22705923/versions?page=1&size=3&sort=version")
    assert versions.json()["hits"]["hits"][0]["versions"]["is_latest"] is True
    bib = client.get(f"{fake.zenodo_url}/records/22705923", headers={"Accept": "application/x-bibtex"})
    assert bib.text.startswith("@software{the_scikit_learn_developers_2026_22705923")


def test_doi_ra_lookup(fake: FakeUpstream, client: httpx.Client) -> None:
    """doi.org /ra answers DataCite for 10.5281, Crossref for corpus works, 'DOI does not exist' otherwise."""
    answer = client.get(f"{fake.doi_url}/ra/10.5281/zenodo.5244404,{JOR_DOI},10.9999/nothing").json()
    assert answer == [
        {"DOI": "10.5281/zenodo.5244404", "RA": "DataCite"},
        {"DOI": JOR_DOI, "RA": "Crossref"},
        {"DOI": "10.9999/nothing", "status": "DOI does not exist"},
    ]
    encoded = client.get(f"{fake.doi_url}/ra/{quote_doi(JOR_DOI)}")
    assert encoded.status_code == 200 and encoded.json()[0]["RA"] == "Crossref"


# ------------------------------------------------------------------------------------------- validators
def test_etag_round_trip(fake: FakeUpstream, client: httpx.Client) -> None:
    """With etags on, Zenodo keeps its recorded W/"7", Crossref gets a body hash; a match answers 304."""
    fake.etags = True
    record = client.get(f"{fake.zenodo_url}/records/5244404")
    assert record.headers["etag"] == 'W/"7"'
    again = client.get(f"{fake.zenodo_url}/records/5244404", headers={"If-None-Match": '"7"'})
    assert again.status_code == 304 and again.content == b""
    work = client.get(f"{fake.crossref_url}/works/{JOR_DOI}")
    etag = work.headers["etag"]
    assert etag.startswith('"') and len(etag) == 34
    assert client.get(work.url, headers={"If-None-Match": etag}).status_code == 304
    assert client.get(work.url, headers={"If-None-Match": '"other"'}).status_code == 200
    search = client.get(f"{fake.crossref_url}/works?rows=2")
    assert "etag" not in search.headers  # list responses carry no validators


def test_last_modified_round_trip(fake: FakeUpstream, client: httpx.Client) -> None:
    """With last_modified on, the recorded legacy Last-Modified is sent and If-Modified-Since answers 304."""
    fake.last_modified = True
    record = client.get(f"{fake.zenodo_url}/records/7078768")
    stamp = record.headers["last-modified"]
    assert stamp.endswith("GMT")
    assert client.get(record.url, headers={"If-Modified-Since": stamp}).status_code == 304
    assert (
        client.get(record.url, headers={"If-Modified-Since": formatdate(0, usegmt=True)}).status_code == 200
    )


def test_set_body_override_and_clear(fake: FakeUpstream, client: httpx.Client) -> None:
    """set_body serves a changed record (with a new ETag) until clear_overrides restores the corpus body."""
    fake.etags = True
    url = f"{fake.crossref_url}/works/{quote_doi(JOR_DOI)}"
    before = client.get(url)
    fake.set_body("crossref", f"/works/{JOR_DOI.upper()}", {"status": "ok", "message": {"title": ["New"]}})
    changed = client.get(url)
    assert changed.json()["message"]["title"] == ["New"]
    assert changed.headers["etag"] != before.headers["etag"]
    fake.set_body("zenodo", "/records/5244404", b"gone", status=503, headers={"content-type": "text/plain"})
    assert client.get(f"{fake.zenodo_url}/records/5244404").status_code == 503
    fake.clear_overrides()
    assert client.get(url).json()["message"]["title"] == [JOR_TITLE]


def test_serve_history_successive_bodies(fake: FakeUpstream, client: httpx.Client) -> None:
    """serve_history answers successive bodies; W/"7" stays while the body changes, the last one repeats."""
    files = [
        f"zenodo/record-history/records-5244404__{d}.json" for d in ("2024-09-27", "2025-05-07", "2026-07-23")
    ]
    fake.serve_history(5244404, files)
    fake.etags = True
    seen = [client.get(f"{fake.zenodo_url}/records/5244404") for _ in range(4)]
    assert [r.content for r in seen[:3]] == [_corpus_bytes(f) for f in files]
    assert seen[3].content == seen[2].content
    assert {r.headers["etag"] for r in seen} == {'W/"7"'}
    assert len({len(r.content) for r in seen}) == 3


def test_request_log_and_count(fake: FakeUpstream, client: httpx.Client) -> None:
    """The log keeps raw paths, decoded query and lower-cased headers; count filters by prefix and service."""
    client.get(f"{fake.crossref_url}/works/{quote_doi(JOR_DOI)}?mailto=a%40b.org", headers={"X-Test": "1"})
    client.get(f"{fake.zenodo_url}/funders/01cwqze88")
    client.get(f"{fake.crossref_url}/funders/10.13039/100000001")
    first = fake.requests[0]
    assert first.path == "/crossref/works/10.1002%2Fjor.1100150407"
    assert first.query == {"mailto": "a@b.org"}
    assert first.headers["x-test"] == "1"
    assert first.service == "crossref" and first.service_path == f"/works/{JOR_DOI}"
    assert fake.count() == 3
    assert fake.count("/works/10.1002/jor") == 1
    assert fake.count("/funders") == 2
    assert fake.count("/funders", service="zenodo") == 1
    assert fake.count(service="crossref") == 2
    fake.reset_log()
    assert fake.count() == 0


# ------------------------------------------------------------------------------------------- faults
def test_fault_refuse(fake: FakeUpstream, client: httpx.Client) -> None:
    """'refuse' closes the connection without a response (httpx RemoteProtocolError); times=1 expires."""
    fake.fault("refuse", path_prefix="/works", times=1)
    with pytest.raises(httpx.RemoteProtocolError):
        client.get(f"{fake.crossref_url}/works/{JOR_DOI}")
    assert client.get(f"{fake.crossref_url}/works/{JOR_DOI}").status_code == 200
    assert fake.count("/works") == 2  # the faulted request is logged too


def test_fault_reset(fake: FakeUpstream, client: httpx.Client) -> None:
    """'reset' sends headers and half the body then resets: httpx raises a transport read error."""
    fake.fault("reset", service="zenodo")
    with pytest.raises((httpx.ReadError, httpx.RemoteProtocolError)):
        client.get(f"{fake.zenodo_url}/records/5244404")


def test_fault_hang_does_not_block_stop() -> None:
    """'hang' never answers (client ReadTimeout) and stop() does not wait the hang out (it returns in
    well under the hang's 30 s while its handler is still waiting).
    """
    hang_s = 30.0
    with FakeUpstream() as own:
        own.fault("hang", max_s=hang_s)
        with pytest.raises(httpx.ReadTimeout):
            httpx.get(f"{own.crossref_url}/works/{JOR_DOI}", timeout=httpx.Timeout(3.0, read=0.3))
        stopper = threading.Thread(target=own.stop)
        stopper.start()
        stopper.join(timeout=hang_s / 3)  # a liveness bound (the hang lasts 30 s), not a timed claim
        assert not stopper.is_alive(), "stop() waited for the hung handler"


def test_fault_slow(fake: FakeUpstream, client: httpx.Client) -> None:
    """'slow' drips the body: a short read timeout fails, a patient client gets the whole recorded body."""
    fake.fault("slow", delay_s=0.3, chunk_size=100_000)
    with pytest.raises(httpx.ReadTimeout):
        client.get(f"{fake.crossref_url}/works/{JOR_DOI}", timeout=httpx.Timeout(3.0, read=0.1))
    fake.clear_faults()
    fake.fault("slow", delay_s=0.05, chunk_size=2000)
    response = client.get(f"{fake.crossref_url}/works/{JOR_DOI}")
    assert response.json()["message"]["title"] == [JOR_TITLE]


def test_fault_status_codes(fake: FakeUpstream, client: httpx.Client) -> None:
    """'status' answers any code with a JSON, HTML or given body."""
    fake.fault("status", status=503, times=1)
    fake.fault("status", status=504, html=True, times=1)
    fake.fault(
        "status", status=500, body={"status": "error", "message": "Solr returned a partial result set"}
    )
    first = client.get(f"{fake.crossref_url}/works?rows=2")
    assert first.status_code == 503 and first.json()["message"] == "Service Unavailable"
    second = client.get(f"{fake.crossref_url}/works?rows=2")
    assert second.status_code == 504 and "<h1>504 Gateway Timeout</h1>" in second.text
    third = client.get(f"{fake.crossref_url}/works?rows=2")
    assert third.status_code == 500 and third.json()["message"].startswith("Solr")


def test_fault_rate_limit(fake: FakeUpstream, client: httpx.Client) -> None:
    """'rate_limit' answers 429 with Retry-After seconds, an HTTP date, or none and an HTML body (BC-15)."""
    date = formatdate(time.time() + 30, usegmt=True)
    fake.fault("rate_limit", retry_after=7, times=1)
    fake.fault("rate_limit", retry_after=date, times=1)
    fake.fault("rate_limit", html=True, times=1)
    seconds = client.get(f"{fake.crossref_url}/works/{JOR_DOI}")
    assert seconds.status_code == 429 and seconds.headers["retry-after"] == "7"
    assert client.get(f"{fake.crossref_url}/works/{JOR_DOI}").headers["retry-after"] == date
    html = client.get(f"{fake.crossref_url}/works/{JOR_DOI}")
    assert html.status_code == 429 and "retry-after" not in html.headers
    assert html.headers["content-type"] == "text/html" and "429 Too Many Requests" in html.text


def test_fault_non_json_bodies(fake: FakeUpstream, client: httpx.Client) -> None:
    """'html', 'text', 'empty', 'truncated', 'wrong_shape' answer 200 with bodies a JSON client rejects."""
    url = f"{fake.crossref_url}/works/{JOR_DOI}"
    for kind in ("html", "text", "empty", "truncated"):
        fake.fault(kind, times=1)
        response = client.get(url)
        assert response.status_code == 200
        with pytest.raises(json.JSONDecodeError):
            response.json()
    fake.fault("wrong_shape", times=1)
    assert client.get(url).json()["message"] == {"items": []}
    fake.fault("wrong_shape", body=[], times=1)
    assert client.get(f"{fake.zenodo_url}/records/5244404").json() == []


def test_fault_truncated_is_a_prefix_of_the_real_body(fake: FakeUpstream, client: httpx.Client) -> None:
    """'truncated' sends the first part of the real body with a consistent Content-Length."""
    fake.fault("truncated", fraction=0.25)
    response = client.get(f"{fake.zenodo_url}/records/5244404")
    full = _corpus_bytes("zenodo/record/records-5244404.json")
    assert full.startswith(response.content) and 0 < len(response.content) < len(full)


def test_fault_latency(fake: FakeUpstream, client: httpx.Client) -> None:
    """'latency' delays a normal answer by delay_s: a client reading with a shorter timeout gets none
    (the delay is the fake's, so a busy machine only lengthens it), a patient one gets the record.
    """
    fake.fault("latency", delay_s=0.3, path_prefix="/zenodo/api/records")
    with pytest.raises(httpx.ReadTimeout):
        client.get(f"{fake.zenodo_url}/records/5244404", timeout=httpx.Timeout(3.0, read=0.1))
    response = client.get(f"{fake.zenodo_url}/records/5244404")
    assert response.json()["metadata"]["title"] == ORIGINS_TITLE
    assert fake.count("/records", service="zenodo") == 2


def test_unknown_fault_kind_rejected(fake: FakeUpstream) -> None:
    """An unknown fault kind is a ValueError, not a silent no-op."""
    with pytest.raises(ValueError, match="unknown fault kind"):
        fake.fault("explode")


# ------------------------------------------------------------------------------------------- lifecycle
def test_stop_refuses_and_restart_keeps_port() -> None:
    """After stop() connections are refused (pooled ones too); restart() serves again at the same URL."""
    own = FakeUpstream().start()
    try:
        url = f"{own.crossref_url}/works/{JOR_DOI}"
        port = own.port
        with httpx.Client(timeout=2.0) as pooled:
            assert pooled.get(url).status_code == 200
            own.stop()
            with pytest.raises(httpx.ConnectError):
                pooled.get(url)
            with socket.socket() as raw, pytest.raises(ConnectionRefusedError):
                raw.connect(("127.0.0.1", port))
            own.restart()
            assert own.port == port and own.crossref_url.endswith(f":{port}/crossref")
            assert pooled.get(url).json()["message"]["title"] == [JOR_TITLE]
    finally:
        own.stop()


def test_corpus_location_exists() -> None:
    """The default corpus directory holds index.json (the tests depend on it)."""
    assert (Path(CORPUS_DIR) / "index.json").is_file()


def test_corpus_ships_in_the_repository() -> None:
    """The corpus is ``tests/corpus/`` inside the repository (a fresh clone needs nothing beside it), with
    its SOURCES.md, and every body and headers file index.json names is there.
    """
    root = Path(__file__).resolve().parents[2]
    assert root / "tests" / "corpus" == CORPUS
    assert (CORPUS / "SOURCES.md").read_text(encoding="utf-8").startswith("# Upstream corpus")
    index = json.loads((CORPUS / "index.json").read_text(encoding="utf-8"))
    named = {e["file"] for e in index} | {e["headers_file"] for e in index if e.get("headers_file")}
    assert len(index) > 150
    assert sorted(f for f in named if not (CORPUS / f).is_file()) == []


def test_fake_defaults_to_the_repository_corpus() -> None:
    """Without SYNCD_UPSTREAM_CORPUS the fake (and ``python -m tests.fakeupstream``) replays tests/corpus;
    with it, the named directory.
    """
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k != "SYNCD_UPSTREAM_CORPUS"}
    code = "from tests.fakeupstream import CORPUS_DIR; print(CORPUS_DIR)"
    run = [sys.executable, "-c", code]
    default = subprocess.run(run, cwd=root, env=env, capture_output=True, text=True, check=True)
    assert Path(default.stdout.strip()) == root / "tests" / "corpus"
    other = subprocess.run(
        run, cwd=root, env={**env, "SYNCD_UPSTREAM_CORPUS": "/srv/corpus"}, capture_output=True, text=True
    )
    assert other.stdout.strip() == "/srv/corpus"


def test_keep_alive_answers_do_not_wait_for_a_delayed_ack(fake: FakeUpstream, client: httpx.Client) -> None:
    """On one keep-alive connection each answer leaves without the ~40 ms Nagle/delayed-ACK stall: the
    handler sets TCP_NODELAY and buffers status line, headers and body into one write (the stdlib
    defaults, an unbuffered writer with Nagle on, made every answer wait for the client's delayed ACK);
    50 GETs on the one connection answer the recorded work byte for byte. The speed itself (well under
    1 ms an answer, was 44 ms) is benchmark 15.6 (benchmarks/bench_fake.py), not timed here.
    """
    assert _Handler.disable_nagle_algorithm is True and _Handler.wbufsize >= 1 << 16
    url = f"{fake.crossref_url}/works/{JOR_DOI}"
    assert client.get(url).status_code == 200  # the connection is open from here on
    for _ in range(50):
        response = client.get(url)
        assert response.content == _corpus_bytes("crossref/work/10.1002_jor.1100150407.json")
    assert fake.count(service="crossref") == 51
