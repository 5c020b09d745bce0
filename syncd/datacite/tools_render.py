r"""The Markdown ``content[]`` of the DataCite tools, under the contract's text rules (§1).

Depositor and caller text is untrusted: inline slots collapse every run of line breaks to one
space (:func:`inline`), table cells also escape ``\\`` then ``|`` (:func:`cell`), descriptions,
snippets and notices are blockquotes (:func:`quote`), payloads are fenced one backtick longer than
their longest backtick run (:func:`fence`). Absent values print ``Not available``; numbers use
en-US grouping (``56,788``). The structured content stays verbatim.
"""

from __future__ import annotations

import re
from typing import Any

from mcp.types import CallToolResult, TextContent

from syncd.datacite.params import flatten

__all__ = ["cell", "fence", "inline", "number", "quote", "render_work", "result"]

NA = "Not available"


def inline(value: Any) -> str:
    """An inline slot: the value as text, line breaks collapsed; ``Not available`` when absent."""
    if value is None or value == "":
        return NA
    return flatten(str(value)).strip() or NA


def cell(value: Any) -> str:
    r"""A table cell: :func:`inline`, then ``\\`` and ``|`` escaped."""
    return inline(value).replace("\\", "\\\\").replace("|", "\\|")


def number(value: Any) -> str:
    """An integer with en-US grouping (``56,788``), ``Not available`` when absent."""
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else NA


def quote(text: str) -> list[str]:
    """A blockquote of ``text``: ``> `` per line, ``>`` alone on blank lines."""
    return [f"> {line}" if line.strip() else ">" for line in str(text).splitlines() or [""]]


