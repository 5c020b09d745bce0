"""``answer_max_chars`` has a declared minimum: 0 (no budget) or at least ANSWER_MIN_CHARS (4,000).

A smaller budget would cut every list of every answer to nothing while a record's uncut fields still
pass it; it is refused at load as ``invalid_config`` naming the minimum, the way every bad setting is.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from syncd.config import ANSWER_MIN_CHARS, load_settings
from syncd.errors import InvalidInput


@pytest.mark.parametrize("value", [1, 100, ANSWER_MIN_CHARS - 1])
def test_budget_below_the_minimum_is_invalid_config(tmp_path: Path, value: int) -> None:
    """answer_max_chars 1..3,999 is refused with the minimum and the 0 escape named."""
    cfg = tmp_path / "syncd.toml"
    cfg.write_text(f"answer_max_chars = {value}\n")
    with pytest.raises(InvalidInput) as err:
        load_settings(cfg)
    assert err.value.reason == "invalid_config"
    assert f"answer_max_chars {value:,} is below the minimum 4,000 (use 0 for no budget)" in str(err.value)


@pytest.mark.parametrize("value", [0, ANSWER_MIN_CHARS, 60_000])
def test_no_budget_and_budgets_from_the_minimum_load(tmp_path: Path, value: int) -> None:
    """0 (no budget), the minimum itself and the default load unchanged."""
    cfg = tmp_path / "syncd.toml"
    cfg.write_text(f"answer_max_chars = {value}\n")
    assert load_settings(cfg).answer_max_chars == value
