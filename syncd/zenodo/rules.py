"""The store rules of the Zenodo slice's kinds (:class:`~syncd.store.rules.StoreRules`; pure).

Key paths every real ``ok`` answer carries, derived from the recorded corpus
(``tests/corpus/zenodo/``): all 23 records carry ``id`` and ``metadata.title`` (and
``metadata.creators``, whose loss alone makes a new body suspicious); every search, versions and
vocabulary page carries ``hits.hits`` and ``hits.total``; a community ``id`` and ``slug``; a file
container listing ``entries``; a funder or award of the vocabulary ``id``. A body without them is
refused as hollow and the stored copy kept.
"""

from __future__ import annotations

from typing import Any

from syncd.store.rules import StoreRules
from syncd.zenodo.views import content_hash_projection
from syncd.zenodo.views_changes import new_version, summarize_record

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
    return content_hash_projection(body) if isinstance(body, dict) else None


RECORD_RULES = StoreRules(
    checked=record_object,
    required=(("id",), ("metadata", "title")),
    shrinks=True,
    kept_list=("metadata", "creators"),
    summarize=summarize_record,
    arrival=new_version,
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