def fence(text: str, lang: str = "") -> list[str]:
    """``text`` fenced one backtick longer than its longest backtick run (at least three)."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    mark = "`" * max(3, longest + 1)
    return [mark + lang, text, mark]


def _cache_line(data: dict[str, Any]) -> list[str]:
    cache = data.get("cache") or {}
    if not cache:
        return []
    flag = f", upstream_error={cache['upstream_error']}" if cache.get("upstream_error") else ""
    return [f"[cache: {cache['source']}, validated {cache['validated_at']}, stale={cache['stale']}{flag}]"]


def _miss_lines(data: dict[str, Any]) -> list[str]:
    return [
        f"**Not found in DataCite** — {inline(data.get('doi'))}",
        f"- Reason: {inline(data.get('missReason'))}",
        f"- Registration agency: {inline(data.get('registrationAgency'))}",
        f"- Guidance: {inline(data.get('guidance'))}",
    ]


def _people(title: str, people: list[dict[str, Any]]) -> list[str]:
    if not people:
        return []
    lines = [f"## {title}"]
    for p in people:
        bits = [inline(p.get("name"))]
        if p.get("orcid"):
            bits.append(f"ORCID {p['orcid']}")
        if p.get("affiliations"):
            bits.append("; ".join(inline(a.get("name")) for a in p["affiliations"]))
        lines.append("- " + " · ".join(bits))
    return lines


def _related(record: dict[str, Any]) -> list[str]:
    related = record.get("relatedIdentifiers") or []
    if not related:
        return []
    lines = ["## Related identifiers"]
    totals = record.get("relatedIdentifierCounts") or {}
    by_type: dict[str, list[dict[str, Any]]] = {}
    for r in related:
        by_type.setdefault(r["relationType"], []).append(r)
    for kind, items in by_type.items():
        lines.append(f"**{inline(kind)}** — {number(len(items))} of {number(totals.get(kind, len(items)))}")
        lines += [
            f"- {inline(r.get('relatedIdentifier'))} ({inline(r.get('relatedIdentifierType'))})"
            for r in items
        ]
    return lines


def render_work(data: dict[str, Any]) -> str:
    """Text of a ``datacite_get_work`` answer (found: title, key lines, sections; miss: the typed miss)."""
    if data.get("found") is not True:
        return "\n".join([*_miss_lines(data), *_cache_line(data)])
    titles = data.get("titles") or []
    lines = [f"# {inline(titles[0]['title'] if titles else data.get('doi'))}"]
    lines.append(f"**DOI:** {inline(data.get('doi'))} · Found")
    lines.append(f"**Resolver:** {data.get('doiUrl')} · **Landing page:** {inline(data.get('landingUrl'))}")
    lines.append(
        f"**Type:** {inline(data.get('resourceTypeGeneral'))} ({inline(data.get('resourceType'))}) · "
        f"**Year:** {inline(data.get('publicationYear'))} · **Version:** {inline(data.get('version'))} · "
        f"**Language:** {inline(data.get('language'))}"
    )
    publisher = data.get("publisher") or {}
    ror = f" (ROR {publisher['rorId']})" if publisher.get("rorId") else ""
    lines.append(f"**Publisher:** {inline(publisher.get('name'))}{ror}")
    repo = data.get("repository") or {}
    if repo:
        lines.append(
            f"**Repository:** {inline(repo.get('name'))} ({inline(repo.get('repositoryId'))}) · "
            f"provider {inline(repo.get('providerId'))}"
        )
    counts = data.get("counts") or {}
    lines.append(
        "**Counts:** " + " · ".join(f"{k.removesuffix('Count')} {number(v)}" for k, v in counts.items())
    )
    lines.append(
        f"**Record:** registered {inline(data.get('registered'))} · updated {inline(data.get('updated'))} · "
        f"state {inline(data.get('state'))}"
    )
    if len(titles) > 1:
        lines += ["## Titles", *(f"- {inline(t['title'])} ({inline(t.get('titleType'))})" for t in titles)]
    lines += _people("Creators", data.get("creators") or [])
    lines += _people("Contributors", data.get("contributors") or [])
    if data.get("subjects"):
        lines += ["## Subjects", *(f"- {inline(s['subject'])}" for s in data["subjects"])]
    for d in (data.get("descriptions") or [])[:3]:
        lines += [f"## Description ({inline(d.get('descriptionType'))})", *quote(d["description"])]
    rights = data.get("rights") or []
    lines += ["## Rights"]
    lines += [f"- Work rights: {inline(r.get('rights') or r.get('rightsIdentifier'))}" for r in rights] or [
        "- Work rights: none declared"
    ]
    lines.append(f"- Metadata: {data.get('metadataLicense')}")
    lines += _related(data)
    truncated = data.get("truncatedLists") or []
    if truncated:
        lines.append(
            "**Truncated lists:** "
            + "; ".join(f"{t['field']}: {number(t['shown'])} of {number(t['total'])}" for t in truncated)
        )
    if data.get("notice"):
        lines += quote(data["notice"])
    return "\n".join([*lines, *_cache_line(data)])


def result(data: dict[str, Any], text: str) -> CallToolResult:
    """A successful tool result: ``text`` as the one content block, ``data`` as structured content."""
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _trailer(data: dict[str, Any]) -> list[str]:
    lines = [f"Query: {inline(data.get('effectiveQuery'))}", f"**sort:** {inline(data.get('sortApplied'))}"]
    filters = data.get("appliedFilters") or {}
    lines.append("**Applied filters:** " + ("none" if not filters else ""))
    lines += [f"- {inline(k)} → {inline(v)}" for k, v in filters.items()]
    lines.append(f"**{number(data.get('totalCount'))} total**")
    if data.get("notice"):
        lines += quote(data["notice"])
    return lines


def render_search(data: dict[str, Any]) -> str:
    """Text of a ``datacite_search_works`` page: one section per work, facets, paging, the trailer."""
    works = data.get("works") or []
    lines = [
        f"**{number(len(works))} works on this page**"
        + (" (from syncd's store)" if data.get("local") else "")
    ]
    for w in works:
        lines.append(f"### {inline(w.get('title') or w.get('doi'))}")
        lines.append(
            f"- DOI {inline(w.get('doi'))} · Year {inline(w.get('publicationYear'))} · Type "
            f"{inline(w.get('resourceTypeGeneral'))} ({inline(w.get('resourceType'))}) · Version "
            f"{inline(w.get('version'))} · Created {inline(w.get('created'))}"
        )
        lines.append(
            f"- Repository {inline(w.get('repositoryName'))} ({inline(w.get('repositoryId'))}), provider "
            f"{inline(w.get('providerId'))} · Publisher {inline(w.get('publisher'))}"
        )
        licenses = ", ".join(inline(x) for x in w.get("licenses") or []) or "none declared"
        lines.append(
            f"- Licenses {licenses} · Citations {number(w.get('citationCount'))} · Views "
            f"{number(w.get('viewCount'))} · Downloads {number(w.get('downloadCount'))} · Versions "
            f"{number(w.get('versionCount'))}"
        )
        more = w.get("creatorCount", 0) - len(w.get("creators") or [])
        creators = "; ".join(inline(c) for c in w.get("creators") or []) + (
            f" +{more} more" if more > 0 else ""
        )
        lines.append(f"- Creators ({number(w.get('creatorCount'))}): {creators or NA}")
        lines.append(f"- Landing page {inline(w.get('landingUrl'))}")
        if w.get("descriptionSnippet"):
            lines += quote(w["descriptionSnippet"])
    if data.get("facets") is not None:
        lines.append("## Facets")
        for name, items in data["facets"].items():
            shown = ", ".join(
                f"{inline(f['id'])} ({inline(f['title'])}) — {number(f['count'])}" for f in items
            )
            lines.append(f"- {name}: {shown or 'none'}")
    if data.get("nextPage"):
        lines.append(f"**Next page:** page {data['nextPage']}")
    elif data.get("nextCursor"):
        lines.append(f"**Next cursor:** {data['nextCursor']}")
    else:
        lines.append("**Last page.**")
    return "\n".join([*lines, *_trailer(data), *_cache_line(data)])


_FENCES = {
    "csl_json": "csl-json",
    "datacite_json": "datacite-json",
    "schema_org": "json-ld",
    "codemeta": "json-ld",
    "bibtex": "bibtex",
    "datacite_xml": "xml",
    "jats": "xml",
}
"""Fence labels of the payload formats (JSON payloads named by their format: the text block never
carries a ``json`` fence, which would read as a copy of the structured content)."""


def render_citation(data: dict[str, Any]) -> str:
    """Text of a ``datacite_get_citation`` answer: the citation quoted (text) or fenced (a payload)."""
    if data.get("found") is not True:
        return "\n".join([*_miss_lines(data), *_cache_line(data)])
    fmt = str(data.get("format"))
    lines = [f"**Citation** — {inline(data.get('doi'))}"]
    line = f"Found · Format {fmt} ({data.get('mediaType')})"
    if data.get("style"):
        line += f" · Style {data['style']}"
    if data.get("locale"):
        line += f" · Locale {data['locale']}"
    lines.append(line + (" · rendered locally" if data.get("renderedLocally") else ""))
    citation = str(data.get("citation") or "")
    if fmt == "text":
        lines += quote(citation)
        if data.get("citationHtml"):
            lines += fence(str(data["citationHtml"]), "html")
    elif fmt == "ris":
        lines.append(citation)
    else:
        lines += fence(citation, _FENCES.get(fmt, ""))
    if data.get("notice"):
        lines += quote(data["notice"])
    return "\n".join([*lines, *_cache_line(data)])


def render_reference(data: dict[str, Any]) -> str:
    """Text of a ``datacite_list_reference`` topic: a five-column table and the notes."""
    entries = data.get("entries") or []
    lines = [
        f"## {inline(data.get('title'))}",
        f"**Topic:** {data.get('topic')} · {number(len(entries))} entries",
    ]
    lines += ["| value | label | description | group | inverse |", "| --- | --- | --- | --- | --- |"]
    for e in entries:
        cells = [
            cell(e.get(k)) if e.get(k) is not None else ""
            for k in ("value", "label", "description", "group", "inverse")
        ]
        lines.append("| " + " | ".join(cells) + " |")
    if data.get("notes"):
        lines.append("**Notes**")
        lines += [f"- {inline(n)}" for n in data["notes"]]
    return "\n".join(lines)


def render_repositories(data: dict[str, Any]) -> str:
    """Text of a ``datacite_search_repositories`` page: one section per repository and the trailer."""
    rows = data.get("repositories") or []
    lines = [f"**{number(len(rows))} repositories on this page**"]
    for r in rows:
        lines.append(f"### {inline(r.get('name'))} ({inline(r.get('repositoryId'))})")
        kinds = ", ".join(inline(t) for t in r.get("repositoryTypes") or []) or "none declared"
        seals = ", ".join(inline(c) for c in r.get("certificates") or []) or "none"
        lines.append(
            f"- Provider {inline(r.get('providerId'))} · Type {inline(r.get('clientType'))} · "
            f"Repository types {kinds} · Certificates {seals}"
        )
        lines.append(
            f"- Software {inline(r.get('software'))} · Subjects "
            f"{'; '.join(inline(s) for s in r.get('subjects') or []) or NA} · URL {inline(r.get('url'))} · "
            f"re3data {inline(r.get('re3data'))} · Since {inline(r.get('year'))}"
        )
        if r.get("description"):
            lines += quote(r["description"])
    lines.append(f"**Next page:** page {data['nextPage']}" if data.get("nextPage") else "**Last page.**")
    filters = data.get("appliedFilters") or {}
    lines.append("**Applied filters:** " + ("none" if not filters else ""))
    lines += [f"- {inline(k)} → {inline(v)}" for k, v in filters.items()]
    lines.append(f"**{number(data.get('totalCount'))} total** · ordered by name")
    if data.get("notice"):
        lines += quote(data["notice"])
    return "\n".join([*lines, *_cache_line(data)])


def render_trace(data: dict[str, Any]) -> str:
    """Text of a ``datacite_trace_relations`` answer: summary, edges by type, the node table, coverage."""
    root = data.get("root") or {}
    nodes, edges = data.get("nodes") or [], data.get("edges") or []
    lines = [f"# Relations of {inline(root.get('doi'))}", f"{inline(root.get('title'))}"]
    lines.append(f"**{number(len(nodes))} nodes · {number(len(edges))} edges**")
    lines.append(f"## Edges ({number(len(edges))})")
    for e in sorted(edges, key=lambda e: e["relationType"]):
        via = ", ".join(e.get("sources") or []) + "".join(
            f", event source {s}" for s in e.get("eventSources") or []
        )
        lines.append(f"- {inline(e['from'])} —{inline(e['relationType'])}→ {inline(e['to'])} [{via}]")
    lines += [
        f"## Nodes ({number(len(nodes))})",
        "| id | idType | DataCite | depth | hydrated | year | type | repository | citations | title |",
    ]
    lines.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for n in nodes:
        known = {True: "yes", False: "no"}.get(n.get("isDataCiteDoi"), "—")
        cells = [
            n.get("id"),
            n.get("idType"),
            known,
            n.get("depth"),
            n.get("hydrated"),
            n.get("publicationYear"),
        ]
        cells += [n.get("resourceTypeGeneral"), n.get("repositoryId"), n.get("citationCount"), n.get("title")]
        lines.append("| " + " | ".join(cell(c) for c in cells) + " |")
    lines.append("## Coverage")
    for name, value in (data.get("coverage") or {}).items():
        lines.append(f"- {name}: " + ", ".join(f"{k} {inline(v)}" for k, v in value.items()))
    if data.get("notice"):
        lines += quote(data["notice"])
    return "\n".join([*lines, *_cache_line(data)])
