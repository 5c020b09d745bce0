"""What the store needs to know of one kind, handed in by the caller: the store itself knows no kind.

A kind (:class:`syncd.kinds.Kind`) carries one :class:`StoreRules`; whoever builds the content to
store (a lookup, an import, a walk) puts the kind's rules on the :class:`~syncd.store.repo.EntryContent`
and the store applies them inside its write transaction:

* ``checked`` and ``required``: the hollow-body guard (:mod:`syncd.store.guard`): which object of a
  parsed body is checked, and the key paths every real ``ok`` answer of the kind carries (derived
  from the recorded corpus, ``tests/corpus/``);
* ``shrinks`` and ``kept_list``: a record kind whose new body is held back when it drops most of the
  stored one's bytes, or the list (Crossref references, Zenodo creators) whose loss alone is suspicious;
* ``summarize`` / ``arrival``: the change summary of a replaced body and of a new entry joining a
  series already held (the change feed, :mod:`syncd.store.changelog`);
* ``projection``: the content-hash projection of a parsed body (``cache verify --hashes``);
* ``document``: the stored upstream object a reader wants (Crossref: the ``message``);
* ``bulk``: whether the data-file import writes the kind with the bulk writer.

Every field has a neutral default (:data:`PLAIN`): no check, no summary. (A kind's full-text band is
a fact of the schema, read back by :func:`syncd.store.search.kind_codes`.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["PLAIN", "ChangeSummary", "KeyPath", "Side", "StoreRules", "rules_of"]

KeyPath = tuple[str, ...]
"""A path of keys into a parsed JSON object, e.g. ``("metadata", "title")``."""


@dataclass(frozen=True)
class Side:
    """One side of a replacement: the entry's ``status`` and ``body`` (JSON text as stored, or None)."""

    status: str
    body: str | None


@dataclass(frozen=True)
class ChangeSummary:
    """What changed in one entry: ``types`` (see :mod:`syncd.normalize.changes`) and one item per type.

    ``doi`` (lower-cased), ``title`` and ``series`` (Zenodo concept record id) describe the entry
    as it is now, for the feed's lines and the watch-list match.
    """

    types: tuple[str, ...]
    items: tuple[dict[str, Any], ...]
    doi: str | None = None
    title: str | None = None
    series: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The stored summary JSON: ``types``, ``items`` and the entry's ``doi``/``title``/``series``."""
        out: dict[str, Any] = {"types": list(self.types), "items": list(self.items)}
        for name in ("doi", "title", "series"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out


Checked = Callable[[Any], "dict[str, Any] | None"]
"""Parsed body -> the object the guard checks, or None when the body is not one the checks apply to."""
Summarize = Callable[[Side, Side], "ChangeSummary | None"]
"""(old, new) -> what changed, or None when nothing is to be recorded."""
Arrival = Callable[["str | None", "list[str]", "float | None"], "ChangeSummary | None"]
"""(new body, keys of the series' other stored entries, when the store first held the series) -> summary."""
Projection = Callable[[Any], Any]
"""Parsed ``ok`` body -> the value whose canonical JSON is hashed (None: the kind is not re-hashed)."""


def _whole(body: Any) -> dict[str, Any] | None:
    return body if isinstance(body, dict) else None


@dataclass(frozen=True)
class StoreRules:
    """The store-side rules of one kind (see the module docstring); every field optional."""

    checked: Checked = _whole
    required: tuple[KeyPath, ...] = ()
    kept_list: KeyPath | None = None
    shrinks: bool = False
    summarize: Summarize | None = None
    arrival: Arrival | None = None
    projection: Projection | None = None
    document: Callable[[Any], Any] = _whole
    bulk: bool = False


PLAIN = StoreRules()
"""Rules of a kind that supplies none: no guard, no change summary."""


def rules_of(table: Mapping[str, StoreRules], kind: str) -> StoreRules:
    """The rules of ``kind`` in ``table`` (:data:`PLAIN` for a kind not listed)."""
    return table.get(kind, PLAIN)
