"""The store rules of the Zenodo slice's kinds (:class:`~syncd.store.rules.StoreRules`; pure).

Key paths every real ``ok`` answer carries, derived from the recorded corpus
(``tests/corpus/zenodo/``): all 23 records carry ``id`` and ``metadata.title`` (and
``metadata.creators``, whose loss alone makes a new body suspicious); every search, versions and
vocabulary page carries ``hits.hits`` and ``hits.total``; a community ``id`` and ``slug``; a file
container listing ``entries``; a funder or award of the vocabulary ``id``. A body without them is
refused as hollow and the stored copy kept.

The content-hash projection and the change summary are the views' (:mod:`syncd.zenodo.views`,
``syncd.zenodo.views_changes``), loaded on the first hash or summary (:mod:`syncd.lazy`): the
kinds these rules belong to are declared without the views, so a command that only reads the store
loads none of them.
"""

from __future__ import annotations

from typing import Any

from syncd.lazy import load
from syncd.store.rules import Arrival, ChangeSummary, Projection, Side, StoreRules, Summarize

__all__ = ["CONTAINER_RULES", "ENTITY_RULES", "PAGE_RULES", "RECORD_RULES", "TERM_RULES", "record_object"]

_RECORD_KEYS = frozenset({"id", "recid", "metadata", "links", "files", "doi", "conceptrecid"})
"""Top-level keys of a Zenodo record: a body with none of them (and not empty) is not checked."""


def record_object(body: Any) -> dict[str, Any] | None:
    """The checked object of a record body: the body itself, unless it is not shaped like a record."""
    if not isinstance(body, dict):
        return None
    if body and not _RECORD_KEYS.intersection(body):
        return None  # not shaped like a Zenodo record at all (other layers decide)
    return body


def _projection(body: Any) -> Any:
    if not isinstance(body, dict):
        return None
    project: Projection = load(__name__, "syncd.zenodo.views").content_hash_projection
    return project(body)


def _summarize(old: Side, new: Side) -> ChangeSummary | None:
    summarize: Summarize = load(__name__, "syncd.zenodo.views_changes").summarize_record
    return summarize(old, new)


def _new_version(body: str | None, older: list[str], held_since: float | None = None) -> ChangeSummary | None:
    arrival: Arrival = load(__name__, "syncd.zenodo.views_changes").new_version
    return arrival(body, older, held_since)


RECORD_RULES = StoreRules(
    checked=record_object,
    required=(("id",), ("metadata", "title")),
    shrinks=True,
    kept_list=("metadata", "creators"),
    summarize=_summarize,
    arrival=_new_version,
    projection=_projection,
)
"""``zenodo_record``: refused without ``id``/``metadata.title``; a new version is an arrival."""

PAGE_RULES = StoreRules(required=(("hits", "hits"), ("hits", "total")))
"""``zenodo_search``, ``zenodo_versions``, ``zenodo_vocab``: a page of hits."""

ENTITY_RULES = StoreRules(required=(("id",), ("slug",)))
"""``zenodo_entity``: a community."""

CONTAINER_RULES = StoreRules(required=(("entries",),))
"""``zenodo_container``: a file container listing."""

TERM_RULES = StoreRules(required=(("id",),))
"""``zenodo_funder``, ``zenodo_award``: one vocabulary term."""
