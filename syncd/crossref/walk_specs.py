"""The Crossref query watch (``crossref_query``): its spec, how it is added and described.

A spec is ``{"route": "/works", "filter": "orcid:...,type:...", "query": "...", "rows": 1000}``:
every work a Crossref list route answers (``route`` may be ``/journals/{issn}/works``,
``/funders/{id}/works``, ``/members/{id}/works``, ``/prefixes/{prefix}/works``), walked by
:func:`syncd.crossref.walk.sync_crossref_query`. :data:`WATCH_TYPES` is what
:mod:`syncd.registry` hands to :mod:`syncd.passes.watches` and ``syncd watch add crossref``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from syncd.errors import InvalidInput
from syncd.identifiers import check_doi, check_issn, check_member, check_orcid, check_ror
from syncd.walks.walker import WatchType

__all__ = ["CROSSREF_QUERY", "WATCH_TYPES", "crossref_spec", "describe_crossref"]

CROSSREF_QUERY = "crossref_query"
"""The watch kind of a Crossref works query."""

_ROUTE = re.compile(r"^/(?:works|(?:journals|funders|members|prefixes|types)/[^?#]+/works)$")
_FILTER_SHORTCUTS = {
    "orcid": "orcid",
    "funder": "funder",
    "issn": "issn",
    "member": "member",
    "prefix": "prefix",
}

_CHECKS = {
    "orcid": check_orcid,
    "issn": check_issn,
    "member": check_member,
    "ror-id": check_ror,
    "doi": check_doi,
}
"""Crossref filter name -> the identifier check of its value (:mod:`syncd.identifiers`)."""


def _funder(value: str) -> str:
    """A Crossref funder id: its registry number, or the Funder DOI (``10.13039/...``) checked as a DOI."""
    v = value.strip()
    if v.isdigit():
        return v
    return check_doi(v)


def _checked_filter(name: str, value: str) -> str:
    """``name:value`` with an identifier-valued filter's value checked and made canonical."""
    if name == "funder":
        return f"{name}:{_funder(value)}"
    check = _CHECKS.get(name)
    return f"{name}:{check(value) if check is not None else value.strip()}"


def crossref_spec(
    *,
    route: str | None = None,
    filters: Iterable[str] = (),
    query: str | None = None,
    rows: int | None = 1000,
    **shortcuts: str | None,
) -> dict[str, Any]:
    """Spec of a Crossref query watch.

    ``filters`` are ``name:value`` strings; ``shortcuts`` (``orcid``, ``funder``, ``issn``, ``member``,
    ``prefix``) become filters too. ``rows`` is the page size (Crossref allows up to 1,000; None
    sends none and gets Crossref's default of 20).

    Identifier values (``orcid``, ``issn``, ``member``, ``funder``, ``ror-id``, ``doi``, as a shortcut or
    a filter) are checked and made canonical (:mod:`syncd.identifiers`: an ORCID iD's check character,
    an ISSN's check digit, a ROR id's checksum).

    Raises:
        InvalidInput: an unknown route, a filter without ``:``, ``rows`` out of 1..1000, or no
            filter, query or route narrowing the walk (a watch of all of Crossref is refused);
            ``invalid_identifier`` for an identifier that fails its check.
    """
    route = route or "/works"
    if not _ROUTE.match(route):
        raise InvalidInput(f"not a Crossref works route: {route}", reason="invalid_parameter")
    parts: list[str] = []
    for name, value in shortcuts.items():
        if value:
            parts.append(_checked_filter(_FILTER_SHORTCUTS[name], value))
    for f in filters:
        if ":" not in f:
            raise InvalidInput(f"a filter is name:value, got {f!r}", reason="invalid_parameter")
        name, value = f.strip().split(":", 1)
        parts.append(_checked_filter(name.strip(), value))
    if any(p.startswith(("from-index-date:", "until-index-date:")) for p in parts):
        raise InvalidInput("index-date filters are set by the sync itself", reason="invalid_parameter")
    if rows is not None and not 1 <= rows <= 1000:
        raise InvalidInput("rows must be between 1 and 1000", reason="invalid_parameter")
    if route == "/works" and not parts and not query:
        raise InvalidInput("a Crossref watch needs a filter, a query or a route", reason="invalid_parameter")
    return {"route": route, "filter": ",".join(parts) or None, "query": query or None, "rows": rows}


def describe_crossref(spec: Mapping[str, Any]) -> str:
    """One line of a Crossref query watch: its route, then ``filter=...`` and ``query=...`` when set."""
    bits = [spec.get("route", "/works")]
    if spec.get("filter"):
        bits.append(f"filter={spec['filter']}")
    if spec.get("query"):
        bits.append(f"query={spec['query']}")
    return " ".join(bits)


def _from_cli(values: Sequence[str], options: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``syncd watch add crossref --orcid/--funder/--issn/--member/--filter/--query/--route/--rows``.

    Raises:
        InvalidInput: arguments given (a Crossref watch takes options only), or as :func:`crossref_spec`.
    """
    if values:
        raise InvalidInput("crossref watches take options, not arguments", reason="invalid_parameter")
    spec = crossref_spec(
        route=options["route"],
        filters=options["filters"],
        query=options["query"],
        rows=options["rows"],
        orcid=options["orcid"],
        funder=options["funder"],
        issn=options["issn"],
        member=options["member"],
    )
    return [spec]


def _from_config(config: Any) -> Iterator[dict[str, Any]]:
    """The specs of the config file's ``[[watch.crossref]]`` tables, one by one (raises as crossref_spec)."""
    for item in config.crossref:
        yield crossref_spec(
            route=item.route, filters=item.filter, query=item.query, rows=item.rows,
            orcid=item.orcid, funder=item.funder, issn=item.issn, member=item.member,
        )  # fmt: skip


WATCH_TYPES: dict[str, WatchType] = {
    CROSSREF_QUERY: WatchType(CROSSREF_QUERY, "crossref", _from_cli, _from_config, describe_crossref)
}
"""The Crossref slice's watch kinds (:data:`syncd.registry.WATCH_TYPES`)."""
