"""Shared plumbing: the benchmark registry, rows, timing statistics, the fake upstream, settings."""

from __future__ import annotations

import os
import platform
import re
import socket
import sqlite3
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.corpus_path import CORPUS

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(__file__).resolve().parent / ".cache"


@dataclass
class Row:
    """One line of a results table: figure, measured, comparison, ratio, target, met?

    ``item`` names the table: ``"15.N"`` for target N of issue 15 (one table each), anything else
    goes under *Other figures*. ``value`` is the measured figure; ``comparison`` what it is set
    against in the same run (e.g. ``"empty tool 0.25 ms"``) and ``ratio`` the quotient;
    ``met`` is True/False, or None when the row has no target.
    """

    item: str
    figure: str
    value: str
    target: str = "no target (report)"
    met: bool | None = None
    note: str = ""
    comparison: str = ""
    ratio: str = ""


class NotMeasured(Exception):
    """Raised by a benchmark whose subject does not exist yet; the reason goes in the table."""


@dataclass
class Context:
    """What every benchmark gets: a scratch dir, the quick flag, a log and results shared in the run."""

    workdir: Path
    quick: bool = False
    log: Callable[[str], None] = print
    results: dict[str, Any] = field(default_factory=dict)
    profiles: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass
class Bench:
    order: float
    item: str
    name: str
    func: Callable[[Context], list[Row]]
    figures: tuple[str, ...]


REGISTRY: list[Bench] = []


def bench(order: float, item: str, name: str, figures: tuple[str, ...] = ()) -> Callable:
    """Register a benchmark function ``f(ctx) -> list[Row]``; ``figures`` name the rows it would give
    (used for the "not measured yet" rows when it raises :class:`NotMeasured`)."""

    def deco(func: Callable[[Context], list[Row]]) -> Callable[[Context], list[Row]]:
        REGISTRY.append(Bench(order, item, name, func, figures or (name,)))
        return func

    return deco


# --- statistics ------------------------------------------------------------------------------------


def pct(samples: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``samples``, nearest-rank."""
    s = sorted(samples)
    k = max(0, min(len(s) - 1, round(q / 100 * len(s) + 0.5) - 1))
    return s[k]


def median(samples: list[float]) -> float:
    return statistics.median(samples)


def ms(seconds: float) -> str:
    if seconds >= 0.1:
        return f"{seconds * 1000:,.0f} ms"
    if seconds >= 0.001:
        return f"{seconds * 1000:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def timed(fn: Callable[[], Any], reps: int, warmup: int = 0) -> list[float]:
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


# --- machine -----------------------------------------------------------------------------------------


def machine() -> dict[str, str]:
    cpu = "unknown"
    try:
        m = re.search(r"model name\s*:\s*(.+)", Path("/proc/cpuinfo").read_text())
        cpu = m.group(1).strip() if m else platform.processor()
    except OSError:
        pass
    ram = "unknown"
    try:
        kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        ram = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, AttributeError):
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "CPU": cpu,
        "cores": str(cores),
        "RAM": ram,
        "Python": platform.python_version(),
        "SQLite": sqlite3.sqlite_version,
        "OS": platform.platform(),
    }


def rss_kb(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of ``pid`` in KiB."""
    text = Path(f"/proc/{pid}/status").read_text()
    rss = int(re.search(r"VmRSS:\s+(\d+)", text).group(1))
    hwm = int(re.search(r"VmHWM:\s+(\d+)", text).group(1))
    return rss, hwm


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- syncd against the fake upstream ---------------------------------------------------------------


def fake_upstream():
    """A started :class:`tests.fakeupstream.FakeUpstream` replaying the corpus (loopback only)."""
    from tests.fakeupstream import FakeUpstream

    return FakeUpstream(CORPUS).start()


def settings_for(fake: Any, db_url: str, **overrides: Any):
    """syncd settings pointing every upstream at ``fake``.

    The budget pools are widened (1000/s) so that the benchmark's own sequential requests are not
    paced by the published rate limits; the budget bookkeeping itself (a write per request) still runs.
    """
    from syncd.config import Settings

    wide = {"per_s": 1000, "burst": 1000, "in_flight": 8}
    values: dict[str, Any] = {
        "database_url": db_url,
        "crossref": {"base_url": fake.crossref_url, "mailto": "bench@example.org"},
        "zenodo": {"base_url": fake.zenodo_url},
        "doi": {"base_url": fake.doi_url},
        "deadline_s": 10.0,
        "budget": {
            p: dict(wide)
            for p in ("crossref_single", "crossref_list", "zenodo_general", "zenodo_search", "doi")
        },
    }
    values.update(overrides)
    return Settings(**values)


def subprocess_env(fake: Any, db_url: str, workdir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCD_")}
    env.update(
        {
            "PYTHONPATH": str(ROOT),
            "XDG_CONFIG_HOME": str(workdir / "config"),
            "XDG_DATA_HOME": str(workdir / "data"),
            "SYNCD_DATABASE_URL": db_url,
            "SYNCD_CROSSREF__MAILTO": "bench@example.org",
        }
    )
    if fake is not None:
        env.update(
            {
                "SYNCD_CROSSREF__BASE_URL": fake.crossref_url,
                "SYNCD_ZENODO__BASE_URL": fake.zenodo_url,
                "SYNCD_DOI__BASE_URL": fake.doi_url,
            }
        )
    env.update(extra)
    return env


def corpus_dois() -> list[str]:
    """DOIs of the recorded Crossref works (what the fake serves at ``/works/{doi}``)."""
    from benchmarks.corpusgen import pools

    return sorted({t["DOI"].lower() for t in pools().templates})


def corpus_record_ids() -> list[str]:
    """Record ids of the recorded Zenodo records (``zenodo/record/records-N*.json``, 200 answers only)."""
    out = []
    for f in sorted((CORPUS / "zenodo" / "record").glob("records-*.json")):
        if f.name.endswith(".headers.json"):
            continue
        m = re.match(r"records-(\d+)(?:_(.*))?\.json$", f.name)
        if m and not (m.group(2) or "").startswith(("restricted", "embargoed")):
            out.append(m.group(1))
    return out
