"""What a stored body must carry, and when a new body looks like a hollow or shrunk answer (pure).

DESIGN.md's "nothing lost": a partial answer never overwrites a stored body. Two checks, both on
the upstream JSON text exactly as it is about to be stored, by the rules of its kind
(:class:`~syncd.store.rules.StoreRules`, supplied by the kind; the store knows no kind):

* :func:`missing` names the key paths a body lacks that every real answer of its kind carries
  (``StoreRules.required``, derived from the recorded corpus ``tests/corpus/``). A body missing one
  is refused as ``malformed_response`` and never stored.
* :func:`shrink` names the suspicion when a valid new body of a record kind (``StoreRules.shrinks``)
  drops most of what the stored one had: less than :data:`SHRINK_RATIO` of its bytes, or its
  ``kept_list`` gone. Such a body is stored only when a later revalidation confirms it.

A body whose ``checked`` object is None (not JSON, another shape such as a list item) is not
checked here: other layers decide about those.
"""

from __future__ import annotations

import json
from typing import Any

from syncd.store.rules import KeyPath, StoreRules

__all__ = ["SHRINK_RATIO", "SUSPICIOUS_SHRINK", "missing", "shrink"]

SHRINK_RATIO = 0.5
"""A new body under this share of the stored body's bytes is suspicious."""

SUSPICIOUS_SHRINK = "suspicious_shrink"
"""Reason code of a body held back until a second answer confirms it (``cache.upstream_error``)."""


def _object(rules: StoreRules, body: str | None) -> dict[str, Any] | None:
    """The checked object of ``body`` by ``rules`` (None: not JSON, or not a shape the checks apply to)."""
    if not body:
        return None
    try:
        parsed: Any = json.loads(body)
    except ValueError:
        return None
    return rules.checked(parsed)


def _at(obj: dict[str, Any], path: KeyPath) -> Any:
    value: Any = obj
    for part in path:
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def missing(rules: StoreRules, status: str, body: str | None) -> list[str]:
    """The dotted key paths an ``ok`` body lacks by ``rules.required`` (``[]``: complete or not checked).

    Example: with ``required=(("DOI",), ("type",))`` and a work ``message`` ``{"DOI": "10.1/x"}``,
    the answer is ``["type"]``.
    """
    if status != "ok" or not rules.required:
        return []
    obj = _object(rules, body)
    if obj is None:
        return []
    return [".".join(path) for path in rules.required if _at(obj, path) is None]


def shrink(rules: StoreRules, old_body: str | None, new_body: str | None) -> str | None:
    """:data:`SUSPICIOUS_SHRINK` when ``new_body`` drops most of ``old_body`` (both ``ok``, a record kind).

    Suspicious: fewer than :data:`SHRINK_RATIO` x the old body's bytes (UTF-8), or a non-empty
    ``rules.kept_list`` gone or empty. None otherwise, for kinds that do not shrink-check, and when
    either body is not a checked object.
    """
    if not rules.shrinks or old_body is None or new_body is None:
        return None
    old, new = _object(rules, old_body), _object(rules, new_body)
    if old is None or new is None:
        return None
    if len(new_body.encode("utf-8")) < SHRINK_RATIO * len(old_body.encode("utf-8")):
        return SUSPICIOUS_SHRINK
    if rules.kept_list is not None and _at(old, rules.kept_list) and not _at(new, rules.kept_list):
        return SUSPICIOUS_SHRINK
    return None
