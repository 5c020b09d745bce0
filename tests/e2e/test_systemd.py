"""The systemd unit: `systemd-analyze verify` is silent and `security --offline` scores it "OK"."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "systemd" / "syncd.service"
ANALYZE = shutil.which("systemd-analyze") or "/usr/bin/systemd-analyze"

pytestmark = pytest.mark.skipif(not Path(ANALYZE).exists(), reason="systemd-analyze is not installed")


@pytest.fixture
def rendered(tmp_path: Path) -> Path:
    """The shipped unit with ExecStart pointing at this Python (verify requires an existing binary)."""
    text = UNIT.read_text()
    assert "ExecStart=/opt/syncd/bin/syncd daemon\n" in text
    out = tmp_path / "syncd.service"
    out.write_text(
        text.replace("/opt/syncd/bin/syncd daemon", f"{Path(sys.executable).resolve()} -m syncd daemon")
    )
    return out


def _directives(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith(("#", ";", "[")):
            key, _, value = line.partition("=")
            found.setdefault(key, []).append(value)
    return found


def test_unit_verifies_without_any_warning(rendered: Path) -> None:
    """`systemd-analyze verify --man=no` exits 0 with empty stderr (unknown keys would only warn)."""
    res = subprocess.run(
        [ANALYZE, "verify", "--man=no", str(rendered)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=rendered.parent,
    )
    assert res.returncode == 0, res.stderr
    assert res.stderr.strip() == ""


def test_unit_security_exposure_is_low(rendered: Path) -> None:
    """`systemd-analyze security --offline=yes` rates the unit at most 2.0 ("OK") and passes threshold 20."""
    res = subprocess.run(
        [ANALYZE, "security", "--offline=yes", "--threshold=20", "--no-pager", str(rendered)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=rendered.parent,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    match = re.search(r"Overall exposure level for syncd\.service: (\d+\.\d+) (\w+)", res.stdout)
    assert match, res.stdout[-500:]
    assert float(match.group(1)) <= 2.0 and match.group(2) == "OK"


def test_unit_declares_the_service_contract() -> None:
    """Type=notify with a watchdog, a static syncd user/group, a group-shared StateDirectory, the
    hardening the issue lists, and no inline comments (systemd would read them as part of values).
    """
    text = UNIT.read_text()
    d = _directives(text)
    assert d["Type"] == ["notify"] and d["NotifyAccess"] == ["main"] and d["WatchdogSec"] == ["60"]
    assert d["User"] == ["syncd"] and d["Group"] == ["syncd"] and "DynamicUser" not in d
    assert d["StateDirectory"] == ["syncd"] and d["StateDirectoryMode"] == ["2770"] and d["UMask"] == ["0007"]
    for key, value in {
        "ProtectSystem": "strict",
        "PrivateTmp": "yes",
        "NoNewPrivileges": "yes",
        "RestrictAddressFamilies": "AF_UNIX AF_INET AF_INET6",
        "ProtectHome": "yes",
    }.items():
        assert d[key] == [value], key
    assert "@system-service" in d["SystemCallFilter"]
    assert all(not re.search(r"\s[#;]", v) for values in d.values() for v in values)
    sysusers = (ROOT / "systemd" / "syncd.sysusers.conf").read_text()
    assert re.search(r"^g syncd -$", sysusers, re.M) and re.search(r"^u syncd -:syncd ", sysusers, re.M)
