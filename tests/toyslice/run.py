"""Run syncd composed with the toy slice (or without a slice) in this process; print what it saw as JSON.

``python -m tests.toyslice.run toy DIR``: the toy slice added to the slice list by one line, then its
setting read from a TOML file and a ``SYNCD_`` variable, its tool listed and called twice over MCP (an
``httpx.MockTransport`` plays its upstream), its pool in ``syncd cache budget``, its note found by
``syncd cache search``, a sweep past its lifetime. ``python -m tests.toyslice.run without-datacite DIR
FAKE_CROSSREF FAKE_ZENODO FAKE_DOI``: the DataCite slice removed from the list by one line, then the
Crossref and Zenodo tools, the sweep and ``syncd check`` against the fake upstream given.
The slice list is set before anything imports the settings or the registry (a new process).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import syncd.slices

MODE = sys.argv[1]
if MODE == "toy":
    syncd.slices.SLICE_PACKAGES = (*syncd.slices.SLICE_PACKAGES, "tests.toyslice")
else:
    syncd.slices.SLICE_PACKAGES = tuple(p for p in syncd.slices.SLICE_PACKAGES if p != "syncd.datacite")


def _structured(result: Any) -> dict[str, Any]:
    data = result.structured_content
    return dict(data) if isinstance(data, dict) else {}


def toy(folder: Path) -> dict[str, Any]:
    """The toy slice's scenario (see the module docstring)."""
    import httpx
    from click.testing import CliRunner
    from mcp import Client

    from syncd.cli import cli
    from syncd.config import load_settings
    from syncd.passes.refresh import sweep
    from syncd.registry import POOLS, open_services
    from syncd.store.repo import Store
    from tests.helpers import mcp_server
    from tests.toyslice.settings import SECTION

    config = folder / "syncd.toml"
    database = f"sqlite:///{folder / 'store.db'}"
    config.write_text(f'database_url = "{database}"\n[toy]\nsignature = "from-toml"\n', encoding="utf-8")
    os.environ["SYNCD_TOY__BASE_URL"] = "https://toy.example"
    settings = load_settings(config)
    seen: list[tuple[str, str | None]] = []

    def upstream(request: httpx.Request) -> httpx.Response:
        seen.append((str(request.url), request.headers.get("x-toy-signature")))
        note = {"id": "n1", "title": "Glacier note", "text": "mass balance of alpine glaciers"}
        return httpx.Response(200, json=note)

    store = Store.open(settings.database_url)
    svc = open_services(settings, store, transport=httpx.MockTransport(upstream))

    async def calls() -> tuple[list[str], dict[str, Any], dict[str, Any]]:
        async with Client(mcp_server(svc)) as client:
            listed = [t.name for t in (await client.list_tools()).tools]
            first = await client.call_tool("toy_get_note", {"note_id": "n1"})
            second = await client.call_tool("toy_get_note", {"note_id": "n1"})
            return listed, _structured(first), _structured(second)

    listed, first, second = asyncio.run(calls())
    requests_before_sweep = len(seen)
    report = sweep(svc, 10, now=time.time() + 2 * 3600.0)
    svc.close()
    store.close()
    runner = CliRunner()
    env = {"SYNCD_CONFIG": str(config)}
    budget = runner.invoke(cli, ["cache", "budget", "--json"], env=env)
    search = runner.invoke(cli, ["cache", "search", "alpine", "--json"], env=env)
    return {
        "section": SECTION.of(settings).model_dump(),
        "pools": list(POOLS.names),
        "tools": listed,
        "first": first,
        "second": second,
        "requests": seen,
        "requests_before_sweep": requests_before_sweep,
        "sweep": {"checked": report.checked, "unchanged": report.unchanged},
        "budget": json.loads(budget.stdout) if budget.exit_code == 0 else budget.output,
        "search": json.loads(search.stdout) if search.exit_code == 0 else search.output,
    }


def without_datacite(folder: Path, crossref: str, zenodo: str, doi: str) -> dict[str, Any]:
    """The scenario of syncd without the DataCite slice (see the module docstring)."""
    from click.testing import CliRunner
    from mcp import Client

    from syncd.cli import cli
    from syncd.config import Settings
    from syncd.passes.refresh import sweep
    from syncd.registry import KINDS, POOLS, open_services
    from syncd.store.repo import Store
    from tests.helpers import mcp_server

    url = f"sqlite:///{folder / 'store.db'}"
    values = {
        "database_url": url,
        "crossref": {"base_url": crossref, "mailto": "ci@example.org"},
        "zenodo": {"base_url": zenodo},
        "doi": {"base_url": doi},
        "deadline_s": 10.0,
    }
    settings = Settings(**values)
    store = Store.open(url)
    svc = open_services(settings, store)

    async def calls() -> tuple[list[str], dict[str, Any], dict[str, Any]]:
        async with Client(mcp_server(svc)) as client:
            listed = [t.name for t in (await client.list_tools()).tools]
            work = await client.call_tool("crossref_get_work", {"doi": "10.1101/598821"})
            record = await client.call_tool("zenodo_get_record", {"id": "10794563"})
            return listed, _structured(work), _structured(record)

    listed, work, record = asyncio.run(calls())
    report = sweep(svc, 10, now=time.time() + 30 * 86_400.0)
    svc.close()
    store.close()
    bib = folder / "refs.txt"
    bib.write_text("10.1101/598821\n", encoding="utf-8")
    env = {
        "SYNCD_DATABASE_URL": url,
        "SYNCD_CROSSREF__BASE_URL": crossref,
        "SYNCD_ZENODO__BASE_URL": zenodo,
        "SYNCD_DOI__BASE_URL": doi,
    }
    check = CliRunner().invoke(cli, ["check", str(bib), "--output", "json"], env=env)
    return {
        "kinds": sorted(KINDS),
        "pools": list(POOLS.names),
        "sections": sorted(Settings.model_fields),
        "tools": listed,
        "work": work,
        "record": record,
        "sweep": {"checked": report.checked, "unchanged": report.unchanged},
        "check_exit": check.exit_code,
        "check": json.loads(check.stdout) if check.stdout.startswith("{") else check.output,
    }


if __name__ == "__main__":
    where = Path(sys.argv[2])
    out = toy(where) if MODE == "toy" else without_datacite(where, *sys.argv[3:6])
    print(json.dumps(out, default=str))
