"""Watch lists: what the daemon keeps mirrored, and how each watch is described.

Kinds and their ``spec`` (stored as canonical JSON in ``watches``):

* ``doi``: ``{"doi": "<lowercased DOI>"}``: one work (Crossref) or record (Zenodo DOI).
* ``crossref_query``: ``{"route": "/works", "filter": "orcid:...,type:...", "query": "...",
  "rows": 1000}``: every work a Crossref list route answers (``route`` may be
  ``/journals/{issn}/works``, ``/funders/{id}/works``, ``/members/{id}/works``,
  ``/prefixes/{prefix}/works``); walked with ``cursor=*``, then incrementally with
  ``from-index-date``.
* ``zenodo_community``: ``{"community": "<slug>", "q": "..."}``: the records of a community;
  walked in ``updated`` windows under Zenodo's 10,000-result limit.
* ``zenodo_query``: ``{"q": "..."}``: the records a Zenodo search answers, walked likewise.

Watches come from ``syncd watch add`` and from the ``[watch]`` table of the config file
(:func:`apply_config`, run by the daemon at start and by ``syncd watch sync``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from syncd.errors import InvalidInput
from syncd.normalize.doi import parse_doi
from syncd.store.repo import Store
from syncd.store.watches import StoredWatch, add_watch

__all__ = [
    "KINDS",
    "add",
    "apply_config",
    "crossref_spec",
    "describe",
    "doi_specs",
    "read_doi_file",
    "zenodo_spec",
]

KINDS = ("doi", "crossref_query", "zenodo_community", "zenodo_query")

_ROUTE = re.compile(r"^/(?:works|(?:journals|funders|members|prefixes|types)/[^?#]+/works)$")
_FILTER_SHORTCUTS = {
    "orcid": "orcid",
    "funder": "funder",
    "issn": "issn",
    "member": "member",
    "prefix": "prefix",
}


def doi_specs(values: Iterable[str]) -> list[dict[str, Any]]:
    """Specs of DOI watches (each DOI validated and lowercased); raises InvalidInput on a bad DOI."""
    return [{"doi": parse_doi(v).key} for v in values if v.strip()]


def read_doi_file(path: str | Path) -> list[str]:
    """DOIs from a text file: one per line; blank lines and ``#`` comments skipped."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InvalidInput(f"cannot read DOI file {path}: {exc}", reason="invalid_parameter") from exc
    return [ln.split("#", 1)[0].strip() for ln in lines if ln.split("#", 1)[0].strip()]


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

    Raises:
        InvalidInput: an unknown route, a filter without ``:``, ``rows`` out of 1..1000, or no
            filter, query or route narrowing the walk (a watch of all of Crossref is refused).
    """
    route = route or "/works"
    if not _ROUTE.match(route):
        raise InvalidInput(f"not a Crossref works route: {route}", reason="invalid_parameter")
    parts: list[str] = []
    for name, value in shortcuts.items():
        if value:
            parts.append(f"{_FILTER_SHORTCUTS[name]}:{value.strip()}")
    for f in filters:
        if ":" not in f:
            raise InvalidInput(f"a filter is name:value, got {f!r}", reason="invalid_parameter")
        parts.append(f.strip())
    if any(p.startswith(("from-index-date:", "until-index-date:")) for p in parts):
        raise InvalidInput("index-date filters are set by the sync itself", reason="invalid_parameter")
    if rows is not None and not 1 <= rows <= 1000:
        raise InvalidInput("rows must be between 1 and 1000", reason="invalid_parameter")
    if route == "/works" and not parts and not query:
        raise InvalidInput("a Crossref watch needs a filter, a query or a route", reason="invalid_parameter")
    return {"route": route, "filter": ",".join(parts) or None, "query": query or None, "rows": rows}


def zenodo_spec(
    *, community: str | None = None, q: str | None = None, all_versions: bool = False
) -> dict[str, Any]:
    """Spec of a Zenodo community (``community``) or search (``q``) watch."""
    if not community and not q:
        raise InvalidInput("a Zenodo watch needs a community or a query", reason="invalid_parameter")
    if community and not re.fullmatch(r"[A-Za-z0-9_.-]+", community):
        raise InvalidInput(f"not a Zenodo community id: {community!r}", reason="invalid_parameter")
    return {"community": community or None, "q": q or None, "all_versions": True if all_versions else None}


def add(store: Store, kind: str, spec: dict[str, Any], label: str | None = None) -> tuple[StoredWatch, bool]:
    """Add one watch (idempotent); returns ``(watch, created)``."""
    if kind not in KINDS:
        raise InvalidInput(f"unknown watch kind {kind!r}", reason="invalid_parameter")
    return add_watch(store, kind, spec, label)


def describe(watch: StoredWatch) -> str:
    """One-line human description of a watch."""
    s = watch.spec
    if watch.kind == "doi":
        return s["doi"]
    if watch.kind == "crossref_query":
        bits = [s.get("route", "/works")]
        if s.get("filter"):
            bits.append(f"filter={s['filter']}")
        if s.get("query"):
            bits.append(f"query={s['query']}")
        return " ".join(bits)
    bits = []
    if s.get("community"):
        bits.append(f"community={s['community']}")
    if s.get("q"):
        bits.append(f"q={s['q']}")
    return " ".join(bits)


def apply_config(store: Store, config: Any) -> list[StoredWatch]:
    """Add the watches listed in the settings' ``watch`` table (label ``config``); returns them all.

    Config watches are only ever added: removing one from the file leaves the row (remove it with
    ``syncd watch rm``), so a typo in the file never drops a mirrored set.
    """
    out: list[StoredWatch] = []
    if config is None:
        return out
    dois = list(config.dois)
    for path in config.doi_files:
        dois.extend(read_doi_file(path))
    for spec in doi_specs(dois):
        out.append(add(store, "doi", spec, "config")[0])
    for item in config.crossref:
        spec = crossref_spec(
            route=item.route, filters=item.filter, query=item.query, rows=item.rows,
            orcid=item.orcid, funder=item.funder, issn=item.issn, member=item.member,
        )  # fmt: skip
        out.append(add(store, "crossref_query", spec, "config")[0])
    for community in config.zenodo_communities:
        out.append(add(store, "zenodo_community", zenodo_spec(community=community), "config")[0])
    for q in config.zenodo_queries:
        out.append(add(store, "zenodo_query", zenodo_spec(q=q), "config")[0])
    return out
