"""``syncd check`` exit codes that mean one thing: a book is skipped, not unknown; Ctrl-C is 130.

The bibliography is real-shaped BibTeX: the recorded Raptor preprint (10.1101/598821, no update
recorded) beside Knuth's book (no DOI, no PubMed id), as a lab's reference manager exports them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from syncd.cli import cli
from syncd.cli.exits import EXIT_INTERRUPTED
from syncd.config import Settings
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.fakeupstream import FakeUpstream

ROOT = Path(__file__).resolve().parents[2]
BIB = """@article{cho2019raptor,
  title = {Raptor genomes reveal evolutionary signatures of predatory and nocturnal lifestyles},
  author = {Cho, Yun Sung and Jun, JeHoon},
  doi = {10.1101/598821},
  year = {2019}
}

@book{knuth1968art,
  author = {Knuth, Donald E.},
  title = {The Art of Computer Programming},
  publisher = {Addison-Wesley},
  year = {1968}
}
"""


def test_a_book_is_listed_and_skipped_and_the_check_exits_0(env: Settings, tmp_path: Path) -> None:  # noqa: F811
    """A bibliography whose only entry without a DOI is a book (no PubMed id either) exits 0: the book
    is counted as skipped and listed as no_doi, never an unknown that makes a CI job fail with 3.
    """
    path = tmp_path / "lab.bib"
    path.write_text(BIB, encoding="utf-8")
    done = CliRunner().invoke(cli, ["check", str(path), "--output", "json"], obj={})
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert (report["entries"], report["withDoi"], report["skipped"]) == (2, 1, 1)
    assert report["counts"]["ok"] == 1 and report["counts"]["no_doi"] == 1
    [book] = report["reported"]
    assert (book["status"], book["label"]) == ("no_doi", "knuth1968art")
    assert book["severity"] == "skipped" and report["severities"] == {"none_found": 1, "skipped": 1}
    human = CliRunner().invoke(cli, ["check", str(path), "--output", "table"], obj={})
    assert human.exit_code == 0, human.output
    assert "lab.bib: 1 of 2 entries listed" in human.stdout
    assert "could not be checked" not in human.stdout


def test_ctrl_c_in_check_exits_130_not_1(env: Settings, fake: FakeUpstream, tmp_path: Path) -> None:  # noqa: F811
    """``syncd check`` (a real process) interrupted by SIGINT while Crossref hangs exits 130, the code
    shells give a Ctrl-C, never 1 (the code for "an entry is retracted").
    """
    path = tmp_path / "lab.bib"
    path.write_text(BIB, encoding="utf-8")
    fake.fault("hang", service="crossref", max_s=60)
    child_env = {k: v for k, v in os.environ.items()}
    child_env["PYTHONPATH"] = str(ROOT)
    child_env["SYNCD_DEADLINE_S"] = "120"  # the hang outlasts the interrupt
    proc = subprocess.Popen(
        [sys.executable, "-m", "syncd", "check", str(path)],
        env=child_env,
        cwd=str(ROOT),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(600):  # until its first Crossref request hangs at the fake (a bound, not a timing)
            if any("/works" in r.path for r in list(fake.requests)) or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        fake.clear_faults()
    assert proc.returncode == EXIT_INTERRUPTED, err
    assert "interrupted" in err and "Traceback" not in err
