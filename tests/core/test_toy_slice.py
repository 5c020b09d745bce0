"""A slice is its folder and one line: a toy upstream plugs in, and removing DataCite is removing its line.

Each scenario runs in a new process (``tests/toyslice/run.py``), where the slice list
(:data:`syncd.slices.SLICE_PACKAGES`) is changed by one line before the settings and the registry are
composed from it; nothing under ``syncd/`` knows the toy slice.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.fakeupstream import FakeUpstream

ROOT = Path(__file__).resolve().parents[2]
RAPTOR = "Raptor genomes reveal evolutionary signatures of predatory and nocturnal lifestyles"


def run(*args: str) -> dict[str, Any]:
    """``python -m tests.toyslice.run ARGS`` from the repository root: its JSON answer."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCD_")}  # the suite's switches too
    done = subprocess.run(
        [sys.executable, "-m", "tests.toyslice.run", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_toy_slice_plugs_in_by_one_line(tmp_path: Path) -> None:
    """The toy slice, added to the list by one line: its setting loads from TOML and from its SYNCD_
    variable; its tool is listed and answers from upstream, then from the store (one request); its pool
    is in ``syncd cache budget``; its note is found by ``syncd cache search``; a sweep past its one-hour
    lifetime revalidates it (a second request, content unchanged).
    """
    out = run("toy", str(tmp_path))
    assert out["section"] == {"base_url": "https://toy.example", "signature": "from-toml"}
    assert out["pools"][-1] == "toy_notes"
    assert "toy_get_note" in out["tools"] and out["tools"][-1] == "syncd_list_changes"
    assert out["first"]["title"] == "Glacier note" and out["first"]["cache"]["source"] == "upstream"
    assert out["second"]["text"] == "mass balance of alpine glaciers"
    assert out["second"]["cache"]["source"] == "store"
    assert out["requests_before_sweep"] == 1
    assert out["requests"][0] == ["https://toy.example/notes/n1", "from-toml"]
    assert out["sweep"] == {"checked": 1, "unchanged": 1} and len(out["requests"]) == 2
    [toy_pool] = [p for p in out["budget"] if p["pool"] == "toy_notes"]
    assert toy_pool["configured"] == {"per_s": 5.0, "burst": 5.0, "in_flight": 2}
    [hit] = out["search"]
    assert (hit["kind"], hit["key"], hit["title"], hit["ttl_s"]) == ("toy_note", "n1", "Glacier note", 3600.0)


def test_removing_a_slice_is_removing_its_line(tmp_path: Path, fake: FakeUpstream) -> None:
    """Without the DataCite line: no DataCite kind, pool, section or tool; the Crossref and Zenodo tools
    answer from the recorded corpus (the Raptor paper's 24 authors, the Dryad record's title), the sweep
    revalidates both, and ``syncd check`` resolves the bibliography (exit 0).
    """
    out = run("without-datacite", str(tmp_path), fake.crossref_url, fake.zenodo_url, fake.doi_url)
    assert not [k for k in out["kinds"] if k.startswith("datacite")]
    assert "datacite" not in out["pools"] and "datacite" not in out["sections"]
    assert not [t for t in out["tools"] if t.startswith("datacite_")]
    assert {"crossref_get_work", "zenodo_get_record", "syncd_cited_by"} <= set(out["tools"])
    work = out["work"]
    assert work["title"] == RAPTOR
    assert len(work["authors"]) == 24
    assert out["record"]["record"]["title"] == "Directional epistasis is common in morphological divergence"
    assert out["sweep"] == {"checked": 2, "unchanged": 2}
    assert out["check_exit"] == 0, out["check"]
    assert out["check"]["entries"] == 1 and out["check"]["counts"]["ok"] == 1
