"""Option values from a closed list, refused with the nearest name (``difflib``) and exit code 2.

``--kind crosref`` or ``changes --type retracted`` is a typo, not an empty answer: :class:`NearChoice`
(a :class:`click.Choice`) and :func:`comma_choices` (a comma-separated list) refuse it through click's
own :class:`click.BadParameter`, whose message names the closest allowed value. The root group prints
every such usage error as ``error: invalid_parameter: ...`` (:mod:`syncd.cli`).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import click

__all__ = ["NearChoice", "comma_choices", "nearest", "refusal"]


def nearest(value: str, names: Iterable[str]) -> str | None:
    """The allowed name closest to ``value``, else None.

    The candidates are the names ``difflib`` finds close (ratio 0.6 or more) or that share a prefix of
    at least 3 characters with ``value``; the longest shared prefix wins, then the ratio (so
    ``retracted`` is ``retraction``, not ``restricted``).
    """
    folded = value.strip().lower()
    if not folded:
        return None
    scored = []
    for name in names:
        prefix = next((i for i, (a, b) in enumerate(zip(folded, name.lower(), strict=False)) if a != b), None)
        prefix = min(len(folded), len(name)) if prefix is None else prefix
        ratio = difflib.SequenceMatcher(None, folded, name.lower()).ratio()
        if ratio >= 0.6 or prefix >= 3:
            scored.append((prefix, ratio, name))
    return max(scored)[2] if scored else None


def refusal(what: str, value: str, names: Sequence[str]) -> str:
    """``unknown change type 'retracted'; did you mean 'retraction'? (one of: ...)``."""
    near = nearest(value, names)
    hint = f"; did you mean {near!r}?" if near else ""
    return f"unknown {what} {value!r}{hint} (one of: {', '.join(names)})"


class NearChoice(click.Choice[str]):
    """:class:`click.Choice` whose refusal names the nearest allowed value (exit 2)."""

    def __init__(self, choices: Sequence[str], what: str = "value", case_sensitive: bool = True) -> None:
        super().__init__(list(choices), case_sensitive=case_sensitive)
        self.what = what

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        """The choice ``value`` names; BadParameter naming the nearest one otherwise."""
        try:
            return str(super().convert(value, param, ctx))
        except click.BadParameter:
            self.fail(refusal(self.what, str(value), [str(c) for c in self.choices]), param, ctx)


def comma_choices(
    names: Sequence[str], what: str
) -> Callable[[click.Context, click.Parameter, Any], list[str]]:
    """A click callback: a comma-separated list of ``names`` (lower-cased), each checked; [] when unset.

    Raises:
        click.BadParameter: a value not in ``names`` (the message names the nearest).
    """

    def check(_ctx: click.Context, _param: click.Parameter, value: Any) -> list[str]:
        wanted = [v.strip().lower() for v in str(value or "").split(",") if v.strip()]
        for v in wanted:
            if v not in names:
                raise click.BadParameter(refusal(what, v, names))
        return wanted

    return check
