"""The Zenodo watches (``zenodo_community``, ``zenodo_query``): their spec, how they are added and described.

A community watch's spec is ``{"community": "<slug>", "q": "..."}``: the records of a community; a
query watch's is ``{"q": "..."}``: the records a Zenodo search answers; both walked in ``updated``
windows under Zenodo's 10,000-result limit (:func:`syncd.zenodo.walk.sync_zenodo`).
:data:`WATCH_TYPES` is what :mod:`syncd.registry` hands to :mod:`syncd.passes.watches` and
``syncd watch add``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from syncd.errors import InvalidInput
from syncd.walks.walker import WatchType

__all__ = ["WATCH_TYPES", "ZENODO_COMMUNITY", "ZENODO_QUERY", "describe_zenodo", "zenodo_spec"]

ZENODO_COMMUNITY = "zenodo_community"
"""The watch kind of a Zenodo community's records."""
ZENODO_QUERY = "zenodo_query"
"""The watch kind of the records a Zenodo search answers."""


def zenodo_spec(
    *, community: str | None = None, q: str | None = None, all_versions: bool = False
) -> dict[str, Any]:
    """Spec of a Zenodo community (``community``) or search (``q``) watch."""
    if not community and not q:
        raise InvalidInput("a Zenodo watch needs a community or a query", reason="invalid_parameter")
    if community and not re.fullmatch(r"[A-Za-z0-9_.-]+", community):
        raise InvalidInput(f"not a Zenodo community id: {community!r}", reason="invalid_parameter")
    return {"community": community or None, "q": q or None, "all_versions": True if all_versions else None}


def describe_zenodo(spec: Mapping[str, Any]) -> str:
    """One line of a Zenodo watch: ``community=...`` and ``q=...`` when set."""
    bits = []
    if spec.get("community"):
        bits.append(f"community={spec['community']}")
    if spec.get("q"):
        bits.append(f"q={spec['q']}")
    return " ".join(bits)


def _community_from_cli(values: Sequence[str], options: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``syncd watch add zenodo-community ID... [--query Q]``: one watch a community (raises InvalidInput)."""
    if not values:
        raise InvalidInput("give community ids", reason="invalid_parameter")
    return [zenodo_spec(community=v, q=options["query"]) for v in values]


def _query_from_cli(values: Sequence[str], options: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``syncd watch add zenodo-query QUERY``: one search watch (raises InvalidInput)."""
    if len(values) != 1:
        raise InvalidInput("give one query", reason="invalid_parameter")
    return [zenodo_spec(q=values[0])]


def _communities_from_config(config: Any) -> Iterator[dict[str, Any]]:
    """The config file's ``watch.zenodo_communities``, one spec at a time."""
    for community in config.zenodo_communities:
        yield zenodo_spec(community=community)


def _queries_from_config(config: Any) -> Iterator[dict[str, Any]]:
    """The config file's ``watch.zenodo_queries``, one spec at a time."""
    for q in config.zenodo_queries:
        yield zenodo_spec(q=q)


WATCH_TYPES: dict[str, WatchType] = {
    ZENODO_COMMUNITY: WatchType(
        ZENODO_COMMUNITY, "zenodo-community", _community_from_cli, _communities_from_config, describe_zenodo
    ),
    ZENODO_QUERY: WatchType(
        ZENODO_QUERY, "zenodo-query", _query_from_cli, _queries_from_config, describe_zenodo
    ),
}
"""The Zenodo slice's watch kinds (:data:`syncd.registry.WATCH_TYPES`)."""
