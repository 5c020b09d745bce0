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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from syncd.errors import InvalidInput
from syncd.identifiers import check_doi, check_issn, check_member, check_orcid, check_ror
from syncd.normalize.doi import parse_doi
from syncd.store.repo import Store
from syncd.store.watches import StoredWatch, add_watch

__all__ = [
    "KINDS",
    "BadLine",
    "add",
    "apply_config",
    "check_doi_lines",
    "crossref_spec",
    "describe",
    "doi_specs",
    "read_doi_file",
    "read_doi_lines",
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


@dataclass(frozen=True)
class BadLine:
    """A DOI that was refused: where it came from (``dois.txt:3``, ``argument 2``), its text, why."""

    where: str
    text: str
    message: str


def read_doi_lines(path: str | Path) -> list[tuple[int, str]]:
    """``(line number, DOI text)`` of a text file: one DOI per line; blank lines and ``#`` comments skipped.

    Raises:
        InvalidInput: the file cannot be read or is not UTF-8 text (``invalid_parameter``).
    """
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read DOI file {path}: {exc}", reason="invalid_parameter") from exc
    return [(n, ln.split("#", 1)[0].strip()) for n, ln in enumerate(lines, 1) if ln.split("#", 1)[0].strip()]


def read_doi_file(path: str | Path) -> list[str]:
    """DOIs from a text file: one per line; blank lines and ``#`` comments skipped."""
    return [text for _, text in read_doi_lines(path)]


def check_doi_lines(lines: Iterable[tuple[str, str]]) -> tuple[list[dict[str, Any]], list[BadLine]]:
    """The DOI watch specs of the good ``(where, text)`` lines and every bad one (never raises for one)."""
    specs: list[dict[str, Any]] = []
    bad: list[BadLine] = []
    for where, text in lines:
        try:
            specs.append({"doi": check_doi(text)})
        except InvalidInput as exc:
            bad.append(BadLine(where, text, exc.message))
    return specs, bad


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
