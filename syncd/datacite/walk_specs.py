"""The DataCite query watch (``datacite_query``): its spec, how it is added and described.

A spec is ``{"q": "<DataCite query>", "repository": "<client id>" | None, "rows": <page size>}``:
the works a DataCite ``/dois`` search answers (``q`` in DataCite's query-string syntax, ``*`` for
every work of ``repository``), walked in ``updated:[A TO B]`` windows by cursor
(:func:`syncd.datacite.walk.sync_datacite`). :data:`WATCH_TYPES` is what :mod:`syncd.registry`
hands to :mod:`syncd.passes.watches` and ``syncd watch add``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from syncd.errors import InvalidInput
from syncd.walks.walker import WatchType

__all__ = ["DATACITE_QUERY", "PAGE_SIZE", "WATCH_TYPES", "datacite_spec", "describe_datacite"]

DATACITE_QUERY = "datacite_query"
"""The watch kind of the works a DataCite search answers."""
PAGE_SIZE = 100
"""Whole records per page of a walk (DataCite clamps ``page[size]`` at 1,000)."""
_REPOSITORY = re.compile(r"^[A-Za-z0-9-]+\.[A-Za-z0-9-]+$")


def datacite_spec(q: str | None, *, repository: str | None = None, rows: int = PAGE_SIZE) -> dict[str, Any]:
    """Spec of a DataCite query watch (``q`` trimmed, ``repository`` lower-cased).

    Raises:
        InvalidInput: ``invalid_parameter``: no query, a query over 2,000 characters, a repository id
            not of the form ``provider.repository``, ``rows`` out of 1..1000, or ``q`` of ``*`` with
            no repository (a watch of all of DataCite is refused); ``q`` holding ``updated:`` (the
            windows are set by the walk itself).
    """
    query = (q or "").strip()
    if not query:
        raise InvalidInput("a DataCite watch needs a query (* with a repository)", reason="invalid_parameter")
    if len(query) > 2000:
        raise InvalidInput("a DataCite query is at most 2,000 characters", reason="invalid_parameter")
    if "updated:" in query:
        raise InvalidInput("updated: windows are set by the sync itself", reason="invalid_parameter")
    if repository is not None and not _REPOSITORY.match(repository):
        raise InvalidInput(
            "a DataCite repository id is provider.repository, e.g. cern.zenodo", reason="invalid_parameter"
        )
    if query == "*" and repository is None:
        raise InvalidInput("a watch of all of DataCite is refused: narrow it", reason="invalid_parameter")
    if not 1 <= rows <= 1000:
        raise InvalidInput("rows must be between 1 and 1000", reason="invalid_parameter")
    return {"q": query, "repository": repository.lower() if repository else None, "rows": rows}


def describe_datacite(spec: Mapping[str, Any]) -> str:
    """One line of a DataCite query watch: ``q=...`` and ``repository=...`` when set."""
    bits = [f"q={spec.get('q')}"]
    if spec.get("repository"):
        bits.append(f"repository={spec['repository']}")
    return " ".join(bits)


def _from_cli(values: Sequence[str], options: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``syncd watch add datacite-query QUERY [REPOSITORY]`` (raises InvalidInput as datacite_spec)."""
    if not 1 <= len(values) <= 2:
        raise InvalidInput("give one query, optionally a repository id", reason="invalid_parameter")
    return [datacite_spec(values[0], repository=values[1] if len(values) == 2 else None)]


def _from_config(config: Any) -> Iterator[dict[str, Any]]:
    """The config file's ``watch.datacite_queries``, one spec at a time."""
    for q in config.datacite_queries:
        yield datacite_spec(q)


WATCH_TYPES: dict[str, WatchType] = {
    DATACITE_QUERY: WatchType(DATACITE_QUERY, "datacite-query", _from_cli, _from_config, describe_datacite)
}
"""The DataCite slice's watch kinds (:data:`syncd.registry.WATCH_TYPES`)."""
