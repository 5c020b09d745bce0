"""The store rules of the Crossref slice's kinds (:class:`~syncd.store.rules.StoreRules`; pure).

Stored Crossref bodies are the upstream envelope ``{"status", "message-type", "message"}`` exactly as
received. The key paths every real ``ok`` answer carries were derived from the recorded corpus
(``tests/corpus/crossref/``): all 92 ``/works/{doi}`` messages carry ``DOI`` and ``type`` (``title``
is not required: a ``journal-issue`` or ``component`` work may have none, e.g.
10.1002/humu.2018.39.issue-6 in the recorded member-98 works page); every journal carries ``ISSN``
and ``title``, every funder ``id`` and ``name``, every member ``id`` and ``primary-name``, every
prefix its owner's ``name`` (Crossref answers some prefixes with a thin record, ``member`` and ``name``
or ``name`` alone, without the ``prefix`` URI: ``crossref_get_prefix`` relays the prefix asked), every
list page ``items`` and ``total-results``. A body without
them (``{}``, ``{"status": "ok"}``, an envelope with an empty ``message``) is refused as hollow.

The content-hash projection and the change summary are the views' (:mod:`syncd.crossref.views`,
``syncd.crossref.views_changes``), loaded on the first hash or summary (:mod:`syncd.lazy`): the
kinds these rules belong to are declared without the views, so a command that only reads the store
loads none of them.
"""

from __future__ import annotations

from typing import Any

from syncd.crossref.names import CROSSREF_FUNDER, CROSSREF_JOURNAL, CROSSREF_MEMBER, CROSSREF_PREFIX
from syncd.lazy import load
from syncd.store.rules import ChangeSummary, Projection, Side, StoreRules, Summarize

__all__ = ["ENTITY_RULES", "LIST_RULES", "WORK_RULES", "message_of", "work_message"]


def message_of(body: Any) -> dict[str, Any] | None:
    """The ``message`` of an envelope (``{}`` for an envelope without one; None for a non-object body)."""
    if not isinstance(body, dict):
        return None
    message = body.get("message")
    return message if isinstance(message, dict) else {}


def work_message(body: Any) -> dict[str, Any] | None:
    """The ``message`` of a ``message-type: work`` envelope (None for another shape, e.g. a list item)."""
    if not isinstance(body, dict) or body.get("message-type") != "work":
        return None
    message = body.get("message")
    return message if isinstance(message, dict) else None


def _document(body: Any) -> Any:
    message = body.get("message") if isinstance(body, dict) else None
    return message if isinstance(message, dict) else body


def _projection(body: Any) -> Any:
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(message, dict):
        return None
    project: Projection = load(__name__, "syncd.crossref.views").content_hash_projection
    return project(message)


def _summarize(old: Side, new: Side) -> ChangeSummary | None:
    summarize: Summarize = load(__name__, "syncd.crossref.views_changes").summarize_work
    return summarize(old, new)


WORK_RULES = StoreRules(
    checked=work_message,
    required=(("DOI",), ("type",)),
    shrinks=True,
    kept_list=("reference",),
    summarize=_summarize,
    projection=_projection,
    document=_document,
    bulk=True,
)
"""``crossref_work``: a work refused without ``DOI``/``type``, held back when it loses its references."""

LIST_RULES = StoreRules(checked=message_of, required=(("items",), ("total-results",)), document=_document)
"""``crossref_search``: a list page carries ``items`` and ``total-results``."""

ENTITY_RULES: dict[str, StoreRules] = {
    name: StoreRules(checked=message_of, required=required, document=_document)
    for name, required in (
        (CROSSREF_JOURNAL, (("ISSN",), ("title",))),
        (CROSSREF_FUNDER, (("id",), ("name",))),
        (CROSSREF_MEMBER, (("id",), ("primary-name",))),
        (CROSSREF_PREFIX, (("name",),)),
    )
}
"""The entity kinds by name: journals, funders, members, prefixes."""
