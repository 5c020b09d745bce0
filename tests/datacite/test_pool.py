"""The ``datacite`` budget pool, declared by the DataCite slice (syncd/datacite/pools.py).

DataCite counts requests per IP per 5 minutes: 1,000 identified by a mailto, 500 anonymous (its "API
Rate Limits" page). The pool's bucket never passes the tier in any window: ``burst + per_s x 300``.
"""

from __future__ import annotations

import pytest

from syncd.config import Settings
from syncd.datacite.pools import DATACITE, DATACITE_WINDOW_S
from syncd.registry import POOLS


@pytest.mark.parametrize(
    ("mailto", "burst", "per_window"),
    [({"crossref": {"mailto": "lab@example.org"}}, 20, 1000), ({}, 10, 500)],
    ids=["identified", "anonymous"],
)
def test_the_bucket_never_passes_datacite_s_tier(
    monkeypatch: pytest.MonkeyPatch, mailto: dict[str, dict[str, str]], burst: int, per_window: int
) -> None:
    """Identified (crossref.mailto stands in for datacite.mailto): burst 20, 3.27/s, 1,000 per window;
    anonymous: burst 10, 1.63/s, 500; 4 in flight; served by DataCite (what messages name).
    """
    monkeypatch.delenv("SYNCD_CROSSREF__MAILTO", raising=False)
    monkeypatch.delenv("SYNCD_DATACITE__MAILTO", raising=False)
    limits = POOLS.limits(Settings(**mailto), "datacite")  # type: ignore[arg-type]
    assert (limits.burst, limits.in_flight) == (burst, 4)
    assert limits.burst + limits.per_s * DATACITE_WINDOW_S == pytest.approx(per_window)
    assert POOLS["datacite"] is DATACITE and POOLS.service("datacite") == "DataCite"


def test_budget_datacite_settings_override_the_published_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """``SYNCD_BUDGET__DATACITE__PER_S=1`` lowers the rate; the unset burst keeps the published 10."""
    monkeypatch.delenv("SYNCD_CROSSREF__MAILTO", raising=False)
    monkeypatch.delenv("SYNCD_DATACITE__MAILTO", raising=False)
    monkeypatch.setenv("SYNCD_BUDGET__DATACITE__PER_S", "1")
    limits = POOLS.limits(Settings(), "datacite")
    assert (limits.per_s, limits.burst, limits.in_flight) == (1, 10, 4)
