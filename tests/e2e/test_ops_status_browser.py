"""``/status`` in a real headless Chromium (issue 24 item 5): the page renders without JavaScript.

The daemon's real HTTP server (:func:`syncd.daemon.run.web_server`, uvicorn on a free loopback port) over a
store holding the recorded Raptor genomes work and the Lancet retraction of the corpus. Chromium
(Debian's ``chromium-headless-shell`` or ``chromium``, or ``SYNCD_TEST_CHROMIUM``; ``.ci/run`` installs
it) loads the page, dumps the DOM it rendered and takes a screenshot, whose
path the test prints (``status.png`` under the test's temporary directory, or under
``SYNCD_TEST_ARTIFACTS`` when set). Skipped, saying so, when no Chromium is installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from syncd.daemon.ops.activity import Activity
from syncd.store.repo import Store
from syncd.store.watches import add_watch, save_sync_state
from tests.conftest import make_settings
from tests.fakeupstream import FakeUpstream
from tests.helpers import daemon_http
from tests.store.test_changes import LANCET, TITLE, lancet_bodies, store_work

pytestmark = pytest.mark.serial  # a browser process

BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")
DAY = 86_400.0


def chromium() -> str | None:
    """The Chromium binary to drive: ``SYNCD_TEST_CHROMIUM``, else the first of :data:`BROWSERS` on PATH."""
    given = os.environ.get("SYNCD_TEST_CHROMIUM")
    if given:
        return given
    return next((found for name in BROWSERS if (found := shutil.which(name))), None)


@pytest.fixture
def status_url(fake: FakeUpstream, tmp_path: Path) -> Iterator[str]:
    """``http://127.0.0.1:PORT/status`` of a running daemon HTTP server over a filled store."""
    settings = make_settings(fake, f"sqlite:///{tmp_path / 'status.db'}")

    def fill(store: Store) -> None:
        add_watch(store, "doi", {"doi": LANCET})
        save_sync_state(store, "watch:1", status="ok", last_success_at=1_700_000_000.0)
        before, now = lancet_bodies()
        store_work(store, before, time.time() - 2 * DAY)
        store_work(store, now, time.time() - DAY)

    activity = Activity()
    activity.scheduler_running = lambda: True
    activity.beat()
    with daemon_http(settings, fill, activity) as port:
        yield f"http://127.0.0.1:{port}/status"


def _browse(binary: str, *args: str) -> subprocess.CompletedProcess[str]:
    flags = ["--headless", "--no-sandbox", "--disable-gpu"]
    return subprocess.run([binary, *flags, *args], capture_output=True, text=True, timeout=120, check=False)


def test_status_page_renders_in_headless_chromium(status_url: str, tmp_path: Path) -> None:
    """Chromium renders /status, a DOM without any script, with the health verdict, the Lancet
    retraction's title among the changes and alerts, and the watch; its screenshot is a real PNG of
    the page. (Chromium's headless shell itself needs scripts on to dump the DOM or take a screenshot,
    so "readable without JavaScript" is proved by the page holding none.)
    """
    binary = chromium()
    if binary is None:
        pytest.skip(
            "no Chromium on PATH (apt-get install chromium-headless-shell, or set SYNCD_TEST_CHROMIUM); "
            ".ci/run installs it"
        )
    dom = _browse(binary, "--dump-dom", status_url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "<script" not in dom.stdout
    assert "healthy</span>" in dom.stdout
    assert dom.stdout.count("RETRACTED: " + TITLE[:60]) == 2
    assert "10.1016/s0140-6736(20)31180-6" in dom.stdout
    out_dir = Path(os.environ.get("SYNCD_TEST_ARTIFACTS") or tmp_path)
    out_dir.mkdir(parents=True, exist_ok=True)
    shot = out_dir / "status.png"
    taken = _browse(binary, f"--screenshot={shot}", "--window-size=1280,1800", status_url)
    assert taken.returncode == 0, taken.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1280, 1800)
    assert len(data) > 20_000  # a page of tables and text, not a blank canvas (a blank one is ~5 kB)
    print(f"status page screenshot: {shot} ({len(data)} bytes)")
