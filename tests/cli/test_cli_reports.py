"""What `syncd cache refresh`, `syncd watch sync` and `syncd cache get` report when things go wrong:
a stopped refresh exits 3 with its reason, a failed walk keeps its counts, watches a pass left are
listed as not run, an unknown watch id exits 1, and a retracted work's flags show in the text output.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from click.testing import CliRunner, Result

from syncd.cli import cli
from syncd.config import Settings
from syncd.upstream.http import MAX_ATTEMPTS
from syncd.walks.cursor import SORT
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.conftest import corpus_json
from tests.fakeupstream import FakeUpstream

PRC = "crossref/work-list/works_filter-from-created-date-2019-06-01-container-title-Physical-Review-C"
PRC_FILTER = "from-created-date:2019-06-01,container-title:Physical Review C"
FUNDER = "crossref/work-list/funders-100000001-works_rows-30_cursor"
LANCET = "10.1016/s0140-6736(20)31180-6"


def run(*args: str) -> Result:
    return CliRunner(env={"COLUMNS": "200"}).invoke(cli, list(args), obj={})  # tables unwrapped


def _rows(res: Result) -> list[dict[str, Any]]:
    rows = json.loads(res.stdout)
    assert isinstance(rows, list)
    return rows


def test_refresh_stopped_by_unavailable_upstream_exits_3_with_its_reason(
    env: Settings,  # noqa: F811
    fake: FakeUpstream,
    tmp_path: Path,
) -> None:
    """20 stale Crossref works (a public data file import keeps their age) and upstream down:
    `cache refresh --stale --limit 20` checks none of them, prints its count line (the attempts the
    budget let through), names the stop on
    stderr (`error: upstream_unavailable: refresh stopped: 20 of 20 entries not revalidated`) and exits 3.
    """
    items = corpus_json(f"{PRC}_cursor-star.json")["message"]["items"]
    assert len(items) == 20
    data = tmp_path / "snapshot.jsonl.gz"
    with gzip.open(data, "wt") as fh:
        fh.writelines(json.dumps(item) + "\n" for item in items)
    imported = run("cache", "import", str(data), "--json")
    assert json.loads(imported.stdout)["new"] == 20
    assert len(json.loads(run("cache", "ls", "--stale", "--limit", "0", "--json").stdout)) == 20
    fake.stop()
    res = run("cache", "refresh", "--stale", "--limit", "20")
    assert res.exit_code == 3, res.output
    # one list request, tried MAX_ATTEMPTS times against the stopped fake: every attempt is counted
    assert res.stdout == f"checked 0: 0 unchanged, 0 changed, 0 failed; fetched 0; {MAX_ATTEMPTS} requests\n"
    assert res.stderr == "error: upstream_unavailable: refresh stopped: 20 of 20 entries not revalidated\n"
    as_json = run("cache", "refresh", "--stale", "--limit", "20", "--json")
    assert as_json.exit_code == 3
    assert json.loads(as_json.stdout)["stopped"] == "upstream_unavailable"
    assert len(json.loads(run("cache", "ls", "--stale", "--limit", "0", "--json").stdout)) == 20


def _funder_watch_failing_after_three_pages(fake: FakeUpstream) -> None:
    """`watch add crossref --route /funders/100000001/works --rows 30` (watch 1): the fake serves the
    corpus' three 30-work pages, then answers 503 for the fourth page's cursor.
    """
    added = run("watch", "add", "crossref", "--route", "/funders/100000001/works", "--rows", "30", "--json")
    assert [r["id"] for r in _rows(added)] == [1]
    page3_next = corpus_json(f"{FUNDER}-page3.json")["message"]["next-cursor"]
    fake.set_body(
        "crossref",
        "/funders/100000001/works?" + urlencode({"rows": "30", **SORT, "cursor": page3_next}),
        {"status": "error", "message": "service unavailable"},
        status=503,
    )


def test_failed_walk_keeps_its_counts_and_the_rest_show_not_run(
    env: Settings,  # noqa: F811
    fake: FakeUpstream,
) -> None:
    """Watch 1 stores 90 works in 3 pages, then fails (upstream_unavailable): its row keeps requests 4,
    stored 90, new 90; watch 2 (a Crossref query the ended pass left) is listed `not run:
    upstream_unavailable` with no request sent; the summary counts both and the exit code is 3.
    """
    _funder_watch_failing_after_three_pages(fake)
    added = run("watch", "add", "crossref", "--filter", PRC_FILTER, "--json")
    assert [r["id"] for r in _rows(added)] == [2]
    fake.reset_log()
    res = run("watch", "sync", "1", "2", "--json")
    assert res.exit_code == 3, res.output
    rows = _rows(res)
    got = [(r["watch_id"], r["requests"], r["stored"], r["new"], r["error"], r["not_run"]) for r in rows]
    assert got == [(1, 4, 90, 90, "upstream_unavailable", None), (2, 0, 0, 0, None, "upstream_unavailable")]
    assert [r["outcome"] for r in rows] == ["failed: upstream_unavailable", "not run: upstream_unavailable"]
    assert res.stderr == "error: upstream_unavailable: 1 of 2 walks failed; 1 not run\n"
    assert fake.count("/works", service="crossref") == 0  # watch 2 was never walked
    stored = json.loads(run("cache", "ls", "--limit", "0", "--json").stdout)
    assert len(stored) == 90

    table = run("watch", "sync", "1", "2")
    assert table.exit_code == 3
    cells = {
        c[0]: c for c in ([c.strip() for c in line.split("\t")] for line in table.stdout.splitlines()) if c
    }
    assert cells["1"][-1] == "failed: upstream_unavailable"  # resumed at page 4: 1 request, refused again
    assert cells["2"] == [
        "2",
        "crossref_query",
        "full",
        "false",  # TSV booleans read true/false (issue 38 item 6), not Python's False
        "0",
        "0",
        "0",
        "0",
        "not run: upstream_unavailable",
    ]


def test_sync_of_an_unknown_watch_id_exits_1_and_walks_nothing(
    env: Settings,  # noqa: F811
    fake: FakeUpstream,
) -> None:
    """`watch sync 99` with no watch 99 exits 1 with `error: not_found: no watch with id 99`, like
    `watch rm 99`; `watch sync 1 99` walks nothing either (no request).
    """
    assert run("watch", "add", "crossref", "--filter", PRC_FILTER).exit_code == 0
    fake.reset_log()
    res = run("watch", "sync", "99")
    assert (res.exit_code, res.stdout, res.stderr) == (1, "", "error: not_found: no watch with id 99\n")
    mixed = run("watch", "sync", "1", "99", "98")
    assert (mixed.exit_code, mixed.stderr) == (1, "error: not_found: no watch with id 98, 99\n")
    assert fake.count(service="crossref") == 0
    assert run("watch", "rm", "99").exit_code == 1


def test_cache_get_text_shows_a_retracted_works_flags_and_notice(
    env: Settings,  # noqa: F811
    fake: FakeUpstream,
) -> None:
    """`cache get` of the retracted Lancet hydroxychloroquine paper prints, in text, the flags
    `retracted, corrected, expression_of_concern` and the update notice the JSON output carries.
    """
    as_json = run("cache", "get", LANCET, "--json")
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.stdout)
    assert data["flags"] == ["retracted", "corrected", "expression_of_concern"]
    assert data["notice"].startswith(
        "Updates are recorded against this work: expression_of_concern (retraction-watch); "
        "correction (retraction-watch); retraction (retraction-watch, publisher); erratum (publisher)."
    )
    res = run("cache", "get", LANCET)
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].startswith("RETRACTED: Hydroxychloroquine or chloroquine with or without a macrolide")
    assert lines[1] == f"crossref_work {LANCET}"
    assert lines[2] == "flags: retracted, corrected, expression_of_concern"
    assert lines[3] == f"notice: {data['notice']}"
    assert lines[4].startswith("cache: store validated_at=")
